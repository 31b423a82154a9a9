"""Couplings of the draft and the output: why sum min(p, q) is the best acceptance a lossless verifier can reach.

A single-draft verifier that is lossless turns a draft token X ~ q into an output token Y ~ p.
Whatever it does inside, the pair (X, Y) has a joint distribution J, a V x V matrix with
J[x, y] = P(draft = x, output = y): its rows sum to q and its columns sum to p (a *coupling*
of q and p). The verifier can only keep the draft when Y = X, so its acceptance is at most
P(Y = X) = trace(J), and trace(J) <= sum_x min(q(x), p(x)) for every coupling, because
J[x, x] is at most its row sum q(x) and at most its column sum p(x). The speculative rule's
joint, `maximal_coupling`, reaches that bound; token matching's, `independent_coupling`,
reaches only sum p q.

>>> from fractions import Fraction as F
>>> p, q = [F(3, 5), F(3, 10), F(1, 10)], [F(2, 5), F(1, 2), F(1, 10)]
>>> coupling_acceptance(maximal_coupling(p, q)), coupling_acceptance(independent_coupling(p, q))
(Fraction(4, 5), Fraction(2, 5))
>>> J = random_coupling([0.6, 0.3, 0.1], [0.4, 0.5, 0.1], seed=0)
>>> [m.round(12).tolist() for m in coupling_marginals(J)]    # output marginal p, draft marginal q
[[0.6, 0.3, 0.1], [0.4, 0.5, 0.1]]
>>> coupling_acceptance(J) <= 0.8 + 1e-12
True
"""

from __future__ import annotations

from fractions import Fraction
from numbers import Rational

import numpy as np
from numpy.typing import ArrayLike

from ..exact.theory import positive_part
from ..foundation.checks import integer
from ..foundation.validate import SUM_TOL, as_pair, is_exact
from .sampling import make_rng

__all__ = [
    "coupling_acceptance",
    "coupling_marginals",
    "independent_coupling",
    "maximal_coupling",
    "random_coupling",
]

MAX_PLANS = 100
"""The most random transport plans `random_coupling` mixes (a bound, so a huge count cannot hang)."""

MAX_COUPLING_V = 2048
"""The largest vocabulary a coupling is built for: a dense V x V matrix (2048^2 float64 cells: 32 MiB)."""


