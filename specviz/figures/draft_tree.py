"""The figure of `specviz.samplers.tree`'s draft trees, level by level: each drafted token, its exact odds, the accepted path.

Data in (a `specviz.samplers.tree.DraftTree`), go.Figure out. Levels run left to right like text; the
root is the prefix, the last column the token that ends the step (resampled or bonus).
Every node's label carries its outcome as text (✓ accepted, ✗ rejected, no mark: not
tested) as well as a marker shape, so nothing depends on colour alone.

>>> from specviz.samplers.tree import draft_tree
>>> from specviz.figures.style import trace_by_meta
>>> tree = draft_tree([0.6, 0.3, 0.1], [0.4, 0.5, 0.1], n_drafts=2, depth=2, seed=0)
>>> fig = draft_tree_figure(tree)
>>> [int(i) for i in trace_by_meta(fig, "nodes:accepted").customdata]     # node ids on the accepted path
[2, 5]
>>> [int(i) for i in trace_by_meta(fig, "nodes:rejected").customdata]
[1]
>>> trace_by_meta(fig, "nodes:rejected").text[0]              # outcome, token, P(accepted | parent reached)
'✗ dog 0.60'
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ..foundation.i18n import t
from ..samplers.tree import DraftTree, node_acceptance, tree_expected_tokens
from .style import INK, PALETTE, base_layout, vocab_names

STATUS_STYLE = {  # status -> (trace meta, marker symbol, colour, text mark)
    "accepted": ("nodes:accepted", "circle", PALETTE["overlap"], "✓"),
    "rejected": ("nodes:rejected", "x", PALETTE["rejected"], "✗"),
    "untested": ("nodes:untested", "circle-open", PALETTE["q"], ""),
}
"""How each outcome is drawn: a marker shape and a text mark besides the colour."""


def tree_layout(tree: DraftTree) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) of every node: x = depth, leaves evenly spaced in y, a parent at the mean of its children."""
    n = len(tree.nodes)
    x = np.array([node.depth for node in tree.nodes], dtype=float)
    y = np.zeros(n)
    leaves = [node.index for node in tree.nodes if node.depth == tree.depth]
    for row, i in enumerate(leaves):
        y[i] = -row
    for node in reversed(tree.nodes):
        if node.depth < tree.depth:
            kids = [c.index for c in tree.children(node.index)]
            y[node.index] = float(np.mean(y[kids]))
    return x, y


def _status_text(status: str) -> str:
    return {"accepted": t("tree.accepted"), "rejected": t("tree.rejected"), "untested": t("tree.untested")}[status]


def draft_tree_figure(tree: DraftTree, vocab=None) -> go.Figure:
    """The tree of `tree`: edges, nodes labelled 'mark token P(accepted | parent reached)', the accepted path.

    Traces: "edges" (every parent-child link), "edges:final" (dotted, from the last accepted node to
    the final token), "edges:path" (the accepted path), "root", "nodes:accepted", "nodes:rejected", "nodes:untested" (customdata = node
    ids, y-order as drawn) and "final" (the token that ends the step).
    """
    names = vocab_names(vocab, tree.p.size)
    x, y = tree_layout(tree)
    fig = go.Figure()
    ex, ey = [], []
    for node in tree.nodes[1:]:
        ex += [x[node.parent], x[node.index], None]
        ey += [y[node.parent], y[node.index], None]
    fig.add_scatter(
        x=ex,
        y=ey,
        mode="lines",
        meta="edges",
        name=t("tree.edges"),
        line=dict(color=INK["edge"], width=1),
        hoverinfo="skip",
    )
    last = tree.path[-1]
    fx, fy = tree.depth + 1, y[last]
    fig.add_scatter(
        x=[x[last], fx],
        y=[y[last], fy],
        mode="lines",
        meta="edges:final",
        name=t("tree.step_ends"),
        line=dict(color=INK["mark"], width=1.5, dash="dot"),
        hoverinfo="skip",
    )
    fig.add_scatter(
        x=[x[i] for i in tree.path],
        y=[y[i] for i in tree.path],
        mode="lines",
        meta="edges:path",
        name=t("tree.path"),
        line=dict(color=INK["mark"], width=4),
        hoverinfo="skip",
    )
    fig.add_scatter(
        x=[0],
        y=[y[0]],
        mode="markers+text",
        meta="root",
        name=t("tree.root"),
        text=[t("tree.root")],
        textposition="middle left",
        marker=dict(symbol="square", size=14, color=INK["axis"]),
        showlegend=False,
        hovertext=[t("tree.root")],
        hoverinfo="text",
    )
    k = tree.n_drafts
    for status, (meta, symbol, colour, mark) in STATUS_STYLE.items():
        nodes = [node for node in tree.nodes[1:] if node.status == status]
        labels = [f"{mark} {names[node.token]} {node.accept_given_parent:.2f}".strip() for node in nodes]
        hover = [
            t(
                "tree.hover",
                token=names[node.token],
                rank=node.rank + 1,
                k=k,
                given=node.accept_given_parent,
                path=node.on_path,
                status=_status_text(status),
            )
            for node in nodes
        ]
        fig.add_scatter(
            x=[x[node.index] for node in nodes],
            y=[y[node.index] for node in nodes],
            mode="markers+text",
            meta=meta,
            name=f"{mark} {_status_text(status)}".strip(),
            customdata=[node.index for node in nodes],
            text=labels,
            textposition="top center",
            textfont=dict(size=11, color=INK["mark"]),
            marker=dict(symbol=symbol, size=13, color=colour, line=dict(width=2, color=colour)),
            hovertext=hover,
            hoverinfo="text",
        )
    kind = t("tree.resampled") if tree.final_kind == "resampled" else t("tree.bonus")
    source = t("tree.from_residual") if tree.final_kind == "resampled" else t("tree.from_p")
    colour = PALETTE["residual"] if tree.final_kind == "resampled" else PALETTE["p"]
    fig.add_scatter(
        x=[fx],
        y=[fy],
        mode="markers+text",
        meta="final",
        name=f"◆ {t('tree.final')}",
        text=[f"◆ {kind}: {names[tree.final_token]}"],
        textposition="middle right",
        marker=dict(symbol="diamond", size=15, color=colour),
        customdata=[tree.final_token],
        hovertext=[t("tree.hover_final", kind=kind, token=names[tree.final_token], source=source)],
        hoverinfo="text",
    )
    beta = node_acceptance(tree.p, tree.q, k, tree.rule)
    expected = tree_expected_tokens(tree.p, tree.q, k, tree.depth, tree.rule)
    emitted = " ".join(names[i] for i in tree.emitted)
    title = (
        t("tree.title", k=k, d=tree.depth)
        + "<br>"
        + t("tree.subtitle", beta=beta, e=expected, emitted=emitted, n=len(tree.emitted))
    )
    leaves = k**tree.depth
    ticks = [t("tree.root")] + [t("tree.level", i=i) for i in range(1, tree.depth + 1)] + [t("tree.final")]
    fig.update_xaxes(tickvals=list(range(tree.depth + 2)), ticktext=ticks, range=[-0.6, tree.depth + 1.9])
    fig.update_yaxes(visible=False, range=[-leaves + 0.4, 0.8])
    return base_layout(fig, title, height=max(340, 34 * leaves + 190), showlegend=True)
