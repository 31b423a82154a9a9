"""Draft trees (specviz.samplers.tree, figures/draft_tree.py, widgets/draft_tree.py) against exact enumeration."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import specviz as sv
from specviz.figures.draft_tree import draft_tree_figure
from specviz.figures.style import trace_by_meta
from specviz.foundation.i18n import set_language
from specviz.samplers.tree import draft_tree, tree_expected_tokens, tree_size
from specviz.widgets.draft_tree import MAX_DRAWN_LEAVES, draft_tree_app

P3, Q3 = np.array(sv.TUTORIAL_P), np.array(sv.TUTORIAL_Q)
P4, Q4 = np.array([0.5, 0.3, 0.15, 0.05]), np.array([0.1, 0.2, 0.3, 0.4])
ONE_HOT_DOG = np.array([0.0, 1.0, 0.0])


def reference_children(p, q, kids):
    """Independent reference: walk k drafts with R updated by hand; (P(child i accepted), P(none), final R)."""
    R, still, acc = p.copy(), 1.0, []
    for x in kids:
        a = 1.0 if R[x] >= q[x] else R[x] / q[x]
        acc.append(still * a)
        still *= 1 - a
        shortfall = np.maximum(R - q, 0.0)
        if shortfall.sum() > 0:
            R = shortfall / shortfall.sum()
    return np.array(acc), still, R


def reference_deterministic(p, kids):
    """Independent reference for distinct children: accept x with R(x), else R(x) := 0 and renormalise."""
    R, still, acc = p.copy(), 1.0, []
    for x in kids:
        acc.append(still * R[x])
        still *= 1 - R[x]
        R[x] = 0.0
        if R.sum() > 0:
            R = R / R.sum()
    return np.array(acc), still, R


def padded_emitted_law(tree, p, reference):
    """The law of a step's emitted tokens, each sequence continued with plain draws from p to depth + 1 tokens.

    Walks every outcome of the verification (which child is kept at each node, else which token the
    final R gives; a bonus from p after a leaf) with `reference`, not with the tree's own numbers.
    Lossless (p the same at every position) means the result is p x p x ... x p.
    """
    V, n = p.size, tree.depth + 1
    law = np.zeros((V,) * n)

    def emit(seq, prob):
        tail = np.ones(())
        for _ in range(n - len(seq)):
            tail = np.multiply.outer(tail, p)
        law[tuple(seq)] += prob * tail

    def walk(index, seq, prob):
        kids = tree.children(index)
        if not kids:  # a leaf was accepted: the bonus token from p
            for y in range(V):
                emit(seq + [y], prob * p[y])
            return
        acc, none, R = reference([c.token for c in kids])
        for c, a in zip(kids, acc):
            if a > 0:
                walk(c.index, seq + [c.token], prob * a)
        for y in range(V):
            emit(seq + [y], prob * none * R[y])

    walk(0, [], 1.0)
    return law


def product_law(p, n):
    out = np.ones(())
    for _ in range(n):
        out = np.multiply.outer(out, p)
    return out


def enumerate_trees(p, q, k, d):
    """Every drafted tree (breadth-first token tuples) with its probability under q."""
    size = tree_size(k, d)
    support = np.flatnonzero(q > 0)
    for tokens in itertools.product(support, repeat=size):
        yield np.array(tokens, dtype=np.int64), float(np.prod(q[list(tokens)]))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("p", "q", "k", "d"), [(P3, Q3, 2, 2), (P3, Q3, 3, 1), (P4, Q4, 2, 2), (P3, ONE_HOT_DOG, 2, 3)]
)
def test_node_probabilities_and_losslessness_by_enumeration(p, q, k, d):
    first_token = np.zeros(p.size)
    joint = np.zeros((p.size,) * (d + 1))
    expected_tokens = 0.0
    for tokens, weight in enumerate_trees(p, q, k, d):
        tree = draft_tree(p, q, k, d, seed=0, tokens=tokens)
        on_path = {0: 1.0}
        for node in tree.nodes:
            kids = tree.children(node.index)
            if not kids:
                continue
            acc, none, R = reference_children(p, q, [c.token for c in kids])
            for c, a in zip(kids, acc):
                assert c.accept_given_parent == pytest.approx(a, abs=1e-12)
                on_path[c.index] = on_path[node.index] * a
                assert c.on_path == pytest.approx(on_path[c.index], abs=1e-12)
            if node.index == 0:  # the first emitted token: an accepted child, else a draw from the final R
                for c, a in zip(kids, acc):
                    first_token[c.token] += weight * a
                first_token += weight * none * R
        expected_tokens += weight * sum(n.on_path for n in tree.nodes)  # root counts for the final token
        joint += weight * padded_emitted_law(tree, p, lambda kids: reference_children(p, q, kids))
    np.testing.assert_allclose(first_token, p, atol=1e-12)  # lossless: the first token follows p
    # and the whole step: its emitted tokens, continued by plain sampling, are d + 1 i.i.d. draws from p
    np.testing.assert_allclose(joint, product_law(p, d + 1), atol=1e-12)
    assert expected_tokens == pytest.approx(tree_expected_tokens(p, q, k, d), abs=1e-12)


@pytest.mark.parametrize(("p", "q", "k", "d"), [(P3, Q3, 2, 2), (P3, Q3, 3, 2), (P4, Q4, 2, 2), (P4, Q4, 3, 1)])
def test_distinct_children_with_the_deterministic_rule_are_exact_and_iid_rule_is_not(p, q, k, d):
    """q's top k at every node: the deterministic rule gives the joint law p x ... x p; the i.i.d. rule does not."""
    tree = draft_tree(p, q, k, d, seed=0, rule="deterministic")
    top = sv.top_k_children(q, k)
    assert all(tree.children(n.index) == [] or [c.token for c in tree.children(n.index)] == top for n in tree.nodes)
    joint = padded_emitted_law(tree, p, lambda kids: reference_deterministic(p, kids))
    np.testing.assert_allclose(joint, product_law(p, d + 1), atol=1e-12)
    on_path = sum(n.on_path for n in tree.nodes)
    assert on_path == pytest.approx(tree_expected_tokens(p, q, k, d, rule="deterministic"), abs=1e-12)
    biased = padded_emitted_law(tree, p, lambda kids: reference_children(p, q, kids))
    assert np.abs(biased - product_law(p, d + 1)).sum() / 2 > 0.01


