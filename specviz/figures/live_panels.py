"""Every plot of the live real-model view in one figure (one FigureWidget there): six panels, patched in place.

>>> fig = live_figure()
>>> list(LIVE_PANELS), len({tr.meta for tr in fig.data}) == len(fig.data)
(['per_position', 'accepted_hist', 'throughput', 'sweep', 'gamma_steps', 'money'], True)
>>> apply_live_patch(fig, "throughput", throughput_patch(90.0, 45.0))
>>> list(next(tr for tr in fig.data if tr.meta == "tokens_per_second").y)
[90.0, 45.0]
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..foundation.examples import TUTORIAL_P, TUTORIAL_Q
from ..foundation.i18n import t
from .accepted_hist import accepted_hist_figure, accepted_hist_patch
from .gamma_per_step import gamma_steps_figure, gamma_steps_patch
from .gamma_sweep import gamma_sweep_figure, gamma_sweep_patch
from .money import money_diagram
from .per_position import per_position_figure, per_position_patch
from .position_money import position_money_patch
from .style import TUTORIAL_VOCAB, style_axes
from .throughput import throughput_figure, throughput_patch

LIVE_PANELS = {  # panel -> (row, col, axis number, message of the default title)
    "per_position": (1, 1, 1, "run.per_position_title"),
    "accepted_hist": (1, 2, 2, "run.hist_title"),
    "throughput": (2, 1, 3, "run.tps_title"),
    "sweep": (2, 2, 4, "run.sweep_title"),
    "gamma_steps": (3, 1, 5, "run.gamma_steps_title"),
    "money": (4, 1, 6, "run.money_title"),
}
"""The panels of `live_figure`: grid position, axis number (xaxisN / yaxisN) and the message key of the default title."""


def panel_title(title: str, *lines: str) -> str:
    """A panel's title annotation: the title in bold, each non-empty line below it in small type."""
    rest = "".join(f"<br><span style='font-size:11px'>{ln}</span>" for ln in lines if ln)
    return f"<b>{title}</b>{rest}"


def placeholder_money_patch() -> dict:
    """The money panel before any token is picked: the tutorial's cat/dog/fish p and q."""
    return position_money_patch(TUTORIAL_P, TUTORIAL_Q, TUTORIAL_VOCAB, subtitle=t("run.placeholder"))


