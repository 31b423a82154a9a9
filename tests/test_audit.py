"""The lossless audit passes correct samplers and catches every known bug at n = 1e5."""

import numpy as np
import pytest

import specviz as sv
from specviz.samplers.audit import EFFICIENCY_Z

P, Q = sv.TUTORIAL_P, sv.TUTORIAL_Q


@pytest.mark.parametrize("sampler", ["lossless", "token_match", sv.correct_verifier])
@pytest.mark.parametrize("pq", [(P, Q), ([0.7, 0.2, 0.1], [0.1, 0.2, 0.7]), ([0.0, 0.75, 0.25], [1.0, 0.0, 0.0])])
def test_audit_passes_correct_samplers(sampler, pq):
    report = sv.audit(sampler, *pq, n=100_000, seed=0)
    assert report.passed, report.explanation
    assert report.tv < 0.01
    assert report.p_value >= report.significance


@pytest.mark.parametrize("name", sorted(sv.BUGGY_VERIFIERS))
def test_audit_catches_buggy_verifiers(name):
    report = sv.audit(sv.BUGGY_VERIFIERS[name], P, Q, n=100_000, seed=0)
    assert not report.passed, f"{name} slipped through: {report.explanation}"
    assert report.p_value < 1e-6  # caught by a wide margin, not by luck


@pytest.mark.parametrize("rule,params", [("resample_target", {}), ("abs_residual", {}), ("lenient", {"l": 0.9})])
def test_audit_catches_lossy_rules(rule, params):
    assert not sv.audit(rule, P, Q, n=100_000, seed=0, **params).passed


def test_audit_flags_tokens_where_p_is_zero_even_when_rare():
    p, q = [0.5, 0.5, 0.0], [0.3, 0.3, 0.4]

    def leaks_once(p, q, n, rng):
        out = sv.correct_verifier(p, q, n, rng)
        out[17] = 2  # a single impossible token among 1e5
        return out

    report = sv.audit(leaks_once, p, q)
    assert not report.passed
    assert "p(2) = 0" in report.explanation
    assert list(report.impossible_tokens) == [2]


def test_audit_flags_ids_outside_vocabulary():
    def overflow(p, q, n, rng):
        out = sv.correct_verifier(p, q, n, rng)
        out[:3] = len(p)  # vLLM's padded-lane bug
        return out

    report = sv.audit(overflow, P, Q)
    assert not report.passed and "outside the vocabulary" in report.explanation


def test_audit_rejects_malformed_sampler_output():
    with pytest.raises(ValueError, match="shape"):
        sv.audit(lambda p, q, n, rng: np.zeros(n - 1, dtype=int), P, Q)
    with pytest.raises(ValueError, match="integer token ids"):
        sv.audit(lambda p, q, n, rng: np.full(n, 0.5), P, Q)
    with pytest.raises(ValueError, match="rule name or a function"):
        sv.audit(42, P, Q)


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
def test_audit_false_alarm_rate_matches_alpha():
    """At alpha = 0.05 a correct sampler should fail about 5% of the time (400 seeded runs).

    Binomial(400, 0.05): the interval [8, 36] holds the count with probability > 0.999.
    """
    fails = sum(not sv.audit("lossless", P, Q, n=2_000, seed=s, significance=0.05).passed for s in range(400))
    assert 8 <= fails <= 36, fails


def test_audit_report_is_readable_and_reproducible():
    a = sv.audit("resample_target", P, Q, seed=3)
    b = sv.audit("resample_target", P, Q, seed=3)
    assert a.p_value == b.p_value and np.array_equal(a.empirical, b.empirical)
    assert str(a).startswith("FAIL") and "token 0" in a.explanation
    assert "PASS" in sv.audit("lossless", P, Q)._repr_html_()


# Efficiency (issue 19): a verifier that shows its drafts is checked against the optimum Σ min(p, q) too.


def with_drafts(verifier):
    return lambda p, q, n, rng: verifier(p, q, n, rng, with_drafts=True)


def test_audit_refuses_a_verifier_that_ignores_its_draft():
    report = sv.audit(sv.samplers.verifiers.ignores_the_draft, P, Q, n=100_000, seed=0)
    assert report.lossless and not report.passed and report.efficient is False
    assert abs(report.acceptance - float(np.dot(P, Q))) < 0.01  # it keeps a draft only by coincidence: Σ p·q
    assert report.optimum == pytest.approx(0.8)
    assert report.acceptance_z < -EFFICIENCY_Z
    assert "throws away what the draft proposed" in report.explanation and "0.8000" in report.explanation
    # the same verifier, its drafts hidden: the output law alone cannot tell
    assert sv.audit(
        lambda p, q, n, rng: sv.samplers.verifiers.ignores_the_draft(p, q, n, rng, with_drafts=False), P, Q
    ).passed


@pytest.mark.parametrize(
    "pq", [(P, Q), ([0.7, 0.2, 0.1], [0.1, 0.2, 0.7]), (P, P), ([0.0, 0.75, 0.25], [1.0, 0.0, 0.0])]
)
def test_audit_passes_the_textbook_verifier_with_its_drafts(pq):
    report = sv.audit(with_drafts(sv.correct_verifier), *pq, n=100_000, seed=0, joint=True)
    assert report.passed and report.lossless and report.efficient and report.joint_ok, report.explanation
    assert abs(report.acceptance - report.optimum) < 0.01 and "keeps the draft" in report.explanation


def test_audit_efficiency_refuses_fake_drafts_and_keeps_law_failures_first():
    def out_as_its_own_draft(p, q, n, rng):  # acceptance 1 > optimum: the drafts are not from q
        out = rng.choice(len(p), n, p=p)
        return out, out

    report = sv.audit(out_as_its_own_draft, P, Q)
    assert report.lossless and not report.passed and "not distributed as q" in report.explanation
    lenient = sv.audit(with_drafts(sv.BUGGY_VERIFIERS["lenient_0.9"]), P, Q)
    assert not lenient.passed and not lenient.lossless and "output differs from p" in lenient.explanation


def test_audit_efficiency_is_optional_and_rule_names_are_opt_in():
    report = sv.audit(sv.samplers.verifiers.ignores_the_draft, P, Q, efficiency=False)
    assert report.passed and report.efficient is None and report.acceptance is None
    assert sv.audit("lossless", P, Q).efficient is None  # a rule name: output law only, as before
    assert sv.audit("lossless", P, Q, efficiency=True).efficient is True
    assert sv.audit("token_match", P, Q).passed  # lossless, suboptimal on purpose: not refused by default
    assert not sv.audit("token_match", P, Q, efficiency=True).passed  # accepts Σ p·q, not Σ min(p, q)
    with pytest.raises(ValueError, match="needs the drafts"):
        sv.audit(sv.correct_verifier, P, Q, efficiency=True)


def test_a_drafts_pair_is_told_apart_from_tokens():
    from specviz.samplers.audit import split_drafts

    d, t = np.array([0, 1]), np.array([1, 1])
    assert split_drafts((d, t), 2)[0] is d  # two length-n arrays: drafts and tokens
    assert split_drafts((0, 1), 2)[0] is None  # two token ids (n = 2): tokens alone
    assert split_drafts(sv.spec_sample(P, Q, 5, seed=0), 5)[0] is not None
