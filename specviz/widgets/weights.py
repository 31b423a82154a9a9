"""Weights for the editor: `snap` to a grid of 1/units and `parse_weights` from typed text."""

from __future__ import annotations

import numpy as np

from ..foundation.i18n import t
from ..foundation.validate import normalize


def snap(weights, units: int = 100) -> np.ndarray:
    """Non-negative weights -> integer counts summing to `units` (largest remainder rounding).

    The editor keeps p and q on this grid, so the values the sliders show (k / units)
    are exactly the values the figures use, and they always sum to 1.

    >>> snap([1, 1, 1]).tolist()
    [34, 33, 33]
    """
    w = normalize(weights)  # ValueError for negative / NaN / all-zero weights
    x = np.asarray(w, dtype=np.float64) * units
    base = np.floor(x).astype(np.int64)
    short = int(units - base.sum())
    if short > 0:
        order = np.argsort(-(x - base), kind="stable")
        base[order[:short]] += 1
    return base


def parse_weights(text: str, name: str = "p") -> np.ndarray:
    """'0.6, 0.3 0.1' -> array([0.6, 0.3, 0.1]); ValueError with a readable message otherwise.

    >>> parse_weights("0.6; 0.3 0.1").tolist()
    [0.6, 0.3, 0.1]
    """
    parts = [s for s in text.replace(";", ",").replace(",", " ").split() if s]
    if not parts:
        raise ValueError(t("editor.no_numbers", name=name))
    try:
        return np.array([float(s) for s in parts])
    except ValueError:
        raise ValueError(t("editor.not_numbers", name=name, text=text)) from None


def rescale_others(counts: np.ndarray, i: int, k: int, units: int = 100) -> np.ndarray:
    """Counts with token i set to k and the others rescaled to fill `units` (in their old proportions).

    >>> rescale_others(np.array([60, 30, 10]), 0, 80).tolist()
    [80, 15, 5]
    """
    out = np.array(counts, dtype=np.int64)
    others = np.arange(out.size) != i
    w = out[others].astype(np.float64)
    if w.sum() <= 0:
        w = np.ones(w.size)
    rest = units - k
    out[others] = snap(w, rest) if rest > 0 else 0
    out[i] = k
    return out
