"""When does speculation pay: the best textbook speed-up against the draft's cost ratio c, at acceptance α.

>>> fig = payoff_figure(0.8, cs=(0.1, 0.5))
>>> [tr.meta for tr in fig.data]
['best_speedup', 'payoff_points', 'break_even', 'no_gain']
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ..foundation.i18n import t
from ..lm.gamma.payoff import payoff_table
from .style import INK, PALETTE, base_layout


def payoff_figure(alpha: float, cs=(0.05, 0.25, 0.5), labels=None, max_gamma: int = 16, height: int = 400) -> go.Figure:
    """The best textbook speed-up against the draft's cost ratio c, at acceptance α (`specviz.lm.gamma.payoff`).

    Traces: "best_speedup" (the curve over c in [0, 1], each point at its best γ), "payoff_points"
    (the costs `cs`, labelled with `labels` when given), "break_even" (c = α: to its right no γ pays)
    and "no_gain" (speed-up 1).
    """
    grid = payoff_table(alpha, np.linspace(0.0, 1.0, 201), max_gamma)
    pts = payoff_table(alpha, cs, max_gamma)
    labels = list(labels) if labels is not None else [""] * len(pts)
    text = [f"{lab + ': ' if lab else ''}{r.speedup:.2f}× (γ = {r.best_gamma})" for lab, r in zip(labels, pts)]
    top = max(r.speedup for r in grid) * 1.12
    order = sorted(range(len(pts)), key=lambda k: pts[k].c)  # neighbours' labels alternate above and below
    where = {k: ("top right" if n % 2 == 0 else "bottom right") for n, k in enumerate(order)}
    fig = go.Figure()
    fig.add_scatter(
        x=[r.c for r in grid],
        y=[r.speedup for r in grid],
        mode="lines",
        name=t("run.payoff_best"),
        meta="best_speedup",
        line=dict(color=PALETTE["overlap"], width=3),
        customdata=[r.best_gamma for r in grid],
        hovertemplate=t("run.payoff_hover"),
    )
    fig.add_scatter(
        x=[r.c for r in pts],
        y=[r.speedup for r in pts],
        mode="markers+text",
        text=text,
        textposition=[where[k] for k in range(len(pts))],
        name=t("run.payoff_points"),
        meta="payoff_points",
        marker=dict(size=11, color=PALETTE["p"]),
        hovertemplate="c = %{x:.2f}: %{text}<extra></extra>",
    )
    fig.add_scatter(
        x=[alpha, alpha],
        y=[0, top],
        mode="lines",
        name=t("run.payoff_break_even"),
        meta="break_even",
        line=dict(color=PALETTE["reference"], dash="dash", width=2),
        hoverinfo="skip",
    )
    fig.add_scatter(
        x=[0, 1],
        y=[1, 1],
        mode="lines",
        name=t("run.payoff_no_gain"),
        meta="no_gain",
        showlegend=False,
        line=dict(color=INK["zeroline"], width=1),
        hoverinfo="skip",
    )
    base_layout(
        fig,
        t("run.payoff_title", alpha=alpha, max_gamma=max_gamma),
        height=height,
        xaxis=dict(title=t("run.payoff_x"), range=[0, 1]),
        yaxis=dict(title=t("run.payoff_y"), range=[0, top]),
    )
    return fig


__all__ = [
    "payoff_figure",
]