def brute_force_output(p, q, kids, rule):
    """Every accept/reject pattern of the walk, summed in Fractions, written apart from specviz."""
    from fractions import Fraction

    p = [Fraction(x).limit_denominator(1000) for x in p]
    q = [Fraction(x).limit_denominator(1000) for x in q]
    out = [Fraction(0)] * len(p)

    def go(i, R, prob):
        if i == len(kids):
            for y, r in enumerate(R):
                out[y] += prob * r
            return
        x = kids[i]
        a = R[x] if rule == "deterministic" else min(Fraction(1), R[x] / q[x])
        out[x] += prob * a
        if rule == "deterministic":
            nxt = [Fraction(0) if y == x else r for y, r in enumerate(R)]
        else:
            nxt = [max(Fraction(0), r - qq) for r, qq in zip(R, q)]
        z = sum(nxt)
        go(i + 1, [v / z for v in nxt] if z > 0 else R, prob * (1 - a))

    go(0, list(p), Fraction(1))
    return np.array([float(v) for v in out])


def test_children_output_dist_against_brute_force_enumeration():
    # top-2 on cat/dog/fish: the numbers
    top = sv.top_k_children(Q3, 2)
    assert top == [1, 0]
    np.testing.assert_allclose(sv.children_output_dist(P3, Q3, top), [0.4, 0.6, 0.0], atol=1e-12)
    assert sv.tv_distance(sv.children_output_dist(P3, Q3, top), P3) == pytest.approx(0.3, abs=1e-12)
    for p, q in [(P3, Q3), (P4, Q4)]:
        V = p.size
        for k in (1, 2, 3):
            for kids in itertools.permutations(range(V), k):  # every ordered set of distinct children
                det = sv.children_output_dist(p, q, list(kids), rule="deterministic")
                np.testing.assert_allclose(det, p, atol=1e-12)
                np.testing.assert_allclose(det, brute_force_output(p, q, kids, "deterministic"), atol=1e-12)
                iid = sv.children_output_dist(p, q, list(kids))
                np.testing.assert_allclose(iid, brute_force_output(p, q, kids, "multi_draft"), atol=1e-12)
            # the i.i.d. rule is exact on average over children drawn i.i.d. from q
            avg = sum(
                np.prod(q[list(kids)]) * sv.children_output_dist(p, q, list(kids))
                for kids in itertools.product(range(V), repeat=k)
            )
            np.testing.assert_allclose(avg, p, atol=1e-12)
    with pytest.raises(ValueError, match="distinct"):
        sv.children_output_dist(P3, Q3, [1, 1], rule="deterministic")
    with pytest.raises(ValueError, match="rule"):
        sv.children_output_dist(P3, Q3, [1], rule="top-k")


def test_k1_is_the_chain_formula():
    alpha = sv.acceptance_rate(P3, Q3)
    for d in range(1, 6):
        assert tree_expected_tokens(P3, Q3, 1, d) == pytest.approx(sv.expected_tokens(alpha, d), abs=1e-12)


@pytest.mark.slow
def test_realised_paths_follow_the_exact_node_probabilities():
    """3000 verifications of one fixed tree; every node's acceptance frequency within 5 sigma (false alarm < 1e-5)."""
    tokens = np.array([1, 0, 0, 1, 2, 1])  # k = 2, depth 2, breadth-first
    n = 3000
    counts = np.zeros(7)
    for seed in range(n):
        tree = draft_tree(P3, Q3, 2, 2, seed=seed, tokens=tokens)
        assert tree.path[0] == 0 and all(tree.nodes[i].status == "accepted" for i in tree.path[1:])
        for i in tree.path[1:]:
            counts[i] += 1
    exact = np.array([node.on_path for node in tree.nodes])
    sigma = np.sqrt(exact * (1 - exact) / n) + 1e-12
    assert np.all(np.abs(counts[1:] / n - exact[1:]) <= 5 * sigma[1:] + 1e-9)


