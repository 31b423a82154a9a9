"""Exact theory: the tutorial's numbers, properties over random p, q, exact Fractions."""

from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import specviz as sv

P, Q = sv.TUTORIAL_P, sv.TUTORIAL_Q  # target, draft: cat, dog, fish


# ------------------------------------------------------------------ the tutorial's tables


def test_tutorial_importance_weights():  # §3.2
    np.testing.assert_allclose(sv.importance_weights(P, Q), [1.5, 0.6, 1.0])


def test_tutorial_acceptance_and_overlap():  # §4.3, §6.2-6.3
    np.testing.assert_allclose(sv.acceptance_prob(P, Q), [1.0, 0.6, 1.0])
    np.testing.assert_allclose(sv.overlap(P, Q), [0.4, 0.3, 0.1])
    assert sv.acceptance_rate(P, Q) == pytest.approx(0.8, abs=1e-15)


def test_tutorial_rejection_mass_and_resample():  # §6.4, §7.1
    assert sv.rejection_mass(P, Q) == pytest.approx(0.2, abs=1e-15)
    assert 1 - sv.acceptance_rate(P, Q) == pytest.approx(sv.rejection_mass(P, Q), abs=1e-15)
    np.testing.assert_allclose(sv.residual(P, Q), [0.2, 0, 0], atol=1e-15)
    np.testing.assert_allclose(sv.resample_dist(P, Q), [1, 0, 0], atol=1e-12)


def test_tutorial_joint_table():  # §7.1 final table
    j = sv.joint(P, Q)
    np.testing.assert_allclose(j.accept, [0.4, 0.3, 0.1])
    np.testing.assert_allclose(j.reject, [0.2, 0, 0], atol=1e-12)
    np.testing.assert_allclose(j.output, P, atol=1e-12)
    assert j.p_reject == pytest.approx(0.2)


def test_tutorial_pitfalls():  # §8 Q1 and Q2
    out = sv.output_dist(P, Q, rule="resample_target")
    np.testing.assert_allclose(out, [0.52, 0.36, 0.12], atol=1e-12)
    out = sv.output_dist(P, Q, rule="abs_residual")  # |p - q| = (.2, .2, 0): dog gets 0.1 extra
    np.testing.assert_allclose(out, [0.5, 0.4, 0.1], atol=1e-12)
    assert out[1] > P[1]


def test_tutorial_perfect_and_disjoint_drafts():  # §7.2, §7.3
    assert sv.acceptance_rate(P, P) == pytest.approx(1.0)
    assert sv.rejection_mass(P, P) == 0
    np.testing.assert_array_equal(sv.resample_dist(P, P), P)  # no 0/0
    p, q = [0.0, 0.75, 0.25], [1.0, 0.0, 0.0]
    assert sv.acceptance_rate(p, q) == 0
    assert sv.rejection_mass(p, q) == pytest.approx(1.0)
    np.testing.assert_allclose(sv.resample_dist(p, q), p)
    np.testing.assert_allclose(sv.output_dist(p, q), p)


def test_tutorial_numbers_exact_with_fractions():
    p = [F(6, 10), F(3, 10), F(1, 10)]
    q = [F(4, 10), F(5, 10), F(1, 10)]
    assert list(sv.acceptance_prob(p, q)) == [1, F(3, 5), 1]
    assert sv.acceptance_rate(p, q) == F(4, 5)
    assert sv.rejection_mass(p, q) == F(1, 5)
    assert list(sv.resample_dist(p, q)) == [1, 0, 0]
    out = sv.output_dist(p, q)
    assert list(out) == p and all(isinstance(v, F) for v in out)
    assert sv.output_dist(p, q, rule="resample_target")[0] == F(13, 25)  # 0.52 exactly
    assert sv.tv_distance(p, q) == F(1, 5)


# ------------------------------------------------------------------ rules


def test_rule_flags_and_registry():
    assert sv.is_lossless("lossless") and sv.is_lossless("token_match")
    for name in ("resample_target", "abs_residual", "lenient", "typical"):
        assert not sv.is_lossless(name)
    with pytest.raises(ValueError, match="unknown rule 'nope'"):
        sv.output_dist(P, Q, rule="nope")
    with pytest.raises(ValueError, match="unknown parameter"):
        sv.output_dist(P, Q, rule="lenient", lam=0.5)


