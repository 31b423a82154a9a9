"""The classic samplers speculative decoding builds on: importance sampling, rejection sampling, a(x) = min(1, p/q).

>>> from specviz.figures.style import trace_by_meta
>>> P, Q = [0.6, 0.3, 0.1], [0.4, 0.5, 0.1]
>>> [round(float(w), 12) for w in trace_by_meta(importance_figure(P, Q, n=10), "weights").y]
[1.5, 0.6, 1.0]
>>> [round(float(v), 12) for v in trace_by_meta(rejection_figure(P, Q), "accepted").y]
[0.6, 0.3, 0.1]
>>> [float(v) for v in trace_by_meta(acceptance_figure(P, Q), "acceptance").y]
[1.0, 0.6, 1.0]
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..exact.theory import (
    acceptance_prob,
    envelope_constant,
    importance_bias_mass,
    importance_weights,
    rejection_acceptance,
)
from ..foundation.i18n import t
from ..samplers.sampling import importance_estimate
from .style import PALETTE, bar_labels, base_layout, float_pair, p_outline, rgba, vocab_names, y_top


def importance_figure(p, q, f=None, n=2000, seed=0, vocab=None) -> go.Figure:
    """Importance sampling: weights p/q per token, and the running IS estimate converging to E_p[f].

    `f` defaults to the indicator of the first token (so E_p[f] = p(token 0)). Traces:
    "weights", "estimate" (x = 1..n), "truth" (E_p[f]), "draft_mean" (E_q[f], what
    unweighted draft samples would give).
    """
    p, q = float_pair(p, q)
    names = vocab_names(vocab, p.size)
    if f is None:
        f = np.zeros(p.size)
        f[0] = 1.0
        f_name = f"f(x) = 1[x = {names[0]}]"
    else:
        f_name = "f"
    f = np.asarray(f, dtype=np.float64)
    est = importance_estimate(f, p, q, n, seed=seed)
    n = est.size
    truth, draft_mean = float(p @ f), float(q @ f)
    fig = make_subplots(
        rows=1,
        cols=2,
        column_widths=[0.35, 0.65],
        subplot_titles=(t("sampling.weights_title"), t("sampling.estimate_title", f=f_name.split(" =")[0])),
    )
    w = importance_weights(p, q)
    fig.add_bar(
        x=names,
        y=w,
        name="w = p/q",
        meta="weights",
        marker=dict(color=PALETTE["q"]),
        text=[f"{v:.2f}" for v in w],
        textposition="outside",
        row=1,
        col=1,
    )
    xs = np.arange(1, n + 1)
    fig.add_scatter(
        x=xs,
        y=est,
        mode="lines",
        name=t("sampling.estimate"),
        meta="estimate",
        line=dict(color=PALETTE["empirical"]),
        row=1,
        col=2,
    )
    fig.add_scatter(
        x=[1, max(n, 2)],
        y=[truth, truth],
        mode="lines",
        name=f"E_p[f] = {truth:.3f}",
        meta="truth",
        line=dict(color=PALETTE["p"], dash="dash"),
        row=1,
        col=2,
    )
    fig.add_scatter(
        x=[1, max(n, 2)],
        y=[draft_mean, draft_mean],
        mode="lines",
        name=t("sampling.no_weights", value=draft_mean),
        meta="draft_mean",
        line=dict(color=PALETTE["q"], dash="dot"),
        row=1,
        col=2,
    )
    fig.update_xaxes(type="log", title=t("sampling.n_draft"), row=1, col=2)
    fig.update_xaxes(title=t("figure.token"), row=1, col=1)
    bias = importance_bias_mass(p, q)
    note = t("sampling.is_note", f=f_name) + (t("sampling.is_blind", mass=bias) if bias > 0 else "")
    base_layout(fig, t("sampling.is_title") + "<br><sup>" + note + "</sup>", height=430)
    return fig


def rejection_figure(p, q, M=None, vocab=None) -> go.Figure:
    """Classic rejection sampling: the envelope M·q over p, acceptance per try = 1/M.

    Traces: "envelope" y = M q, "accepted" y = min(p, M q) (what a try keeps, times M),
    "p" the target outline. With q = 0 where p > 0 no finite M exists.
    """
    p, q = float_pair(p, q)
    names = vocab_names(vocab, p.size)
    M_min = envelope_constant(p, q)
    M = M_min if M is None else float(M)
    fig = go.Figure()
    if not np.isfinite(M) or M <= 0:
        fig.add_bar(x=names, y=q, name=t("figure.q_draft"), meta="q", marker=dict(color=PALETTE["q"]))
        fig.add_bar(x=names, y=p, name=t("figure.p_target"), meta="p", marker=p_outline())
        title = t("sampling.no_envelope_title") + "<br><sup>" + t("sampling.no_envelope") + "</sup>"
        base_layout(fig, title, barmode="overlay", height=430, yaxis=dict(title=t("figure.probability")))
        return fig
    env = M * q
    kept = np.minimum(p, env)
    acc = rejection_acceptance(p, q, M)
    fig.add_bar(
        x=names,
        y=env,
        name=t("sampling.envelope", M=M),
        meta="envelope",
        marker=dict(color=rgba(PALETTE["q"], 0.25), line=dict(color=PALETTE["q"], width=1.5)),
    )
    fig.add_bar(
        x=names,
        y=kept,
        name=t("sampling.kept"),
        meta="accepted",
        marker=dict(color=PALETTE["overlap"], opacity=0.8),
    )
    fig.add_bar(x=names, y=p, name=t("figure.p_target"), meta="p", marker=p_outline())
    valid = M >= M_min - 1e-12
    sub = (
        t("sampling.per_try", value=acc)
        + (" = 1/M" if valid else "")
        + ("" if valid else t("sampling.clipped", M=M_min))
    )
    base_layout(
        fig,
        f"{t('sampling.rejection_title')}<br><sup>{sub}</sup>",
        barmode="overlay",
        height=430,
        yaxis=dict(title=t("figure.probability"), range=[0, y_top(env, p)]),
        xaxis=dict(title=t("figure.token")),
    )
    return fig


def acceptance_figure(p, q, vocab=None) -> go.Figure:
    """p/q and a(x) = min(1, p/q) per token; the dashed line marks the clip at 1.

    Traces: "ratio" y = p/q (None where q = 0: never drafted), "acceptance" y = min(1, p/q).
    """
    p, q = float_pair(p, q)
    names = vocab_names(vocab, p.size)
    ratio = [float(a / b) if b > 0 else None for a, b in zip(p, q)]
    acc = acceptance_prob(p, q)
    fig = go.Figure()
    fig.add_bar(
        x=names,
        y=ratio,
        name="p/q",
        meta="ratio",
        marker=dict(color=rgba(PALETTE["q"], 0.25), line=dict(color=PALETTE["q"], width=1.5)),
        text=[f"{r:.2f}" if r is not None else "q = 0" for r in ratio],
        textposition="outside",
        hovertemplate="%{x}: p/q = %{y:.4f}<extra></extra>",
    )
    fig.add_bar(
        x=names,
        y=acc,
        name="a(x) = min(1, p/q)",
        meta="acceptance",
        marker=dict(color=PALETTE["overlap"]),
        text=bar_labels(acc),
        textposition="inside",
        hovertemplate=t("sampling.accept_hover"),
    )
    fig.add_hline(
        y=1.0,
        line=dict(color=PALETTE["p"], dash="dash"),
        annotation_text=t("sampling.clip"),
        annotation_position="top left",
    )
    finite = [r for r in ratio if r is not None] or [1.0]
    base_layout(
        fig,
        t("sampling.acceptance_title"),
        barmode="group",
        yaxis=dict(title=t("sampling.ratio_axis"), range=[0, max(1.3, max(finite) * 1.2)]),
        xaxis=dict(title=t("figure.token")),
        height=420,
    )
    return fig
