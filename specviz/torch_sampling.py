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
