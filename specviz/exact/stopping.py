"""Which drafts a step verifies: stopping rules keep the output exact, rules that peek at a drafted token do not.

An adaptive γ decides, draft by draft, whether to go on. The output stays exactly p as long
as whether draft x_j is verified at all is settled *before* x_j is drawn (a stopping time of
the draft process; the proof is in `specviz.lm.gamma.adaptive`). Four rules, each with a threshold t,
on a draft x_j ~ q at some position:

* "fixed": verify every draft (plain γ);
* "stop_after_low_confidence": verify x_j, and draft no more after it when q(x_j) < t
  (transformers' `assistant_confidence_threshold`): lossless;
* "drop_low_confidence": leave x_j out, and stop, when q(x_j) < t: the draft's confidence in
  a token it has already sampled; lossy;
* "drop_unlikely": leave x_j out, and stop, when p(x_j) / q(x_j) < t: a peek at the
  target's verdict; lossy.

A left-out draft ends the step, so the target's own p fills that position. Everything here
is exact enumeration on a context-free pair (the same p and q at every position), so no
number is sampled.

>>> P, Q = [0.6, 0.3, 0.1], [0.4, 0.5, 0.1]
>>> first_token_dist(P, Q, "drop_unlikely", 0.7).round(12)   # dog (p/q = 0.6) is dropped
array([0.7 , 0.15, 0.15])
>>> first_token_dist(P, Q, "stop_after_low_confidence", 0.45).round(12)
array([0.6, 0.3, 0.1])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..foundation.checks import gamma_setting, integer, real
from ..foundation.validate import as_pair
from .theory import acceptance_prob, resample_dist, safe_ratio

STOPPING_RULES = ("fixed", "stop_after_low_confidence", "drop_low_confidence", "drop_unlikely")
LOSSLESS_RULES = ("fixed", "stop_after_low_confidence")
DEFAULT_THRESHOLDS = {
    "fixed": 0.0,
    "stop_after_low_confidence": 0.45,
    "drop_low_confidence": 0.45,
    "drop_unlikely": 0.7,
}
MAX_SEQUENCES = 10**6  # sequence_dist enumerates V**length sequences

__all__ = [
    "DEFAULT_THRESHOLDS",
    "LOSSLESS_RULES",
    "STOPPING_RULES",
    "StoppingReport",
    "compare_stopping",
    "first_token_dist",
    "position_law",
    "sequence_dist",
]


def _check_rule(rule: object) -> str:
    if rule not in STOPPING_RULES:
        raise ValueError(f"unknown stopping rule {rule!r}; known: {', '.join(STOPPING_RULES)}")
    return rule


def position_law(p: ArrayLike, q: ArrayLike, rule: str, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """One drafted position: ((V,) P(emit y and the step goes on drafting), (V,) P(emit y and the step ends)).

    The step goes on after an accepted draft; it ends after a rejection (y from (p - q)+ / Z),
    after a dropped draft (y from p) and, for the stop-after rule, after an accepted
    low-confidence draft.

    >>> go, end = position_law([0.6, 0.3, 0.1], [0.4, 0.5, 0.1], "drop_unlikely", 0.7)
    >>> (go + end).round(12)
    array([0.7 , 0.15, 0.15])
    """
    p, q = as_pair(p, q)
    p, q = p.astype(np.float64), q.astype(np.float64)
    rule = _check_rule(rule)
    t = real(threshold, "threshold", lo=0)
    if rule == "drop_unlikely":
        dropped = safe_ratio(p, q, where_zero=np.inf) < t
    elif rule == "drop_low_confidence":
        dropped = q < t
    else:
        dropped = np.zeros(p.size, dtype=bool)
    stop_after = (q < t) if rule == "stop_after_low_confidence" else np.zeros(p.size, dtype=bool)
    a = acceptance_prob(p, q)
    kept = np.where(dropped, 0.0, q)  # P(draft x and it is verified)
    accepted = kept * a  # P(emit x as the accepted draft)
    rejected = (kept * (1.0 - a)).sum()
    end = q[dropped].sum() * p + rejected * resample_dist(p, q) + np.where(stop_after, accepted, 0.0)
    go = np.where(stop_after, 0.0, accepted)
    return go, end


def first_token_dist(p: ArrayLike, q: ArrayLike, rule: str, threshold: float | None = None) -> np.ndarray:
    """(V,) exact P(the first token of a step = y) when the step may draft, under `rule` with threshold t."""
    rule = _check_rule(rule)
    go, end = position_law(p, q, rule, DEFAULT_THRESHOLDS[rule] if threshold is None else threshold)
    return go + end


def sequence_dist(
    p: ArrayLike, q: ArrayLike, length: int, gamma: int, rule: str, threshold: float | None = None
) -> np.ndarray:
    """(V**length,) exact P(the first `length` tokens) of γ-step decoding under `rule` (index: base-V digits).

    A step drafts at most min(γ, tokens still wanted - 1), as `specviz.lm`'s engine does; a
    lossless rule gives the product of `length` copies of p.

    >>> P, Q = [0.6, 0.3, 0.1], [0.4, 0.5, 0.1]
    >>> bool(np.allclose(sequence_dist(P, Q, 2, 4, "stop_after_low_confidence"), np.outer(P, P).ravel()))
    True
    """
    p, q = as_pair(p, q)
    p, q = p.astype(np.float64), q.astype(np.float64)
    rule = _check_rule(rule)
    t = DEFAULT_THRESHOLDS[rule] if threshold is None else threshold
    length = integer(length, "length", lo=1, hi=64)
    gamma = gamma_setting(gamma)
    if p.size**length > MAX_SEQUENCES:
        raise ValueError(f"{p.size}**{length} sequences is more than {MAX_SEQUENCES:,} to enumerate")
    go, end = position_law(p, q, rule, t)
    memo: dict = {}

    def dist(remaining: int, left: int | None) -> np.ndarray:
        """Law of the next `remaining` tokens; `left` drafts may still come in this step (None: a new step)."""
        if remaining == 0:
            return np.ones(1)
        if left is None:
            left = min(gamma, remaining - 1)
        key = (remaining, left)
        if key not in memo:
            if left == 0:  # no draft here: the bonus token, or a plain target step
                memo[key] = np.kron(p, dist(remaining - 1, None))
            else:
                memo[key] = np.kron(go, dist(remaining - 1, left - 1)) + np.kron(end, dist(remaining - 1, None))
        return memo[key]

    return dist(length, None)


@dataclass(frozen=True)
class StoppingReport:
    """One rule's exact behaviour: first-token law, its TV from p, and the TV of whole sequences from p⊗p⊗…."""

    rule: str
    threshold: float
    lossless: bool
    first_token: np.ndarray
    tv_first: float
    tv_sequences: float


