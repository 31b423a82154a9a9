"""Couplings (specviz.samplers.coupling) against exact enumeration of the verifiers and a linear program.

References independent of the module: the speculative rule and token matching enumerated branch
by branch from their definitions (draft x, keep or replace, output y) in exact Fractions, and the
largest trace over all couplings found by scipy's linear-programming solver.
"""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pytest

import specviz as sv
from specviz.samplers import coupling

P = [F(3, 5), F(3, 10), F(1, 10)]  # target p: cat, dog, fish
Q = [F(2, 5), F(1, 2), F(1, 10)]  # draft q


def enumerate_speculative(p, q):
    """J[x][y] by walking the branches: draft x (prob q), keep with min(1, p/q), else repair from (p - q)+ / Z."""
    V = len(p)
    short = [max(p[y] - q[y], 0) for y in range(V)]
    Z = sum(short)
    J = [[F(0)] * V for _ in range(V)]
    for x in range(V):
        if q[x] == 0:
            continue
        keep = min(F(1), p[x] / q[x])
        J[x][x] += q[x] * keep
        for y in range(V):
            if Z > 0:
                J[x][y] += q[x] * (1 - keep) * short[y] / Z
    return J


def enumerate_token_matching(p, q):
    """J[x][y]: draft x ~ q, an independent y ~ p is the output (the draft is kept iff y == x)."""
    return [[qx * py for py in p] for qx in q]


def lp_best_trace(p, q) -> float:
    """max trace(J) over all couplings of q (rows) and p (columns), by linear programming."""
    from scipy.optimize import linprog

    V = len(p)
    c = -np.eye(V).ravel()  # maximise the diagonal
    A = np.vstack([np.kron(np.eye(V), np.ones(V)), np.kron(np.ones(V), np.eye(V))])  # row sums, column sums
    b = np.concatenate([q, p])
    res = linprog(c, A_eq=A, b_eq=b, bounds=(0, None), method="highs")
    assert res.success
    return -res.fun


def random_pairs(n, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        V = int(rng.integers(2, 8))
        p, q = rng.dirichlet(np.full(V, 0.5)), rng.dirichlet(np.full(V, 0.5))
        if rng.random() < 0.3:  # some zeros, to cover disjoint and partial supports
            p[rng.integers(V)] = 0
            p /= p.sum()
        yield p, q


def test_running_example_exact():
    J = coupling.maximal_coupling(P, Q)
    assert J.tolist() == enumerate_speculative(P, Q)
    assert coupling.coupling_acceptance(J) == F(4, 5) == sv.acceptance_rate(P, Q)
    T = coupling.independent_coupling(P, Q)
    assert T.tolist() == enumerate_token_matching(P, Q)
    assert coupling.coupling_acceptance(T) == F(2, 5)  # sum p q
    assert coupling.coupling_acceptance(T) == sv.rule_acceptance_rate(P, Q, "token_match")


@pytest.mark.parametrize(
    "p, q",
    [(P, P), ([F(0), F(3, 4), F(1, 4)], [F(1), F(0), F(0)]), ([F(1), F(0)], [F(0), F(1)])],
    ids=["q=p", "disjoint", "two-point disjoint"],
)
def test_edge_cases_exact(p, q):
    J = coupling.maximal_coupling(p, q)
    assert J.tolist() == enumerate_speculative(p, q)
    assert list(coupling.coupling_marginals(J)[0]) == list(p)
    assert list(coupling.coupling_marginals(J)[1]) == list(q)
    assert coupling.coupling_acceptance(J) == sum(min(a, b) for a, b in zip(p, q))


def test_maximal_coupling_reaches_the_linear_programs_optimum():
    for p, q in random_pairs(40, seed=1):
        J = coupling.maximal_coupling(p, q)
        np.testing.assert_allclose(J, np.array(enumerate_speculative(list(p), list(q)), dtype=float), atol=1e-12)
        assert coupling.coupling_acceptance(J) == pytest.approx(lp_best_trace(p, q), abs=1e-9)
        assert coupling.coupling_acceptance(J) == pytest.approx(np.minimum(p, q).sum(), abs=1e-12)


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
def test_random_couplings_have_the_marginals_and_never_beat_the_overlap():
    """2,000 random couplings over 200 random pairs (deterministic seeds: no false alarms)."""
    traces = []
    for k, (p, q) in enumerate(random_pairs(200, seed=2)):
        bound = np.minimum(p, q).sum()
        for s in range(10):
            J = coupling.random_coupling(p, q, seed=1000 * k + s, n_plans=s % 5)
            assert (J >= 0).all()
            out, draft = coupling.coupling_marginals(J)
            np.testing.assert_allclose(out, p, atol=1e-12)
            np.testing.assert_allclose(draft, q, atol=1e-12)
            traces.append(coupling.coupling_acceptance(J) / bound if bound > 0 else 1.0)
            assert coupling.coupling_acceptance(J) <= bound + 1e-12
    assert max(traces) > 0.95  # the family is not trivially far from the bound: some come close


def test_transport_plan_is_a_coupling_vertex():
    rng = np.random.default_rng(3)
    for p, q in random_pairs(50, seed=3):
        V = p.size
        J = coupling.transport_plan(p, q, rng.permutation(V), rng.permutation(V))
        np.testing.assert_allclose(J.sum(axis=0), p, atol=1e-12)
        np.testing.assert_allclose(J.sum(axis=1), q, atol=1e-12)
        assert np.count_nonzero(J > 1e-15) <= 2 * V - 1


def test_a_matrix_with_wrong_marginals_can_beat_the_bound():
    """The bound needs the marginals: the identity-like joint of p alone has trace 1 > sum min(p, q)."""
    J = np.diag(np.array(P, dtype=float))  # output p, but the draft marginal is p, not q
    assert coupling.coupling_acceptance(J) == pytest.approx(1.0)
    np.testing.assert_allclose(coupling.coupling_marginals(J)[1], [0.6, 0.3, 0.1])  # not q


def test_random_coupling_is_reproducible_and_takes_a_generator():
    a = coupling.random_coupling(P, Q, seed=7)
    b = coupling.random_coupling(P, Q, seed=np.random.default_rng(7))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, coupling.random_coupling(P, Q, seed=8))


