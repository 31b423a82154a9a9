"""Hand-written verifiers in the shape an engineer would write them: one correct, several buggy.

Each is `verifier(p, q, n, rng) -> (n,) token ids`, the signature `audit` accepts, so
they show what the audit catches (and serve as templates for your own code). With
`with_drafts=True` each returns `(drafts, tokens)` instead, and `audit` then also checks what the
rule does with its draft: its acceptance against the optimum Σ min(p, q). `ignores_the_draft`
is lossless but fails that check.

>>> from specviz import audit
>>> audit(correct_verifier, [0.6, 0.3, 0.1], [0.4, 0.5, 0.1]).passed
True
>>> audit(BUGGY_VERIFIERS["off_by_one"], [0.6, 0.3, 0.1], [0.4, 0.5, 0.1]).passed
False
>>> audit(ignores_the_draft, [0.6, 0.3, 0.1], [0.4, 0.5, 0.1]).efficient
False
"""

from __future__ import annotations

import numpy as np


def _draw(w, n, rng):
    """(n,) ids from non-negative weights w (normalised here)."""
    cdf = np.cumsum(w)
    idx = np.searchsorted(cdf, rng.random(n) * cdf[-1], side="right")
    return np.minimum(idx, int(np.flatnonzero(w)[-1]))


def _verify(p, q, n, rng, *, draft=None, ratio=None, replacement=None, with_drafts=False):
    """Generic accept/replace loop; each keyword swaps in one (possibly buggy) piece; `with_drafts`: (drafts, out)."""
    x = _draw(q, n, rng) if draft is None else draft(q, n, rng)  # (n,) drafted ids
    ratio = (p / np.where(q > 0, q, 1.0)) if ratio is None else ratio
    accept = rng.random(n) < np.minimum(1.0, ratio[x])
    res = np.maximum(p - q, 0.0) if replacement is None else replacement
    out = x.copy()
    out[~accept] = _draw(res if res.sum() > 0 else p, int((~accept).sum()), rng)
    return (x, out) if with_drafts else out


def correct_verifier(p: np.ndarray, q: np.ndarray, n: int, rng: np.random.Generator, with_drafts: bool = False):
    """Accept min(1, p/q), replace from (p - q)+ / Z: lossless. `with_drafts=True` returns (drafts, out)."""
    return _verify(p, q, n, rng, with_drafts=with_drafts)


def ignores_the_draft(p, q, n, rng, with_drafts=True):
    """Draws n drafts from q, then outputs n fresh draws from p: lossless, but it keeps a draft only Σ p·q of the
    time instead of Σ min(p, q). An audit that sees the drafts (the default here) refuses it as not efficient."""
    drafts = _draw(q, n, rng)
    out = _draw(p, n, rng)
    return (drafts, out) if with_drafts else out


def _resample_from_p(p, q, n, rng, with_drafts=False):
    return _verify(p, q, n, rng, replacement=p, with_drafts=with_drafts)


def _abs_residual(p, q, n, rng, with_drafts=False):
    return _verify(p, q, n, rng, replacement=np.abs(p - q), with_drafts=with_drafts)


def _lenient_09(p, q, n, rng, with_drafts=False):
    return _verify(p, q, n, rng, ratio=p / (0.9 * np.where(q > 0, q, 1.0)), with_drafts=with_drafts)


def _inverted_ratio(p, q, n, rng, with_drafts=False):
    return _verify(p, q, n, rng, ratio=q / np.where(p > 0, p, 1.0), with_drafts=with_drafts)


def _greedy_draft(p, q, n, rng, with_drafts=False):
    # the draft token is argmax q, but the ratio still divides by the softmax q
    return _verify(p, q, n, rng, draft=lambda q_, n_, r_: np.full(n_, int(np.argmax(q_))), with_drafts=with_drafts)


def _off_by_one(p, q, n, rng, with_drafts=False):
    # the ratio of the *next* vocabulary entry is compared with the drafted token
    ratio = p / np.where(q > 0, q, 1.0)
    return _verify(p, q, n, rng, ratio=np.roll(ratio, -1), with_drafts=with_drafts)


BUGGY_VERIFIERS = {
    "resample_from_p": _resample_from_p,
    "abs_residual": _abs_residual,
    "lenient_0.9": _lenient_09,
    "inverted_ratio": _inverted_ratio,
    "greedy_draft_softmax_ratio": _greedy_draft,
    "off_by_one": _off_by_one,
}
