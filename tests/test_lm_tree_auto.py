"""tree="auto" (`specviz.lm.trees.shape.TreeAuto`): exact output, its choices from measurements, clear errors, the CLI.

The exact-law checks reuse tests/test_lm_tree_engine.py's harness (a trigram toy over V = 3 tokens, the
law of the first L = 3 tokens by exact enumeration, a chi-square test at ALPHA = 1e-4 with fixed seeds:
a correct engine fails one with probability 1e-4 over seeds). The choice tests run the engine on a
virtual clock: the toy's sessions advance it by a cost per forward (a CPU-like and a GPU-like table),
`time.perf_counter` of the engine and its step clock read it, so each run is deterministic.
"""

from __future__ import annotations

import collections
import json
from types import SimpleNamespace

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from stats_helpers import chi_square_pvalue  # noqa: E402
from test_lm_tree_engine import ALPHA, PROMPT, L, V, exact_continuations, toy_pair  # noqa: E402
from test_tree_verify import PLANTED, planted  # noqa: E402

import specviz as sv  # noqa: E402
import specviz.lm.engine.loop as engine_module  # noqa: E402
import specviz.lm.engine.readout as readout_module  # noqa: E402
import specviz.lm.trees.shape as tree_auto  # noqa: E402
from specviz.exact.standardize import Sampling  # noqa: E402
from specviz.lm import GenerationSettings, NGramModel, Pair, SpeculativeEngine, speculative_generate  # noqa: E402
from specviz.lm.engine import tree_step as tree_step_module  # noqa: E402
from specviz.lm.engine.results import StepRecord, TreeStep  # noqa: E402
from specviz.lm.gamma.adaptive import AutoGamma, FixedGamma, forget, recall  # noqa: E402
from specviz.lm.trees.shape import TreeAuto, first_accepted  # noqa: E402


class ShiftyTreeAuto(TreeAuto):
    """TreeAuto that prices at every step, remembers across runs even with a fixed γ, and scales each shape's
    expected rate by a factor drawn from the tokens the last step emitted: its choices depend on the past draws
    (and so vary a lot in runs of L = 3 tokens), never on the step's own, so the output must stay exact."""

    remember = True
    salt = 0

    def __init__(self, inner, **settings):
        eager = dict(explore_share=1.0, explore_bonus=1000.0, warmup=1, min_tries=1, max_tries=1000, reprice_every=1)
        super().__init__(inner, **{**eager, **settings})

    def price(self, g, top, match=None):
        best, rates = super().price(g, top, match)
        return best, [(h, s, r * (0.2 + 3 * (hash((self.salt, s)) % 97) / 97), n) for h, s, r, n in rates]

    def observe_step(self, record):
        self.salt = hash((self.salt, *record.emitted))
        super().observe_step(record)

    def warm_start(self, last):
        super().warm_start(last)
        self.salt = last.salt


def auto_tree_law(monkeypatch, n: int, seed: int) -> tuple:
    """(p-value of the first L tokens of n tree="auto" runs against exact enumeration, the shapes their steps ran)."""
    monkeypatch.setattr(tree_auto, "TreeAuto", ShiftyTreeAuto)
    pair, rng = toy_pair(), np.random.default_rng(seed)
    forget(pair)
    counts, shapes = np.zeros(V**L, dtype=np.int64), collections.Counter()
    for _ in range(n):
        r = SpeculativeEngine().generate(pair, PROMPT, max_new_tokens=L, gamma=2, seed=rng, tree="auto")
        counts[sv.sequence_index(np.array([r.new_ids]), V)[0]] += 1
        shapes.update(s.tree.widths if s.tree is not None else (1,) * s.gamma for s in r.steps)
    forget(pair)
    return chi_square_pvalue(counts, exact_continuations(pair.target, PROMPT, L, Sampling())), shapes