@pytest.mark.parametrize(
    "l,out,tv,acc", [(0.8, [0.675, 0.2, 0.125], 0.025, 0.425), (0.5, None, 0.10, 0.5), (0.2, None, 0.40, None)]
)
def test_lenient_rule_numbers(l, out, tv, acc):  # noqa: E741  (the rule parameter l)
    p, q = [0.7, 0.2, 0.1], [0.1, 0.2, 0.7]
    o = sv.output_dist(p, q, rule="lenient", l=l)
    if out is not None:
        np.testing.assert_allclose(o, out, atol=1e-12)
    assert sv.tv_distance(o / o.sum(), p) == pytest.approx(tv, abs=1e-9)
    if acc is not None:
        assert sv.rule_acceptance_rate(p, q, "lenient", l=l) == pytest.approx(acc)
    np.testing.assert_allclose(sv.output_dist(p, q, rule="lenient", l=1.0), p, atol=1e-12)


def test_typical_acceptance_passes_every_draft_in_field_example():
    p, q = [0.7, 0.2, 0.1], [0.1, 0.2, 0.7]
    o = sv.output_dist(p, q, rule="typical", eps=0.09, delta=0.3)
    np.testing.assert_allclose(o, q, atol=1e-12)  # everything accepted: output is q
    assert sv.tv_distance(o, p) == pytest.approx(0.6)


def test_token_match_is_exact_but_accepts_less():
    p, q = [0.7, 0.2, 0.1], [0.1, 0.2, 0.7]
    np.testing.assert_allclose(sv.output_dist(p, q, rule="token_match"), p, atol=1e-12)
    assert sv.rule_acceptance_rate(p, q, "token_match") == pytest.approx(0.18)
    assert sv.rule_acceptance_rate(p, q, "lossless") == pytest.approx(0.40)


def test_compare_rules_reports_tv():
    reports = {r.rule: r for r in sv.compare_rules(P, Q)}
    assert reports["lossless"].tv < 1e-12
    assert reports["resample_target"].tv == pytest.approx(0.08)
    assert set(reports) == set(sv.RULES)


def test_adding_a_rule_is_one_register_call():
    rule = sv.Rule("always_accept_test", False, "keep every draft", lambda p, q: np.ones_like(p), lambda p, q: p)
    sv.register(rule)
    try:
        np.testing.assert_allclose(sv.output_dist(P, Q, rule="always_accept_test"), Q)
    finally:
        del sv.RULES["always_accept_test"]


# ------------------------------------------------------------------ properties


@st.composite
def pairs(draw, max_v=40):
    """Random (p, q) with zeros, one-hots, disjoint supports and p == q all likely."""
    v = draw(st.integers(1, max_v))
    kind = draw(st.sampled_from(["random", "sparse", "onehot", "equal", "disjoint"]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)

    def weights():
        w = rng.random(v) ** 3
        if kind == "sparse":
            w[rng.random(v) < 0.5] = 0
        if w.sum() == 0:
            w[rng.integers(v)] = 1
        return w / w.sum()

    p = weights()
    if kind == "onehot":
        p = np.eye(v)[rng.integers(v)]
    q = p.copy() if kind == "equal" else weights()
    if kind == "disjoint" and v >= 2:
        cut = rng.integers(1, v)
        p = np.r_[np.zeros(cut), weights()[cut:]]
        q = np.r_[weights()[:cut], np.zeros(v - cut)]
        p, q = p / p.sum(), q / q.sum()
    return p, q


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
@settings(max_examples=300, deadline=None)
@given(pairs())
def test_lossless_output_is_p_and_money_equation(pq):
    p, q = pq
    for arr in (
        sv.overlap(p, q),
        sv.residual(p, q),
        sv.acceptance_prob(p, q),
        sv.resample_dist(p, q),
        sv.output_dist(p, q),
        sv.importance_weights(p, q),
    ):
        assert not np.isnan(arr).any()
    np.testing.assert_allclose(sv.output_dist(p, q), p, atol=1e-12, rtol=0)
    np.testing.assert_allclose(sv.overlap(p, q) + sv.residual(p, q), p, atol=1e-15, rtol=0)  # money equation
    j = sv.joint(p, q)
    assert j.p_reject == pytest.approx(sv.rejection_mass(p, q), abs=1e-12)  # Z == P(reject)
    assert sv.acceptance_rate(p, q) == pytest.approx(1 - sv.tv_distance(p, q), abs=1e-12)
    np.testing.assert_allclose(sv.output_dist(p, q, rule="token_match"), p, atol=1e-12)
    np.testing.assert_allclose(sv.multi_draft_output_dist(p, q, 3), p, atol=1e-12)


@settings(max_examples=100, deadline=None)
@given(pairs(max_v=8), st.integers(1, 4))
def test_exact_fractions_give_p_exactly(pq, k):
    p, q = pq
    pf = [F(int(round(x * 1000))) for x in p]
    qf = [F(int(round(x * 1000))) for x in q]
    if sum(pf) == 0 or sum(qf) == 0:
        return
    pf = [x / sum(pf) for x in pf]
    qf = [x / sum(qf) for x in qf]
    assert list(sv.output_dist(pf, qf)) == pf  # ==, not approximately
    assert list(sv.multi_draft_output_dist(pf, qf, k)) == pf
    assert list(sv.overlap(pf, qf) + sv.residual(pf, qf)) == pf
    assert sv.joint(pf, qf).p_reject == sv.rejection_mass(pf, qf)


def test_vocabulary_of_one_and_fifty_thousand():
    np.testing.assert_array_equal(sv.output_dist([1.0], [1.0]), [1.0])
    assert sv.acceptance_rate([1.0], [1.0]) == 1
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.full(50_000, 0.1))
    q = rng.dirichlet(np.full(50_000, 0.1))
    out = sv.output_dist(p, q)
    assert not np.isnan(out).any()
    np.testing.assert_allclose(out, p, atol=1e-12, rtol=0)
    assert sv.joint(p, q).p_reject == pytest.approx(sv.rejection_mass(p, q), abs=1e-12)


