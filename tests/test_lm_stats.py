"""Acceptance statistics agree with the theory on a pair whose α is known exactly (0.8)."""

import numpy as np
import pytest
from scipy import stats

import specviz as sv
from specviz.lm import NGramModel, Pair, speculative_generate
from specviz.lm.stats import spec_stats


@pytest.fixture(scope="module")
def runs():
    # context-free models: every position has p = (.6, .3, .1), q = (.4, .5, .1), so α = 0.8 exactly
    pair = Pair(NGramModel(np.array(sv.TUTORIAL_P)), NGramModel(np.array(sv.TUTORIAL_Q)))
    return [speculative_generate(pair, [0], 200, 4, seed=i) for i in range(20)]


def test_alpha_estimate_is_exact_here(runs):
    assert spec_stats(runs).alpha == pytest.approx(0.8, abs=1e-12)


def test_histogram_matches_capped_geometric(runs):
    st = spec_stats(runs)
    assert st.accepted_hist.sum() == pytest.approx(st.accepted_hist_theory.sum())
    assert stats.chisquare(st.accepted_hist, st.accepted_hist_theory).pvalue >= 1e-4  # false alarm 1e-4


def test_definitions(runs):
    st = spec_stats(runs)
    assert st.acceptance_rate == st.accepted / st.drafted
    assert st.mean_acceptance_length == pytest.approx(st.generated / st.steps)
    full = [s for r in runs for s in r.steps if s.gamma == 4]
    assert st.per_position.sum() * len(full) == pytest.approx(sum(s.accepted for s in full))
    np.testing.assert_allclose(st.per_position_conditional, 0.8, atol=0.05)  # each position ~ α given it is reached
    assert st.per_position[0] > st.per_position[-1]  # unconditional rate decays with position
    assert st.mean_acceptance_length == pytest.approx(sv.expected_tokens(0.8, 4), rel=0.05)
    assert st.bound(0.0) == pytest.approx(sv.expected_tokens(0.8, 4))
    assert 1 <= st.suggested_gamma(target_token_s=st.verify_step_s) <= 16


def test_no_results_is_an_error():
    with pytest.raises(ValueError, match="no generation results"):
        spec_stats([])