@pytest.mark.slow  # 2,000 generations (~6 s)
def test_tree_auto_output_matches_exact_enumeration(monkeypatch):
    p, shapes = auto_tree_law(monkeypatch, 2000, seed=1)
    trees = {w: n for w, n in shapes.items() if max(w, default=1) > 1}
    assert sum(trees.values()) > 0.4 * sum(shapes.values()) and len(trees) >= 4, shapes  # the auto shapes ran,
    assert shapes[(1, 1)] and shapes[()], shapes  # and chains and plain steps between them
    assert p >= ALPHA, f"p-value {p:.3g}"


@pytest.mark.slow
def test_a_planted_walk_bug_under_tree_auto_is_caught(monkeypatch):
    """The check has power here: siblings tested without the residual update (widths >= 2 ran) is caught."""
    monkeypatch.setattr(tree_step_module, "verify_tree_torch", planted(*PLANTED["no residual update"]))
    p, _ = auto_tree_law(monkeypatch, 1000, seed=3)
    assert p < ALPHA, f"not caught: p-value {p:.3g}"


# ------------------------------------------------------------------------------ choices, on a virtual clock

COSTS = {  # (target, draft): seconds of a forward = base (1 + per_token n), + extra for a tree's masked forward
    "cpu": ((3.3e-3, 0.04, 1.5e-3), (0.5e-3, 0.05, 0.2e-3)),  # wider trees cost more than they bring
    "gpu": ((8e-3, 0.002, 0.2e-3), (0.5e-3, 0.0, 0.02e-3)),  # the forward barely grows with the nodes read
}


def clocked_pair(monkeypatch, device: str) -> Pair:
    """A trigram toy pair (V = 8, the draft a mixture half its target's) whose forwards advance a virtual clock."""
    clock = [0.0]
    fake = SimpleNamespace(perf_counter=lambda: clock[0])
    monkeypatch.setattr(engine_module, "time", fake)
    monkeypatch.setattr(readout_module, "time", fake)

    def timed(model, cost):
        base, per_token, tree_extra = cost
        session_class = type(model.session([0]))

        class Timed(session_class):
            def _forward(self, ids):
                clock[0] += base * (1 + per_token * len(ids))
                return super()._forward(ids)

            def _forward_tree(self, ids, parents):
                clock[0] += base * (1 + per_token * len(ids)) + tree_extra
                return super()._forward_tree(ids, parents)

        model.session = lambda prompt_ids: Timed(model, prompt_ids)
        return model

    target = NGramModel.random(8, order=3, seed=10, concentration=0.5, name="target")
    other = NGramModel.random(8, order=3, seed=11, concentration=0.5)
    draft = NGramModel(0.5 * target.table + 0.5 * other.table, name="draft")
    return Pair(timed(target, COSTS[device][0]), timed(draft, COSTS[device][1]))


