"""The editor's presets: `PRESETS` (key -> button label) and `preset_weights` (what each one sets)."""

from __future__ import annotations

import numpy as np

from ..foundation.examples import TUTORIAL_P, TUTORIAL_Q, TUTORIAL_VOCAB
from .weights import snap

PRESETS = {
    "tutorial": "Tutorial example",
    "perfect": "Perfect draft q = p",
    "disjoint": "Disjoint support",
    "uniform": "Uniform draft",
    "one_hot": "Near one-hot",
}
"""Preset keys -> button labels of the distribution editor."""


def preset_weights(key: str, p_counts, units: int = 100):
    """Preset `key` applied to the editor's p counts: (p, q, vocab), None where it keeps the current one.

    >>> p, q, vocab = preset_weights("perfect", [60, 30, 10])
    >>> p.tolist() == q.tolist() == [60, 30, 10], vocab
    (True, None)
    """
    p_counts = np.asarray(p_counts, dtype=np.float64)
    V = p_counts.size
    if key == "tutorial":
        return TUTORIAL_P, TUTORIAL_Q, TUTORIAL_VOCAB
    if key == "perfect":
        p = snap(p_counts, units)
        return p, p, None
    if key == "disjoint":  # q all on token 0, where p is 0
        return np.concatenate([[0.0], np.arange(V - 1, 0, -1, dtype=np.float64)]), np.eye(V)[0], None
    if key == "uniform":
        return (p_counts if p_counts.sum() else None), np.ones(V), None
    if key == "one_hot":  # p nearly all on its most likely token, one grid step on each other
        p = np.ones(V, dtype=np.float64)
        p[int(np.argmax(p_counts))] = units - (V - 1)
        return p, None, None
    raise ValueError(f"unknown preset {key!r}; presets: {', '.join(PRESETS)}")
