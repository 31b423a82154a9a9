"""Accepted drafts per verify step of a real run: the measured histogram against the counts α predicts.

>>> fig = accepted_hist_figure(None, gamma=2)
>>> [tr.meta for tr in fig.data], list(fig.data[0].x)
(['accepted_measured', 'accepted_theory'], [0, 1, 2])
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ..foundation.i18n import t
from .run_data import stat_of
from .style import PALETTE, exact_tick, patched_layout


def accepted_hist_patch(stats=None, gamma: int = 4) -> dict:
    """Data of `accepted_hist_figure` (stats None: an empty plot for `gamma` drafts)."""
    g = int(stat_of(stats, "gamma", gamma)) if stats is not None else int(gamma)
    xs = list(range(g + 1))
    hist = np.asarray(stat_of(stats, "accepted_hist", g), dtype=float)
    theory = np.asarray(stat_of(stats, "accepted_hist_theory", g), dtype=float)
    alpha = float(stat_of(stats, "alpha", g))
    if stats is not None and stats.steps:
        sub = t(
            "run.hist_sub",
            steps=int(hist.sum()),
            alpha=alpha,
            mean=stats.mean_acceptance_length,
            theory=stats.expected_tokens_per_step,
        )
    else:
        sub = t("run.hist_empty")
    return {
        "data": {"accepted_measured": dict(x=xs, y=hist.tolist()), "accepted_theory": dict(x=xs, y=theory.tolist())},
        "layout": {"title_subtitle_text": sub, "xaxis_range": [-0.6, g + 0.6]},
    }


def accepted_hist_figure(stats=None, gamma: int = 4, height: int = 360) -> go.Figure:
    """Accepted drafts per verify step: measured counts vs the counts theory expects from α.

    Traces: "accepted_measured" bars (`spec_stats(...).accepted_hist`, x = k = 0..γ) and "accepted_theory"
    markers (`accepted_hist_theory`).
    """
    patch = accepted_hist_patch(stats, gamma)
    d = patch["data"]
    fig = go.Figure()
    fig.add_bar(
        name=t("run.measured_steps"),
        meta="accepted_measured",
        marker=dict(color=PALETTE["empirical"]),
        hovertemplate=t("run.hist_hover"),
        **d["accepted_measured"],
    )
    fig.add_scatter(
        name=t("run.theory_alpha"),
        meta="accepted_theory",
        mode="markers",
        marker=exact_tick(26),
        hovertemplate=t("run.hist_theory_hover"),
        **d["accepted_theory"],
    )
    xaxis = dict(title=t("run.accepted_k"), dtick=1)
    yaxis = dict(title=t("run.verify_steps"), rangemode="tozero")
    return patched_layout(fig, t("run.hist_title"), patch, xaxis, yaxis, height=height)


__all__ = [
    "accepted_hist_figure",
    "accepted_hist_patch",
]