# ------------------------------------------------------------------ importance / rejection sampling


def test_rejection_sampling_envelope():
    assert sv.envelope_constant(P, Q) == pytest.approx(1.5)
    assert sv.rejection_acceptance(P, Q) == pytest.approx(1 / 1.5)
    np.testing.assert_allclose(sv.rejection_output_dist(P, Q), P, atol=1e-12)
    too_small = sv.rejection_output_dist(P, Q, M=1.0)  # min(p, q) renormalised: wrong
    np.testing.assert_allclose(too_small, np.array([0.4, 0.3, 0.1]) / 0.8)
    assert sv.envelope_constant([0.5, 0.5], [1.0, 0.0]) == float("inf")
    assert sv.rejection_acceptance([0.5, 0.5], [1.0, 0.0]) == 0.0


def test_importance_sampling_estimates_expectation_not_samples():
    f = np.array([1.0, 2.0, 3.0])
    est = sv.importance_estimate(f, P, Q, n=200_000, seed=1)
    assert est[-1] == pytest.approx(float(np.dot(P, f)), abs=0.01)
    assert sv.importance_bias_mass([0.5, 0.5], [1.0, 0.0]) == 0.5


# ------------------------------------------------------------------ γ-step theory


def test_expected_tokens_and_speedup():
    assert sv.expected_tokens(0.8, 4) == pytest.approx((1 - 0.8**5) / 0.2)
    assert sv.expected_tokens(1.0, 4) == 5
    assert sv.expected_tokens(0.0, 4) == 1
    for alpha in (0.0, 0.3, 0.8, 1.0):
        for gamma in range(0, 9):
            dist = sv.accepted_length_dist(alpha, gamma)
            assert dist.sum() == pytest.approx(1)
            # independent route: E[tokens] = E[accepted] + 1
            assert float((np.arange(gamma + 1) + 1) @ dist) == pytest.approx(sv.expected_tokens(alpha, gamma))
    assert sv.speedup(0.8, 4, 0.1) == pytest.approx(sv.expected_tokens(0.8, 4) / 1.4)


def test_best_gamma_by_brute_force():
    for alpha in (0.5, 0.8, 0.9):
        for c in (0.01, 0.1, 0.5):
            brute = max(range(0, 65), key=lambda g: sv.speedup(alpha, g, c))
            assert sv.best_gamma(alpha, c) == brute
    assert sv.best_gamma(0.1, 1.0) == 0  # a useless draft: do not speculate


def test_gamma_bad_input():
    with pytest.raises(ValueError, match="alpha"):
        sv.expected_tokens(1.5, 3)
    with pytest.raises(ValueError, match="gamma"):
        sv.expected_tokens(0.5, -1)
    with pytest.raises(ValueError, match="cost ratio"):
        sv.speedup(0.5, 2, -0.1)


# ------------------------------------------------------------------ multi-draft