def compare_stopping(
    p: ArrayLike,
    q: ArrayLike,
    thresholds: dict | None = None,
    length: int = 3,
    gamma: int = 4,
    rules: tuple = STOPPING_RULES,
) -> list[StoppingReport]:
    """Every rule's exact first-token law and TV from p, and the TV of `length`-token sequences from p's.

    >>> [round(r.tv_first, 12) for r in compare_stopping([0.6, 0.3, 0.1], [0.4, 0.5, 0.1])]
    [0.0, 0.0, 0.15, 0.15]
    """
    p, q = as_pair(p, q)
    p, q = p.astype(np.float64), q.astype(np.float64)
    chosen = {**DEFAULT_THRESHOLDS, **(thresholds or {})}
    exact = np.ones(1)
    for _ in range(integer(length, "length", lo=1, hi=64)):
        exact = np.kron(exact, p)
    out = []
    for rule in rules:
        t = chosen[_check_rule(rule)]
        first = first_token_dist(p, q, rule, t)
        seqs = sequence_dist(p, q, length, gamma, rule, t)
        out.append(
            StoppingReport(
                rule,
                float(t),
                rule in LOSSLESS_RULES,
                first,
                float(np.abs(first - p).sum() / 2),
                float(np.abs(seqs - exact).sum() / 2),
            )
        )
    return out
