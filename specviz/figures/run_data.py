"""What the real-model views share: statistics that may be missing, tensors read on the host, "other".

A view of a run takes a `specviz.lm.stats.stats.SpecStats` (or None: an empty panel of γ
positions) and reads its fields with `stat_of`; numbers that may come from a model go
through `host_array` (a tensor on any device is copied to the CPU first).

>>> stat_of(None, "per_position", 3).tolist(), nan_list([1.0, float("nan")])
([0.0, 0.0, 0.0], [1.0, None])
>>> host_array([1, 2]).dtype, OTHER
(dtype('float64'), 'other')
"""

from __future__ import annotations

import math

import numpy as np

from ..foundation.i18n import t

OTHER = "other"
"""The English name of the bucket of every token not shown (`other_label()` is the current language's)."""


def other_label() -> str:
    """The name of the "other" bucket (every token not shown) in the current language."""
    return t("run.other")


def host_array(values, dtype=np.float64) -> np.ndarray:
    """Numbers as a NumPy array in host memory: a torch tensor on any device is copied to the CPU first.

    `np.asarray` on a CUDA tensor raises (NumPy cannot read GPU memory), so every figure input that
    may come from a model goes through here: `.detach().to("cpu", float64)`, then NumPy.
    """
    if hasattr(values, "detach") and hasattr(values, "to"):  # a torch tensor, wherever it lives
        import torch

        values = values.detach().to(device="cpu", dtype=torch.float64).numpy()
    return np.asarray(values, dtype=dtype)


def nan_list(values) -> list:
    """Floats with NaN -> None (plotly draws a gap; JSON has no NaN)."""
    return [None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v) for v in values]


def empty_stats(gamma: int) -> dict:
    """The fields of a run with no verify step yet, for `gamma` draft positions (what an empty panel shows)."""
    g = int(gamma)
    nan = float("nan")
    return dict(
        gamma=g,
        per_position=np.zeros(g),
        per_position_conditional=np.full(g, nan),
        accepted_hist=np.zeros(g + 1, np.int64),
        accepted_hist_theory=np.zeros(g + 1),
        alpha=nan,
        steps=0,
    )


def stat_of(stats, name: str, gamma: int = 4):
    """Field `name` of `stats` (a SpecStats), or of `empty_stats(gamma)` when stats is None."""
    if stats is None:
        return empty_stats(gamma)[name]
    return getattr(stats, name)


__all__ = [
    "OTHER",
    "empty_stats",
    "host_array",
    "nan_list",
    "other_label",
    "stat_of",
]
