"""Hand-written verifiers in the shape an engineer would write them: one correct, several buggy.

Each is `verifier(p, q, n, rng) -> (n,) token ids`, the signature `audit` accepts, so
they show what the audit catches (and serve as templates for your own code).

>>> from specviz import audit
>>> audit(correct_verifier, [0.6, 0.3, 0.1], [0.4, 0.5, 0.1]).passed
True
>>> audit(BUGGY_VERIFIERS["off_by_one"], [0.6, 0.3, 0.1], [0.4, 0.5, 0.1]).passed
False
"""

from __future__ import annotations

import numpy as np


def _draw(w, n, rng):
    """(n,) ids from non-negative weights w (normalised here)."""
    cdf = np.cumsum(w)
    idx = np.searchsorted(cdf, rng.random(n) * cdf[-1], side="right")
    return np.minimum(idx, int(np.flatnonzero(w)[-1]))


def _verify(p, q, n, rng, *, draft=None, ratio=None, replacement=None):
    """Generic accept/replace loop; each keyword swaps in one (possibly buggy) piece."""
    x = _draw(q, n, rng) if draft is None else draft(q, n, rng)  # (n,) drafted ids
    ratio = (p / np.where(q > 0, q, 1.0)) if ratio is None else ratio
    accept = rng.random(n) < np.minimum(1.0, ratio[x])
    res = np.maximum(p - q, 0.0) if replacement is None else replacement
    out = x.copy()
    out[~accept] = _draw(res if res.sum() > 0 else p, int((~accept).sum()), rng)
    return out


def correct_verifier(p: np.ndarray, q: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """Accept min(1, p/q), replace from (p - q)+ / Z: lossless."""
    return _verify(p, q, n, rng)


def _resample_from_p(p, q, n, rng):
    return _verify(p, q, n, rng, replacement=p)


def _abs_residual(p, q, n, rng):
    return _verify(p, q, n, rng, replacement=np.abs(p - q))


def _lenient_09(p, q, n, rng):
    return _verify(p, q, n, rng, ratio=p / (0.9 * np.where(q > 0, q, 1.0)))


def _inverted_ratio(p, q, n, rng):
    return _verify(p, q, n, rng, ratio=q / np.where(p > 0, p, 1.0))


def _greedy_draft(p, q, n, rng):
    # the draft token is argmax q, but the ratio still divides by the softmax q
    return _verify(p, q, n, rng, draft=lambda q_, n_, r_: np.full(n_, int(np.argmax(q_))))


def _off_by_one(p, q, n, rng):
    # the ratio of the *next* vocabulary entry is compared with the drafted token
    ratio = p / np.where(q > 0, q, 1.0)
    return _verify(p, q, n, rng, ratio=np.roll(ratio, -1))


BUGGY_VERIFIERS = {
    "resample_from_p": _resample_from_p,
    "abs_residual": _abs_residual,
    "lenient_0.9": _lenient_09,
    "inverted_ratio": _inverted_ratio,
    "greedy_draft_softmax_ratio": _greedy_draft,
    "off_by_one": _off_by_one,
}
