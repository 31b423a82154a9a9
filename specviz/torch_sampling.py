"""Speculative sampling in torch: a batch of (p, q) rows at once, on any device.

>>> import torch
>>> p = torch.tensor([[0.6, 0.3, 0.1]]).repeat(4, 1)   # (B=4, V=3)
>>> q = torch.tensor([[0.4, 0.5, 0.1]]).repeat(4, 1)
>>> out = spec_sample_torch(p, q, generator=torch.Generator().manual_seed(0))
>>> out.tokens.shape, out.accepted.dtype
(torch.Size([4]), torch.bool)
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class TorchSpecSample:
    """One speculative step per row: emitted token, accept flag, drafted token, each (B,)."""

    tokens: torch.Tensor  # (B,) int64
    accepted: torch.Tensor  # (B,) bool
    drafts: torch.Tensor  # (B,) int64


def check_rows(p: torch.Tensor, q: torch.Tensor, atol: float = 1e-4) -> None:
    """Validate (B, V) probability rows: same shape, finite, non-negative, rows sum to 1."""
    if p.shape != q.shape:
        raise ValueError(f"p {tuple(p.shape)} and q {tuple(q.shape)} must have the same (B, V) shape")
    if p.ndim != 2:
        raise ValueError(f"p and q must be 2-D (batch, vocabulary), got {p.ndim}-D")
    for name, t in (("p", p), ("q", q)):
        if not torch.isfinite(t).all():
            raise ValueError(f"{name} contains NaN or inf")
        if (t < 0).any():
            raise ValueError(f"{name} contains negative entries")
        sums = t.double().sum(-1)
        bad = (sums - 1).abs() > atol
        if bad.any():
            i = int(bad.nonzero()[0])
            raise ValueError(f"{name} row {i} sums to {float(sums[i]):.6g}, not 1")


def spec_sample_torch(p: torch.Tensor, q: torch.Tensor, generator: torch.Generator | None = None,
                      drafts: torch.Tensor | None = None, validate: bool = True) -> TorchSpecSample:
    """One lossless speculative step for each row of p, q (B, V).

    Drafts x ~ q (or the given `drafts`, which must have been sampled from q), accepts
    when u < p(x)/q(x), otherwise samples from (p - q)+ / Z. Rows with Z = 0 fall back
    to p (that branch is never taken there). Computation happens in p's dtype.
    """
    if validate:
        check_rows(p, q)
    B = p.shape[0]
    if drafts is None:
        drafts = torch.multinomial(q, 1, generator=generator).squeeze(-1)  # (B,)
    p_x = p.gather(-1, drafts[:, None]).squeeze(-1)  # (B,)
    q_x = q.gather(-1, drafts[:, None]).squeeze(-1)  # (B,)
    u = torch.rand(B, generator=generator, device=p.device, dtype=p.dtype)
    accepted = (q_x > 0) & (u * q_x < p_x)  # u < p/q without dividing
    res = (p - q).clamp_min(0)  # (B, V)
    z = res.sum(-1, keepdim=True)
    res = torch.where(z > 0, res, p)
    repl = torch.multinomial(res, 1, generator=generator).squeeze(-1)
    tokens = torch.where(accepted, drafts, repl)
    return TorchSpecSample(tokens, accepted, drafts)


def categorical_torch(rows: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """(n,) int64 draws, one per row of (n, V) non-negative weights, by inverse CDF; never a zero-weight token.

    Runs on the rows' device with no host synchronisation.

    >>> rows = torch.tensor([[0.0, 1.0, 0.0], [0.5, 0.0, 0.5]], dtype=torch.float64)
    >>> categorical_torch(rows, torch.Generator().manual_seed(0))[0].item()
    1
    """
    cdf = rows.cumsum(-1)  # (n, V)
    total = cdf[:, -1:]  # (n, 1)
    u = torch.rand(rows.shape[0], 1, generator=generator, device=rows.device, dtype=cdf.dtype) * total
    # u * total can round up to the total: keep u below it, so the search stops at a token with weight > 0
    u = torch.minimum(u, torch.nextafter(total, torch.zeros_like(total)))
    return torch.searchsorted(cdf, u, right=True).squeeze(-1)  # (n,)


def residual_rows(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """(n, V) replacement distributions (p - q)+ / Z per row; p itself where Z = 0 (p == q: never sampled)."""
    r = (p - q).clamp_min(0)
    z = r.sum(-1, keepdim=True)
    return torch.where(z > 0, r / z.clamp_min(torch.finfo(r.dtype).tiny), p)


@dataclass(frozen=True)
class ChainVerdict:
    """One γ-step verification on the device: drafts kept, the extra token, per-draft accept flags."""

    accepted: torch.Tensor  # () int64: number of leading drafts kept, 0..γ
    token: torch.Tensor  # () int64: replacement after a rejection, or the bonus token; -1 for none
    accept_flags: torch.Tensor  # (γ,) bool: u_j q(x_j) < p(x_j) for every draft j (independent of order)


def verify_chain_torch(p_rows: torch.Tensor, q_rows: torch.Tensor, drafts: torch.Tensor,
                       generator: torch.Generator | None = None, replacement_rows: torch.Tensor | None = None,
                       bonus_row: torch.Tensor | None = None) -> ChainVerdict:
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
