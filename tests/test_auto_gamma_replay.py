"""Issue 17's speed goals for gamma="auto" with prompt lookup, on a replay that machine noise cannot move.

benchmarks/bench_auto_gamma_replay.py replays the engine's loop on SmolLM2-135M's recorded greedy
outputs for the benchmark's five prompts and its measured verify-cost curve (plain-step units),
with 10 % log-normal noise on every step's time (8 fixed seeds). The goals are asserted on the
mean over seeds; the noise is part of the input, not a source of false alarms (fixed seeds, so
the test is deterministic). The timed benchmark (bench_prompt_lookup.py) checks the same goals
on the machine, side by side with transformers, but cannot assert them: its control (plain
decoding against itself) moves by up to ~6 % here.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import bench_auto_gamma_replay as replay  # noqa: E402

from specviz.lm.gamma.adaptive import AutoGamma, FixedGamma  # noqa: E402


@pytest.fixture(scope="module")
def data():
    return replay.load()


@pytest.fixture(scope="module")
def results(data):
    return replay.evaluate(data)


def test_the_replay_reproduces_the_recorded_outputs(data):
    """Fixed γ = 0 spends one plain step per token; any γ emits exactly the recorded greedy tokens."""
    for name, rec in data["prompts"].items():
        cost, steps = replay.replay(data, name, FixedGamma(0))
        assert cost == pytest.approx(len(rec["greedy_ids"]))
        _, steps = replay.replay(data, name, FixedGamma(10))
        assert sum(acc + 1 for _, acc, _ in steps) == len(rec["greedy_ids"])


def test_auto_never_loses_to_plain_decoding(results):
    worst = {k: round(r["auto"], 3) for k, r in results.items()}
    assert min(worst.values()) >= 0.97, worst


def test_auto_is_within_10_percent_of_the_best_fixed_gamma(results):
    ratio = {k: round(r["auto"] / r["best fixed"], 3) for k, r in results.items()}
    assert min(ratio.values()) >= 0.90, ratio


def test_auto_beats_transformers_prompt_lookup_by_10_percent_geometric_mean(results):
    gm = math.exp(sum(math.log(r["auto"] / r["transformers lookup"]) for r in results.values()) / len(results))
    assert gm >= 1.10, gm


def test_the_goals_can_fail(data):
    """A fixed γ = 10 in auto's place loses on free text, and a timid chooser is far from the best γ on copy."""
    bad = replay.evaluate(data, make_auto=lambda: FixedGamma(10), seeds=range(1))
    assert bad["free text"]["auto"] < 0.97
    timid = replay.evaluate(data, make_auto=lambda: AutoGamma(max_gamma=2), seeds=range(1))
    assert timid["copy"]["auto"] / timid["copy"]["best fixed"] < 0.9


# ------------------------------------------------------------------------------ draft trees (issue 34)


@pytest.fixture(scope="module")
def tree_results(data):
    return replay.evaluate_trees(data, seeds=range(6))


@pytest.mark.slow  # the tree replays (~3 s)
def test_tree_auto_never_loses_to_chain_auto_or_plain_decoding(tree_results):
    ratio = {k: round(r["tree auto"] / r["chain auto"], 3) for k, r in tree_results.items()}
    assert min(ratio.values()) >= 0.97, ratio
    over_plain = {k: round(r["tree auto"] / r.get("plain", 1.0), 3) for k, r in tree_results.items()}
    assert min(over_plain.values()) >= 0.97, over_plain
    second = {
        k: round(r["tree auto 2nd"] / r["chain auto 2nd"], 3) for k, r in tree_results.items() if "tree auto 2nd" in r
    }
    assert min(second.values()) >= 0.97, second


@pytest.mark.slow
def test_tree_auto_takes_trees_where_they_pay_and_chains_where_they_do_not(tree_results):
    """The GPU-like row: fixed trees beat chains, and auto's second run gains 8 % or more; on this CPU's row a fixed
    tree loses (the 0.97 goal above can fail) and auto stays within 3 % of chains."""
    gpu, cpu = tree_results["bundled gpu"], tree_results["bundled cpu"]
    assert gpu["tree 4,2,1,1"] > 1.08 * gpu["chain auto 2nd"] and gpu["tree auto 2nd"] >= 1.08 * gpu["chain auto 2nd"]
    assert cpu["tree 3,2,1"] < 0.97 * cpu["chain auto"] and cpu["tree 4,2,1,1"] < 0.9 * cpu["chain auto"]


def test_the_tree_replay_reproduces_the_recorded_outputs(data):
    """Without a tree the trie replay is the chain replay, step for step; the model-draft costs are the measured ones."""
    for name, rec in data["prompts"].items():
        chain = replay.lookup_tree_replay(data, name, replay.LOOKUP_POLICIES["chain auto"])
        assert chain[0] == pytest.approx(replay.replay(data, name, AutoGamma())[0])
        for policy in ("trie 4", "tree auto"):
            cost, shapes = replay.lookup_tree_replay(data, name, replay.LOOKUP_POLICIES[policy])
            assert cost > 0 and len(shapes) <= len(rec["greedy_ids"])
    seconds, shapes = replay.pair_replay(replay.PAIR_COSTS["cpu"], replay.TREE_POLICIES["tree 3,2,1"], n_tokens=50)
    assert shapes[0] == (3, 2, 1) and seconds > 0
    assert replay.pair_step_seconds(replay.PAIR_COSTS["cpu"], (3, 2, 1)) == pytest.approx(9.8e-3, rel=0.05)
    assert replay.pair_step_seconds(replay.PAIR_COSTS["cpu"], (1, 1, 1)) == pytest.approx(6.5e-3, rel=0.02)
