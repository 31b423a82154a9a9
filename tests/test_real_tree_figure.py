"""The figure of one real verify step's draft tree (`specviz.figures.real_tree`): fates, path, R at the stop node.

Hand-made `TreeStep`s pin every number; runs of the n-gram toy check the figure against the engine's own
records (the nodes, the path, R at the stop node, the drawn token), in English and Chinese.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from specviz import figures as F
from specviz.figures import real_tree as RT
from specviz.figures.draft_tree import STATUS_STYLE
from specviz.figures.style import trace_by_meta as tr
from specviz.foundation.i18n import language, set_language, t
from specviz.foundation.palette import FATE_COLORS, PALETTE
from specviz.lm import NGramModel, Pair, speculative_generate  # (torch: imported once, at collection)
from specviz.lm.engine.results import StepRecord, TreeStep

CJK = re.compile(r"[\u4e00-\u9fff]")

# node: 0 "7" rejected, 1 "4" accepted (the stop), 2 "5" under 0 never tested, 3 "6" under 1 rejected.
# At the stop node p = (3: .5, 4: .3, 6: .2), q = (6: .6, 3: .3, 4: .1): rejecting "6" leaves
# R = (p - q)+ / Z = (3: .5, 4: .5, 6: 0), from which "3" was drawn.
STOP_P = [(3, 0.5), (4, 0.3), (6, 0.2)]
STOP_Q = [(6, 0.6), (3, 0.3), (4, 0.1)]


def resampled_step(**tree_changes) -> StepRecord:
    """A hand-made tree step whose walk stopped at node 1 after rejecting its child: the final token 3 came from R."""
    fields = dict(widths=(2, 1), tokens=[7, 4, 5, 6], parents=[-1, -1, 0, 1], fates=[0, 1, -1, 0], path=[1],
                  p_x=[0.1, 0.5, 0.2, 0.2], q_x=[0.5, 0.4, 0.3, 0.6], final=[(3, 0.5), (4, 0.5)])  # fmt: skip
    fields.update(tree_changes)
    return StepRecord(4, 10, [4, 6], [0.4, 0.6], [0.5, 0.2], 1, 3, "resampled", [0.6, 0.6],
                      [[(4, 0.5), (7, 0.1)], STOP_P], [[(7, 0.5), (4, 0.4)], STOP_Q], 0.0, 0.0,
                      tree=TreeStep(**fields))  # fmt: skip


def bonus_step() -> StepRecord:
    """A hand-made tree step accepted down to a leaf (node 2 under node 0): the bonus token 9 came from p."""
    tree = TreeStep(widths=(2, 1), tokens=[7, 4, 8, 6], parents=[-1, -1, 0, 1], fates=[1, -1, 1, -1], path=[0, 2],
                    p_x=[0.6, 0.2, 0.7, 0.1], q_x=[0.5, 0.4, 0.6, 0.3], final=[(9, 0.6), (2, 0.3)], bonus=True)  # fmt: skip
    return StepRecord(0, 0, [7, 8], [0.5, 0.6], [0.6, 0.7], 2, 9, "bonus", [0.8, 0.9],
                      [[(7, 0.6)], [(8, 0.7)], [(9, 0.6), (2, 0.3)]], [[(7, 0.5)], [(8, 0.6)], []], 0.0, 0.0,
                      tree=tree)  # fmt: skip


def bar(fig, meta) -> dict:
    trace = tr(fig, meta)
    return dict(zip(trace.x, (float(v) for v in trace.y)))


# ----------------------------------------------------------------------------- the tree: fates, path, stop


def test_nodes_are_coloured_and_marked_by_their_fate_as_everywhere_else():
    fig = F.real_tree_figure(resampled_step())
    want = {"accepted": [1], "rejected": [0, 3], "untested": [2]}
    for fate, nodes in want.items():
        trace = tr(fig, f"nodes:{fate}")
        assert list(trace.customdata) == nodes, fate
        meta, symbol, colour, mark = STATUS_STYLE[fate]  # the toy tree's look: one colour language
        assert (trace.marker.symbol, trace.marker.color) == (symbol, colour), fate
        assert all(text.startswith(mark) for text in trace.text), (fate, trace.text)
    assert tr(fig, "nodes:accepted").marker.color == FATE_COLORS["accepted"]  # the live text's accepted blue
    assert tr(fig, "nodes:rejected").text[1] == "✗ “#6”"
    # every node of the tree is drawn once
    drawn = sorted(int(i) for f in want for i in tr(fig, f"nodes:{f}").customdata)
    assert drawn == [0, 1, 2, 3]


def test_the_accepted_path_is_highlighted_and_the_stop_node_marked():
    fig = F.real_tree_figure(resampled_step())
    depth, y = RT.tree_layout([-1, -1, 0, 1])
    path = tr(fig, "edges:path")
    assert list(path.x) == [0, 1] and list(path.y) == [y[-1], y[1]]  # root -> node 1, the accepted node
    assert path.line.width > tr(fig, "edges").line.width
    stop = tr(fig, "stop")
    assert (stop.x[0], stop.y[0]) == (depth[1], y[1])
    final = tr(fig, "final_token")
    assert final.marker.color == FATE_COLORS["resampled"] and "“#3”" in final.text[0]
    assert final.y[0] == y[1] and final.x[0] == max(depth.values()) + 1
    # a walk that accepted nothing stops at the root
    root_stop = F.real_tree_figure(resampled_step(fates=[0, 0, -1, -1], path=[]))
    assert list(tr(root_stop, "edges:path").x) == [0] and tr(root_stop, "stop").x[0] == 0
    assert not len(tr(root_stop, "nodes:accepted").customdata)


def test_the_layout_puts_children_right_of_their_parent_and_leaves_on_their_own_rows():
    parents = [-1, -1, -1, 0, 0, 1, 1, 2, 2, 3, 4, 5, 6, 7, 8]  # the engine's (3, 2, 1) tree
    depth, y = RT.tree_layout(parents)
    leaves = [i for i in range(len(parents)) if i not in parents]
    assert sorted(y[i] for i in leaves) == [-float(k) for k in range(len(leaves))][::-1]
    for i, parent in enumerate(parents):
        assert depth[i] == depth[parent] + 1
        kids = [c for c, p in enumerate(parents) if p == i]
        if kids:
            assert y[i] == pytest.approx(np.mean([y[c] for c in kids]))


# ----------------------------------------------------------------------------- the money diagram at the stop node


def test_the_bars_are_p_q_their_overlap_and_R_at_the_stop_node():
    fig = F.real_tree_figure(resampled_step(), token_text=lambda i: f"tok{i}")
    assert bar(fig, "p") == {"tok3": 0.5, "tok4": 0.3, "tok6": 0.2}
    assert bar(fig, "q") == {"tok3": 0.3, "tok4": 0.1, "tok6": 0.6}
    assert bar(fig, "overlap") == {"tok3": 0.3, "tok4": 0.1, "tok6": 0.2}
    assert bar(fig, "final") == {"tok3": 0.5, "tok4": 0.5, "tok6": 0.0}  # R: (p - q)+ / Z
    assert sum(bar(fig, "final").values()) <= 1 + 1e-12
    assert list(tr(fig, "drawn").x) == ["tok3"]  # the final token, marked over its bars
    assert tr(fig, "final").marker.color == PALETTE["residual"]
    sub = fig.layout.title.subtitle.text
    assert "node 1 “tok4”" in sub and "residual R" in sub and "Σ min(p, q) = 0.600" in sub
    assert t("realtree.top_only") in sub  # the bars show the top tokens only, and the figure says so
    assert "“tok7”" in tr(fig, "nodes:rejected").text[0]  # the labels use token_text


def test_after_a_leaf_the_final_token_is_a_bonus_from_p():
    fig = F.real_tree_figure(bonus_step())
    assert bar(fig, "final") == bar(fig, "p") == {"#9": 0.6, "#2": 0.3}  # no residual: p itself
    assert set(bar(fig, "q").values()) == {0.0} and set(bar(fig, "overlap").values()) == {0.0}
    assert sum(bar(fig, "final").values()) <= 1
    assert tr(fig, "final_token").marker.color == FATE_COLORS["bonus"]
    assert "bonus token “#9” came from the target p" in fig.layout.title.subtitle.text
    assert list(tr(fig, "nodes:accepted").customdata) == [0, 2] and list(tr(fig, "drawn").x) == ["#9"]


def test_it_speaks_chinese_without_changing_the_language():
    from test_i18n import figure_texts, problems_in

    before = language()
    set_language("en")
    try:
        for rec in (resampled_step(), bonus_step()):
            fig = F.real_tree_figure(rec, lang="zh")
            texts = figure_texts(fig)
            assert not problems_in(texts), problems_in(texts)
            said = fig.layout.title.subtitle.text
            assert CJK.search(fig.layout.title.text) and ("额外 token" if rec.tree.bonus else "残差 R") in said
            assert language() == "en"
        assert problems_in(figure_texts(F.real_tree_figure(resampled_step())))  # the check can fail: English
    finally:
        set_language(before)
    with pytest.raises(ValueError, match="unknown language"):
        F.real_tree_figure(resampled_step(), lang="fr")


@pytest.mark.parametrize(
    "record, match",
    [
        (StepRecord(0, 0, [4], [0.5], [0.5], 1, 8, "bonus", [0.6], [], [], 0.0, 0.0), "no tree"),
        (resampled_step(parents=[-1, 2, 0, 1]), "parent 2 must be"),
        (resampled_step(fates=[0, 1, 2, 0]), "fate must be"),
        (resampled_step(p_x=[0.1]), "4 tokens but 1 p_x"),
        (resampled_step(path=[9]), "outside 0..3"),
    ],
)
def test_a_record_that_is_not_a_tree_is_refused_by_name(record, match):
    with pytest.raises(ValueError, match=match):
        F.real_tree_figure(record)


# ----------------------------------------------------------------------------- against the engine's own records


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
def test_every_tree_step_of_a_toy_run_is_drawn_as_the_engine_recorded_it():
    pair = Pair(NGramModel.random(8, seed=0), NGramModel.random(8, seed=1))
    run = speculative_generate(pair, [0], max_new_tokens=40, gamma=3, tree=(3, 2, 1), seed=0)
    steps = [s for s in run.steps if s.tree is not None]
    assert {s.kind for s in steps} == {"resampled", "bonus"}, "the run should show both endings"
    for s in [s for s in steps if s.kind == "bonus"][:2] + [s for s in steps if s.kind == "resampled"][:4]:
        tree, fig = s.tree, F.real_tree_figure(s)
        assert list(tr(fig, "nodes:accepted").customdata) == list(tree.path)
        assert len(tr(fig, "nodes:rejected").customdata) == tree.fates.count(0)
        assert list(tr(fig, "drawn").x) == [f"#{s.token}"]
        r = bar(fig, "final")
        assert sum(r.values()) <= 1 + 1e-9 and r[f"#{s.token}"] > 0  # the drawn token had mass where it was drawn
        if s.kind == "resampled":  # a rejected child x of the stop node leaves R(x) = 0: (R - q)+ after R(x) < q(x)
            rejected = [tree.tokens[i] for i in range(len(tree.tokens)) if tree.parents[i] == tree.stop]
            assert all(r.get(f"#{x}", 0.0) == 0.0 for x in rejected), (rejected, r)
        else:
            assert r == bar(fig, "p")