@pytest.mark.parametrize(
    "J, words",
    [
        ([[0.5, 0.5]], "square"),
        ([[0.5, 0.6], [0.0, 0.0]], "sums to"),
        ([[0.5, -0.1], [0.1, 0.5]], "negative"),
        ([[float("nan"), 0.5], [0.0, 0.5]], "NaN"),
        ([], "square"),
        ("abc", "J"),
        (None, "J"),
        ([[F(1, 2), F(1, 3)], [F(0), F(0)]], "exactly 1"),
    ],
)
def test_bad_couplings_are_refused_by_name(J, words):
    with pytest.raises((ValueError, TypeError), match=words):
        coupling.coupling_acceptance(J)


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="n_plans"):
        coupling.random_coupling(P, Q, seed=0, n_plans=10**9)
    with pytest.raises(ValueError, match="seed"):
        coupling.random_coupling(P, Q, seed=-1)
    with pytest.raises(ValueError, match="length"):
        coupling.maximal_coupling([0.5, 0.5], [1.0, 0.0, 0.0])


def test_exported():
    for name in coupling.__all__:
        assert getattr(sv, name) is getattr(coupling, name)


def test_coupling_figure_in_both_languages():
    from specviz.figures import coupling as figure
    from specviz.figures.style import trace_by_meta
    from specviz.foundation.i18n import set_language

    try:
        for lang in ("en", "zh"):
            set_language(lang)
            fig = figure.coupling_figure([0.6, 0.3, 0.1], [0.4, 0.5, 0.1], n=200, seed=1)
            random = np.asarray(trace_by_meta(fig, "random").y)
            assert random.size == 200 and random.max() <= 0.8 + 1e-12
            assert trace_by_meta(fig, "maximal").y[0] == pytest.approx(0.8)
            assert trace_by_meta(fig, "independent").y[0] == pytest.approx(0.4)
        assert "耦合" in trace_by_meta(fig, "random").name
    finally:
        set_language("en")
    with pytest.raises(ValueError, match="n"):
        figure.coupling_figure([0.6, 0.3, 0.1], [0.4, 0.5, 0.1], n=0)