def live_figure(
    stats=None,
    gamma: int = 4,
    throughput=(float("nan"),) * 3,
    sweep=((), (), (), ()),
    money: dict | None = None,
    height: int = 1700,
    gamma_steps=((), (), None),
) -> go.Figure:
    """All live plots in one figure (one FigureWidget in the live view), six panels.

    Row 1: acceptance per draft position ("unconditional", "conditional",
    "theory_unconditional", "alpha") and the accepted-length histogram ("accepted_measured",
    "accepted_theory"); row 2: tokens/s ("tokens_per_second", "predicted_tps") and the γ sweep
    ("sweep_measured", "sweep_bound", "sweep_predicted", "break_even", "sweep_auto"); row 3:
    the γ of each verify step ("gamma_drafted", "gamma_accepted"; `gamma_steps` = the
    arguments of `gamma_steps_patch`); row 4: the money diagram of one generated token
    ("overlap", "residual", "p", "q", "rejected"). Every meta is unique, so `trace_by_meta`
    finds any trace; `apply_live_patch` applies the per-panel `*_patch` dicts. `money` is a
    `position_money_patch` (default: cat/dog/fish).
    """
    fig = make_subplots(
        rows=4,
        cols=2,
        specs=[[{}, {}], [{}, {}], [{"colspan": 2}, None], [{"colspan": 2}, None]],
        vertical_spacing=0.115,
        horizontal_spacing=0.09,
        row_heights=[0.25, 0.25, 0.17, 0.33],
        subplot_titles=[t(v[3]) for v in LIVE_PANELS.values()],
    )
    for ann, (panel, (_, _, n, _)) in zip(fig.layout.annotations, LIVE_PANELS.items()):
        x0 = fig.layout[f"xaxis{n if n > 1 else ''}"].domain[0]
        ann.update(name=f"title:{panel}", x=x0, xanchor="left", align="left", yanchor="bottom")
    money = money or placeholder_money_patch()
    parts = {
        "per_position": per_position_figure(stats, gamma),
        "accepted_hist": accepted_hist_figure(stats, gamma),
        "throughput": throughput_figure(*throughput),
        "sweep": gamma_sweep_figure(*sweep),
        "gamma_steps": gamma_steps_figure(*gamma_steps),
        "money": money_diagram(
            money["data"]["p"]["y"],
            np.ones(len(money["data"]["p"]["y"])) / len(money["data"]["p"]["y"]),
            vocab=money["data"]["p"]["x"],
            annotate=False,
        ),
    }
    for k, (panel, sub) in enumerate(parts.items(), start=1):
        row, col, n, _ = LIVE_PANELS[panel]
        legend = "legend" if k == 1 else f"legend{k}"
        for tr in sub.data:
            tr.update(legend=legend)
            fig.add_trace(tr, row=row, col=col)
        for axis in ("xaxis", "yaxis"):
            props = sub.layout[axis].to_plotly_json()
            props.pop("domain", None), props.pop("anchor", None)
            getattr(fig, f"update_{axis[0]}axes")(props, row=row, col=col)
    fig.update_layout(
        barmode="group",
        bargap=0.25,
        bargroupgap=0.05,
        font=dict(size=12),
        height=height,
        paper_bgcolor="white",
        plot_bgcolor="white",
        margin=dict(l=60, r=30, t=60, b=40),
    )
    style_axes(fig)
    fig.update_xaxes(type="category", title_text=t("run.token_axis"), row=4, col=1)
    for k, panel in enumerate(LIVE_PANELS, start=1):  # one legend under each panel
        _, _, n, _ = LIVE_PANELS[panel]
        xd = fig.layout[f"xaxis{n if n > 1 else ''}"].domain
        yd = fig.layout[f"yaxis{n if n > 1 else ''}"].domain
        fig.update_layout(
            {
                ("legend" if k == 1 else f"legend{k}"): dict(
                    x=xd[0],
                    y=yd[0] - (0.035 if panel != "money" else 0.045),
                    xanchor="left",
                    yanchor="top",
                    orientation="h",
                    font=dict(size=11),
                    bgcolor="rgba(255,255,255,0)",
                )
            }
        )
    for panel, patch in (
        ("per_position", per_position_patch(stats, gamma)),
        ("accepted_hist", accepted_hist_patch(stats, gamma)),
        ("throughput", throughput_patch(*throughput)),
        ("sweep", gamma_sweep_patch(*sweep)),
        ("gamma_steps", gamma_steps_patch(*gamma_steps)),
        ("money", money),
    ):
        apply_live_patch(fig, panel, patch)
    return fig


def apply_live_patch(fig, panel: str, patch: dict) -> None:
    """Apply one panel's `*_patch` to a `live_figure` (Figure or FigureWidget, inside `batch_update`).

    Trace data by meta; "title_text" / "title_subtitle_text" / "annotation_text" become the
    panel's title annotation; "xaxis_range" / "yaxis_range" go to the panel's axes.
    """
    _, _, n, title_key = LIVE_PANELS[panel]
    by_meta = {t.meta: t for t in fig.data}
    for meta, props in patch["data"].items():
        by_meta[meta].update(props)
    lay = patch.get("layout", {})
    suffix = "" if n == 1 else str(n)
    for key in ("xaxis", "yaxis"):
        if f"{key}_range" in lay:
            fig.layout[f"{key}{suffix}"].range = lay[f"{key}_range"]
    if any(k in lay for k in ("title_text", "title_subtitle_text", "annotation_text")):
        text = panel_title(
            lay.get("title_text") or t(title_key), lay.get("title_subtitle_text", ""), lay.get("annotation_text", "")
        )
        for ann in fig.layout.annotations:
            if ann.name == f"title:{panel}":
                ann.text = text


__all__ = [
    "LIVE_PANELS",
    "apply_live_patch",
    "live_figure",
    "panel_title",
    "placeholder_money_patch",
]