def coupling_pair(p: ArrayLike, q: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """(p, q) validated by `as_pair`, refused when their V x V coupling would be too large to hold."""
    p, q = as_pair(p, q)
    if p.size > MAX_COUPLING_V:
        raise ValueError(
            f"a coupling of V = {p.size} tokens is a dense {p.size} x {p.size} matrix; at most V = {MAX_COUPLING_V}. "
            "For a real vocabulary use acceptance_rate(p, q) = sum min(p, q), the maximal coupling's trace"
        )
    return p, q


def maximal_coupling(p: ArrayLike, q: ArrayLike) -> np.ndarray:
    """The speculative rule's joint J[x, y] = P(draft x, output y): min(p, q) on the diagonal, the rest off it.

    Off the diagonal, J[x, y] = (q - p)+(x) * (p - q)+(y) / Z: the rejected draft mass of x
    times the repair distribution. Its trace is sum min(p, q), the largest any coupling has.

    >>> maximal_coupling([0.6, 0.3, 0.1], [0.4, 0.5, 0.1]).round(12)
    array([[0.4, 0. , 0. ],
           [0.2, 0.3, 0. ],
           [0. , 0. , 0.1]])
    """
    p, q = coupling_pair(p, q)
    over, short = positive_part(q - p), positive_part(p - q)  # rejected draft mass, repair shortfall
    z = short.sum()
    off = np.outer(over, short) / z if z > 0 else np.outer(over, short)  # z == 0: both are all zero
    J = off.copy()
    for x in range(p.size):
        J[x, x] = min(p[x], q[x]) + off[x, x]  # off[x, x] is 0: over and short never share a token
    return J


def independent_coupling(p: ArrayLike, q: ArrayLike) -> np.ndarray:
    """Token matching's joint: draft x ~ q and output y ~ p drawn independently, J = q(x) p(y).

    >>> independent_coupling([0.6, 0.3, 0.1], [0.4, 0.5, 0.1]).diagonal().round(12)
    array([0.24, 0.15, 0.01])
    """
    p, q = coupling_pair(p, q)
    return np.outer(q, p)


def transport_plan(p: np.ndarray, q: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """The north-west corner plan of q (rows) onto p (columns), visiting rows and columns in the given orders.

    Greedily pours the draft mass of the next row into the next column until one runs out:
    a vertex of the set of couplings (at most 2V - 1 non-zero cells).

    >>> transport_plan(np.array([0.5, 0.5]), np.array([1.0, 0.0]), np.array([0, 1]), np.array([1, 0]))
    array([[0.5, 0.5],
           [0. , 0. ]])
    """
    J = np.zeros((q.size, p.size))
    left_q, left_p = q.astype(np.float64).copy(), p.astype(np.float64).copy()
    i = j = 0
    while i < rows.size and j < cols.size:
        x, y = rows[i], cols[j]
        move = min(left_q[x], left_p[y])
        J[x, y] += move
        left_q[x] -= move
        left_p[y] -= move
        if left_q[x] <= left_p[y]:
            i += 1
        else:
            j += 1
    return J


def random_coupling(p: ArrayLike, q: ArrayLike, seed=None, n_plans: int = 3) -> np.ndarray:
    """A random coupling of q (rows) and p (columns): a random mixture of transport plans.

    Mixes the maximal coupling, the independent coupling and `n_plans` north-west-corner plans
    over random row and column orders, with Dirichlet(1, ..., 1) weights. Any mixture of
    couplings is a coupling, so the rows sum to q and the columns to p (up to rounding).
    `seed`: an int, None or a numpy Generator.
    """
    p, q = coupling_pair(p, q)
    p, q = p.astype(np.float64), q.astype(np.float64)
    n_plans = integer(n_plans, "n_plans (number of random transport plans)", lo=0, hi=MAX_PLANS)
    rng = make_rng(seed)
    V = p.size
    orders = [(rng.permutation(V), rng.permutation(V)) for _ in range(n_plans)]
    weights = rng.dirichlet(np.ones(n_plans + 2))
    J = weights[0] * maximal_coupling(p, q) + weights[1] * independent_coupling(p, q)
    for w, (rows, cols) in zip(weights[2:], orders):  # one plan at a time: memory stays a few V x V matrices
        J += w * transport_plan(p, q, rows, cols)
    return J


def as_coupling(J: ArrayLike, name: str = "J (the coupling)") -> np.ndarray:
    """Validate a joint distribution: a square, non-negative, finite matrix summing to 1 (Fractions stay exact)."""
    if J is None or isinstance(J, (str, bytes, bool)):
        raise TypeError(f"{name} must be a square matrix of probabilities, got {J!r}")
    if hasattr(J, "detach") and hasattr(J, "cpu"):  # a torch tensor, without importing torch
        J = J.detach().cpu().double().numpy()
    try:
        arr = np.asarray(J, dtype=object if _has_fraction(J) else np.float64)
    except (TypeError, ValueError) as e:
        raise ValueError(f"{name} must be a square matrix of numbers: {e}") from None
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1] or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty square V x V matrix, got shape {arr.shape}")
    if is_exact(arr):
        if not all(isinstance(v, Rational) for v in arr.ravel()):
            raise ValueError(f"{name} mixes Fractions with non-exact numbers")
        if any(v < 0 for v in arr.ravel()):
            raise ValueError(f"{name} has a negative entry: probabilities must be >= 0")
        if sum(arr.ravel(), Fraction(0)) != 1:
            raise ValueError(f"{name} sums to {sum(arr.ravel(), Fraction(0))}, not exactly 1")
        return arr
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} has a NaN or infinite entry: every entry must be a finite number")
    if (arr < 0).any():
        raise ValueError(f"{name} has a negative entry ({arr.min():g}): probabilities must be >= 0")
    if abs(arr.sum() - 1.0) > SUM_TOL:
        raise ValueError(f"{name} sums to {arr.sum():.6g}, not 1 (within {SUM_TOL:g})")
    return arr


def _has_fraction(J) -> bool:
    rows = J if isinstance(J, (list, tuple)) else []
    return any(isinstance(v, Fraction) for row in rows if isinstance(row, (list, tuple)) for v in row) or (
        isinstance(J, np.ndarray) and J.dtype == object
    )


def coupling_marginals(J: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """(p, q) of a joint J[x, y] = P(draft x, output y): p = column sums (output), q = row sums (draft).

    >>> [m.tolist() for m in coupling_marginals([[0.25, 0.25], [0.0, 0.5]])]
    [[0.25, 0.75], [0.5, 0.5]]
    """
    J = as_coupling(J)
    return J.sum(axis=0), J.sum(axis=1)


def coupling_acceptance(J: ArrayLike) -> float | Fraction:
    """P(output = draft) = trace(J): the most often a verifier with joint J can keep the draft.

    >>> coupling_acceptance([[0.25, 0.25], [0.0, 0.5]])
    0.75
    """
    J = as_coupling(J)
    total = sum(J.diagonal(), Fraction(0)) if is_exact(J) else J.diagonal().sum()
    return total if isinstance(total, Fraction) else float(total)
