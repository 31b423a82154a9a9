"""The figure of `specviz.exact.standardize`'s pitfall: sampling settings applied differently to the ratio and the samples.

>>> from specviz.figures.style import trace_by_meta
>>> from specviz import Sampling
>>> fig = standardization_figure([2.0, 1.0, 0.0], [0.0, 1.0, 2.0], Sampling(0.7), target_used=Sampling(1.0))
>>> fig.layout.title.subtitle.text.split(" · ")[1][:31]
'TV(output, intended) = 0.1057 ✗'
>>> standardization_figure([2.0, 1.0, 0.0], [0.0, 1.0, 2.0], 0.7).layout.title.subtitle.text.endswith("lossless ✓")
True
"""

from __future__ import annotations

import plotly.graph_objects as go

from ..exact.standardize import Sampling, mismatch_output_dist, standardize
from ..foundation.i18n import t
from .style import PALETTE, base_layout, p_outline, q_fill, rgba, vocab_names


def _as_sampling(s) -> Sampling | None:
    """A `Sampling` from a Sampling, a dict of its fields, a temperature, or None."""
    if s is None or isinstance(s, Sampling):
        return s
    if isinstance(s, dict):
        return Sampling(**s)
    if isinstance(s, (int, float)):
        return Sampling(temperature=float(s))
    raise ValueError(f"expected a Sampling, a dict of its fields or a temperature, got {s!r}")


def _describe(s: Sampling) -> str:
    """A short label of sampling settings: "T=0.7, top-k=2" or "greedy"."""
    parts = [t("standardization.greedy") if s.temperature == 0 else f"T={s.temperature:g}"]
    if s.top_k:
        parts.append(f"top-k={s.top_k}")
    if s.top_p is not None and s.top_p < 1:
        parts.append(f"top-p={s.top_p:g}")
    return ", ".join(parts)


def standardization_figure(
    target_logits, draft_logits, intended=None, target_used=None, draft_sampled=None, draft_ratio=None, vocab=None
) -> go.Figure:
    """The temperature / top-k mismatch pitfall: what the sampler outputs vs what was asked for.

    Settings are `Sampling` objects (or dicts / temperatures); see
    `specviz.mismatch_output_dist`. Traces: "intended" (the target the user asked for,
    red outline), "output" (the exact output), "p_used" (p as used in the ratio),
    "q_sampled" (the draft distribution the tokens came from).
    """
    intended = _as_sampling(intended) or Sampling()
    target_used = _as_sampling(target_used) or intended
    draft_sampled = _as_sampling(draft_sampled) or intended
    draft_ratio = _as_sampling(draft_ratio) or draft_sampled
    m = mismatch_output_dist(target_logits, draft_logits, intended, target_used, draft_sampled, draft_ratio)
    names = vocab_names(vocab, m.output.size)
    p_used = standardize(target_logits, target_used.temperature, target_used.top_k, target_used.top_p)
    q_s = standardize(draft_logits, draft_sampled.temperature, draft_sampled.top_k, draft_sampled.top_p)
    fig = go.Figure()
    fig.add_bar(
        x=names,
        y=q_s,
        name=t("standardization.q_sampled", settings=_describe(draft_sampled)),
        meta="q_sampled",
        marker=q_fill(width=1),
    )
    fig.add_bar(
        x=names,
        y=p_used,
        name=t("standardization.p_used", settings=_describe(target_used)),
        meta="p_used",
        marker=dict(color=rgba(PALETTE["residual"], 0.35), line=dict(color=PALETTE["residual"], width=1)),
    )
    fig.add_bar(
        x=names, y=m.output, name=t("standardization.output"), meta="output", marker=dict(color=PALETTE["overlap"])
    )
    fig.add_bar(
        x=names,
        y=m.intended,
        name=t("standardization.intended", settings=_describe(intended)),
        meta="intended",
        marker=p_outline(),
    )
    ok = m.tv < 1e-9
    verdict = t("figure.lossless_ok") if ok else t("standardization.tv_bad", tv=m.tv)
    sub = t("standardization.sub", settings=_describe(draft_ratio), verdict=verdict) + (
        "" if ok else t("standardization.fold")
    )
    base_layout(
        fig,
        f"{t('standardization.title')}<br><sup>{sub}</sup>",
        barmode="group",
        height=440,
        yaxis=dict(title=t("figure.probability")),
        xaxis=dict(title=t("figure.token")),
    )
    return fig
