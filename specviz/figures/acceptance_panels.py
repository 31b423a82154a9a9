"""Acceptance per draft position and the accepted-length histogram side by side, in one figure (one widget).

The two panels of the real-model live view that a vLLM server's counters can fill
(`specviz.widgets.live.vllm`), patched in place as readings arrive.

>>> fig = acceptance_panels_figure(None, gamma=3)
>>> [tr.meta for tr in fig.data]
['unconditional', 'conditional', 'theory_unconditional', 'alpha', 'accepted_measured', 'accepted_theory']
>>> apply_acceptance_patches(fig, acceptance_patches(None, gamma=5))
>>> list(fig.data[0].x)
[1, 2, 3, 4, 5]
"""

from __future__ import annotations

import html

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..foundation.i18n import t
from .accepted_hist import accepted_hist_figure, accepted_hist_patch
from .per_position import per_position_figure, per_position_patch
from .style import style_axes

ACCEPTANCE_PANELS = {"per_position": (1, "run.per_position_title"), "accepted_hist": (2, "run.hist_title")}
"""The two panels of `acceptance_panels_figure`: column and the message key of the title."""


def acceptance_patches(stats=None, gamma: int = 4) -> dict:
    """{panel: patch} of the two acceptance panels (`per_position_patch`, `accepted_hist_patch`)."""
    return {
        "per_position": per_position_patch(stats, gamma),
        "accepted_hist": accepted_hist_patch(stats, gamma),
    }


def apply_acceptance_patches(fig, patches: dict) -> None:
    """Apply `acceptance_patches` to an `acceptance_panels_figure` (trace data by meta, panel titles, x ranges)."""
    by_meta = {t.meta: t for t in fig.data}
    for panel, patch in patches.items():
        col, title_key = ACCEPTANCE_PANELS[panel]
        for meta, props in patch["data"].items():
            by_meta[meta].update(props)
        lay = patch.get("layout", {})
        fig.layout[f"xaxis{'' if col == 1 else col}"].range = lay.get("xaxis_range")
        for ann in fig.layout.annotations:
            if ann.name == f"title:{panel}":
                sub = lay.get("title_subtitle_text", "")
                ann.text = f"<b>{html.escape(t(title_key))}</b>" + (
                    f"<br><span style='font-size:11px'>{html.escape(sub)}</span>" if sub else ""
                )


def acceptance_panels_figure(stats=None, gamma: int = 4, height: int = 420) -> go.Figure:
    """Per-position acceptance and the accepted-length histogram side by side (one figure, one widget)."""
    fig = make_subplots(
        rows=1, cols=2, horizontal_spacing=0.1, subplot_titles=[t(key) for _, key in ACCEPTANCE_PANELS.values()]
    )
    for ann, panel in zip(fig.layout.annotations, ACCEPTANCE_PANELS):
        ann.update(name=f"title:{panel}", xanchor="left", align="left", yanchor="bottom")
        ann.x = fig.layout[f"xaxis{'' if ACCEPTANCE_PANELS[panel][0] == 1 else 2}"].domain[0]
    parts = {
        "per_position": per_position_figure(stats, gamma),
        "accepted_hist": accepted_hist_figure(stats, gamma),
    }
    for k, (panel, sub) in enumerate(parts.items(), start=1):
        col = ACCEPTANCE_PANELS[panel][0]
        for tr in sub.data:
            tr.update(legend="legend" if k == 1 else "legend2")
            fig.add_trace(tr, row=1, col=col)
        for axis in ("xaxis", "yaxis"):
            props = sub.layout[axis].to_plotly_json()
            props.pop("domain", None), props.pop("anchor", None)
            getattr(fig, f"update_{axis[0]}axes")(props, row=1, col=col)
    fig.update_layout(
        barmode="group",
        height=height,
        paper_bgcolor="white",
        plot_bgcolor="white",
        margin=dict(l=60, r=30, t=80, b=90),
        legend=dict(x=0, y=-0.22, orientation="h", font=dict(size=11)),
        legend2=dict(x=0.55, y=-0.22, orientation="h", font=dict(size=11)),
    )
    style_axes(fig)
    apply_acceptance_patches(fig, acceptance_patches(stats, gamma))
    return fig


__all__ = ["ACCEPTANCE_PANELS", "acceptance_panels_figure", "acceptance_patches", "apply_acceptance_patches"]