def test_multi_draft_field_example():
    p, q = [0.5, 0.3, 0.15, 0.05], [0.1, 0.2, 0.3, 0.4]
    assert sv.multi_draft_acceptance_rate(p, q, 1) == pytest.approx(0.5)
    assert sv.multi_draft_acceptance_rate(p, q, 2) == pytest.approx(0.65)
    np.testing.assert_allclose(sv.multi_draft_output_dist(p, q, 2), p, atol=1e-12)
    naive = sv.multi_draft_output_dist(p, q, 2, update_residual=False)
    assert sv.tv_distance(naive, p) == pytest.approx(0.15)
    np.testing.assert_allclose(sv.multi_draft_output_dist(p, q, 1), sv.output_dist(p, q))


# ------------------------------------------------------------------ standardisation


def test_standardize_temperature_topk_topp():
    logits = np.array([2.0, 1.0, 0.0, -1.0])
    np.testing.assert_array_equal(sv.standardize(logits, temperature=0), [1, 0, 0, 0])
    soft = np.exp(logits) / np.exp(logits).sum()
    np.testing.assert_allclose(sv.standardize(logits), soft)
    top2 = sv.standardize(logits, top_k=2)
    np.testing.assert_allclose(top2, np.r_[soft[:2] / soft[:2].sum(), 0, 0])
    topp = sv.standardize(logits, top_p=0.8)  # 0.644 + 0.237 >= 0.8: keeps two
    assert (topp > 0).sum() == 2
    hot = sv.standardize(logits, temperature=0.5)
    assert hot[0] > soft[0]
    with pytest.raises(ValueError, match="temperature"):
        sv.standardize(logits, temperature=-1)
    with pytest.raises(ValueError, match="NaN"):
        sv.standardize([0.0, float("nan")])


def test_temperature_mismatch_pitfall():
    tl, dl = np.array([2.0, 1.0, 0.0]), np.array([0.0, 1.0, 2.0])
    ok = sv.mismatch_output_dist(tl, dl, sv.Sampling(0.7))
    assert ok.tv < 1e-12  # p and q processed the same way: lossless
    ok2 = sv.mismatch_output_dist(tl, dl, sv.Sampling(0.7), draft_sampled=sv.Sampling(1.3))
    assert ok2.tv < 1e-12  # the draft's own temperature does not matter if q matches what it sampled
    bad = sv.mismatch_output_dist(tl, dl, sv.Sampling(0.7), target_used=sv.Sampling(1.0))
    assert bad.tv == pytest.approx(sv.tv_distance(sv.standardize(tl, 1.0), sv.standardize(tl, 0.7)))
    greedy = sv.mismatch_output_dist(
        tl, dl, sv.Sampling(1.0), draft_sampled=sv.Sampling(0.0), draft_ratio=sv.Sampling(1.0)
    )
    assert greedy.tv > 0.05  # draft argmax while the ratio uses softmax q: biased


# ------------------------------------------------------------------ validation


@pytest.mark.parametrize(
    "bad,match",
    [
        ([[0.5, 0.5]], r"1-D"),
        ([0.5, float("nan"), 0.5], r"p\[1\] is NaN"),
        ([0.5, float("inf")], r"p\[1\] is inf"),
        ([1.2, -0.2], r"p\[1\] = -0.2 is negative"),
        ([0.6, 0.3, 0.2], r"sums to 1.1, not 1"),
        ([], r"empty"),
        (["a", "b"], r"numbers"),
    ],
)
def test_bad_distributions_are_named(bad, match):
    with pytest.raises(ValueError, match=match):
        sv.output_dist(bad, [1.0] + [0.0] * max(len(bad) - 1, 0) if bad and not isinstance(bad[0], list) else [1.0])


def test_length_mismatch_and_torch_and_tuple_inputs():
    with pytest.raises(ValueError, match=r"different lengths \(3 vs 2\).*vocabulary"):
        sv.overlap(P, [0.5, 0.5])
    torch = pytest.importorskip("torch")
    np.testing.assert_allclose(sv.overlap(torch.tensor(P), torch.tensor(Q, dtype=torch.float64)), [0.4, 0.3, 0.1])
    np.testing.assert_allclose(sv.overlap(tuple(P), np.array(Q)), [0.4, 0.3, 0.1])


def test_normalize():
    np.testing.assert_allclose(sv.normalize([3, 1]), [0.75, 0.25])
    assert list(sv.normalize([F(1), F(3)])) == [F(1, 4), F(3, 4)]
    with pytest.raises(ValueError, match="all zero"):
        sv.normalize([0, 0])
    with pytest.raises(ValueError, match="negative"):
        sv.normalize([1, -1])
