"""Samplers agree with the exact distributions (Monte Carlo) and are reproducible.

Every goodness-of-fit check here is a chi-square test at ALPHA = 1e-4 with a fixed
seed: a correct sampler would fail a given check with probability 1e-4 for a random
seed, and with the fixed seed the outcome is deterministic.
"""

import numpy as np
import pytest
from scipy import stats

import specviz as sv
from specviz.samplers.sampling import categorical

P, Q = np.array(sv.TUTORIAL_P), np.array(sv.TUTORIAL_Q)
ALPHA = 1e-4


def assert_fits(counts, probs, alpha=ALPHA):
    """Chi-square goodness of fit of counts to probs (cells with probs == 0 must be empty)."""
    counts, probs = np.asarray(counts), np.asarray(probs, dtype=float)
    assert counts[probs == 0].sum() == 0, "mass where the exact distribution has none"
    keep = probs > 0
    if keep.sum() < 2:
        return
    pval = stats.chisquare(counts[keep], probs[keep] / probs[keep].sum() * counts[keep].sum()).pvalue
    assert pval >= alpha, f"p-value {pval:.3g}: empirical {counts / counts.sum()} vs exact {probs}"


CASES = [
    (P, Q),
    ([0.7, 0.2, 0.1], [0.1, 0.2, 0.7]),
    ([0.0, 0.75, 0.25], [1.0, 0.0, 0.0]),  # disjoint support
    ([0.5, 0.3, 0.15, 0.05], [0.1, 0.2, 0.3, 0.4]),
    (P, P),  # perfect draft
]


@pytest.mark.parametrize(
    "rule,params",
    [
        ("lossless", {}),
        ("resample_target", {}),
        ("abs_residual", {}),
        ("lenient", {"l": 0.6}),
        ("typical", {}),
        ("token_match", {}),
    ],
)
@pytest.mark.parametrize("case", range(len(CASES)))
def test_spec_sample_matches_exact_output(rule, params, case):
    p, q = CASES[case]
    s = sv.spec_sample(p, q, 200_000, rule=rule, seed=case, **params)
    j = sv.rule_joint(p, q, rule, **params)
    assert_fits(s.counts(), j.output)
    # acceptance frequency vs the exact acceptance rate (normal approximation, 5 sigma)
    acc = float(j.p_accept)
    assert abs(s.acceptance - acc) <= 5 * np.sqrt(acc * (1 - acc) / 200_000) + 1e-12
    if rule == "lossless":  # accepted part ~ min(p, q), resampled part ~ (p - q)+
        assert_fits(s.accepted_counts(), sv.overlap(p, q))
        assert_fits(s.rejected_counts(), sv.residual(p, q))


def test_lossless_sampler_on_large_vocabulary_uses_no_zero_tokens():
    rng = np.random.default_rng(3)
    p = rng.dirichlet(np.full(1000, 0.05))
    q = rng.dirichlet(np.full(1000, 0.05))
    p[p < 1e-3] = 0
    p /= p.sum()
    s = sv.spec_sample(p, q, 300_000, seed=1)
    assert s.counts()[p == 0].sum() == 0
    assert sv.audit("lossless", p, q, n=300_000, seed=2).passed


