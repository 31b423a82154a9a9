"""Optimality of the speculative rule: P(output = draft) of many random lossless couplings against sum min(p, q).

>>> fig = coupling_figure([0.6, 0.3, 0.1], [0.4, 0.5, 0.1], n=50, seed=0)
>>> round(float(trace_by_meta(fig, "maximal").y[0]), 12), round(float(trace_by_meta(fig, "independent").y[0]), 12)
(0.8, 0.4)
>>> bool(max(trace_by_meta(fig, "random").y) <= 0.8 + 1e-12)
True
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from ..exact.theory import acceptance_rate
from ..foundation.checks import integer
from ..foundation.i18n import t
from ..samplers.coupling import coupling_acceptance, independent_coupling, maximal_coupling, random_coupling
from ..samplers.sampling import make_rng
from .style import INK, PALETTE, base_layout, float_pair, trace_by_meta  # noqa: F401 - trace_by_meta: the doctest

__all__ = ["coupling_acceptances", "coupling_figure"]


def coupling_acceptances(p: ArrayLike, q: ArrayLike, n: int = 500, seed=0) -> np.ndarray:
    """(n,) P(output = draft) of n random couplings of q and p (`specviz.random_coupling`, 0-4 plans each)."""
    p, q = float_pair(p, q)
    n = integer(n, "n (number of random couplings)", lo=1, hi=100_000)
    rng = make_rng(seed)
    return np.array([coupling_acceptance(random_coupling(p, q, rng, n_plans=k % 5)) for k in range(n)])


def coupling_figure(p: ArrayLike, q: ArrayLike, n: int = 500, seed=0) -> go.Figure:
    """Acceptance of n random lossless couplings (dots, sorted), token matching and the speculative rule, under the bound."""
    p, q = float_pair(p, q)
    acc = np.sort(coupling_acceptances(p, q, n, seed))  # sorted: the highest come closest to the bound
    bound = float(acceptance_rate(p, q))
    matching = float(coupling_acceptance(independent_coupling(p, q)))
    speculative = float(coupling_acceptance(maximal_coupling(p, q)))
    x = np.arange(1, acc.size + 1)
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=x,
            y=acc,
            mode="markers",
            meta="random",
            name=t("coupling.random", n=acc.size),
            marker=dict(color=PALETTE["empirical"], size=5, opacity=0.6, symbol="circle"),
            hovertemplate="%{y:.4f}<extra></extra>",
        )
    )
    for meta, value, colour, symbol in (
        ("independent", matching, PALETTE["q"], "square"),
        ("maximal", speculative, PALETTE["overlap"], "diamond"),
    ):
        label = t(f"coupling.{meta}", value=value)
        fig.add_trace(
            go.Scatter(
                x=[0],
                y=[value],
                mode="markers",
                meta=meta,
                name=label,
                marker=dict(color=colour, size=13, symbol=symbol, line=dict(color=INK["mark"], width=1)),
                hovertemplate="%{y:.4f}<extra></extra>",
            )
        )
        fig.add_annotation(
            x=0, y=value, text=label, showarrow=False, xanchor="left", xshift=12, yshift=-12, bgcolor="white"
        )
    fig.add_hline(y=bound, line=dict(color=PALETTE["p"], dash="dash", width=2))
    fig.add_annotation(
        x=1,
        xref="paper",
        y=bound,
        text=t("coupling.bound", value=bound),
        showarrow=False,
        xanchor="right",
        yanchor="bottom",
        bgcolor="white",
    )
    base_layout(fig, t("coupling.title"), height=440)
    fig.update_xaxes(title_text=t("coupling.xaxis"), range=[-0.05 * acc.size, acc.size * 1.02])
    fig.update_yaxes(title_text=t("coupling.yaxis"), range=[0, min(1.0, bound + 0.15)])
    return fig
