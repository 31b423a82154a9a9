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


@pytest.mark.slow
def test_alpha_estimate_is_exact_here(runs):
    assert spec_stats(runs).alpha == pytest.approx(0.8, abs=1e-12)


def test_histogram_matches_capped_geometric(runs):
    st = spec_stats(runs)
    assert st.accepted_hist.sum() == pytest.approx(st.accepted_hist_theory.sum())
    assert stats.chisquare(st.accepted_hist, st.accepted_hist_theory).pvalue >= 1e-4  # false alarm 1e-4


def test_definitions(runs):
    st = spec_stats(runs)
    assert st.acceptance_rate == st.accepted / st.drafted
    assert st.mean_acceptance_length == pytest.approx(1 + st.accepted / st.drafts)
    assert st.tokens_per_step == pytest.approx(st.generated / st.steps)
    assert st.mean_acceptance_length == pytest.approx(1 + st.per_position.sum(), abs=1e-12)  # vLLM's identity
    np.testing.assert_allclose(st.per_position_conditional, 0.8, atol=0.05)  # each position ~ α given it is reached
    assert st.per_position[0] > st.per_position[-1]  # unconditional rate decays with position
    assert st.mean_acceptance_length == pytest.approx(sv.expected_tokens(0.8, 4), rel=0.05)
    assert st.bound(0.0) == pytest.approx(sv.expected_tokens(0.8, 4))
    assert 1 <= st.suggested_gamma(target_token_s=st.verify_step_s) <= 16


def test_no_results_is_an_error():
    with pytest.raises(ValueError, match="no generation results"):
        spec_stats([])


def hand_counts(steps, gamma):
    """Independent per-position counts: a plain loop over steps and positions."""
    drafts = [s for s in steps if s.gamma > 0]
    acc = [0] * gamma
    reached = [0] * gamma
    for s in drafts:
        for i in range(s.gamma):
            if s.accepted >= i:
                reached[i] += 1
            if s.accepted > i:
                acc[i] += 1
    return drafts, acc, reached


def variable_gamma_runs():
    """Runs whose steps draft different numbers of tokens: prompt lookup, auto, a shorter last step."""
    from specviz.lm.adaptive import AutoGamma
    from specviz.lm.prompt_lookup import PromptLookupModel

    target = NGramModel.random(4, order=2, seed=3, concentration=0.3)
    lookup = Pair(target, PromptLookupModel(4))
    model_pair = Pair(target, NGramModel.random(4, order=2, seed=4, concentration=0.3))
    return {
        "prompt lookup γ=6": [speculative_generate(lookup, [0, 1, 2, 3, 0, 1], 60, 6, seed=i) for i in range(5)],
        "prompt lookup auto": [speculative_generate(lookup, [0, 1, 2, 3], 60, "auto", seed=i) for i in range(5)],
        "model auto": [speculative_generate(model_pair, [0], 60, AutoGamma(max_gamma=5), seed=i) for i in range(5)],
        "shorter last step": [speculative_generate(model_pair, [0], 23, 4, seed=i) for i in range(5)],
        "greedy lookup": [speculative_generate(lookup, [0, 1, 2, 3], 40, 5, temperature=0, seed=0)],
    }


@pytest.mark.parametrize("kind", list(variable_gamma_runs()))
def test_vllm_identity_holds_with_variable_gamma(kind):
    runs = variable_gamma_runs()[kind]
    steps = [s for r in runs for s in r.steps]
    st = spec_stats(runs)
    assert st.gamma == max(s.gamma for s in steps)
    assert len({s.gamma for s in steps}) > 1, "the point is a run whose γ varies"
    drafts, acc, reached = hand_counts(steps, st.gamma)
    assert st.drafts == len(drafts)
    assert st.mean_acceptance_length == pytest.approx(1 + sum(s.accepted for s in drafts) / len(drafts))
    assert st.mean_acceptance_length == pytest.approx(1 + st.per_position.sum(), abs=1e-12)
    np.testing.assert_allclose(st.per_position, np.array(acc) / len(drafts))
    want = [a / r if r else np.nan for a, r in zip(acc, reached)]
    np.testing.assert_allclose(st.per_position_conditional, want, equal_nan=True)
    assert st.accepted_hist.sum() == len(drafts) == pytest.approx(st.accepted_hist_theory.sum())
    assert list(st.gammas) == [s.gamma for s in steps]
    d = st.to_dict()
    assert d["mean_acceptance_length"] == pytest.approx(1 + sum(d["per_position_acceptance"]), abs=1e-12)
    assert d["num_drafts"] == len(drafts) and d["gamma_per_step"] == [s.gamma for s in steps]


def test_old_definition_would_break_the_identity():
    """The self-check: counting per-position only over full-γ steps (the old way) breaks it here."""
    runs = variable_gamma_runs()["shorter last step"]
    st = spec_stats(runs)
    full = [s for r in runs for s in r.steps if s.gamma == st.gamma]
    old = [sum(s.accepted > i for s in full) / len(full) for i in range(st.gamma)]
    assert abs(1 + sum(old) - st.mean_acceptance_length) > 1e-3


def test_a_run_that_never_drafted_predicts_nothing_instead_of_raising():
    """gamma="auto" may draft nothing (all γ = 0 steps): the speed-up formulas give NaN, the live table '—'."""
    from specviz.widgets.live.render import fmt_number

    pair = Pair(NGramModel(np.array(sv.TUTORIAL_P)), NGramModel(np.array(sv.TUTORIAL_Q)))
    st = spec_stats(speculative_generate(pair, [0], 20, 0, seed=0))
    assert st.drafted == 0 and st.steps == 20
    assert np.isnan(st.predicted_speedup(0.01)) and np.isnan(st.bound(0.1))
    assert fmt_number(st.predicted_speedup(0.01), ".2f", "×") == "—"
    drafted = spec_stats(speculative_generate(pair, [0], 20, 2, seed=0))
    assert np.isfinite(drafted.predicted_speedup(0.01)) and np.isfinite(drafted.bound(0.1))
