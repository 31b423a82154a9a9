"""How many tokens each verify step of a real run drafted (its γ) and kept; with γ "auto" it varies.

>>> fig = gamma_steps_figure([4, 2, 0], [1, 2, 0], setting="auto")
>>> [tr.meta for tr in fig.data], list(fig.data[0].y)
(['gamma_drafted', 'gamma_accepted'], [4, 2, 0])
"""

from __future__ import annotations

import plotly.graph_objects as go

from ..foundation.i18n import t
from .style import PALETTE, exact_tick, patched_layout, rgba


def gamma_steps_patch(drafted=(), accepted=(), setting=None) -> dict:
    """Data of `gamma_steps_figure`."""
    d, a = [int(g) for g in drafted], [int(k) for k in accepted]
    xs = list(range(1, len(d) + 1))
    if d:
        name = t("run.gamma_steps_auto") if setting == "auto" else ("γ" if setting is None else f"γ = {setting}")
        sub = t("run.gamma_steps_sub", setting=name, mean=sum(d) / len(d), longest=max(d), steps=len(d))
    else:
        sub = t("run.gamma_steps_empty")
    return {
        # an empty panel holds one null point: plotly.js draws NaN paths for empty traces here
        "data": {
            "gamma_drafted": dict(x=xs or [None], y=d or [None]),
            "gamma_accepted": dict(x=xs[: len(a)] or [None], y=a or [None]),
        },
        "layout": {
            "title_subtitle_text": sub,
            "xaxis_range": [0.4, max(len(d), 10) + 0.6],
            "yaxis_range": [0, max(d + [1]) + 0.6],
        },
    }


def gamma_steps_figure(drafted=(), accepted=(), setting=None, height: int = 300) -> go.Figure:
    """How many tokens each verify step drafted (its γ; with γ "auto" it changes step by step) and kept.

    Traces: "gamma_drafted" bars (len(record.drafted) per step; 0: a plain target step) and
    "gamma_accepted" markers (record.accepted). `setting` ("auto" or a whole number) names
    the run's γ in the subtitle.
    """
    patch = gamma_steps_patch(drafted, accepted, setting)
    d = patch["data"]
    fig = go.Figure()
    fig.add_bar(
        name=t("run.gamma_drafted"),
        meta="gamma_drafted",
        marker=dict(color=rgba(PALETTE["q"], 0.45), line=dict(color=PALETTE["q"], width=1)),
        hovertemplate=t("run.gamma_drafted_hover"),
        **d["gamma_drafted"],
    )
    fig.add_scatter(
        name=t("run.gamma_accepted"),
        meta="gamma_accepted",
        mode="markers",
        marker=exact_tick(12, PALETTE["overlap"]),
        hovertemplate=t("run.gamma_accepted_hover"),
        **d["gamma_accepted"],
    )
    xaxis, yaxis = dict(title=t("run.verify_step_axis")), dict(title=t("run.tokens_axis"), dtick=1)
    return patched_layout(fig, t("run.gamma_steps_title"), patch, xaxis, yaxis, height=height)


__all__ = [
    "gamma_steps_figure",
    "gamma_steps_patch",
]