def test_seeded_runs_are_bit_identical_and_seeds_differ():
    a = sv.spec_sample(P, Q, 10_000, seed=42)
    b = sv.spec_sample(P, Q, 10_000, seed=42)
    c = sv.spec_sample(P, Q, 10_000, seed=43)
    for field in ("tokens", "accepted", "drafts"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    assert not np.array_equal(a.tokens, c.tokens)
    np.testing.assert_array_equal(
        sv.spec_sample(P, Q, 100, seed=np.random.default_rng(5)).tokens,
        sv.spec_sample(P, Q, 100, seed=np.random.default_rng(5)).tokens,
    )


def test_spec_sample_bad_input():
    with pytest.raises(ValueError, match="n"):
        sv.spec_sample(P, Q, -1)
    with pytest.raises(ValueError, match="sums to"):
        sv.spec_sample([0.5, 0.6], [0.5, 0.5], 10)
    assert sv.spec_sample(P, Q, 0).tokens.shape == (0,)


@pytest.mark.parametrize("update", [True, False])
@pytest.mark.parametrize("k", [1, 2, 4])
def test_multi_draft_sampler_matches_exact(update, k):
    p, q = [0.5, 0.3, 0.15, 0.05], [0.1, 0.2, 0.3, 0.4]
    s = sv.multi_draft_sample(p, q, 200_000, k, update_residual=update, seed=k)
    assert_fits(np.bincount(s.tokens, minlength=4), sv.multi_draft_output_dist(p, q, k, update_residual=update))
    acc = sv.multi_draft_acceptance_rate(p, q, k, update_residual=update)
    assert abs(s.acceptance - acc) < 5 * np.sqrt(acc * (1 - acc) / 200_000)


def test_naive_multi_draft_is_caught_by_audit():
    p, q = [0.5, 0.3, 0.15, 0.05], [0.1, 0.2, 0.3, 0.4]

    def naive(p, q, n, rng):
        return sv.multi_draft_sample(p, q, n, 2, update_residual=False, seed=rng).tokens

    def proper(p, q, n, rng):
        return sv.multi_draft_sample(p, q, n, 2, seed=rng).tokens

    assert not sv.audit(naive, p, q).passed
    assert sv.audit(proper, p, q).passed


def test_rejection_sampler_is_exact_with_1_over_M_acceptance():
    tokens, tries = sv.rejection_sample(P, Q, 200_000, seed=0)
    assert_fits(np.bincount(tokens, minlength=3), P)
    assert tries.mean() == pytest.approx(1.5, rel=0.02)  # geometric with success 1/M
    with pytest.raises(ValueError, match="envelope"):
        sv.rejection_sample([0.5, 0.5], [1.0, 0.0], 10)


# ------------------------------------------------------------------ γ-step chains


@pytest.mark.parametrize("gamma", [1, 2, 3, 5])
@pytest.mark.parametrize("pair_seed", [None, 7])
def test_spec_chain_matches_autoregressive_enumeration(gamma, pair_seed):
    pair = sv.tutorial_pair() if pair_seed is None else sv.random_pair(3, seed=pair_seed, concentration=0.5)
    L, n = 4, 150_000
    s = sv.spec_chain_sample(pair, L, gamma, n, seed=gamma)
    exact = sv.sequence_dist(pair.target, L).ravel()
    counts = np.bincount(sv.sequence_index(s.sequences, pair.V), minlength=exact.size)
    assert_fits(counts, exact)
    assert (s.sequences >= 0).all()
    assert s.accepted_per_step.max() <= gamma


def test_chain_without_bonus_still_lossless_but_slower():
    pair = sv.tutorial_pair()
    with_bonus = sv.spec_chain_sample(pair, 4, 3, 100_000, seed=1)
    no_bonus = sv.spec_chain_sample(pair, 4, 3, 100_000, seed=1, bonus=False)
    exact = sv.sequence_dist(pair.target, 4).ravel()
    assert_fits(np.bincount(sv.sequence_index(no_bonus.sequences, 3), minlength=exact.size), exact)
    assert no_bonus.steps.mean() > with_bonus.steps.mean()


def test_chain_with_draft_distribution_as_target_is_not_p():
    """Sanity check that the chain test can fail: the draft's own sequences do not fit p."""
    pair = sv.tutorial_pair()
    seqs = sv.ar_chain_sample(pair.draft, 3, 100_000, seed=0)
    exact = sv.sequence_dist(pair.target, 3).ravel()
    counts = np.bincount(sv.sequence_index(seqs, 3), minlength=exact.size)
    with pytest.raises(AssertionError):
        assert_fits(counts, exact)


def test_accepted_length_histogram_matches_theory_for_iid_pair():
    # every context has the same p and q, so acceptance is i.i.d. with alpha = 0.8
    P3 = np.tile(P, (4, 1))
    Q3 = np.tile(Q, (4, 1))
    pair = sv.MarkovPair(P3, Q3, sv.TUTORIAL_VOCAB)
    gamma = 4
    s = sv.spec_chain_sample(pair, 60, gamma, 5_000, seed=3)
    # drop each sequence's last step (it may be cut short by the length limit: still a full step though)
    hist = np.bincount(s.accepted_per_step, minlength=gamma + 1)
    assert_fits(hist, sv.accepted_length_dist(0.8, gamma))
    assert s.tokens_per_step() == pytest.approx(sv.expected_tokens(0.8, gamma), rel=0.02)


def test_chain_seeded_determinism_and_bad_input():
    pair = sv.tutorial_pair()
    a = sv.spec_chain_sample(pair, 5, 2, 1000, seed=9)
    b = sv.spec_chain_sample(pair, 5, 2, 1000, seed=9)
    np.testing.assert_array_equal(a.sequences, b.sequences)
    with pytest.raises(ValueError, match="gamma"):
        sv.spec_chain_sample(pair, 5, 0, 10)
    with pytest.raises(ValueError, match="shape"):
        sv.MarkovPair(np.ones((3, 3)) / 3, np.ones((3, 3)) / 3, ("a", "b", "c"))
    with pytest.raises(ValueError, match=r"target\[1\] sums to"):
        sv.MarkovPair(np.array([[1, 0], [0.5, 0.6], [0.5, 0.5]]), np.ones((3, 2)) / 2, ("a", "b"))


# ------------------------------------------------------------------ categorical: faster, same draws
# (the torch sampler's tests are in tests/test_torch_sampling.py)


def searchsorted_categorical(p, n, rng):
    """The reference inverse-CDF draw that `categorical` must reproduce bit for bit."""
    cdf = np.cumsum(p)
    u = rng.random(n)
    u *= cdf[-1]
    idx = np.searchsorted(cdf, u, side="right")
    np.minimum(idx, int(np.flatnonzero(p)[-1]), out=idx)
    return idx


def categorical_cases():
    rng = np.random.default_rng(0)
    cases = [
        np.array([1.0]),
        np.array([0.0, 0.0, 1.0, 0.0]),
        np.array([1e-300, 1.0 - 1e-300]),
        np.array([1.0 - 1e-16, 1e-16, 0.0, 0.0]),
        np.r_[np.zeros(20), 1.0, np.zeros(20)],
    ]
    for V in (2, 3, 16, 17, 50, 1000, 20_000):
        for conc in (0.01, 0.3, 1.0, 10.0):
            p = rng.dirichlet(np.full(V, conc))
            cases.append(p)
            z = np.where(rng.random(V) < 0.5, 0.0, p)
            if z.sum() > 0:
                cases.append(z / z.sum())
    tiny = np.full(1000, 1e-12)
    tiny[500] = 1.0
    cases.append(tiny / tiny.sum())
    return cases


@pytest.mark.parametrize("n", [0, 1, 7, 1000, 1024, 5000, 60_000])
def test_categorical_draws_exactly_what_searchsorted_draws(n):
    """Every path (comparison count, guide table, plain search) returns the reference's ids, same dtype."""
    for case, p in enumerate(categorical_cases()):
        a = searchsorted_categorical(p, n, np.random.default_rng(case))
        b = categorical(p, n, np.random.default_rng(case))
        assert a.dtype == b.dtype and np.array_equal(a, b), (case, p.size, n)


def test_spec_sample_results_are_unchanged(monkeypatch):
    """spec_sample with the faster categorical gives the reference draws, bit for bit, for every rule."""
    p, q = [0.5, 0.3, 0.15, 0.05, 0.0], [0.1, 0.2, 0.3, 0.3, 0.1]
    rules = [("lossless", {}), ("resample_target", {}), ("lenient", {"l": 0.6}), ("token_match", {})]
    fast = [sv.spec_sample(p, q, 50_000, rule=r, seed=1, **kw) for r, kw in rules]
    monkeypatch.setattr("specviz.samplers.sampling.categorical", searchsorted_categorical)
    for (r, kw), s in zip(rules, fast):
        ref = sv.spec_sample(p, q, 50_000, rule=r, seed=1, **kw)
        for field in ("tokens", "accepted", "drafts"):
            np.testing.assert_array_equal(getattr(s, field), getattr(ref, field))