def test_figure_shows_the_tree_values():
    tree = draft_tree(P4, Q4, 2, 3, seed=3)
    fig = draft_tree_figure(tree)
    seen = []
    for status in ("accepted", "rejected", "untested"):
        trace = trace_by_meta(fig, f"nodes:{status}")
        ids = [int(i) for i in trace.customdata]
        seen += ids
        for i, label in zip(ids, trace.text):
            node = tree.nodes[i]
            assert node.status == status
            assert label.endswith(f"{node.accept_given_parent:.2f}")  # the number printed on the node
            assert status != "accepted" or label.startswith("✓")
            assert status != "rejected" or label.startswith("✗")
    assert sorted(seen) == list(range(1, len(tree.nodes)))
    assert [int(i) for i in trace_by_meta(fig, "nodes:accepted").customdata] == list(tree.path[1:])
    assert int(trace_by_meta(fig, "final").customdata[0]) == tree.final_token
    beta = sv.multi_draft_acceptance_rate(P4, Q4, 2)
    assert f"{beta:.3f}" in fig.layout.title.subtitle.text


def test_figure_text_follows_the_language():
    tree = draft_tree(P3, Q3, 2, 2, seed=0)
    try:
        set_language("zh")
        fig = draft_tree_figure(tree)
        assert fig.layout.title.text.startswith("草稿树")
        assert list(fig.layout.xaxis.ticktext)[0] == "前缀"
    finally:
        set_language("en")


def test_one_hot_draft_gives_later_copies_no_chance():
    tree = draft_tree(P3, ONE_HOT_DOG, 3, 2, seed=0)
    for node in tree.nodes[1:]:
        assert node.token == 1
        assert node.accept_given_parent == pytest.approx(P3[1] if node.rank == 0 else 0.0)


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"n_drafts": 0}, "n_drafts"),
        ({"depth": 0}, "depth"),
        ({"n_drafts": 50, "depth": 5}, "drafted nodes"),
        ({"tokens": [0, 1]}, "tokens"),
        ({"tokens": [0, 1, 5, 0, 0, 0]}, "tokens"),
    ],
)
def test_bad_input_names_the_problem(kwargs, words):
    args = {"n_drafts": 2, "depth": 2, "seed": 0} | kwargs
    with pytest.raises(ValueError, match=words):
        draft_tree(P3, Q3, **args)


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
def test_app_drives_without_a_browser():
    app = draft_tree_app()
    assert app.message_text == ""
    assert all(w.description for w in (app.k, app.depth, app.seed, app.preset, app.p_text, app.q_text))
    app.k.value, app.depth.value = 3, 2
    assert (app.tree.n_drafts, app.tree.depth) == (3, 2)
    assert f"{sv.multi_draft_acceptance_rate(P3, Q3, 3):.3f}" in app.numbers.value
    metas = [t.meta for t in app.figure.data]
    assert "nodes:accepted" in metas and "final" in metas
    before = app.tree.emitted
    app.seed.value = 7
    assert app.tree.nodes != draft_tree(P3, Q3, 3, 2, seed=0).nodes or app.tree.emitted != before
    app.preset.value = "far"
    assert app.message_text == "" and app.tree.p.size == 4
    app.preset.value = "distinct"
    assert app.message_text == "" and app.rule.value == "deterministic" and app.tree.rule == "deterministic"
    top = sv.top_k_children(Q4, app.k.value)
    assert all([c.token for c in app.tree.children(n.index)] in ([], top) for n in app.tree.nodes)
    assert f"{sum(P4[top]):.3f}" in app.numbers.value  # P(some child accepted) = p of the children
    app.k.value = 4
    assert app.message_text == ""


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("p_text", "0.5, -0.2, 0.7", "negative"),
        ("p_text", "abc", "not a list of numbers"),
        ("q_text", "0.5, 0.5", "length"),
    ],
)
def test_app_shows_bad_input_as_an_error_and_recovers(field, value, words):
    app = draft_tree_app()
    good = getattr(app, field).value
    getattr(app, field).value = value
    assert words in app.message_text.lower() or words in app.message_text
    getattr(app, field).value = good
    assert app.message_text == ""


def test_app_refuses_a_tree_too_wide_to_draw():
    app = draft_tree_app()
    app.k.value, app.depth.value = 4, 5
    assert str(4**5) in app.message_text and str(MAX_DRAWN_LEAVES) in app.message_text
    app.depth.value = 2
    assert app.message_text == "" and app.tree.depth == 2
