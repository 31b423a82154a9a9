"""How verification stops being lossless: wrong rules, one rule's output against p, and lossy relaxations.

>>> from specviz.figures.style import trace_by_meta
>>> P, Q = [0.6, 0.3, 0.1], [0.4, 0.5, 0.1]
>>> fig = rules_figure(P, Q, rules=["lossless", "resample_target"])
>>> [round(float(v), 3) for v in trace_by_meta(fig, "resample_target").y]
[0.52, 0.36, 0.12]
>>> rule_figure(P, Q).layout.title.subtitle.text.endswith("lossless ✓")
True
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ..exact.rules import compare_rules, get_rule, rule_joint
from ..foundation.i18n import CATALOGUE, t
from .style import (
    LOSSLESS_SERIES,
    LOSSY_SERIES,
    PALETTE,
    base_layout,
    float_pair,
    mass_labels,
    mass_marker,
    p_outline,
    q_fill,
    rgba,
    vocab_names,
    y_top,
)


def rule_description(rule) -> str:
    """A rule's one-line description in the current language (its own English text for rules not in the catalogue).

    >>> rule_description("resample_target")
    'pitfall: on rejection sample from p itself'
    """
    r = get_rule(rule)
    key = f"pitfalls.rule.{r.name}"
    return t(key) if key in CATALOGUE else r.description


def rule_figure(p, q, rule="lossless", vocab=None, **params) -> go.Figure:
    """One rule's exact output split into accept (blue) and reject (green) parts vs the p outline.

    Traces: "accept" y = P(x ∧ accept), "reject" y = P(x ∧ reject) stacked on it,
    "p" the target outline, "q" the draft beside it. A lossy rule over- or undershoots
    the red outline.
    """
    p, q = float_pair(p, q)
    names = vocab_names(vocab, p.size)
    r = get_rule(rule)
    j = rule_joint(p, q, r, **params)
    acc, rej = j.accept.astype(np.float64), j.reject.astype(np.float64)
    out = acc + rej
    tv = float(np.abs(out - p).sum() / 2)
    fig = go.Figure()
    fig.add_bar(
        x=names,
        y=acc,
        name=t("figure.joint_accept"),
        meta="accept",
        offsetgroup="p",
        marker=mass_marker("overlap"),
        text=mass_labels("overlap", acc),
        textposition="inside",
        hovertemplate="%{x}: %{y:.4f}<extra></extra>",
    )
    fig.add_bar(
        x=names,
        y=rej,
        base=acc,
        name=t("figure.joint_reject"),
        meta="reject",
        offsetgroup="p",
        marker=mass_marker("residual"),
        text=mass_labels("residual", rej),
        textposition="inside",
        hovertemplate="%{x}: %{y:.4f}<extra></extra>",
    )
    fig.add_bar(
        x=names,
        y=p,
        name=t("figure.p_target"),
        meta="p",
        offsetgroup="p",
        marker=p_outline(),
        hovertemplate="%{x}: p = %{y:.4f}<extra></extra>",
    )
    fig.add_bar(
        x=names,
        y=q,
        name=t("figure.q_draft"),
        meta="q",
        offsetgroup="q",
        marker=q_fill(),
        hovertemplate="%{x}: q = %{y:.4f}<extra></extra>",
    )
    verdict = t("figure.lossless_ok") if tv < 1e-9 else t("pitfalls.not_lossless", tv=tv)
    sub = t("pitfalls.rule_sub", description=rule_description(r), acc=float(j.p_accept), verdict=verdict)
    base_layout(
        fig,
        f"{t('pitfalls.rule_title', rule=r.name)}<br><sup>{sub}</sup>",
        barmode="group",
        height=460,
        yaxis=dict(title=t("figure.probability"), range=[0, y_top(p, q, out)]),
        xaxis=dict(title=t("figure.token")),
    )
    return fig


def rules_figure(p, q, rules=None, vocab=None, params=None) -> go.Figure:
    """Each rule's exact output (`compare_rules`) next to the target p, TV in the legend.

    Traces: "p" first, then one per rule with meta = the rule's name and y = its output.
    """
    p, q = float_pair(p, q)
    names = vocab_names(vocab, p.size)
    reports = compare_rules(p, q, rules, params)
    fig = go.Figure()
    fig.add_bar(
        x=names,
        y=p,
        name=t("figure.p_target"),
        meta="p",
        marker=dict(color=rgba(PALETTE["p"], 0.15), line=dict(color=PALETTE["p"], width=3)),
    )
    lossless_colours = iter(LOSSLESS_SERIES * 4)
    lossy_colours = iter(LOSSY_SERIES * 4)
    for rep in reports:
        mark = "✓" if rep.tv < 1e-9 else "✗"
        colour = next(lossless_colours) if rep.tv < 1e-9 else next(lossy_colours)
        fig.add_bar(
            x=names,
            y=rep.output,
            name=f"{rep.rule} {mark} TV {rep.tv:.3f}",
            meta=rep.rule,
            marker=dict(color=colour),
            hovertemplate=f"{rep.rule}: " + "%{x} %{y:.4f}<extra></extra>",
        )
    base_layout(
        fig,
        t("pitfalls.rules_title"),
        barmode="group",
        height=460,
        yaxis=dict(title=t("pitfalls.output_axis")),
        xaxis=dict(title=t("figure.token")),
    )
    fig.update_layout(
        legend=dict(orientation="v", yref="paper", x=1.02, xanchor="left", y=1, yanchor="top"), margin=dict(r=230, b=60)
    )
    return fig


def tradeoff_figure(p, q, ls=None, eps=None, delta=0.3) -> go.Figure:
    """Acceptance vs TV(output, p) for lenient rules (l ∈ (0, 1]) and typical acceptance (eps sweep).

    Traces: "lenient" (customdata = l), "typical" (customdata = eps), and single points
    "lossless" and "token_match" (both at TV 0).
    """
    p, q = float_pair(p, q)
    ls = np.linspace(0.05, 1.0, 39) if ls is None else np.asarray(ls, dtype=np.float64)
    eps = np.geomspace(1e-3, 1.0, 40) if eps is None else np.asarray(eps, dtype=np.float64)
    if np.any(ls <= 0) or np.any(ls > 1):
        raise ValueError("lenience values l must lie in (0, 1]")

    def point(rule, **kw):
        """(TV(output, p), acceptance) of one rule with its parameters."""
        j = rule_joint(p, q, rule, **kw)
        return float(np.abs(j.output.astype(np.float64) - p).sum() / 2), float(j.p_accept)

    len_pts = [point("lenient", l=float(lenience)) for lenience in ls]
    typ_pts = [point("typical", eps=float(e), delta=float(delta)) for e in eps]
    fig = go.Figure()
    fig.add_scatter(
        x=[t for t, _ in len_pts],
        y=[a for _, a in len_pts],
        customdata=ls,
        mode="lines+markers",
        name=t("pitfalls.lenient"),
        meta="lenient",
        line=dict(color=PALETTE["lossy"]),
        hovertemplate=t("pitfalls.lenient_hover"),
    )
    fig.add_scatter(
        x=[t for t, _ in typ_pts],
        y=[a for _, a in typ_pts],
        customdata=eps,
        mode="lines+markers",
        name=t("pitfalls.typical", delta=delta),
        meta="typical",
        line=dict(color=PALETTE["rejected"]),
        hovertemplate=t("pitfalls.typical_hover"),
    )
    for rule, symbol in (("lossless", "star"), ("token_match", "diamond")):
        tv, a = point(rule)
        fig.add_scatter(
            x=[tv],
            y=[a],
            mode="markers+text",
            text=[rule],
            textposition="middle right",
            name=t("app.rule_lossless", rule=rule),
            meta=rule,
            marker=dict(symbol=symbol, size=16, color=PALETTE["overlap"]),
        )
    base_layout(
        fig,
        t("pitfalls.tradeoff_title"),
        height=440,
        xaxis=dict(title=t("pitfalls.tradeoff_x")),
        yaxis=dict(title=t("pitfalls.acceptance_rate"), range=[0, 1.05]),
    )
    return fig
