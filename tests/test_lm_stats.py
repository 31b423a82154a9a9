"""Acceptance statistics agree with the theory on a pair whose α is known exactly (0.8)."""

import numpy as np
import pytest
from scipy import stats

import specviz as sv
from specviz.lm import NGramModel, Pair, speculative_generate
from specviz.lm.stats.stats import spec_stats


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
    from specviz.lm.drafts.prompt_lookup import PromptLookupModel
    from specviz.lm.gamma.adaptive import AutoGamma

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


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
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


# ------------------------------------------------------------------------------ draft trees


def tree_step(index, widths, accepted, token=9):
    """A hand-made tree step: every node of `widths` drafted, the first child accepted `accepted` times."""
    from specviz.lm.engine.results import StepRecord, TreeStep

    parents, level = [], [-1]
    for w in widths:  # parents before children, level by level
        first = len(parents)
        parents += [p for p in level for _ in range(w)]
        level = list(range(first, len(parents)))
    path, node = [], -1
    for _ in range(accepted):  # the accepted path: the first child at each depth
        node = parents.index(node)
        path.append(node)
    depth, tokens = len(widths), list(range(len(parents)))
    stopped_at = [i for i, p in enumerate(parents) if p == node] if accepted < depth else []  # all rejected
    fates = [1 if i in path else 0 if i in stopped_at else -1 for i in range(len(parents))]
    n_verified = min(accepted + 1, depth)  # the path, then the first child tested at the stop
    drafted = [tokens[i] for i in path + stopped_at[:1]]
    tree = TreeStep(widths, tokens, parents, fates, path, [0.5] * len(parents), [0.5] * len(parents))
    kind = "bonus" if accepted == depth else "resampled"
    half = [0.5] * n_verified
    return StepRecord(index, 0, drafted, half, half, accepted, token, kind, half, [], [], 0.01, 0.02, tree=tree)


def plain_step(index, token=9):
    from specviz.lm.engine.results import StepRecord

    return StepRecord(index, 0, [], [], [], 0, token, "target", [], [], [], 0.0, 0.02)


def run_of(steps):
    from specviz.lm.engine.results import GenerationResult

    return GenerationResult([0], [t for s in steps for t in s.emitted], steps=steps, seconds=1.0, gamma=3)


def test_tree_steps_count_along_the_accepted_path_and_the_identity_holds():
    shapes_and_paths = [((3, 2, 1), 0), ((3, 2, 1), 1), ((3, 2, 1), 3), ((3, 2, 1), 2), ((3, 2), 2), ((3,), 1)]
    steps = [tree_step(i, w, k) for i, (w, k) in enumerate(shapes_and_paths)] + [plain_step(6)]
    assert [s.gamma for s in steps] == [3, 3, 3, 3, 2, 1, 0] and [len(s.tree.tokens) for s in steps[:3]] == [15] * 3
    st = spec_stats(run_of(steps))
    drafts, acc, reached = hand_counts(steps, 3)
    assert st.drafts == len(drafts) == 6 and st.gamma == 3
    np.testing.assert_allclose(st.per_position, np.array(acc) / 6)  # depth i: paths longer than i / drafts
    np.testing.assert_allclose(st.per_position, [5 / 6, 3 / 6, 1 / 6])
    assert st.mean_acceptance_length == pytest.approx(1 + 9 / 6) == pytest.approx(1 + st.per_position.sum())
    np.testing.assert_allclose(st.per_position_conditional, np.array(acc) / np.array(reached))
    assert st.nodes_per_step == pytest.approx((15 * 4 + 9 + 3) / 6)  # N of each drafting tree; plain steps out
    assert st.generated == 9 + 7 and st.tokens_per_call == st.tokens_per_step == pytest.approx(16 / 7)
    assert st.tree == (3, 2, 1)  # the deepest shape, the others its prefixes (γ capped the depth)
    d = st.to_dict()
    assert d["tree_widths"] == [3, 2, 1] and d["nodes_per_step"] == pytest.approx(st.nodes_per_step)
    assert d["tokens_per_call"] == pytest.approx(16 / 7)
    assert d["mean_acceptance_length"] == pytest.approx(1 + sum(d["per_position_acceptance"]), abs=1e-12)
    assert "draft tree" in st._repr_html_() and "(per depth)" in st._repr_html_()


