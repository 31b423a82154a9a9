"""The measured speed-up of a real pair against γ, next to the textbook speed-up and the cost model.

>>> fig = gamma_sweep_figure([1, 2], measured=[1.2, 1.5], bound=[1.4, 1.7], predicted=[1.3, 1.6])
>>> [tr.meta for tr in fig.data][:3], list(fig.data[0].y)
(['sweep_measured', 'sweep_bound', 'sweep_predicted'], [1.2, 1.5])
"""

from __future__ import annotations

import plotly.graph_objects as go

from ..foundation.i18n import t
from .run_data import nan_list
from .style import INK, PALETTE, patched_layout


def gamma_sweep_patch(gammas=(), measured=(), bound=(), predicted=(), auto=None) -> dict:
    """Data of `gamma_sweep_figure` (speed-ups per γ; None or NaN: not measured)."""
    gammas = [int(g) for g in gammas]
    m, b, pr = nan_list(measured), nan_list(bound), nan_list(predicted)
    best = ""
    finite = [(v, g) for g, v in zip(gammas, m) if v is not None]
    if finite:
        v, g = max(finite)
        best = t("run.sweep_best", gamma=g, speedup=v)
    hi = max(8, max(gammas) if gammas else 8)
    a = [] if auto is None else [v for v in nan_list([auto]) if v is not None]
    top = max([v for v in m + b + pr + a if v is not None] + [1.5]) * 1.15
    return {
        "data": {
            "sweep_measured": dict(x=gammas, y=m),
            "sweep_bound": dict(x=gammas, y=b),
            "sweep_predicted": dict(x=gammas, y=pr),
            "break_even": dict(x=[0.5, hi + 0.5], y=[1, 1]),
            "sweep_auto": dict(x=[0.5, hi + 0.5], y=nan_list([auto, auto]) if auto is not None else [None, None]),
        },
        "layout": {
            "title_subtitle_text": best or t("run.sweep_empty"),
            "yaxis_range": [0, top],
            "xaxis_range": [0.5, hi + 0.5],
        },
    }


def gamma_sweep_figure(
    gammas=(), measured=(), bound=(), predicted=(), height: int = 380, auto: float | None = None
) -> go.Figure:
    """Measured speedup over autoregressive decoding vs γ, against the theory curves.

    Traces: "sweep_measured" (speculative tokens/s ÷ autoregressive tokens/s), "sweep_bound" (the textbook
    (1 − α^(γ+1)) / ((1 − α)(γc + 1)) at the measured α and c), "sweep_predicted" (the cost model
    from measured draft-token and verify-step times), "break_even" (speedup 1) and "sweep_auto"
    (the measured speedup of a γ-auto run as a level line, when `auto` is given).
    """
    patch = gamma_sweep_patch(gammas, measured, bound, predicted, auto)
    d = patch["data"]
    fig = go.Figure()
    fig.add_scatter(
        name=t("run.measured"),
        meta="sweep_measured",
        mode="lines+markers",
        line=dict(color=PALETTE["empirical"], width=3),
        marker=dict(size=10),
        hovertemplate=t("run.sweep_hover_measured"),
        **d["sweep_measured"],
    )
    fig.add_scatter(
        name=t("run.textbook_bound"),
        meta="sweep_bound",
        mode="lines+markers",
        line=dict(color=PALETTE["p"], dash="dot", width=2),
        hovertemplate=t("run.sweep_hover_bound"),
        **d["sweep_bound"],
    )
    fig.add_scatter(
        name=t("run.cost_model"),
        meta="sweep_predicted",
        mode="lines+markers",
        line=dict(color=PALETTE["overlap"], dash="dash", width=2),
        hovertemplate=t("run.sweep_hover_predicted"),
        **d["sweep_predicted"],
    )
    fig.add_scatter(
        name=t("run.no_speedup"),
        meta="break_even",
        mode="lines",
        showlegend=False,
        hoverinfo="skip",
        line=dict(color=INK["zeroline"], width=1),
        **d["break_even"],
    )
    fig.add_scatter(
        name=t("run.sweep_auto"),
        meta="sweep_auto",
        mode="lines",
        line=dict(color=PALETTE["reference"], dash="dashdot", width=2),
        hovertemplate=t("run.sweep_hover_auto"),
        **d["sweep_auto"],
    )
    xaxis = dict(title=t("run.sweep_x"), dtick=1)
    return patched_layout(fig, t("run.sweep_title"), patch, xaxis, dict(title=t("run.sweep_y")), height=height)


__all__ = [
    "gamma_sweep_figure",
    "gamma_sweep_patch",
]
