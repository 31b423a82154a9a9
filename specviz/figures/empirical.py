"""Samples against the exact p: empirical frequencies with binomial bands, 1/√n convergence, the Monte-Carlo split.

>>> from specviz.figures.style import trace_by_meta
>>> fig = empirical_figure([0.5, 0.5], [3, 1])
>>> [float(v) for v in trace_by_meta(fig, "empirical").y]
[0.75, 0.25]
>>> round(tv_reference_constant([0.5, 0.5]), 6)
0.398942
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from ..exact.rules import get_rule, rule_joint
from ..exact.theory import overlap
from ..foundation.i18n import t
from ..foundation.validate import as_dist
from ..samplers.sampling import spec_sample
from .style import (
    LOSSLESS_SERIES,
    LOSSY_SERIES,
    PALETTE,
    base_layout,
    exact_tick,
    float_pair,
    mass_marker,
    p_outline,
    vocab_names,
    y_top,
)


def _binomial_band(p: np.ndarray, n: int, ci: float):
    """The central `ci` interval of Binomial(n, p) / n per token: (low, high) arrays."""
    from scipy import stats

    lo_q, hi_q = (1 - ci) / 2, 1 - (1 - ci) / 2
    lo = stats.binom.ppf(lo_q, n, p) / n
    hi = stats.binom.ppf(hi_q, n, p) / n
    return np.nan_to_num(lo), np.nan_to_num(hi)


def _counts_from(p: np.ndarray, tokens_or_counts) -> np.ndarray:
    """Counts per token from a SpecSample, token ids, or (length V) counts, checked against the vocabulary."""
    V = p.size
    if hasattr(tokens_or_counts, "counts") and callable(tokens_or_counts.counts):
        return np.asarray(tokens_or_counts.counts(), dtype=np.int64)
    if hasattr(tokens_or_counts, "tokens"):
        tokens_or_counts = tokens_or_counts.tokens
    arr = np.asarray(tokens_or_counts)
    if arr.ndim != 1:
        raise ValueError(f"expected 1-D token ids or per-token counts, got shape {arr.shape}")
    if arr.size and (arr.dtype.kind not in "iuf" or np.any(np.mod(arr, 1) != 0) or np.any(arr < 0)):
        raise ValueError("token ids / counts must be non-negative integers")
    arr = arr.astype(np.int64)
    if arr.size == V:
        return arr  # an array of length V is read as counts
    if arr.size and arr.max() >= V:
        raise ValueError(f"token id {int(arr.max())} is outside the vocabulary 0..{V - 1}")
    return np.bincount(arr, minlength=V)


def empirical_figure(p, tokens_or_counts, vocab=None, n=None, ci=0.99) -> go.Figure:
    """Empirical output frequencies vs the exact p, with binomial `ci` bands around p.

    `tokens_or_counts`: a SpecSample, token ids, or (an array of length V) counts per
    token. Traces: "empirical" y = counts / n, "exact" y = p with error bars spanning
    the central `ci` binomial interval for n samples (out-of-band tokens are red).
    """
    p = as_dist(p).astype(np.float64)
    names = vocab_names(vocab, p.size)
    if not 0 < ci < 1:
        raise ValueError(f"ci must be in (0, 1), got {ci!r}")
    counts = _counts_from(p, tokens_or_counts)
    total = int(counts.sum())
    n = total if n is None else int(n)
    if n != total:
        raise ValueError(f"n = {n} but the counts add up to {total}")
    if n <= 0:
        raise ValueError("no samples: n must be >= 1")
    emp = counts / n
    lo, hi = _binomial_band(p, n, ci)
    outside = (emp < lo - 1e-12) | (emp > hi + 1e-12)
    fig = go.Figure()
    fig.add_bar(
        x=names,
        y=emp,
        name=t("empirical.empirical", n=n),
        meta="empirical",
        marker=dict(color=[PALETTE["p"] if o else PALETTE["empirical"] for o in outside]),
        hovertemplate="%{x}: %{y:.4f}<extra></extra>",
    )
    fig.add_scatter(
        x=names,
        y=p,
        mode="markers",
        name=t("empirical.exact_band", ci=ci),
        meta="exact",
        marker=exact_tick(36),
        error_y=dict(
            type="data", symmetric=False, array=hi - p, arrayminus=p - lo, color=PALETTE["p"], thickness=1.5, width=10
        ),
    )
    tv = float(np.abs(emp - p).sum() / 2)
    sub = t("empirical.outside", tv=tv, k=int(outside.sum()), V=p.size, ci=ci)
    base_layout(
        fig,
        f"{t('empirical.title')}<br><sup>{sub}</sup>",
        height=420,
        yaxis=dict(title=t("figure.probability"), range=[0, y_top(emp, hi)]),
        xaxis=dict(title=t("figure.token")),
    )
    return fig


def tv_reference_constant(p) -> float:
    """c with E[TV(empirical of n draws, p)] ≈ c / sqrt(n) for large n: Σ sqrt(p(1 - p) / (2π))."""
    p = as_dist(p).astype(np.float64)
    return float(np.sum(np.sqrt(p * (1 - p) / (2 * np.pi))))


DEFAULT_NS = (10, 100, 1_000, 10_000, 100_000, 1_000_000)


def convergence_figure(p, q, ns=DEFAULT_NS, rule="lossless", seed=0, **params) -> go.Figure:
    """TV(empirical output, p) vs n on log-log axes, with the c/√n reference line.

    One run of max(ns) steps per rule; each n uses its first n samples. `rule` may be a
    name or a list of names. Traces: "tv:<rule>", "reference" (c/√n), and for lossy
    rules "floor:<rule>" at their exact TV(output, p) (where the curve must flatten).
    """
    p, q = float_pair(p, q)
    ns = sorted({int(n) for n in ns})
    if not ns or ns[0] < 1:
        raise ValueError(f"ns must be positive sample sizes, got {ns}")
    rules = [rule] if isinstance(rule, str) else list(rule)
    fig = go.Figure()
    lossless_colours = iter(LOSSLESS_SERIES * 4)
    lossy_colours = iter((PALETTE["lossy"], *LOSSY_SERIES) * 4)
    for r in rules:
        s = spec_sample(p, q, ns[-1], rule=r, seed=seed, **params)
        tvs = [float(np.abs(np.bincount(s.tokens[:n], minlength=p.size) / n - p).sum() / 2) for n in ns]
        colour = next(lossless_colours) if get_rule(r).lossless else next(lossy_colours)
        fig.add_scatter(
            x=ns,
            y=tvs,
            mode="lines+markers",
            name=t("empirical.tv", rule=get_rule(r).name),
            meta=f"tv:{get_rule(r).name}",
            line=dict(color=colour),
        )
        exact_tv = float(np.abs(rule_joint(p, q, r, **params).output.astype(np.float64) - p).sum() / 2)
        if exact_tv > 1e-12:
            fig.add_scatter(
                x=[ns[0], ns[-1]],
                y=[exact_tv, exact_tv],
                mode="lines",
                name=t("empirical.floor", rule=get_rule(r).name, tv=exact_tv),
                meta=f"floor:{get_rule(r).name}",
                line=dict(dash="dot", color=colour),
            )
    c = tv_reference_constant(p)
    fig.add_scatter(
        x=ns,
        y=[c / math.sqrt(n) for n in ns],
        mode="lines",
        name=t("empirical.noise", c=c),
        meta="reference",
        line=dict(dash="dash", color=PALETTE["reference"]),
    )
    base_layout(
        fig,
        t("empirical.convergence_title"),
        height=430,
        xaxis=dict(type="log", title=t("empirical.samples_n")),
        yaxis=dict(type="log", title=t("empirical.tv_axis")),
    )
    return fig


def monte_carlo_figure(p, q, sample=None, vocab=None, ci=0.99) -> go.Figure:
    """Sampled output split by path: accepted (blue) + resampled (green) fractions vs exact parts.

    `sample` is a SpecSample (or None: empty bars). Traces: "accepted" y = accepted
    counts / n (→ min(p, q)), "resampled" y = rejected-path counts / n (→ (p − q)⁺),
    stacked; "overlap_exact" markers at min(p, q); "p" outline with the binomial band.
    """
    p, q = float_pair(p, q)
    names = vocab_names(vocab, p.size)
    V = p.size
    if sample is None:
        acc_f = res_f = np.zeros(V)
        n = 0
    else:
        n = len(sample.tokens)
        acc_f = np.bincount(np.asarray(sample.tokens)[np.asarray(sample.accepted)], minlength=V) / max(n, 1)
        res_f = np.bincount(np.asarray(sample.tokens)[~np.asarray(sample.accepted)], minlength=V) / max(n, 1)
    ov = overlap(p, q)
    fig = go.Figure()
    fig.add_bar(
        x=names,
        y=acc_f,
        name=t("empirical.accepted"),
        meta="accepted",
        offsetgroup="s",
        marker=mass_marker("overlap"),
        hovertemplate="%{x}: %{y:.4f}<extra></extra>",
    )
    fig.add_bar(
        x=names,
        y=res_f,
        base=acc_f,
        name=t("empirical.resampled"),
        meta="resampled",
        offsetgroup="s",
        marker=mass_marker("residual"),
        hovertemplate="%{x}: %{y:.4f}<extra></extra>",
    )
    fig.add_bar(
        x=names,
        y=p,
        name=t("figure.p_target"),
        meta="p",
        offsetgroup="s",
        marker=p_outline(),
        hovertemplate="%{x}: p = %{y:.4f}<extra></extra>",
    )
    fig.add_scatter(
        x=names,
        y=ov,
        mode="markers",
        name=t("empirical.exact_overlap"),
        meta="overlap_exact",
        marker=exact_tick(40, PALETTE["exact"]),
        hovertemplate="%{x}: min(p, q) = %{y:.4f}<extra></extra>",
    )
    if n:
        emp = acc_f + res_f
        tv = float(np.abs(emp - p).sum() / 2)
        sub = t("empirical.mc_summary", n=n, tv=tv, acc=acc_f.sum(), exact=ov.sum())
    else:
        sub = t("empirical.press_run")
    base_layout(
        fig,
        f"{t('empirical.mc_title')}<br><sup>{sub}</sup>",
        barmode="group",
        height=440,
        yaxis=dict(title=t("empirical.fraction"), range=[0, y_top(p, acc_f + res_f)]),
        xaxis=dict(title=t("figure.token")),
    )
    return fig
