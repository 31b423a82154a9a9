"""Generated tokens per second: speculative against autoregressive decoding of the same target.

>>> fig = throughput_figure(120.0, 60.0)
>>> [tr.meta for tr in fig.data], list(fig.data[0].y)
(['tokens_per_second', 'predicted_tps'], [120.0, 60.0])
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ..foundation.i18n import t
from .style import PALETTE, exact_tick, patched_layout

THROUGHPUT_BARS = ("speculative", "autoregressive")
"""The two bars of the tokens/s panel (English; `throughput_bars()` gives the current language's names)."""


def throughput_bars() -> tuple[str, str]:
    """The x categories of the tokens/s panel in the current language: (speculative, autoregressive)."""
    return t("run.speculative"), t("run.autoregressive")


def throughput_patch(spec_tps=float("nan"), ar_tps=float("nan"), predicted_tps=float("nan")) -> dict:
    """Data of `throughput_figure` (NaN or None: not measured yet)."""

    def num(v):
        return None if v is None or not np.isfinite(v) else float(v)

    s, a, pr = num(spec_tps), num(ar_tps), num(predicted_tps)
    if s and a:
        sub = t("run.tps_sub", speedup=s / a) + (t("run.tps_predicts", speedup=pr / a) if pr else "")
    elif s:
        sub = t("run.tps_no_ar")
    else:
        sub = t("run.press_generate")
    bars = throughput_bars()
    top = max([v for v in (s, a, pr) if v] + [1.0]) * 1.2
    return {
        "data": {
            "tokens_per_second": dict(x=list(bars), y=[s, a], text=[f"{v:.0f}" if v else "" for v in (s, a)]),
            "predicted_tps": dict(x=[bars[0]], y=[pr]),
        },
        "layout": {"title_subtitle_text": sub, "yaxis_range": [0, top]},
    }


def throughput_figure(
    spec_tps=float("nan"), ar_tps=float("nan"), predicted_tps=float("nan"), height: int = 360
) -> go.Figure:
    """Generated tokens per second: speculative vs autoregressive decoding of the same target.

    Traces: "tokens_per_second" bars (x = "speculative", "autoregressive"; None until
    measured) and "predicted_tps" (the cost-model prediction for the speculative run).
    """
    patch = throughput_patch(spec_tps, ar_tps, predicted_tps)
    d = patch["data"]
    fig = go.Figure()
    fig.add_bar(
        name=t("run.tps_measured"),
        meta="tokens_per_second",
        textposition="outside",
        marker=dict(color=[PALETTE["overlap"], PALETTE["p"]]),
        hovertemplate=t("run.tps_hover"),
        **d["tokens_per_second"],
    )
    fig.add_scatter(
        name=t("run.tps_predicted"),
        meta="predicted_tps",
        mode="markers",
        marker=exact_tick(40, "black"),
        hovertemplate=t("run.tps_predicted_hover"),
        **d["predicted_tps"],
    )
    xaxis = dict(title=t("run.decoding"), type="category")
    return patched_layout(fig, t("run.tps_title"), patch, xaxis, dict(title=t("run.tps_axis")), height=height)


__all__ = [
    "THROUGHPUT_BARS",
    "throughput_bars",
    "throughput_figure",
    "throughput_patch",
]
