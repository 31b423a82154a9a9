"""One real verify step's draft tree: every node by its fate, the accepted path, and R where the walk stopped.

Data in (a step record of `specviz.lm` whose `tree` is a `TreeStep`), go.Figure out, two panels.
Left: the tree by depth, the prefix (the root) at the left. Each node is its token, coloured
and marked by its fate as in the toy tree (`draft_tree`: ✓ accepted, ✗ rejected, an open
circle never tested), with its p and q on hover; the accepted path in bold, the node where the
walk stopped ringed, the final token a diamond after it. Right: the money diagram again, at
that real node: p (outline), q, min(p, q) and what the final token was drawn from (R, the
residual after the stop node's rejected children, or p itself after a leaf: a bonus), over
the top tokens the record kept, the drawn token marked.

>>> from specviz.lm.engine.results import StepRecord, TreeStep
>>> from specviz.figures.style import trace_by_meta
>>> tree = TreeStep(widths=(2, 1), tokens=[7, 4, 5, 6], parents=[-1, -1, 0, 1], fates=[0, 1, -1, 0], path=[1],
...                 p_x=[0.1, 0.5, 0.2, 0.2], q_x=[0.5, 0.4, 0.3, 0.6], final=[(3, 0.5), (4, 0.5)])
>>> rec = StepRecord(0, 0, [4, 6], [0.4, 0.6], [0.5, 0.2], 1, 3, "resampled", [0.6, 0.6],
...                  [[(4, 0.5), (7, 0.1)], [(3, 0.5), (4, 0.3), (6, 0.2)]],
...                  [[(7, 0.5), (4, 0.4)], [(6, 0.6), (3, 0.3), (4, 0.1)]], 0.0, 0.0, tree=tree)
>>> fig = real_tree_figure(rec)
>>> [list(trace_by_meta(fig, f"nodes:{f}").customdata) for f in ("accepted", "rejected", "untested")]
[[1], [0, 3], [2]]
>>> trace_by_meta(fig, "nodes:rejected").text[1], list(trace_by_meta(fig, "final").x)
('✗ “#6”', ['#3', '#4', '#6'])
>>> [float(v) for v in trace_by_meta(fig, "overlap").y], [float(v) for v in trace_by_meta(fig, "final").y]
([0.3, 0.1, 0.2], [0.5, 0.5, 0.0])
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..foundation.i18n import check_language, t
from ..foundation.palette import FATE_COLORS
from .style import INK, PALETTE, base_layout, mass_marker, p_outline, q_fill, rgba, y_top

FATE_STYLE = {  # fate -> (trace meta, marker symbol, colour, text mark, message): the toy tree's (`draft_tree`)
    1: ("nodes:accepted", "circle", PALETTE["overlap"], "✓", "tree.accepted"),
    0: ("nodes:rejected", "x", PALETTE["rejected"], "✗", "tree.rejected"),
    -1: ("nodes:untested", "circle-open", PALETTE["q"], "", "tree.untested"),
}
"""How each node fate (1 accepted, 0 rejected, -1 never tested) is drawn: as `draft_tree.STATUS_STYLE` draws it."""

MAX_LABELLED_LEAVES = 64
"""Above this many leaves the node labels would overlap: the nodes keep their hover text only."""


def check_tree(record):
    """The `TreeStep` of a step record, its fields checked (ValueError naming the problem)."""
    tree = getattr(record, "tree", None)
    if tree is None:
        raise ValueError("real_tree_figure needs a tree step's record: this record has no tree (a chain or plain step)")
    n = len(tree.tokens)
    for name in ("parents", "fates", "p_x", "q_x"):
        if len(getattr(tree, name)) != n:
            raise ValueError(f"the tree has {n} tokens but {len(getattr(tree, name))} {name}")
    for i, (parent, fate) in enumerate(zip(tree.parents, tree.fates)):
        if not -1 <= int(parent) < i:
            raise ValueError(f"node {i}'s parent {parent} must be -1 (the root) or an earlier node")
        if fate not in FATE_STYLE:
            raise ValueError(f"node {i}'s fate must be 1 (accepted), 0 (rejected) or -1 (never tested), got {fate!r}")
    if any(not 0 <= int(i) < n for i in tree.path):
        raise ValueError(f"the accepted path {list(tree.path)} names a node outside 0..{n - 1}")
    return tree


def tree_layout(parents) -> tuple[dict, dict]:
    """({node: depth}, {node: y}) with the root as node -1: leaves one row apart in depth-first order, a parent at
    the mean of its children.

    >>> depth, y = tree_layout([-1, -1, 0, 0])          # two nodes under the root, two under node 0
    >>> [depth[i] for i in (-1, 0, 1, 2, 3)], [y[i] for i in (-1, 0, 1, 2, 3)]
    ([0, 1, 1, 2, 2], [-1.25, -0.5, -2.0, 0.0, -1.0])
    """
    children: dict[int, list[int]] = {-1: []}
    depth = {-1: 0}
    for i, parent in enumerate(parents):
        children.setdefault(int(parent), []).append(i)
        children[i] = []
        depth[i] = depth[int(parent)] + 1
    rows: list[int] = []

    def leaves(node: int) -> None:
        if not children[node]:
            rows.append(node)
        for c in children[node]:
            leaves(c)

    leaves(-1)
    y = {node: float(-row) for row, node in enumerate(rows)}
    for node in sorted(depth, key=lambda k: -depth[k]):  # deepest first: children are placed before parents
        if children[node]:
            y[node] = float(np.mean([y[c] for c in children[node]]))
    return depth, y


def distinct_names(token_text: Callable | None, ids) -> list[str]:
    """A display name per token id (`token_text(id)`, else "#id"), made distinct with an id suffix on a collision."""
    names = [f"#{int(i)}" if token_text is None else str(token_text(int(i))) for i in ids]
    return [f"{n}·#{int(i)}" if names.count(n) > 1 else n for n, i in zip(names, ids)]


def _values(pairs, ids) -> np.ndarray:
    d = {int(i): float(v) for i, v in pairs}
    return np.array([d.get(int(i), 0.0) for i in ids], dtype=np.float64)


def _point(fig, meta: str, x, y, name: str, marker: dict, hover: str, **kw) -> None:
    """One marker of the tree panel (the root, the stop ring, the final token) with its hover text."""
    kw.setdefault("mode", "markers")
    fig.add_scatter(x=[x], y=[y], meta=meta, name=name, marker=marker, hovertext=[hover], hoverinfo="text", **kw)


def _tree_traces(fig, tree, depth, y, name_of, tr) -> None:
    """The left panel: edges, the accepted path, the root, the nodes by fate, the stop ring and the final token."""
    n, last = len(tree.tokens), max(depth.values()) + 1
    ex, ey = [], []
    for i, parent in enumerate(tree.parents):
        ex += [depth[int(parent)], depth[i], None]
        ey += [y[int(parent)], y[i], None]
    line = dict(mode="lines", hoverinfo="skip")
    grey = dict(color=INK["edge"], width=1)
    fig.add_scatter(x=ex, y=ey, meta="edges", name=tr("tree.edges"), line=grey, showlegend=False, **line)
    path = [-1, *[int(i) for i in tree.path]]
    fig.add_scatter(
        x=[depth[i] for i in path],
        y=[y[i] for i in path],
        meta="edges:path",
        name=tr("tree.path"),
        line=dict(color=INK["mark"], width=4),
        **line,
    )
    stop = path[-1]
    fig.add_scatter(
        x=[depth[stop], last],
        y=[y[stop]] * 2,
        meta="edges:final",
        name=tr("tree.step_ends"),
        line=dict(color=INK["mark"], width=1.5, dash="dot"),
        showlegend=False,
        **line,
    )
    root = tr("tree.root")
    square = dict(symbol="square", size=14, color=INK["axis"])
    _point(fig, "root", 0, y[-1], root, square, root, mode="markers+text", text=[root], textposition="middle left")
    ring = dict(symbol="circle-open", size=26, color=INK["text"], line=dict(width=2))  # under the nodes' labels
    _point(fig, "stop", depth[stop], y[stop], tr("realtree.stop"), ring, tr("realtree.stop"))
    inner = {int(parent) for parent in tree.parents}
    labelled = sum(1 for i in range(n) if i not in inner) <= MAX_LABELLED_LEAVES
    for fate, (meta, symbol, colour, mark, key) in FATE_STYLE.items():
        nodes = [i for i in range(n) if tree.fates[i] == fate]
        status = tr(key)
        facts = [
            dict(token=name_of[i], node=i, depth=depth[i], p=float(tree.p_x[i]), q=float(tree.q_x[i])) for i in nodes
        ]
        hover = [tr("realtree.hover", status=status, **f) for f in facts]
        fig.add_scatter(
            x=[depth[i] for i in nodes],
            y=[y[i] for i in nodes],
            mode="markers+text" if labelled else "markers",
            meta=meta,
            name=f"{mark} {status}".strip(),
            customdata=nodes,
            text=[f"{mark} “{name_of[i]}”".strip() for i in nodes],
            textposition="top center",
            textfont=dict(size=11, color=INK["mark"]),
            marker=dict(symbol=symbol, size=13, color=colour, line=dict(width=2, color=colour)),
            hovertext=hover,
            hoverinfo="text",
        )


def _final_marker(fig, kind, token_name, y_stop, x_final, tr) -> None:
    """The diamond of the token that ends the step, coloured by its fate (resampled or bonus)."""
    colour = FATE_COLORS["bonus" if kind == "bonus" else "resampled"]
    label = tr("tree.bonus" if kind == "bonus" else "tree.resampled")
    source = tr("tree.from_p" if kind == "bonus" else "tree.from_residual")
    hover = tr("tree.hover_final", kind=label, token=f"“{token_name}”", source=source)
    diamond = dict(symbol="diamond", size=15, color=colour)
    text = dict(mode="markers+text", text=[f"◆ {label}: “{token_name}”"], textposition="top center")
    _point(fig, "final_token", x_final, y_stop, f"◆ {tr('tree.final')}", diamond, hover, **text)


def real_tree_figure(record, token_text: Callable | None = None, lang: str | None = None) -> go.Figure:
    """A tree step's draft tree (nodes by fate, the accepted path, the stop node) beside p, q, min(p, q) and R there.

    `record`: a `specviz.lm.engine.results.StepRecord` with `tree` set. `token_text`: id -> display string (e.g. from
    the tokenizer; default "#id"). `lang`: "en" or "zh" (default: the current language). Traces (`meta`): "edges",
    "edges:path", "edges:final", "root", "nodes:accepted", "nodes:rejected", "nodes:untested" (customdata: node
    ids), "stop", "final_token"; then the bars "overlap" (min(p, q)), "p", "q", "final" (R, or p after a leaf)
    and the marker "drawn" of the final token.
    """
    tr = (lambda key, **kw: t(key, check_language(lang), **kw)) if lang is not None else t
    tree = check_tree(record)
    depth, y = tree_layout(tree.parents)
    bonus, token = bool(tree.bonus), getattr(record, "token", None)
    stop = int(tree.path[-1]) if len(tree.path) else -1
    top_p = record.top_p[-1] if record.top_p else []
    top_q = [] if bonus or not record.top_q or len(record.top_q) < len(record.top_p) else record.top_q[-1]
    ids = list(dict.fromkeys([int(i) for i, _ in [*top_p, *top_q, *tree.final]] + ([] if token is None else [token])))
    p, q, r = _values(top_p, ids), _values(top_q, ids), _values(tree.final, ids)
    order = sorted(range(len(ids)), key=lambda k: (-p[k], -r[k], -q[k], ids[k]))
    ids, p, q, r = [ids[k] for k in order], p[order], q[order], r[order]
    node_names = [f"#{int(i)}" if token_text is None else str(token_text(int(i))) for i in tree.tokens]
    names = distinct_names(token_text, ids)
    token_name = distinct_names(token_text, [token])[0] if token is not None else "—"
    titles = [tr("realtree.tree_title"), tr("realtree.bars_title")]
    fig = make_subplots(1, 2, column_widths=[0.56, 0.44], horizontal_spacing=0.09, subplot_titles=titles)
    for ann, axis in zip(fig.layout.annotations, ("xaxis", "xaxis2")):
        ann.update(xanchor="left", x=fig.layout[axis].domain[0])
    _tree_traces(fig, tree, depth, y, node_names, tr)
    last = max(depth.values()) + 1
    if token is not None:
        _final_marker(fig, "bonus" if bonus else "resampled", token_name, y[stop], last, tr)
    overlap_marker = mass_marker("overlap", line=dict(width=0))
    final_marker = (
        dict(color=rgba(PALETTE["p"], 0.25), line=dict(color=PALETTE["p"], width=2))
        if bonus
        else mass_marker("residual", line=dict(width=0))
    )
    bars = (  # meta, values, legend, offset group, marker, the symbol on hover
        ("overlap", np.minimum(p, q), "money.legend_overlap", "p", overlap_marker, "min(p, q)"),
        ("p", p, "figure.p_target", "p", p_outline(), "p"),
        ("q", q, "figure.q_draft", "p" if bonus else "q", q_fill(), "q"),  # after a leaf: no q, one bar per token
        ("final", r, "tree.from_p" if bonus else "tree.from_residual", "p" if bonus else "final", final_marker, "R"),
    )
    for meta, values, key, group, marker, symbol in bars:
        hover = f"%{{x}}: {'p' if bonus and meta == 'final' else symbol} = %{{y:.4f}}<extra></extra>"
        fig.add_bar(
            x=names,
            y=values,
            meta=meta,
            name=tr(key),
            offsetgroup=group,
            marker=marker,
            hovertemplate=hover,
            showlegend=not (bonus and meta in ("overlap", "q")),  # after a leaf there is no draft
            row=1,
            col=2,
        )
    top = y_top(p, q, r)
    if token is not None:
        k = ids.index(token)
        fig.add_scatter(
            x=[names[k]],
            y=[max(p[k], q[k], r[k]) + 0.04 * top],
            mode="markers+text",
            meta="drawn",
            name=tr("tree.final"),
            showlegend=False,
            text=[tr("realtree.drawn", token=token_name)],
            textposition="top center",
            marker=dict(symbol="triangle-down", size=12, color=INK["mark"]),
            hoverinfo="skip",
            row=1,
            col=2,
        )
    return _layout(fig, record, tree, stop, depth, y, node_names, token_name, last, top, tr)


def _layout(fig, record, tree, stop, depth, y, node_names, token_name, last, top, tr) -> go.Figure:
    """Titles (what happened at the stop node, in words), axes and the height."""
    where = (
        tr("realtree.at_root")
        if stop < 0
        else tr("realtree.at_node", node=stop, token=node_names[stop], depth=depth[stop])
    )
    n_rejected = sum(1 for i, parent in enumerate(tree.parents) if parent == stop and tree.fates[i] == 0)
    shape = ", ".join(str(int(w)) for w in tree.widths)
    title = tr("realtree.title", step=int(record.index) + 1, n=len(tree.tokens), accepted=len(tree.path), shape=shape)
    if tree.bonus:
        sub = tr("realtree.sub_bonus", where=where, token=token_name)
    else:
        sub = tr("realtree.sub_resampled", where=where, rejected=n_rejected, token=token_name)
    alphas, notes = getattr(record, "alphas", []), [tr("realtree.top_only")]
    if not tree.bonus and len(alphas) > len(tree.path):  # Σ min(p, q) at the stop node (its first child tested)
        notes.insert(0, tr("realtree.alpha", alpha=float(alphas[len(tree.path)])))
    sub += "<br>" + " · ".join(notes)
    inner = {int(parent) for parent in tree.parents}
    leaves = sum(1 for i in range(-1, len(tree.tokens)) if i not in inner)
    height = int(min(1600, max(560, 34 * leaves + 330)))
    base_layout(fig, title + "<br>" + sub, height=height, barmode="group", bargap=0.25, bargroupgap=0.05)
    fig.update_layout(margin=dict(t=150))
    ticks = [tr("tree.root")] + [tr("tree.level", i=i) for i in range(1, last)] + [tr("tree.final")]
    fig.update_xaxes(tickvals=list(range(last + 1)), ticktext=ticks, range=[-0.7, last + 1.6], row=1, col=1)
    fig.update_yaxes(visible=False, range=[min(y.values()) - 0.6, 1.0], row=1, col=1)
    fig.update_xaxes(type="category", title=tr("figure.token"), row=1, col=2)
    fig.update_yaxes(title=tr("figure.probability"), range=[0, top + 0.08 * top], row=1, col=2)
    return fig


__all__ = ["FATE_STYLE", "check_tree", "distinct_names", "real_tree_figure", "tree_layout"]
