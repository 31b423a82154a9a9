"""Multi-draft (SpecInfer-style tree) verification: more drafts accept more, lossless only with the residual update.

>>> from specviz.figures.style import trace_by_meta
>>> fig = multidraft_figure([0.5, 0.3, 0.15, 0.05], [0.1, 0.2, 0.3, 0.4], k_max=2)
>>> [round(float(v), 3) for v in trace_by_meta(fig, "acceptance:update").y]
[0.5, 0.65]
>>> [round(float(v), 3) for v in trace_by_meta(fig, "tv:naive").y]
[0.0, 0.15]
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..exact.multidraft import multi_draft_acceptance_rate, multi_draft_output_dist
from ..foundation.i18n import t
from .style import PALETTE, base_layout, float_pair, p_outline, vocab_names


def multidraft_figure(p, q, k_max=4, vocab=None) -> go.Figure:
    """k = 1..k_max i.i.d. drafts: acceptance and TV(output, p), with and without the residual update.

    Traces (x = k): "acceptance:update", "acceptance:naive", "tv:update", "tv:naive";
    panel 3 (x = tokens): "p", "output:update", "output:naive" at k = k_max.
    """
    p, q = float_pair(p, q)
    names = vocab_names(vocab, p.size)
    k_max = int(k_max)
    if k_max < 1:
        raise ValueError(f"k_max must be >= 1, got {k_max}")
    ks = np.arange(1, k_max + 1)
    fig = make_subplots(
        rows=1,
        cols=3,
        horizontal_spacing=0.08,
        subplot_titles=(
            t("multidraft.panel_accept"),
            t("figure.tv_output_p"),
            t("multidraft.panel_output", k=k_max),
        ),
    )
    styles = {
        True: ("update", t("multidraft.update"), PALETTE["overlap"], "solid"),
        False: ("naive", t("multidraft.naive"), PALETTE["lossy"], "dash"),
    }
    outs = {}
    for upd in (True, False):
        key, label, colour, dash = styles[upd]
        acc = [multi_draft_acceptance_rate(p, q, int(k), update_residual=upd) for k in ks]
        outs[upd] = [multi_draft_output_dist(p, q, int(k), update_residual=upd).astype(np.float64) for k in ks]
        tvs = [float(np.abs(o - p).sum() / 2) for o in outs[upd]]
        fig.add_scatter(
            x=ks,
            y=acc,
            mode="lines+markers",
            meta=f"acceptance:{key}",
            name=label,
            line=dict(color=colour, dash=dash),
            legendgroup=key,
            row=1,
            col=1,
        )
        fig.add_scatter(
            x=ks,
            y=tvs,
            mode="lines+markers",
            meta=f"tv:{key}",
            name=label,
            showlegend=False,
            line=dict(color=colour, dash=dash),
            legendgroup=key,
            row=1,
            col=2,
        )
    fig.add_bar(x=names, y=p, meta="p", name=t("figure.p_target"), marker=p_outline(), row=1, col=3)
    for upd in (True, False):
        key, label, colour, _ = styles[upd]
        fig.add_bar(
            x=names,
            y=outs[upd][-1],
            meta=f"output:{key}",
            name=t("multidraft.output_update") if upd else t("multidraft.output_naive"),
            marker=dict(color=colour, opacity=0.75),
            showlegend=False,
            row=1,
            col=3,
        )
    fig.update_xaxes(title_text=t("multidraft.n_drafts"), dtick=1, row=1, col=1)
    fig.update_xaxes(title_text=t("multidraft.n_drafts"), dtick=1, row=1, col=2)
    fig.update_yaxes(range=[0, 1.05], row=1, col=1)
    base_layout(
        fig,
        t("multidraft.title"),
        height=430,
        barmode="group",
    )
    return fig
