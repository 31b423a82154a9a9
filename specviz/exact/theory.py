"""Exact math of one speculative sampling step (p = target, q = draft).

Pure functions: numpy in, numpy out, no randomness, no plotting. With
`fractions.Fraction` inputs every function returns exact Fractions.

The running example of the tutorial (vocabulary cat, dog, fish):

>>> p, q = [0.6, 0.3, 0.1], [0.4, 0.5, 0.1]
>>> overlap(p, q)                      # accepted mass per token, min(p, q)
array([0.4, 0.3, 0.1])
>>> round(acceptance_rate(p, q), 12)  # sum of min(p, q)
0.8
>>> residual(p, q).round(12)          # (p - q)+, what rejection must add back
array([0.2, 0. , 0. ])
>>> resample_dist(p, q).round(12)     # p' = (p - q)+ / Z
array([1., 0., 0.])
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from numbers import Rational

import numpy as np
from numpy.typing import ArrayLike

from ..foundation.checks import real
from ..foundation.validate import as_dist, as_pair, is_exact


def _zero_like(arr):
    return Fraction(0) if is_exact(arr) else 0.0


def positive_part(x: np.ndarray) -> np.ndarray:
    """max(x, 0) elementwise, keeping Fractions exact."""
    if is_exact(x):
        return np.array([v if v > 0 else Fraction(0) for v in x], dtype=object)
    return np.maximum(x, 0.0)


def safe_ratio(num: np.ndarray, den: np.ndarray, where_zero: float) -> np.ndarray:
    """num / den elementwise, `where_zero` where den == 0 (no division by zero)."""
    if is_exact(num):
        return np.array([n / d if d != 0 else Fraction(where_zero) for n, d in zip(num, den)], dtype=object)
    out = np.full(num.shape, float(where_zero))
    np.divide(num, den, out=out, where=den > 0)
    return out


def overlap(p: ArrayLike, q: ArrayLike) -> np.ndarray:
    """min(p, q) per token: the mass both models agree on, P(x and accept).

    >>> overlap([0.6, 0.3, 0.1], [0.4, 0.5, 0.1])
    array([0.4, 0.3, 0.1])
    """
    p, q = as_pair(p, q)
    return np.minimum(p, q)


def residual(p: ArrayLike, q: ArrayLike) -> np.ndarray:
    """(p - q)+ per token, unnormalised: what the target wants beyond the draft.

    >>> residual([0.6, 0.3, 0.1], [0.4, 0.5, 0.1]).round(12)
    array([0.2, 0. , 0. ])
    """
    p, q = as_pair(p, q)
    return positive_part(p - q)


def acceptance_prob(p: ArrayLike, q: ArrayLike) -> np.ndarray:
    """a(x) = min(1, p(x) / q(x)), defined as 1 where q(x) = 0 (never drafted).

    This is the reference. The rule is written out again, for speed or for another
    number type, in these places; tests/test_acceptance_references.py checks each
    against this function (at q = 0 the value is never used, since q = 0 is never drafted,
    and some of them choose 0 there):

    - `specviz.samplers.chain.spec_chain_sample`: `u < min(1, p/q)` on the drawn drafts (numpy, vectorised).
    - `specviz.samplers.sampling.multi_draft_sample`: this function against the running R of each stage
      (R = p at the first, as for one draft), then `u < a` on the drawn drafts (numpy, vectorised).
    - `specviz.exact.standardize.verify_output_dist` (and `mismatch_output_dist` through it): this function,
      then 0 where q = 0 (vLLM's guard: there the draft comes from another q, so that value is used).
    - `specviz.exact.multidraft.children_walk` (min(1, R/q) with R = p for the first child; 0 where
      q = 0), reached through `specviz.samplers.tree.child_acceptance`, and
      `specviz.samplers.tree.draft_tree` (one draw against the same rule, written out in its walk).
    - `specviz.samplers.torch_sampling.verify_chain_torch` (`u q < p`, rejects where q = 0) and
      `specviz.samplers.torch_sampling.spec_sample_torch` (`u q/Σq < p/Σp`, for unnormalised rows).
    - `specviz.lm.trees.verify.verify_tree_torch` (`u q < R`, R = p for a node's first child; rejects
      where q = 0).
    - `specviz.widgets.live.closeup.token_closeup`: the "kept with probability" shown in its explanation
      (1 where q = 0).
    - `specviz.samplers.verifiers.correct_verifier`: `u < min(1, p/q)` on the drafts.
    - `specviz.exact.numerics.lossless_output_in`: q min(1, p/q) evaluated in a low precision
      (1 where q = 0).
    - `specviz.lm.engine.loop.SpeculativeEngine`: `verify_chain_torch` on the device, and at temperature 0
      its greedy path (one-hot p and q: a draft is kept iff it is the target's argmax).

    >>> acceptance_prob([0.6, 0.3, 0.1], [0.4, 0.5, 0.1])
    array([1. , 0.6, 1. ])
    """
    p, q = as_pair(p, q)
    ratio = safe_ratio(p, q, where_zero=1)
    return np.minimum(ratio, Fraction(1) if is_exact(p) else 1.0)


def acceptance_rate(p: ArrayLike, q: ArrayLike) -> float | Fraction:
    """P(accept) = sum_x min(p(x), q(x)) = 1 - TV(p, q).

    >>> round(acceptance_rate([0.6, 0.3, 0.1], [0.4, 0.5, 0.1]), 12)
    0.8
    """
    total = overlap(p, q).sum()
    return total if isinstance(total, Fraction) else float(total)


def tv_distance(p: ArrayLike, q: ArrayLike) -> float | Fraction:
    """Total variation distance 1/2 sum_x |p(x) - q(x)|.

    >>> round(tv_distance([0.6, 0.3, 0.1], [0.4, 0.5, 0.1]), 12)
    0.2
    """
    p, q = as_pair(p, q)
    total = abs(p - q).sum() / 2
    return total if isinstance(total, Fraction) else float(total)


def rejection_mass(p: ArrayLike, q: ArrayLike) -> float | Fraction:
    """Z = sum_x (p(x) - q(x))+ , which equals P(reject) = 1 - acceptance_rate."""
    total = residual(p, q).sum()
    return total if isinstance(total, Fraction) else float(total)


def resample_dist(p: ArrayLike, q: ArrayLike) -> np.ndarray:
    """p'(x) = (p(x) - q(x))+ / Z, the repair distribution sampled after a rejection.

    When Z = 0 (p == q) rejection never happens; p is returned instead of 0/0.

    This is the reference, in numpy (exact with Fractions); `repair` is its computation, for
    arrays already checked. The repair is written again, for another number type or for
    speed, or drawn from, in these places; tests/test_residual_references.py checks each
    against this function (where Z = 0 it is never sampled, and some of them choose 0 there):

    - `specviz.samplers.chain.spec_chain_sample`: this function once per context, drawn from in rows.
    - `specviz.exact.multidraft.multi_draft_stages`: `repair` against the running R at each stage;
      `specviz.samplers.tree.child_acceptance` and `specviz.samplers.tree.draft_tree` draw their resampled token
      from it, and `specviz.samplers.sampling.multi_draft_sample` its fallback token.
    - `specviz.exact.standardize.verify_output_dist` (and `mismatch_output_dist` through it): this function.
    - `specviz.samplers.torch_sampling.residual_rows`: the torch reference, (p - q)+ / Z per row, p where Z = 0;
      `specviz.samplers.torch_sampling.verify_chain_torch` draws from it unless given other rows, and so
      does `specviz.lm.engine.loop.SpeculativeEngine.residual`, the engine's hook.
    - `specviz.samplers.torch_sampling.spec_sample_torch` (its `_residual_draw`): (p - (Σp/Σq) q)+ on the
      rows as given (unnormalised), built for the rejected rows only on CPU; p where it is empty.
    - `specviz.samplers.verifiers.correct_verifier` (its `_verify`): `np.maximum(p - q, 0)` drawn unnormalised,
      p where Z = 0.
    - `specviz.exact.numerics.lossless_output_in`: (p - q)+ / Z in a low precision, p where Z = 0.
    - `specviz.samplers.audit.textbook_joint`: the rejected draft mass spread over (p - q)+ / Z; 0 where Z = 0.
    - `specviz.samplers.coupling.maximal_coupling`: (q - p)+ (x) (p - q)+ (y) / Z off the diagonal; 0 where Z = 0.

    >>> resample_dist([0.5, 0.5], [0.5, 0.5])
    array([0.5, 0.5])
    """
    return repair(*as_pair(p, q))[0]


def repair(p: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, float | Fraction]:
    """(p', Z): the repair distribution (p - q)+ / Z and its mass Z, for arrays `as_pair` has checked; p' = p at Z = 0.

    `resample_dist` checks its input, then calls this; a loop over arrays it has already
    checked (`specviz.exact.multidraft`) calls it directly.

    >>> [v.round(12).tolist() for v in repair(np.array([0.6, 0.3, 0.1]), np.array([0.4, 0.5, 0.1]))]
    [[1.0, 0.0, 0.0], 0.2]
    """
    r = positive_part(p - q)
    z = r.sum()
    return (p.copy() if z <= 0 else r / z), z


@dataclass(frozen=True)
class Joint:
    """The money-diagram decomposition P(output = x) = P(x and accept) + P(x and reject)."""

    accept: np.ndarray  # (V,) P(output = x and the draft was accepted)
    reject: np.ndarray  # (V,) P(output = x and the draft was rejected)

    @property
    def output(self) -> np.ndarray:
        """(V,) P(output = x)."""
        return self.accept + self.reject

    @property
    def p_accept(self) -> float | Fraction:
        """Total probability that the draft token is kept."""
        return self.accept.sum()

    @property
    def p_reject(self) -> float | Fraction:
        """Total probability of a rejection (equals Z for the lossless rule)."""
        return self.reject.sum()


# ---------------------------------------------------------------- importance sampling


def importance_weights(p: ArrayLike, q: ArrayLike) -> np.ndarray:
    """w(x) = p(x) / q(x), the importance weight of a draft sample x (0 where q(x) = 0).

    >>> importance_weights([0.6, 0.3, 0.1], [0.4, 0.5, 0.1])
    array([1.5, 0.6, 1. ])
    """
    p, q = as_pair(p, q)
    return safe_ratio(p, q, where_zero=0)


def importance_bias_mass(p: ArrayLike, q: ArrayLike) -> float | Fraction:
    """Target mass on tokens the draft never proposes (q = 0, p > 0): IS cannot see it."""
    p, q = as_pair(p, q)
    m = p[q == 0].sum() if not is_exact(p) else sum((a for a, b in zip(p, q) if b == 0), Fraction(0))
    return m if isinstance(m, Fraction) else float(m)


# ---------------------------------------------------------------- rejection sampling


def envelope_constant(p: ArrayLike, q: ArrayLike) -> float | Fraction:
    """Smallest M with M * q >= p everywhere (max p/q); inf if q = 0 where p > 0.

    >>> round(envelope_constant([0.6, 0.3, 0.1], [0.4, 0.5, 0.1]), 12)
    1.5
    """
    p, q = as_pair(p, q)
    if is_exact(p):
        if any(b == 0 and a > 0 for a, b in zip(p, q)):
            return float("inf")
        return max(a / b for a, b in zip(p, q) if b > 0)
    if np.any((q == 0) & (p > 0)):
        return float("inf")
    return float(np.max(safe_ratio(p, q, where_zero=0)))


def _check_envelope(M) -> float | Fraction:
    """M as a finite number > 0 (ints and Fractions stay exact)."""
    v = real(M, "M (envelope constant)", lo=0, lo_open=True)
    return M if isinstance(M, Rational) else v


def rejection_output_dist(p: ArrayLike, q: ArrayLike, M: float | None = None) -> np.ndarray:
    """Output of classic rejection sampling (accept x ~ q w.p. min(1, p/(M q)), else retry).

    With M >= envelope_constant(p, q) it is exactly p, accepting 1/M per try; with a
    too-small M the output is min(p, M q) renormalised (the clipped shape).
    """
    p, q = as_pair(p, q)
    if M is None:
        M = envelope_constant(p, q)
        if M == float("inf"):
            raise ValueError("envelope constant M is inf (q = 0 where p > 0): rejection sampling cannot reach p")
    M = _check_envelope(M)
    kept = np.minimum(p, q * M)  # (V,) P(draw x and accept) * M
    return kept / kept.sum()


def rejection_acceptance(p: ArrayLike, q: ArrayLike, M: float | None = None) -> float | Fraction:
    """Per-try acceptance of classic rejection sampling: sum min(p, M q) / M (= 1/M when valid)."""
    p, q = as_pair(p, q)
    if M is None:
        M = envelope_constant(p, q)
        if M == float("inf"):
            return 0.0
    M = _check_envelope(M)
    total = np.minimum(p, q * M).sum() / M
    return total if isinstance(total, Fraction) else float(total)


def entropy(p: ArrayLike) -> float:
    """Shannon entropy in nats."""
    p = as_dist(p).astype(np.float64)
    nz = p[p > 0]
    return float(-(nz * np.log(nz)).sum())