def virtual_rate(pair, **kw) -> tuple:
    """(tokens per virtual second over three 400-token runs, the share of tree steps in their second halves)."""
    forget(pair)
    tokens = seconds = trees = later = 0
    for seed in range(3):
        r = speculative_generate(pair, [1, 2], 400, seed=seed, **kw)
        tokens, seconds = tokens + len(r.new_ids), seconds + r.seconds
        half = r.steps[len(r.steps) // 2 :]
        trees, later = trees + sum(s.tree is not None for s in half), later + len(half)
    return tokens / seconds, trees / later


@pytest.mark.slow  # 15 runs of 400 tokens (~8 s)
def test_auto_runs_chains_where_trees_cost_more_and_trees_where_they_pay(monkeypatch):
    cpu = clocked_pair(monkeypatch, "cpu")
    chain, _ = virtual_rate(cpu, gamma="auto")
    auto, tree_share = virtual_rate(cpu, gamma="auto", tree="auto")
    fixed, _ = virtual_rate(cpu, gamma=3, tree=(3, 2, 1))
    plain, _ = virtual_rate(cpu, gamma=0)
    assert fixed < 0.9 * chain  # here a tree loses (the goals below can fail) ...
    assert tree_share <= 0.12 and auto >= 0.97 * chain and auto >= 0.97 * plain  # ... and auto ends on chains
    gpu = clocked_pair(monkeypatch, "gpu")
    chain, _ = virtual_rate(gpu, gamma="auto")
    auto, tree_share = virtual_rate(gpu, gamma="auto", tree="auto")
    assert tree_share >= 0.6 and auto >= 1.08 * chain  # here trees pay, and auto ends on trees


def steps_of(auto: TreeAuto, n: int, tree_cost: float, rescue: float, seed: int = 0) -> list:
    """Drive `auto` (FixedGamma(3) inside) for n steps: a chain of 3 takes 10 ms, a tree `tree_cost` times its
    chain; each first child is accepted with 0.6, a later child (of a tree) with `rescue`. Returns the widths."""
    rng, out = np.random.default_rng(seed), []
    for _ in range(n):
        g = auto.choose(100)
        widths = auto.widths(g)
        parents, level, node = [], [-1], -1
        for w in widths:
            first = len(parents)
            parents += [p for p in level for _ in range(w)]
            level = list(range(first, len(parents)))
        kids = {p: [i for i, q in enumerate(parents) if q == p] for p in [-1, *range(len(parents))]}
        fates, path = [-1] * len(parents), []
        for _ in widths:
            j = next((i for i in range(len(kids[node])) if rng.random() < (0.6 if i == 0 else rescue)), None)
            for i, c in enumerate(kids[node]):
                fates[c] = 1 if i == j else 0 if j is None or i < j else -1
            if j is None:
                break
            node = kids[node][j]
            path.append(node)
        seconds = 0.010 * (1 + 0.05 * (g - 3)) * (tree_cost if max(widths) > 1 else 1.0)
        tree = TreeStep(widths, [0] * len(parents), parents, fates, path, [0.5] * len(parents), [0.5] * len(parents))
        auto.observe(len(widths), len(path), 0.002, seconds - 0.002)
        auto.observe_step(SimpleNamespace(tree=tree if max(widths) > 1 else None))
        out.append(widths)
    return out


def test_tree_auto_keeps_chains_when_trees_cost_more_and_takes_trees_when_they_pay():
    """The choice on a fake clock (the chooser told the seconds), as tests/test_lm_adaptive.py drives AutoGamma."""
    costly = steps_of(TreeAuto(FixedGamma(3)), 200, tree_cost=1.5, rescue=0.15)
    assert sum(max(w) > 1 for w in costly[100:]) <= 10  # at most the exploring share (1 step in 10)
    cheap = steps_of(TreeAuto(FixedGamma(3)), 200, tree_cost=1.05, rescue=0.5)
    assert sum(max(w) > 1 for w in cheap[100:]) >= 80  # trees where they pay
    never = steps_of(TreeAuto(FixedGamma(3), explore_share=0.0), 100, tree_cost=1.05, rescue=0.5)
    assert all(max(w) == 1 for w in never)  # nothing explored, nothing measured: the γ chooser's chain


def test_tree_auto_with_nothing_measured_runs_the_chain_and_before_choose_offers_the_widest_trie():
    auto = TreeAuto(AutoGamma(max_gamma=8))
    assert auto.label == "auto" and auto.max_gamma == 8 and not auto.remember
    assert auto.widths(3) == (4, 4, 4)  # the engine asks a lookup's widest trie before choose
    assert auto.choose(10) == 0 and auto.widths(0) == ()  # AutoGamma starts with plain steps
    assert TreeAuto(AutoGamma(remember=True)).remember


def test_first_accepted_reads_the_walk_from_a_real_tree_step():
    r = speculative_generate(toy_pair(), PROMPT, 40, 2, seed=0, tree=(3, 2))
    for s in r.steps:
        walk = first_accepted(s.tree)
        assert [j for _, _, j in walk if j is not None] == [
            [c for c, p in enumerate(s.tree.parents) if p == (s.tree.path[d - 1] if d else -1)].index(s.tree.path[d])
            for d in range(len(s.tree.path))
        ]
        assert [w for _, w, _ in walk] == [3, 2][: len(walk)] and (walk[-1][2] is None) == (
            len(s.tree.path) < len(s.tree.widths)
        )


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"max_width": 1}, r"max_width must be a whole number in 2\.\.16, got 1"),
        ({"explore_share": 1.5}, r"explore_share must be a number in \[0, 1\], got 1\.5"),
        ({"max_nodes": 999}, r"max_nodes must be a whole number in 2\.\.256"),
        ({"prior_weight": 0}, r"prior_weight must be a number in \[1e-09, 1000\]"),
        ({"span": 2.5}, r"span must be a whole number in 1\.\.256, got 2\.5"),
        ({"min_tries": 5, "max_tries": 3}, r"max_tries must be >= min_tries \(5\), got 3"),
        ({"widht": 3}, r"TreeAuto has no setting 'widht'"),
    ],
)
def test_bad_tree_auto_settings_name_the_field_and_its_range(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        TreeAuto(AutoGamma(), **kwargs)


def test_tree_auto_needs_a_gamma_chooser():
    with pytest.raises(TypeError, match="inner must be a GammaChooser"):
        TreeAuto(3)


def test_settings_take_tree_auto_and_a_run_records_its_shapes():
    assert GenerationSettings(tree=" AUTO ").tree == "auto"
    r = speculative_generate(toy_pair(), PROMPT, 60, "auto", seed=0, tree="auto")
    assert len(r.new_ids) == 60 and r.gamma == "auto"
    assert {s.gamma for s in r.steps} >= {0} and all(s.tree is None or max(s.tree.widths) > 1 for s in r.steps)


def test_tree_auto_remembers_between_runs_and_a_chain_auto_run_reads_that_memory():
    pair = toy_pair()
    forget(pair)
    speculative_generate(pair, PROMPT, 120, "auto", seed=0, tree="auto")
    warm = TreeAuto(AutoGamma(remember=True))
    recall(warm, pair, Sampling())
    assert warm.medians and warm.first and warm.inner.verify  # the tree's clock and counts, and the γ chooser's
    chain = AutoGamma(remember=True)
    recall(chain, pair, Sampling())
    assert chain.verify and chain.verify.keys() == warm.inner.verify.keys()  # AutoGamma takes the one inside
    cold = TreeAuto(FixedGamma(2))
    recall(cold, pair, Sampling())
    assert not cold.medians  # a fixed γ remembers nothing, as with chains
    forget(pair)


def test_a_step_without_its_record_counts_as_a_chain():
    auto = TreeAuto(FixedGamma(2))
    auto.observe(2, 1, 0.001, 0.01)
    auto.observe(2, 2, 0.001, 0.01)  # no observe_step in between: the first is counted as it was, a chain
    auto.observe_step(StepRecord(0, 0, [1, 2], [0.5] * 2, [0.5] * 2, 2, 3, "bonus", [0.5] * 2, [], [], 0.001, 0.01))
    assert auto.medians[(1, 1)][1] == 2 and auto.first[0] == [2, 2] and auto.first[1] == [1, 2]


# ------------------------------------------------------------------------------ the command line


@pytest.mark.slow  # loads the bundled pair
def test_run_tree_auto_json_reports_the_shapes_each_step_used(capsys):
    from specviz.cli import main
    from specviz.cli.run import format_report

    argv = ["run", "--tree", "auto", "--max-new-tokens", "24", "--device", "cpu", "--json", "--temperature"]
    assert main([*argv, "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["tree"] == "auto" and out["gamma"] == "auto"  # without --gamma the depth is auto too
    assert sum(out["tree_shapes"].values()) == out["verify_steps"] == len(out["gamma_per_step"])
    assert list(out["tree_shapes"].values()) == sorted(out["tree_shapes"].values(), reverse=True)
    assert out["mean_acceptance_length"] is None or out["mean_acceptance_length"] == pytest.approx(
        1 + sum(out["per_position_acceptance"]), abs=1e-12
    )
    assert "draft tree      " in format_report(out) and "×" in format_report(out)
    assert main([*argv, "0"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["greedy_equal"] is True and out["tree"] == "auto"
