"""Checks of distributions: array-likes into validated 1-D probability vectors; `checks` checks single values.

Every public function of specviz funnels its distributions through `as_dist` /
`as_pair`, so bad input fails here with a message that names the problem instead of
turning into a NaN three layers down.

>>> as_dist([0.6, 0.3, 0.1])
array([0.6, 0.3, 0.1])
>>> as_dist([0.6, 0.3, 0.2])
Traceback (most recent call last):
...
ValueError: p sums to 1.1, not 1 (within 1e-06); use specviz.normalize() for unnormalised weights
"""

from __future__ import annotations

import math
from fractions import Fraction
from numbers import Rational

import numpy as np
from numpy.typing import ArrayLike

SUM_TOL = 1e-6


def _to_array(x, name: str) -> np.ndarray:
    """Any array-like (list, tuple, numpy, torch) -> numpy array; Fractions stay exact."""
    if hasattr(x, "detach") and hasattr(x, "cpu"):  # a torch tensor, without importing torch
        x = x.detach().cpu().double().numpy()
    if isinstance(x, np.ndarray) and x.dtype != object:
        arr = x
    else:
        items = list(x) if isinstance(x, (list, tuple)) or isinstance(x, np.ndarray) else None
        if items is not None and any(isinstance(v, Fraction) for v in _flatten(items)):
            try:
                arr = np.array(items, dtype=object)
                if arr.ndim == 1:
                    arr = np.array([Fraction(v) for v in items], dtype=object)
            except (TypeError, ValueError) as e:
                raise ValueError(f"{name} must contain numbers: {e}") from None
            return arr
        try:
            arr = np.asarray(x, dtype=np.float64)
        except (TypeError, ValueError) as e:
            raise ValueError(f"{name} must be a 1-D array of numbers, got {type(x).__name__}: {e}") from None
    if arr.dtype.kind not in "fiub":
        raise ValueError(f"{name} must contain real numbers, got dtype {arr.dtype}")
    return arr.astype(np.float64, copy=False)


def _flatten(items):
    for v in items:
        if isinstance(v, (list, tuple)):
            yield from _flatten(v)
        else:
            yield v


def is_exact(arr: np.ndarray) -> bool:
    """True when `arr` holds exact Fractions (object dtype)."""
    return arr.dtype == object


def _check_values(arr: np.ndarray, name: str, what: str = "entry") -> None:
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D (one probability per token), got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty: a distribution needs at least one token")
    if is_exact(arr):
        for i, v in enumerate(arr):
            if not isinstance(v, Rational):
                raise ValueError(f"{name}[{i}] = {v!r} mixes Fractions with non-exact numbers")
            if v < 0:
                raise ValueError(f"{name}[{i}] = {v} is negative: probabilities must be >= 0")
        return
    bad = np.flatnonzero(np.isnan(arr))
    if bad.size:
        raise ValueError(f"{name}[{bad[0]}] is NaN: every {what} must be a finite number")
    bad = np.flatnonzero(np.isinf(arr))
    if bad.size:
        raise ValueError(f"{name}[{bad[0]}] is {arr[bad[0]]}: every {what} must be finite")
    bad = np.flatnonzero(arr < 0)
    if bad.size:
        raise ValueError(f"{name}[{bad[0]}] = {arr[bad[0]]:g} is negative: probabilities must be >= 0")


def as_dist(p: ArrayLike, name: str = "p") -> np.ndarray:
    """Validate one probability vector; return it as a float64 (or exact Fraction) array.

    Accepts lists, tuples, numpy arrays and torch tensors. Raises ValueError naming the
    problem (2-D input, NaN, inf, negative entry with its index, wrong sum).
    """
    arr = _to_array(p, name)
    _check_values(arr, name)
    total = arr.sum()
    if is_exact(arr):
        if total != 1:
            raise ValueError(f"{name} sums to {total}, not exactly 1; use specviz.normalize()")
    elif abs(total - 1.0) > SUM_TOL:
        raise ValueError(
            f"{name} sums to {total:.6g}, not 1 (within {SUM_TOL:g}); use specviz.normalize() for unnormalised weights"
        )
    return arr


def as_pair(p: ArrayLike, q: ArrayLike, names: tuple[str, str] = ("p", "q")) -> tuple[np.ndarray, np.ndarray]:
    """Validate target p and draft q over the same vocabulary; return both arrays.

    If one is exact (Fractions) and the other float, both become float.
    """
    p = as_dist(p, names[0])
    q = as_dist(q, names[1])
    if p.shape != q.shape:
        raise ValueError(
            f"{names[0]} and {names[1]} have different lengths ({p.size} vs {q.size}): "
            "target and draft must share one vocabulary"
        )
    if is_exact(p) != is_exact(q):
        p, q = p.astype(np.float64), q.astype(np.float64)
    return p, q


def normalize(weights: ArrayLike, name: str = "weights") -> np.ndarray:
    """Non-negative weights -> a probability vector (weights / sum).

    >>> normalize([3, 1])
    array([0.75, 0.25])
    """
    arr = _to_array(weights, name)
    _check_values(arr, name, what="weight")
    total = arr.sum()
    if total == 0:
        raise ValueError(f"{name} are all zero: cannot normalise to a distribution")
    if not is_exact(arr) and not math.isfinite(float(total)):
        raise ValueError(f"{name} sum to {total}: too large to normalise")
    return arr / total


def check_prob(x: float, name: str) -> float:
    """Validate a scalar probability in [0, 1]."""
    v = float(x)
    if not (0.0 <= v <= 1.0):
        raise ValueError(f"{name} must be a probability in [0, 1], got {x!r}")
    return v