def test_counting_a_tree_by_nodes_would_break_the_identity():
    """The self-check: per-depth acceptance over the nodes tested at a depth (not over drafts) breaks it."""
    steps = [tree_step(i, (3, 2, 1), k) for i, k in enumerate([0, 1, 3, 3])]
    st = spec_stats(run_of(steps))
    tested = [sum(f >= 0 and d == i for s in steps for f, d in zip(s.tree.fates, depths(s.tree))) for i in range(3)]
    assert tested == [6, 4, 2]  # a stop tests (and rejects) every child there; along the path, the first child
    by_node = [sum(s.accepted > i for s in steps) / n for i, n in enumerate(tested)]
    assert st.mean_acceptance_length == pytest.approx(1 + st.per_position.sum())
    assert abs(1 + sum(by_node) - st.mean_acceptance_length) > 1e-3


def depths(tree):
    """Each node's depth, from its parents."""
    out = []
    for p in tree.parents:
        out.append(0 if p < 0 else out[p] + 1)
    return out


def test_tree_shape_and_nodes_of_chains_and_mixed_shapes():
    mixed = spec_stats(run_of([tree_step(0, (2, 2), 1), tree_step(1, (3, 2, 1), 1)]))
    assert mixed.tree is None and mixed.nodes_per_step == pytest.approx((6 + 15) / 2)
    pair = Pair(NGramModel(np.array(sv.TUTORIAL_P)), NGramModel(np.array(sv.TUTORIAL_Q)))
    chain = spec_stats(speculative_generate(pair, [0], 30, 3, seed=0))
    assert chain.tree is None and chain.to_dict()["tree_widths"] is None
    drafting = [s.gamma for s in speculative_generate(pair, [0], 30, 3, seed=0).steps if s.gamma]
    assert chain.nodes_per_step == pytest.approx(np.mean(drafting))  # a chain's nodes are its γ
    plain = spec_stats(run_of([plain_step(0), plain_step(1)]))
    assert np.isnan(plain.nodes_per_step) and plain.tree is None and plain.to_dict()["nodes_per_step"] is None
    assert plain.tokens_per_call == 1.0


def test_a_run_mixing_plain_chain_and_tree_steps_counts_each_shape():
    """tree="auto" mixes plain steps, chains and trees: each is counted by its shape, and the identity still holds."""
    steps = [plain_step(0), tree_step(1, (3, 1, 1), 2), tree_step(2, (3, 1, 1), 0), tree_step(3, (2,), 1)]
    steps += [plain_step(4), plain_step(5)]
    chain = speculative_generate(
        Pair(NGramModel(np.array(sv.TUTORIAL_P)), NGramModel(np.array(sv.TUTORIAL_Q))), [0], 8, 2, seed=0
    )
    steps += [s for s in chain.steps if s.gamma == 2][:2]
    st = spec_stats(run_of(steps))
    assert st.shapes == (("plain", 3), ("3,1,1", 2), ("1,1", 2), ("2", 1))  # most used first, ties as first seen
    assert st.to_dict()["tree_shapes"] == {"plain": 3, "3,1,1": 2, "1,1": 2, "2": 1}
    assert st.tree is None and st.drafts == 5 and st.gamma == 3
    assert st.mean_acceptance_length == pytest.approx(1 + st.per_position.sum())
    assert st.nodes_per_step == pytest.approx((9 + 9 + 2 + 2 + 2) / 5)  # a chain's nodes are its γ
