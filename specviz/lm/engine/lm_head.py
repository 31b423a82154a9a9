"""The LM head of a forward over a few positions on a CPU, computed as W @ hᵀ: the same product, half the time.

A verify step reads k = 2..9 positions, so the target's LM head (V × H, 49,152 × 576 for
SmolLM2) multiplies a (k, H) block. On this machine's CPU (torch 2.13, MKL, one thread)
`torch.nn.functional.linear` takes 2.5-3.8x as long for k = 2 or 3 as for k = 1, though the
weights are read once either way; the same product written W @ hᵀ takes 1.3-1.7x, and a whole
verify forward over 2-3 positions gets 1.14-1.16x faster (benchmarks/bench_lm_head.py; its
table is in docs/benchmarks.md, "The LM head of a verify step"; at k = 8 the two are even).
`rows_as_columns` makes a model's LM head compute products of 2..MAX_ROWS rows that way, on
the CPU only: a model on a GPU, a one-row forward, a prompt's first read and any other head
(not an `nn.Linear`) are left as they were.

The values are the same products summed in another order (float32 rounding apart):

>>> import torch
>>> torch.manual_seed(0) and None
>>> lm = torch.nn.Linear(8, 50, bias=False)
>>> h = torch.randn(1, 3, 8)
>>> want = lm(h)
>>> rows_as_columns(lm), rows_as_columns(lm)  # once: a second call finds it done
(True, False)
>>> got = lm(h)
>>> got.shape == want.shape and bool(torch.allclose(got, want, atol=1e-6))
True
"""

from __future__ import annotations

import torch

__all__ = ["MAX_ROWS", "rows_as_columns"]

MAX_ROWS = 4
"""Above this many rows the product goes to `linear` (measured even at 8 rows, and MKL's blocking pays beyond)."""


def rows_as_columns(lm_head: torch.nn.Module) -> bool:
    """Make an `nn.Linear` LM head on the CPU compute 2..MAX_ROWS rows as (W @ hᵀ)ᵀ; True if it did so now."""
    if not isinstance(lm_head, torch.nn.Linear) or getattr(lm_head, "specviz_rows_as_columns", False):
        return False
    if lm_head.weight.device.type != "cpu":
        return False

    def forward(x: torch.Tensor) -> torch.Tensor:
        w, b = lm_head.weight, lm_head.bias
        rows = x.numel() // max(x.shape[-1], 1) if x.ndim else 0
        if w.device.type != "cpu" or x.dtype != w.dtype or not 2 <= rows <= MAX_ROWS:
            return torch.nn.functional.linear(x, w, b)
        out = (w @ x.reshape(rows, x.shape[-1]).T).T  # (rows, V)
        if b is not None:
            out = out + b
        return out.reshape(*x.shape[:-1], w.shape[0])

    lm_head.forward = forward
    lm_head.specviz_rows_as_columns = True
    return True
