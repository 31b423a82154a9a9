"""Speculative sampling in torch: a batch of (p, q) rows at once, on any device, in any float precision.

One step per row: draft x ~ q (or take the given draft), accept it when u < p(x)/q(x),
otherwise emit a draw from the residual (p - q)+. Rows are used as given and normalised
by their own sums, so a bf16 or fp16 softmax (which sums to 1 only up to its rounding) is
sampled exactly as the distribution it holds.

How it stays near one read of p and q:

- every draw is an inverse CDF, searched with float64 uniforms; for large tables without a
  full cumulative sum: block sums (one pass), a cumulative sum over the blocks, then one
  inside the chosen block only (small tables take a plain float64 cumulative sum);
- the same block sums give the row sums that validation and the acceptance test need;
- validation combines every check into one boolean tensor that the host reads once per
  step (after all sampling work has been queued); only a bad batch pays for a detailed
  diagnosis (which row, which entry, which problem);
- on CPU the residual is built for the rejected rows only; on other devices it is built
  for all rows, since picking the rejected ones would need a second host synchronisation.

No Triton or CUDA kernel here: this file is plain torch, written device-agnostic (one host
read per step, none in `categorical_torch` and `verify_chain_torch`) but measured and
tested on CPU only.

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

import numpy as np
import torch

# ---------------------------------------------------------------------------------------- helpers

# accumulation dtype per input dtype: reduced precisions accumulate in fp32, fp64 in fp64
_ACC = {
    torch.float16: torch.float32,
    torch.bfloat16: torch.float32,
    torch.float32: torch.float32,
    torch.float64: torch.float64,
}
# integer dtype of the same width, for the bit-level sign check
_BITS = {
    torch.float16: torch.int16,
    torch.bfloat16: torch.int16,
    torch.float32: torch.int32,
    torch.float64: torch.int64,
}
_SINGLE_BLOCK_V = 2048  # up to this V (or this many entries in all) a plain cumulative sum is cheaper
_SINGLE_BLOCK_NUMEL = 1 << 17


def sum_tolerance(dtype: torch.dtype, V: int) -> float:
    """How far from 1 a valid probability row of `dtype` and length V may sum.

    eps(dtype) for rounding each entry to the dtype, V x its smallest subnormal for entries
    below the normal range (fp16 at large V), and 4 sqrt(V) eps(fp32) for the computation
    of the row itself. bf16: ~7.8e-3; fp16 at V = 32,000: ~3e-3; fp32 at V = 32,000: ~8.6e-5.

    >>> round(sum_tolerance(torch.float32, 32_000), 7)
    8.54e-05
    """
    fi = torch.finfo(dtype)
    subnormal = fi.tiny * fi.eps
    return float(fi.eps + V * subnormal + 4 * math.sqrt(V) * torch.finfo(torch.float32).eps)


def as_prob_rows(x, name: str = "p", like: torch.Tensor | None = None) -> torch.Tensor:
    """x as a float tensor: tensors as they are, numpy arrays and nested lists converted (on `like`'s device).

    numpy float16/32/64 arrays keep their dtype; lists and other numeric arrays become float64.
    Raises TypeError for anything else (or a non-float tensor), ValueError for ragged lists.
    """
    if isinstance(x, torch.Tensor):
        if not x.is_floating_point():
            raise TypeError(f"{name} must hold floating-point probabilities, got a {x.dtype} tensor")
        if x.dtype not in _ACC:
            raise TypeError(f"{name} has dtype {x.dtype}; supported: float16, bfloat16, float32, float64")
        return x
    if isinstance(x, (np.ndarray, list, tuple)):
        try:
            arr = np.asarray(x)
        except ValueError as e:
            raise ValueError(f"{name} is a ragged nested list, not a (batch, vocabulary) table: {e}") from None
        if arr.dtype.kind not in "fiub":
            raise TypeError(f"{name} must hold numbers, got a numpy array of dtype {arr.dtype}")
        if arr.dtype not in (np.float16, np.float32, np.float64):
            arr = arr.astype(np.float64)
        t = torch.from_numpy(np.ascontiguousarray(arr))
        return t if like is None else t.to(like.device)
    raise TypeError(
        f"{name} must be a torch.Tensor, a numpy array or a nested list of probabilities, got {type(x).__name__}"
    )


def _check_shapes(p: torch.Tensor, q: torch.Tensor) -> None:
    """Shape and device checks (metadata only: no host read)."""
    if p.ndim != 2 or q.ndim != 2:
        bad, t = ("p", p) if p.ndim != 2 else ("q", q)
        raise ValueError(f"p and q must be 2-D (batch, vocabulary); {bad} is {t.ndim}-D with shape {tuple(t.shape)}")
    if p.shape != q.shape:
        what = "batch sizes B" if p.shape[0] != q.shape[0] else "vocabulary sizes V"
        raise ValueError(
            f"p {tuple(p.shape)} and q {tuple(q.shape)} must have the same (B, V) shape (their {what} differ)"
        )
    if p.shape[1] == 0:
        raise ValueError("the vocabulary is empty (V = 0)")
    if p.device != q.device:
        raise ValueError(f"p is on {p.device} but q is on {q.device}: put both on one device")


def _as_drafts(drafts, B: int, device: torch.device) -> torch.Tensor:
    """(B,) int64 draft ids on `device`, from a tensor, numpy array or list (metadata checks only)."""
    if isinstance(drafts, (np.ndarray, list, tuple)):
        arr = np.asarray(drafts)
        if arr.dtype.kind not in "iu":
            raise TypeError(f"drafts must be integer token ids, got a {arr.dtype} array")
        drafts = torch.from_numpy(arr.astype(np.int64)).to(device)
    if not isinstance(drafts, torch.Tensor):
        raise TypeError(f"drafts must be a tensor, numpy array or list of token ids, got {type(drafts).__name__}")
    if drafts.is_floating_point() or drafts.is_complex() or drafts.dtype == torch.bool:
        raise TypeError(f"drafts must be integer token ids, got a {drafts.dtype} tensor")
    if tuple(drafts.shape) != (B,):
        raise ValueError(f"drafts must have shape ({B},) (one id per row), got {tuple(drafts.shape)}")
    if drafts.device != device:
        raise ValueError(f"drafts are on {drafts.device} but p and q on {device}")
    return drafts.long()


# ---------------------------------------------------------------------------------------- per-row seeds

_M64 = 1 << 64


def _s64(c: int) -> int:
    """An unsigned 64-bit constant as the int64 with the same bits."""
    return c - _M64 if c >= 1 << 63 else c


_GOLDEN, _MIX1, _MIX2 = _s64(0x9E3779B97F4A7C15), _s64(0xBF58476D1CE4E5B9), _s64(0x94D049BB133111EB)


def _shr(z: torch.Tensor, s: int) -> torch.Tensor:
    """Logical right shift of int64 bits (torch's >> is arithmetic)."""
    return (z >> s) & ((1 << (64 - s)) - 1)


def _splitmix64(z: torch.Tensor) -> torch.Tensor:
    """SplitMix64 (Steele, Lea and Flood 2014) on int64 tensors, wrapping modulo 2^64."""
    z = z + _GOLDEN
    z = (z ^ _shr(z, 30)) * _MIX1
    z = (z ^ _shr(z, 27)) * _MIX2
    return z ^ _shr(z, 31)


def seeded_uniforms(seeds: torch.Tensor, k: int) -> torch.Tensor:
    """(B, k) float64 uniforms in [0, 1) that depend only on each row's int64 seed (a counter-based draw).

    >>> a = seeded_uniforms(torch.tensor([1, 2]), 3)
    >>> bool(torch.equal(a[1], seeded_uniforms(torch.tensor([2]), 3)[0])), bool(((a >= 0) & (a < 1)).all())
    (True, True)
    """
    base = _splitmix64(seeds.long())
    z = _splitmix64(base[:, None] + torch.arange(1, k + 1, device=seeds.device))
    return _shr(z, 11).to(torch.float64) * 2.0**-53


# uniforms are scaled into [0, U_MAX]: then fl(u * total) < total for every positive total, so an
# inverse-CDF search never runs off the end of a row (no clamping against the total needed)
U_MAX = 1.0 - 2.0**-52


def _uniforms(B: int, k: int, generator, seeds, device) -> torch.Tensor:
    """(B, k) float64 uniforms in [0, U_MAX]: from `generator`, except rows with their own seed or generator."""
    u = torch.rand(B, k, generator=generator, device=device, dtype=torch.float64)
    if seeds is not None:
        u = _seeded_rows(u, k, seeds, device)
    return u.mul_(U_MAX)


def _seeded_rows(u: torch.Tensor, k: int, seeds, device) -> torch.Tensor:
    """u with the rows that have their own int seed or torch.Generator replaced by their own uniforms."""
    B = u.shape[0]
    if isinstance(seeds, torch.Tensor):
        if seeds.is_floating_point() or seeds.is_complex() or seeds.dtype == torch.bool or tuple(seeds.shape) != (B,):
            raise ValueError(
                f"seeds must be a ({B},) integer tensor (negative: not seeded), got {seeds.dtype} {tuple(seeds.shape)}"
            )
        if seeds.device != device:
            raise ValueError(f"seeds are on {seeds.device} but p and q on {device}")
        return torch.where((seeds >= 0)[:, None], seeded_uniforms(seeds.clamp_min(0), k), u)
    if isinstance(seeds, np.ndarray):
        seeds = seeds.tolist()
    if not isinstance(seeds, (list, tuple)) or len(seeds) != B:
        raise ValueError(
            f"seeds must be a ({B},) integer tensor or a list of {B} entries "
            f"(int, torch.Generator or None), got {type(seeds).__name__}"
            + (f" of length {len(seeds)}" if isinstance(seeds, (list, tuple)) else "")
        )
    int_rows, int_seeds, gen_rows, gen_u = [], [], [], []
    for i, s in enumerate(seeds):
        if s is None:
            continue
        if isinstance(s, torch.Generator):
            gen_rows.append(i)
            gen_u.append(torch.rand(k, generator=s, device=s.device, dtype=torch.float64).to(device))
        elif isinstance(s, (int, np.integer)) and not isinstance(s, (bool, np.bool_)):
            if not 0 <= s < 1 << 63:
                raise ValueError(f"seeds[{i}] = {s} is outside 0..2^63-1")
            int_rows.append(i)
            int_seeds.append(int(s))
        else:
            raise TypeError(f"seeds[{i}] must be an int, a torch.Generator or None, got {type(s).__name__}")
    if int_rows:
        u = u.index_copy(
            0, torch.tensor(int_rows, device=device), seeded_uniforms(torch.tensor(int_seeds, device=device), k)
        )
    if gen_rows:
        u = u.index_copy(0, torch.tensor(gen_rows, device=device), torch.stack(gen_u))
    return u


# ---------------------------------------------------------------------------------------- blocked inverse CDF


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

    Rows need not be normalised (each needs a positive total). Runs on the rows' device with
    no host synchronisation, searching with float64 uniforms; large tables use the blocked
    inverse CDF (block sums, then a cumulative sum inside the chosen block only).

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
    return _draw_blocked(rows, _block_sums(rows, blk, _ACC.get(rows.dtype, torch.float64)), u, blk)


def residual_rows(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """(n, V) replacement distributions (p - q)+ / Z per row; p itself where Z = 0 (p == q: never sampled)."""
    r = (p - q).clamp_min_(0)
    z = r.sum(-1, keepdim=True)
    return torch.where(z > 0, r.div_(z.clamp_min(torch.finfo(r.dtype).tiny)), p)


# ---------------------------------------------------------------------------------------- validation


def _sign_min(t: torch.Tensor) -> torch.Tensor:
    """() tensor, negative when an entry of t is negative (one pass, no copy; -0.0 or a NaN may also trip it).

    float16/bfloat16/float32: the minimum of the bits as same-width integers (the sign bit makes
    it negative: -0.0 and a NaN with the sign bit trip it too); float64: the float minimum (a NaN
    makes it NaN, which fails >= 0 too), since amin over an int64 view is ~2.4x slower (torch 2.13
    CPU, 256 x 32,000: 4.7 against 1.9 ms).
    """
    return t.amin() if t.dtype == torch.float64 else t.view(_BITS[t.dtype]).amin()


def _fast_ok(p, q, Sp, Sq, V: int, drafts=None, q_x=None) -> torch.Tensor:
    """() bool tensor, True when every row is finite, non-negative and sums to 1 (and every draft is valid).

    Beyond the row sums (NaN and inf propagate into them), one pass per tensor: a sign check
    (`_sign_min`), which -0.0 or a NaN may also trip (the diagnosis then decides).
    """
    if p.dtype == q.dtype:
        ok = (torch.stack([Sp, Sq]) - 1).abs_().amax() <= sum_tolerance(p.dtype, V)
    else:
        ok = ((Sp - 1).abs_().amax() <= sum_tolerance(p.dtype, V)) & (
            (Sq - 1).abs_().amax() <= sum_tolerance(q.dtype, V)
        )
    ok &= torch.minimum(_sign_min(p), _sign_min(q)) >= 0
    if drafts is not None:
        ok &= ((drafts >= 0) & (drafts < V) & (q_x > 0)).all()
    return ok


def _diagnose(named_rows, sums=None, drafts=None, q_x=None, atol=None) -> None:
    """Raise a ValueError naming the first problem (tensor, row, entry); return if there is none.

    Host reads are fine here: this runs only for a batch the fast check flagged.
    """
    for k, (name, t) in enumerate(named_rows):
        V = t.shape[-1]
        finite = torch.isfinite(t)
        if not bool(finite.all()):
            i, j = (int(v) for v in (~finite).nonzero()[0])
            raise ValueError(f"{name} row {i} contains {float(t[i, j])} at token {j}: probabilities must be finite")
        neg = t < 0
        if bool(neg.any()):
            i, j = (int(v) for v in neg.nonzero()[0])
            raise ValueError(f"{name} row {i} has a negative entry {float(t[i, j]):.6g} at token {j}")
        s = sums[k] if sums is not None else t.sum(-1, dtype=_ACC[t.dtype])
        tol = sum_tolerance(t.dtype, V) if atol is None else float(atol)
        bad = ~((s - 1).abs() <= tol)
        if bool(bad.any()):
            i = int(bad.nonzero()[0])
            raise ValueError(
                f"{name} row {i} sums to {float(s[i]):.6g}, not 1 (tolerance {tol:.2g} for "
                f"{str(t.dtype).replace('torch.', '')} rows of length {V})"
            )
    if drafts is not None:
        V = named_rows[-1][1].shape[-1]
        out = (drafts < 0) | (drafts >= V)
        if bool(out.any()):
            i = int(out.nonzero()[0])
            raise ValueError(f"drafts[{i}] = {int(drafts[i])} is outside the vocabulary 0..{V - 1}")
        zero = ~(q_x > 0)
        if bool(zero.any()):
            i = int(zero.nonzero()[0])
            raise ValueError(f"drafts[{i}] = {int(drafts[i])} has q = 0 in row {i}: it cannot have been drawn from q")


def check_rows(p, q, atol: float | None = None) -> None:
    """Validate (B, V) probability rows: same shape, finite, non-negative, rows sum to 1.

    The tolerance on the sums follows the dtype and V (`sum_tolerance`) unless `atol` is given.
    Raises ValueError naming the tensor, row and problem; reads the device once when all is well.
    """
    p = as_prob_rows(p, "p")
    q = as_prob_rows(q, "q", like=p)
    _check_shapes(p, q)
    sums = [p.sum(-1, dtype=_ACC[p.dtype]), q.sum(-1, dtype=_ACC[q.dtype])]
    if atol is None and bool(_fast_ok(p, q, *sums, p.shape[1])):
        return
    _diagnose((("p", p), ("q", q)), sums, atol=atol)


# ---------------------------------------------------------------------------------------- the sampler


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
    accepts when u q(x)/Σq < p(x)/Σp, otherwise samples from (p/Σp - q/Σq)+. Rows with an
    empty residual fall back to p (that branch is never taken there). Any of float16,
    bfloat16, float32, float64 (sums accumulate in fp32, or fp64 for fp64); lists and numpy
    arrays are converted.

    validate: check that rows are finite, non-negative and sum to 1 within
    `sum_tolerance(dtype, V)`, and that drafts are ids in 0..V-1 with q > 0, with one host
    read for the whole step; a ValueError names the first problem and its row.
    seeds: per-row randomness (vLLM's mixed seeded batch): a (B,) integer tensor (a negative
    entry: use `generator`) or a list of B entries, each an int (a counter-based draw:
    the same seed and rows give the same token, so pass a new seed each step), a
    torch.Generator (advanced by this call) or None (use `generator`). A seeded row's
    token does not depend on the rest of the batch.
    gather_rejected: build the residual for the rejected rows only (default: on CPU;
    elsewhere it would cost a host synchronisation, so all rows get one).
    """
    p = as_prob_rows(p, "p")
    q = as_prob_rows(q, "q", like=p)
    _check_shapes(p, q)
    B, V = p.shape
    dev = p.device
    given = drafts is not None
    if given:
        drafts = _as_drafts(drafts, B, dev)
    u0, u1, u2 = _uniforms(B, 3, generator, seeds, dev).unbind(1)  # draft, acceptance, residual
    if B == 0:
        return TorchSpecSample(drafts if given else u0.long(), u0 > 0, drafts if given else u0.long())
    acc = torch.promote_types(_ACC[p.dtype], _ACC[q.dtype])
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
    ok = _fast_ok(p, q, Sp, Sq, V, drafts if given else None, q_x) if validate else None
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
        _diagnose((("p", p), ("q", q)), (Sp, Sq), drafts if given else None, q_x)
    return TorchSpecSample(tokens, accepted, drafts)


def _residual_draw(p, q, ratio, u, blk, bs_p, rows: torch.Tensor | None = None) -> torch.Tensor:
    """(n,) draws from (p - ratio q)+ for the rows `rows` of p and q, or all rows (from p where that residual is empty).

    ratio, u and bs_p are given for those n rows only. With `rows` (the CPU path), the copy of
    p's rows becomes the residual in place when p is in the accumulation dtype: one (n, V)
    buffer fewer to allocate and write per step, same values.
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


# ---------------------------------------------------------------------------------------- γ-step chains


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
    if rows.shape[0]:
        cand = categorical_torch(rows, generator)  # (γ,) or (γ+1,)
    else:
        cand = torch.empty(0, dtype=torch.int64, device=dev)
    if bonus_row is None:
        cand = torch.cat([cand, torch.full((1,), -1, dtype=torch.int64, device=dev)])
    token = cand[accepted]
    return ChainVerdict(accepted, token, flags)
