"""Acceptance per draft position i = 1..γ of a real run: unconditional (vLLM's), conditional (sglang's), α^i.

>>> fig = per_position_figure(None, gamma=3)
>>> [tr.meta for tr in fig.data], list(fig.data[0].x)
(['unconditional', 'conditional', 'theory_unconditional', 'alpha'], [1, 2, 3])
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from ..foundation.i18n import t
from .run_data import nan_list, stat_of
from .style import PALETTE, exact_tick, patched_layout


def per_position_patch(stats=None, gamma: int = 4) -> dict:
    """Data of `per_position_figure` (stats None: an empty plot for `gamma` positions)."""
    g = int(stat_of(stats, "gamma", gamma)) if stats is not None else int(gamma)
    xs = list(range(1, g + 1))
    alpha = float(stat_of(stats, "alpha", g))
    uncond = np.asarray(stat_of(stats, "per_position", g), dtype=float)
    cond = np.asarray(stat_of(stats, "per_position_conditional", g), dtype=float)
    has_alpha = not math.isnan(alpha)
    theory = [min(alpha, 1.0) ** i for i in xs] if has_alpha else [None] * g
    steps = int(stat_of(stats, "steps", g))
    sub = t("run.per_position_sub", alpha=alpha, steps=steps) if has_alpha else t("run.per_position_empty")
    return {
        "data": {
            "unconditional": dict(x=xs, y=nan_list(uncond)),
            "conditional": dict(x=xs, y=nan_list(cond)),
            "theory_unconditional": dict(x=xs, y=theory),
            "alpha": dict(x=[0.5, g + 0.5], y=[alpha, alpha] if has_alpha else [None, None]),
        },
        "layout": {"title_subtitle_text": sub, "xaxis_range": [0.4, g + 0.6]},
    }


def per_position_figure(stats=None, gamma: int = 4, height: int = 360) -> go.Figure:
    """Acceptance per draft position i = 1..γ: unconditional (vLLM) and conditional (sglang).

    Traces: "unconditional" bars (accepted at i / steps), "conditional" line (accepted at i /
    steps that reached i), "theory_unconditional" markers α^i and "alpha" the dashed level α
    (what the conditional rate is if acceptances are i.i.d.). Values equal `spec_stats`.
    """
    patch = per_position_patch(stats, gamma)
    d = patch["data"]
    fig = go.Figure()
    fig.add_bar(
        name=t("run.unconditional"),
        meta="unconditional",
        marker=dict(color=PALETTE["overlap"]),
        hovertemplate=t("run.position_hover"),
        **d["unconditional"],
    )
    fig.add_scatter(
        name=t("run.conditional"),
        meta="conditional",
        mode="lines+markers",
        line=dict(color=PALETTE["residual"], width=2),
        marker=dict(size=9),
        hovertemplate=t("run.position_hover"),
        **d["conditional"],
    )
    fig.add_scatter(
        name=t("run.theory_power"),
        meta="theory_unconditional",
        mode="markers",
        marker=exact_tick(26),
        hovertemplate="α^%{x} = %{y:.3f}<extra></extra>",
        **d["theory_unconditional"],
    )
    fig.add_scatter(
        name="α",
        meta="alpha",
        mode="lines",
        line=dict(dash="dash", color=PALETTE["reference"], width=2),
        hoverinfo="skip",
        **d["alpha"],
    )
    xaxis = dict(title=t("run.draft_position"), dtick=1)
    yaxis = dict(title=t("run.acceptance_rate"), range=[0, 1.05])
    return patched_layout(fig, t("run.per_position_title"), patch, xaxis, yaxis, height=height)


__all__ = [
    "per_position_figure",
    "per_position_patch",
]
