"""How much faster: tokens per verify step vs γ, the speedup map, accepted drafts per step, the γ dashboard.

>>> from specviz.figures.style import trace_by_meta
>>> [float(v) for v in trace_by_meta(expected_tokens_figure(alphas=(0.5,), gamma_max=2), "alpha=0.5").y]
[1.0, 1.5, 1.75]
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..exact.gamma import accepted_length_dist, expected_tokens, speedup
from ..foundation.i18n import t
from .style import PALETTE, base_layout, exact_tick

DEFAULT_ALPHAS = (0.5, 0.7, 0.8, 0.9)
GAMMA_SPACING = 0.08
"""Horizontal gap between the three panels of `gamma_figure` (a fraction of the plot width)."""


def _expected_tokens_traces(alphas, gamma_max):
    """One E[tokens per step] vs γ curve per α, as Scatter traces."""
    gammas = np.arange(gamma_max + 1)
    traces = []
    for a in alphas:
        ys = [expected_tokens(float(a), int(g)) for g in gammas]
        traces.append(go.Scatter(x=gammas, y=ys, mode="lines+markers", name=f"α = {a:g}", meta=f"alpha={a:g}"))
    return traces


def expected_tokens_figure(alphas=DEFAULT_ALPHAS, gamma_max=10) -> go.Figure:
    """E[tokens per verify step] = (1 − α^(γ+1)) / (1 − α) vs γ for several α.

    Traces: "alpha=<α>" per α (x = γ = 0..gamma_max), and dotted "limit:<α>" at 1/(1 − α).
    """
    gamma_max = int(gamma_max)
    if gamma_max < 0:
        raise ValueError(f"gamma_max must be >= 0, got {gamma_max}")
    fig = go.Figure(_expected_tokens_traces(alphas, gamma_max))
    for a in alphas:
        if a < 1:
            fig.add_scatter(
                x=[0, gamma_max],
                y=[1 / (1 - a)] * 2,
                mode="lines",
                meta=f"limit:{a:g}",
                name=t("gamma.limit", value=1 / (1 - a)),
                showlegend=False,
                line=dict(dash="dot", width=1, color=PALETTE["reference"]),
            )
    base_layout(
        fig,
        t("gamma.tokens_title"),
        height=420,
        xaxis=dict(title=t("gamma.gamma_axis"), dtick=1),
        yaxis=dict(title=t("gamma.tokens_axis")),
    )
    return fig


def _speedup_grid(c, alphas, gammas):
    """(alphas, gammas, z, best): speedup z[i][j] over the grid and the best γ per α."""
    alphas = np.asarray(alphas, dtype=np.float64)
    gammas = np.asarray(gammas, dtype=np.int64)
    z = np.array([[speedup(float(a), int(g), c) for g in gammas] for a in alphas])
    best = gammas[np.argmax(z, axis=1)]
    return alphas, gammas, z, best


def speedup_heatmap(c=0.1, alphas=None, gammas=None) -> go.Figure:
    """Expected speedup (1 − α^(γ+1)) / ((1 − α)(γ c + 1)) over (γ, α); the best γ per α marked.

    Traces: "speedup" heat map (z[i][j] = speedup(alphas[i], gammas[j], c)) and
    "best_gamma" markers (x = the best γ in `gammas` for each α).
    """
    alphas = np.round(np.arange(0.05, 1.0, 0.05), 2) if alphas is None else alphas
    gammas = np.arange(0, 11) if gammas is None else gammas
    alphas, gammas, z, best = _speedup_grid(c, alphas, gammas)
    fig = go.Figure()
    fig.add_heatmap(
        x=gammas,
        y=alphas,
        z=z,
        meta="speedup",
        colorscale="Viridis",
        zmin=0,
        colorbar=dict(title=t("gamma.speedup")),
        hovertemplate=t("figure.speedup_hover"),
    )
    fig.add_scatter(
        x=best,
        y=alphas,
        mode="markers",
        name=t("gamma.best_for_alpha"),
        meta="best_gamma",
        marker=dict(symbol="star", size=12, color="white", line=dict(color="black", width=1)),
    )
    base_layout(
        fig,
        t("gamma.speedup_title", c=c),
        height=460,
        xaxis=dict(title=t("gamma.gamma_axis"), dtick=1),
        yaxis=dict(title=t("gamma.alpha_axis")),
    )
    return fig


def accepted_length_figure(accepted_counts, alpha, gamma) -> go.Figure:
    """Histogram of accepted drafts per verify step vs the exact α^k (1 − α) / α^γ law.

    `accepted_counts`: per-step accepted numbers in 0..γ (or a ChainSample). Traces:
    "empirical" (fractions, x = 0..γ) and "exact" (`accepted_length_dist`).
    """
    k = np.asarray(getattr(accepted_counts, "accepted_per_step", accepted_counts))
    gamma = int(gamma)
    exact = accepted_length_dist(alpha, gamma)
    if k.ndim != 1 or k.size == 0:
        raise ValueError("accepted_counts must be a non-empty 1-D array of per-step accepted counts")
    if np.any(k < 0) or np.any(k > gamma) or np.any(np.mod(k, 1) != 0):
        raise ValueError(f"accepted counts must be integers in 0..γ = {gamma}")
    emp = np.bincount(k.astype(np.int64), minlength=gamma + 1) / k.size
    xs = np.arange(gamma + 1)
    fig = go.Figure()
    fig.add_bar(
        x=xs, y=emp, name=t("gamma.empirical", n=k.size), meta="empirical", marker=dict(color=PALETTE["empirical"])
    )
    fig.add_scatter(x=xs, y=exact, mode="markers", name=t("gamma.exact_law"), meta="exact", marker=exact_tick(30))
    sub = t("gamma.mean_sub", mean=np.mean(k) + 1, exact=expected_tokens(alpha, gamma), alpha=alpha, gamma=gamma)
    base_layout(
        fig,
        f"{t('gamma.accepted_title')}<br><sup>{sub}</sup>",
        height=420,
        xaxis=dict(title=t("gamma.accepted_axis"), dtick=1),
        yaxis=dict(title=t("gamma.fraction_steps")),
    )
    return fig


def gamma_figure(alpha, gamma, c=0.1, alphas=DEFAULT_ALPHAS, gamma_max=10, accepted_counts=None) -> go.Figure:
    """The γ-step dashboard in one figure (one FigureWidget): three panels.

    Traces: "alpha=<α>" curves + "selected" (the chosen α) + "current" (marker at γ) in
    panel 1; "speedup" heat map, "best_gamma" and "current_cell" in panel 2; "empirical"
    and "exact" accepted-length distributions in panel 3 ("empirical" is all zeros without counts).
    """
    gamma, gamma_max = int(gamma), int(gamma_max)
    if gamma < 1:
        raise ValueError(f"gamma must be >= 1, got {gamma}")
    gamma_max = max(gamma_max, gamma)
    fig = make_subplots(
        rows=1,
        cols=3,
        horizontal_spacing=GAMMA_SPACING,
        subplot_titles=(
            t("gamma.panel_tokens"),
            t("gamma.panel_speedup", c=c),
            t("gamma.panel_accepted", gamma=gamma),
        ),
    )
    for trace in _expected_tokens_traces(alphas, gamma_max):
        trace.update(line=dict(width=1), marker=dict(size=4), opacity=0.6)
        fig.add_trace(trace, row=1, col=1)
    gs = np.arange(gamma_max + 1)
    fig.add_scatter(
        x=gs,
        y=[expected_tokens(alpha, int(g)) for g in gs],
        mode="lines",
        meta="selected",
        name=t("gamma.selected", alpha=alpha),
        line=dict(color="black", width=3),
        row=1,
        col=1,
    )
    fig.add_scatter(
        x=[gamma],
        y=[expected_tokens(alpha, gamma)],
        mode="markers",
        meta="current",
        name=t("gamma.current"),
        marker=dict(size=14, color=PALETTE["p"], symbol="circle"),
        row=1,
        col=1,
    )
    alphas_grid, gammas_grid, z, best = _speedup_grid(c, np.round(np.arange(0.05, 1.0, 0.05), 2), gs)
    fig.add_heatmap(
        x=gammas_grid,
        y=alphas_grid,
        z=z,
        meta="speedup",
        colorscale="Viridis",
        zmin=0,
        # Horizontal, under the speedup panel, at the bottom of the figure: upright between the
        # panels its title and ticks collided with the next panel's axis title.
        colorbar=dict(
            title=dict(text=t("gamma.speedup") + " ×", side="right"),
            orientation="h",
            x=0.5,
            xanchor="center",
            len=0.8 * (1 - 2 * GAMMA_SPACING) / 3,
            thickness=10,
            yref="container",
            y=0.01,
            yanchor="bottom",
        ),
        row=1,
        col=2,
        hovertemplate=t("figure.speedup_hover"),
    )
    fig.add_scatter(
        x=best,
        y=alphas_grid,
        mode="markers",
        meta="best_gamma",
        name=t("gamma.best"),
        marker=dict(symbol="star", size=9, color="white", line=dict(color="black", width=1)),
        row=1,
        col=2,
    )
    fig.add_scatter(
        x=[gamma],
        y=[alpha],
        mode="markers",
        meta="current_cell",
        name=t("gamma.current_cell"),
        marker=dict(symbol="circle-open", size=16, color=PALETTE["p"], line=dict(width=3)),
        row=1,
        col=2,
    )
    ks = np.arange(gamma + 1)
    if accepted_counts is not None:
        k = np.asarray(accepted_counts).astype(np.int64)
        emp = np.bincount(np.clip(k, 0, gamma), minlength=gamma + 1)[: gamma + 1] / max(k.size, 1)
    else:
        emp = np.zeros(gamma + 1)
    fig.add_bar(
        x=ks, y=emp, meta="empirical", name=t("gamma.simulated"), marker=dict(color=PALETTE["empirical"]), row=1, col=3
    )
    fig.add_scatter(
        x=ks,
        y=accepted_length_dist(alpha, gamma),
        mode="markers",
        meta="exact",
        name=t("gamma.exact_dist"),
        marker=exact_tick(18),
        row=1,
        col=3,
    )
    fig.update_xaxes(title_text="γ", dtick=2, row=1, col=1)
    fig.update_xaxes(title_text="γ", dtick=2, row=1, col=2)
    fig.update_xaxes(title_text=t("gamma.accepted_k"), dtick=1 if gamma <= 12 else 2, row=1, col=3)
    fig.update_yaxes(title_text=t("gamma.tokens_per_step"), row=1, col=1)
    fig.update_yaxes(title_text="α", row=1, col=2)
    fig.update_yaxes(title_text=t("gamma.fraction"), row=1, col=3)
    title = t(
        "gamma.title",
        alpha=alpha,
        gamma=gamma,
        c=c,
        tokens=expected_tokens(alpha, gamma),
        speedup=speedup(alpha, gamma, c),
    )
    base_layout(fig, title, height=470, showlegend=False, autosize=True)
    fig.update_layout(margin=dict(b=130))  # room for the colour bar under the x-axis titles
    return fig
