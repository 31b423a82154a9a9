"""Speculative sampling in torch: a batch of (p, q) rows at once, on any device, in any float precision.

One step per row: draft x ~ q (or take the given draft), accept it when u < p(x)/q(x),
otherwise emit a draw from the residual (p - q)+. Rows are used as given and normalised
by their own sums, so a bf16 or fp16 softmax (which sums to 1 only up to its rounding) is
sampled exactly as the distribution it holds. `specviz.samplers.torch_rows` checks the rows and
gives the uniforms; this module draws. How it stays near one read of p and q:

- every draw is an inverse CDF with float64 uniforms; large tables skip the full cumulative
  sum: block sums (one pass), a cumulative sum over the blocks, then one inside the chosen block;
- the same block sums give the row sums that validation and the acceptance test need; the
  host reads the step's combined check once, after all sampling work has been queued;
- on CPU the residual is built for the rejected rows only; on other devices for all rows,
  since picking the rejected ones would need a second host synchronisation.

No Triton or CUDA kernel here: plain torch, written device-agnostic (one host read per step,
none in `categorical_torch` and `verify_chain_torch`) but measured and tested on CPU only.

>>> p = torch.tensor([[0.6, 0.3, 0.1]]).repeat(4, 1)   # (B=4, V=3)
>>> q = torch.tensor([[0.4, 0.5, 0.1]]).repeat(4, 1)
>>> out = spec_sample_torch(p, q, generator=torch.Generator().manual_seed(0))
>>> out.tokens.shape, out.accepted.dtype
(torch.Size([4]), torch.bool)
>>> spec_sample_torch(p.bfloat16(), q.bfloat16(), seeds=[7, 7, 7, 7]).tokens.unique().numel()  # same seed, same row
1
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from .torch_rows import ACCUMULATE, U_MAX, as_drafts, as_prob_rows, check_shapes, diagnose, rows_ok, uniforms

_SINGLE_BLOCK_V = 2048  # up to this V (or this many entries in all) a plain cumulative sum is cheaper
_SINGLE_BLOCK_NUMEL = 1 << 17


def _block_size(B: int, V: int) -> int:
    """Block length for the blocked inverse CDF: V itself for small tables, else a power of 2 near sqrt(V)."""
    if V <= _SINGLE_BLOCK_V or B * V <= _SINGLE_BLOCK_NUMEL:
        return V
    return max(128, min(1024, 1 << math.ceil(math.log2(math.sqrt(V)))))


def _block_sums(t: torch.Tensor, blk: int, acc: torch.dtype) -> torch.Tensor:
    """(B, ceil(V/blk)) sums of consecutive blocks of each row, accumulated in `acc` (one pass over t)."""
    B, V = t.shape
    if blk >= V:
        return t.sum(-1, keepdim=True, dtype=acc)
    nfull = V // blk
    head = t[:, : nfull * blk].reshape(B, nfull, blk).sum(-1, dtype=acc)
    if nfull * blk == V:
        return head
    return torch.cat([head, t[:, nfull * blk :].sum(-1, keepdim=True, dtype=acc)], -1)


def _cumsum64(t: torch.Tensor) -> torch.Tensor:
    """Row-wise cumulative sums in float64 (a copy; `cumsum(dtype=)` page-faults its output on CPU every call)."""
    return t.to(torch.float64, copy=True).cumsum_(-1)


def _search(c: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """(n,) for each row of the non-decreasing c (n, m) the first index with c > y (n,), at most m - 1."""
    return torch.searchsorted(c, y[:, None], right=True).squeeze(1).clamp_(max=c.shape[1] - 1)


def _draw_rows(t: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """(n,) one inverse-CDF draw per row of the weights t (n, V) with u (n,) in [0, U_MAX]: a float64 cumulative sum."""
    c = _cumsum64(t)
    return _search(c, u * c[:, -1])


def _draw_blocked(
    t: torch.Tensor,
    bs: torch.Tensor,
    u: torch.Tensor,
    blk: int,
    alt: torch.Tensor | None = None,
    use_alt: torch.Tensor | None = None,
    alt_rows: torch.Tensor | None = None,
) -> torch.Tensor:
    """(B,) int64: one inverse-CDF draw per row of the non-negative weights t (B, V), given its block sums bs.

    u (B,) float64 in [0, U_MAX]. The block is picked with the cumulative block sums, then the
    token with a cumulative sum inside that block only, using the position of u within the
    block (uniform, independent of the block). Never returns a zero-weight token for a row
    with positive total. Where `use_alt` (B,) is set, the weights come from `alt` instead
    (whose block sums must already be in bs; row i of t is row `alt_rows[i]` of `alt` when given).
    All indices stay in range even for garbage input.
    """
    B, V = t.shape
    nb = bs.shape[1]
    C = _cumsum64(bs)  # (B, nb)
    x = u * C[:, -1]  # (B,) in [0, total)
    b = _search(C, x)[:, None]  # (B, 1): the block holding x (a block with positive mass)
    lo = torch.nn.functional.pad(C, (1, 0)).gather(-1, b)  # C[b - 1], 0 for the first block
    frac = ((x[:, None] - lo) / bs.gather(-1, b)).clamp_(0, U_MAX)  # position inside the block, uniform
    idx = b * blk + torch.arange(blk, device=t.device)  # (B, blk) token ids of the block
    safe = idx.clamp(max=V - 1)  # the last block may be short
    w = t.gather(-1, safe)
    if alt is not None:
        w_alt = alt.gather(-1, safe) if alt_rows is None else alt[alt_rows[:, None], safe]
        w = torch.where(use_alt[:, None], w_alt, w)
    if nb * blk != V:
        w = w.masked_fill(idx >= V, 0)
    c = _cumsum64(w)  # (B, blk)
    j = _search(c, frac.squeeze(1) * c[:, -1])
    return (b.squeeze(1) * blk + j).clamp_(max=V - 1)


def categorical_torch(rows: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """(n,) int64 draws, one per row of (n, V) non-negative weights, by inverse CDF; never a zero-weight token.

    Rows need not be normalised (each needs a positive total). No host synchronisation; large
    tables use the blocked inverse CDF (block sums, then a cumulative sum inside one block).

    >>> rows = torch.tensor([[0.0, 1.0, 0.0], [0.5, 0.0, 0.5]], dtype=torch.float64)
    >>> categorical_torch(rows, torch.Generator().manual_seed(0))[0].item()
    1
    """
    n, V = rows.shape
    if n == 0:
        return torch.empty(0, dtype=torch.int64, device=rows.device)
    u = torch.rand(n, generator=generator, device=rows.device, dtype=torch.float64).mul_(U_MAX)
    blk = _block_size(n, V)
    if blk >= V:
        return _draw_rows(rows, u)
    return _draw_blocked(rows, _block_sums(rows, blk, ACCUMULATE.get(rows.dtype, torch.float64)), u, blk)


def residual_rows(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """(n, V) replacement distributions (p - q)+ / Z per row; p itself where Z = 0 (p == q: never sampled)."""
    r = (p - q).clamp_min_(0)
    z = r.sum(-1, keepdim=True)
    return torch.where(z > 0, r.div_(z.clamp_min(torch.finfo(r.dtype).tiny)), p)


@dataclass(frozen=True)
class TorchSpecSample:
    """One speculative step per row: emitted token, accept flag, drafted token, each (B,)."""

    tokens: torch.Tensor  # (B,) int64
    accepted: torch.Tensor  # (B,) bool
    drafts: torch.Tensor  # (B,) int64


def spec_sample_torch(
    p,
    q,
    generator: torch.Generator | None = None,
    drafts=None,
    validate: bool = True,
    seeds=None,
    gather_rejected: bool | None = None,
) -> TorchSpecSample:
    """One lossless speculative step for each row of p (target) and q (draft), both (B, V).

    Drafts x ~ q (or takes the given `drafts` (B,), which must have been sampled from q),
    accepts when u q(x)/Σq < p(x)/Σp, otherwise samples from (p/Σp - q/Σq)+ (from p where that
    is empty: never sampled). float16, bfloat16, float32 or float64 (sums in fp32, fp64 for
    fp64); lists and numpy arrays are converted.

    validate: check that rows are finite, non-negative and sum to 1 within
    `sum_tolerance(dtype, V)`, and that drafts are ids in 0..V-1 with q > 0, with one host
    read for the whole step; a ValueError names the first problem and its row.
    seeds: per-row randomness (vLLM's mixed seeded batch), as `specviz.samplers.torch_rows.uniforms` reads
    it: a (B,) integer tensor or a list of B ints, torch.Generators or Nones. A seeded row's
    token does not depend on the rest of the batch.
    gather_rejected: build the residual for the rejected rows only (default: on CPU;
    elsewhere it would cost a host synchronisation, so all rows get one).
    """
    p = as_prob_rows(p, "p")
    q = as_prob_rows(q, "q", like=p)
    check_shapes(p, q)
    B, V = p.shape
    dev = p.device
    given = drafts is not None
    if given:
        drafts = as_drafts(drafts, B, dev)
    u0, u1, u2 = uniforms(B, 3, generator, seeds, dev).unbind(1)  # draft, acceptance, residual
    if B == 0:
        return TorchSpecSample(drafts if given else u0.long(), u0 > 0, drafts if given else u0.long())
    acc = torch.promote_types(ACCUMULATE[p.dtype], ACCUMULATE[q.dtype])
    blk = _block_size(B, V)
    if blk >= V:  # small tables: plain row sums and a cumulative sum over each whole row
        bs_p = None
        Sp, Sq = p.sum(-1, dtype=acc), q.sum(-1, dtype=acc)
        if not given:
            drafts = _draw_rows(q, u0)
    else:  # block sums: the one pass over p and over q, giving the row sums too
        bs_p, bs_q = _block_sums(p, blk, acc), _block_sums(q, blk, acc)
        Sp, Sq = bs_p.sum(-1), bs_q.sum(-1)
        if not given:
            drafts = _draw_blocked(q, bs_q, u0, blk)
    x = drafts.clamp(0, V - 1) if given and validate else drafts
    p_x = p.gather(1, x[:, None]).squeeze(1)
    q_x = q.gather(1, x[:, None]).squeeze(1)
    # u < (p(x)/Sp) / (q(x)/Sq) without dividing; fp32 products compared in fp64 (u has 53 bits):
    # p(x) = 0 never passes, p == q always does (u <= U_MAX < 1)
    accepted = u1 * (q_x * Sp) < p_x * Sq
    if given:
        accepted &= q_x > 0
    ok = rows_ok(p, q, Sp, Sq, V, drafts if given else None, q_x) if validate else None
    ratio = Sp / Sq  # residual ∝ (p/Sp - q/Sq)+ ∝ (p - ratio q)+
    if gather_rejected is None:
        gather_rejected = dev.type == "cpu"
    if gather_rejected:  # CPU: no device to wait for, so only the rejected rows get a residual
        rows = (~accepted).nonzero().squeeze(1)
        tokens = drafts.clone()
        if rows.numel():
            repl = _residual_draw(p, q, ratio[rows], u2[rows], blk, None if bs_p is None else bs_p[rows], rows=rows)
            tokens = drafts.index_put((rows,), repl)
    else:  # one fixed set of kernels, no host read
        tokens = torch.where(accepted, drafts, _residual_draw(p, q, ratio, u2, blk, bs_p))
    if validate and not bool(ok):  # the one host read of the step
        diagnose((("p", p), ("q", q)), (Sp, Sq), drafts if given else None, q_x)
    return TorchSpecSample(tokens, accepted, drafts)


def _residual_draw(p, q, ratio, u, blk, bs_p, rows: torch.Tensor | None = None) -> torch.Tensor:
    """(n,) draws from (p - ratio q)+ for the rows `rows` of p and q, or all rows (from p where that residual is empty).

    ratio, u and bs_p are given for those n rows only. With `rows` (the CPU path), the copy of p's
    rows becomes the residual in place when p is in the accumulation dtype (one (n, V) buffer fewer).
    """
    V = p.shape[1]
    if rows is None:
        r = torch.addcmul(p, q, ratio[:, None], value=-1)
    elif p.dtype == ratio.dtype:
        r = p.index_select(0, rows).addcmul_(q.index_select(0, rows), ratio[:, None], value=-1)
    else:  # reduced precision: the residual is in the (wider) accumulation dtype
        r = torch.addcmul(p.index_select(0, rows), q.index_select(0, rows), ratio[:, None], value=-1)
    r.clamp_min_(0)
    if blk < V:
        bs_r = _block_sums(r, blk, r.dtype)
        empty = ~(bs_r.sum(-1) > 0)  # p ∝ q up to rounding: fall back to p
        bs = torch.where(empty[:, None], bs_p.to(bs_r.dtype), bs_r)
        return _draw_blocked(r, bs, u, blk, alt=p, use_alt=empty, alt_rows=rows)
    if rows is None:
        return _draw_rows(torch.where((r.sum(-1) > 0)[:, None], r, p), u)
    c = _cumsum64(r)
    tot = c[:, -1]
    tokens = _search(c, u * tot)
    empty = (tot <= 0).nonzero().squeeze(1)  # CPU only (sizing it is a host read elsewhere); ~never non-empty
    if empty.numel():
        tokens = tokens.index_put((empty,), _draw_rows(p.index_select(0, rows[empty]), u[empty]))
    return tokens


@dataclass(frozen=True)
class ChainVerdict:
    """One γ-step verification on the device: drafts kept, the extra token, per-draft accept flags."""

    accepted: torch.Tensor  # () int64: number of leading drafts kept, 0..γ
    token: torch.Tensor  # () int64: replacement after a rejection, or the bonus token; -1 for none
    accept_flags: torch.Tensor  # (γ,) bool: u_j q(x_j) < p(x_j) for every draft j (independent of order)


def verify_chain_torch(
    p_rows: torch.Tensor,
    q_rows: torch.Tensor,
    drafts: torch.Tensor,
    generator: torch.Generator | None = None,
    replacement_rows: torch.Tensor | None = None,
    bonus_row: torch.Tensor | None = None,
) -> ChainVerdict:
    """Verify γ drafts against the target in one pass on the device, with no host synchronisation.

    p_rows (γ, V): the target's distribution at each draft position; q_rows (γ, V): the draft's;
    drafts (γ,): the drafted ids (x_j ~ q_rows[j]). Draft j is accepted with probability
    min(1, p(x_j)/q(x_j)); the first rejection at position k is replaced by a sample from
    `replacement_rows[k]` ((p - q)+ / Z by default); when all γ pass, the extra token is drawn
    from `bonus_row` (none: token -1). All γ replacements are drawn in one batch and the one at
    k is picked, so the step costs a fixed set of kernels whatever k turns out to be.

    >>> p = torch.tensor([[0.6, 0.3, 0.1]], dtype=torch.float64)
    >>> q = torch.tensor([[0.4, 0.5, 0.1]], dtype=torch.float64)
    >>> v = verify_chain_torch(p, q, torch.tensor([0]), torch.Generator().manual_seed(0), bonus_row=p[0])
    >>> int(v.accepted), v.accept_flags.tolist()          # cat: p/q = 1.5 >= 1, always kept
    (1, [True])
    """
    g = drafts.shape[0]
    dev = p_rows.device
    if replacement_rows is None:
        replacement_rows = residual_rows(p_rows, q_rows)
    p_x = p_rows.gather(-1, drafts[:, None]).squeeze(-1)  # (γ,)
    q_x = q_rows.gather(-1, drafts[:, None]).squeeze(-1)  # (γ,)
    u = torch.rand(g, generator=generator, device=dev, dtype=p_rows.dtype)
    flags = (q_x > 0) & (u * q_x < p_x)  # u < p/q without dividing
    accepted = flags.to(torch.int64).cumprod(0).sum()  # leading run of accepts
    rows = replacement_rows if bonus_row is None else torch.cat([replacement_rows, bonus_row[None]], 0)
    cand = categorical_torch(rows, generator)  # (γ,) or (γ+1,); none when γ = 0 and no bonus row
    if bonus_row is None:
        cand = torch.cat([cand, torch.full((1,), -1, dtype=torch.int64, device=dev)])
    token = cand[accepted]
    return ChainVerdict(accepted, token, flags)
