"""Plotly figure builders: data in, `plotly.graph_objects.Figure` out (no widgets here).

Every builder validates p (target) and q (draft) through the core, computes what it
shows with the core's exact functions, and tags each trace with `meta` (a stable name
that survives `FigureWidget`, whose `uid`s change), so tests and the widgets can find
traces by name: ``trace_by_meta(fig, "overlap")``.

One colour language everywhere (`PALETTE`): blue = min(p, q), the overlap that is
accepted; green = (p - q)+, the residual that rejection resamples; red outline = the
target p; grey = the draft q; orange (hatched where static) = the draft mass that gets
rejected.

>>> fig = money_diagram([0.6, 0.3, 0.1], [0.4, 0.5, 0.1])
>>> [float(v) for v in trace_by_meta(fig, "overlap").y]
[0.4, 0.3, 0.1]
>>> [round(float(v), 12) for v in trace_by_meta(fig, "residual").y]
[0.2, 0.0, 0.0]
"""

from __future__ import annotations

import math
import os
import shutil
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .gamma import accepted_length_dist, expected_tokens, speedup
from .multidraft import multi_draft_acceptance_rate, multi_draft_output_dist
from .rules import RULES, compare_rules, get_rule, rule_joint
from .sampling import importance_estimate, spec_sample
from .standardize import Sampling, mismatch_output_dist, standardize
from .theory import (acceptance_prob, acceptance_rate, envelope_constant, importance_bias_mass, importance_weights,
                     overlap, rejection_acceptance, rejection_mass, resample_dist, residual, tv_distance)
from .validate import as_dist, as_pair

# ----------------------------------------------------------------------------- style

PALETTE = {
    "overlap": "#1f77b4",  # blue: min(p, q), accepted
    "residual": "#2ca02c",  # green: (p - q)+, resampled after a rejection
    "p": "#d62728",  # red: the target p (outline)
    "q": "#7f7f7f",  # grey: the draft q
    "rejected": "#ff7f0e",  # orange (hatched): (q - p)+, draft mass that is rejected
    "empirical": "#9467bd",  # purple: anything measured by sampling
    "reference": "#17becf",  # cyan: reference curves (1/sqrt(n), limits)
    "lossy": "#8c564b",  # brown: lossy rules / variants
    "dtypes": {"float64": "#1f77b4", "float32": "#2ca02c", "float16": "#ff7f0e", "bfloat16": "#d62728"},
}
"""The shared colour language of every specviz figure."""

TUTORIAL_VOCAB = ("cat", "dog", "fish")
_GRID = "#e5e5e5"
_FONT = dict(family="DejaVu Sans, Liberation Sans, Arial, sans-serif", size=13)
_NONE = "rgba(0,0,0,0)"


def default_vocab(V: int) -> tuple[str, ...]:
    """cat/dog/fish for three tokens (the tutorial), else t0, t1, ..."""
    return TUTORIAL_VOCAB if V == 3 else tuple(f"t{i}" for i in range(V))


def _vocab(vocab, V: int) -> list[str]:
    if vocab is None:
        return list(default_vocab(V))
    names = [str(v) for v in vocab]
    if len(names) != V:
        raise ValueError(f"vocab has {len(names)} names for {V} tokens")
    if len(set(names)) != len(names):
        raise ValueError(f"vocab names must be distinct, got {names}")
    return names


def _pair(p, q):
    p, q = as_pair(p, q)
    return p.astype(np.float64), q.astype(np.float64)


def _base_layout(fig: go.Figure, title: str, **kw) -> go.Figure:
    """Shared look: title (text after "<br>" becomes the subtitle) on top, legend at the bottom.

    Styled explicitly rather than with layout.template: copying a template costs ~50 ms
    per figure, too slow for widgets that rebuild a figure on every slider move.
    """
    main, _, sub = title.partition("<br>")
    sub = sub.replace("<sup>", "").replace("</sup>", "")
    fig.update_layout(font=_FONT,
                      title=dict(text=main, x=0.01, xanchor="left", subtitle=dict(text=sub, font=dict(size=12))),
                      paper_bgcolor="white", plot_bgcolor="white",
                      margin=dict(l=60, r=30, t=100 if sub else 65, b=100),
                      legend=dict(orientation="h", yref="container", y=0.0, yanchor="bottom", x=0.0, xanchor="left"),
                      **kw)
    fig.update_xaxes(gridcolor=_GRID, linecolor="#444", zerolinecolor=_GRID, automargin=True)
    fig.update_yaxes(gridcolor=_GRID, linecolor="#444", zerolinecolor="#999", automargin=True)
    return fig


def _labels(values, fmt="{:.2f}") -> list[str]:
    """Bar text: the value, or '' for (numerically) zero bars."""
    return [fmt.format(v) if abs(v) > 1e-12 else "" for v in values]


def _fmt_vec(names, values, digits=3) -> str:
    return ", ".join(f"{n} {v:.{digits}f}" for n, v in zip(names, values))


def trace_by_meta(fig, meta: str):
    """The first trace of `fig` whose `meta` equals `meta` (KeyError if none)."""
    for t in fig.data:
        if t.meta == meta:
            return t
    raise KeyError(f"no trace with meta {meta!r}; metas: {[t.meta for t in fig.data]}")


def trace_metas(fig) -> list:
    """The `meta` of every trace, in order."""
    return [t.meta for t in fig.data]


def _y_top(*arrays, floor=0.1) -> float:
    top = max(float(np.max(a)) for a in arrays)
    return max(floor, math.ceil(top * 1.15 * 20) / 20)


# ----------------------------------------------------------------------------- the money diagram

MONEY_STEPS = {
    1: "Step 1 · accept: drafting x ~ q and keeping it with prob. min(1, p/q) emits min(p, q) (blue)",
    2: "Step 2 · reject: the draft's excess (q − p)⁺ (hatched) is thrown away, in total Z = 1 − Σ min(p, q)",
    3: "Step 3 · resample: Z · p′ = (p − q)⁺ (green) fills the gap — min(p, q) + (p − q)⁺ = p",
}


def money_summary(p, q, vocab=None) -> dict:
    """The live numbers of the money diagram: P(accept), Z = P(reject), TV, p'."""
    p, q = _pair(p, q)
    names = _vocab(vocab, p.size)
    return {
        "p_accept": acceptance_rate(p, q),
        "z": rejection_mass(p, q),
        "tv": tv_distance(p, q),
        "p_prime": resample_dist(p, q),
        "vocab": names,
    }


def money_diagram_patch(p, q, vocab=None, step=3, annotate=True) -> dict:
    """The data part of `money_diagram` as plain dicts: {"data": {meta: props}, "layout": props}.

    `money_diagram` is built from it, and the widget applies it to its FigureWidget in
    place (no figure rebuilt per slider move). Layout keys use plotly's underscore paths.
    """
    p, q = _pair(p, q)
    names = _vocab(vocab, p.size)
    step = int(step)
    if step not in (1, 2, 3):
        raise ValueError(f"step must be 1, 2 or 3, got {step!r}")
    ov, res = overlap(p, q), residual(p, q)
    rej = np.maximum(q - p, 0.0)

    def vis(shown):
        return dict(opacity=1.0 if shown else 0.0, showlegend=shown, hoverinfo="all" if shown else "skip")

    data = {
        "overlap": dict(x=names, y=ov, text=_labels(ov)),
        "residual": dict(x=names, y=res, base=ov, text=_labels(res), **vis(step >= 3)),
        "p": dict(x=names, y=p),
        "q": dict(x=names, y=q),
        "rejected": dict(x=names, y=rej, base=ov, marker_line_width=[1.5 if v > 1e-12 else 0 for v in rej],
                         **vis(step >= 2)),
    }
    layout = {"title_text": "The money diagram: min(p, q) + (p − q)⁺ = p", "title_subtitle_text": MONEY_STEPS[step],
              "yaxis_range": [0, _y_top(p, q)]}
    if annotate:
        layout["annotation_text"] = _money_note(p, q, names, step)
    return {"data": data, "layout": layout}


def money_diagram(p, q, vocab=None, step=3, annotate=True, hatch=True) -> go.Figure:
    """The proof in one picture: per token, min(p, q) (blue) under (p - q)+ (green) fills p (red outline).

    Traces (in this order, by `meta`): "overlap" y = min(p, q); "residual" y = (p - q)+
    stacked on it (base = min(p, q)); "p" the red outline y = p; "q" the draft y = q
    in its own group beside it; "rejected" y = (q - p)+ hatched on top of q's overlap
    part (base = min(p, q)).

    `step` reveals the proof: 1 = overlap only, 2 = + the rejected mass, 3 = + the
    residual filling the gap. Hidden traces keep their data and get opacity 0 (so a
    browser can still read them); `annotate` adds P(accept), Z and p' above the plot.
    `hatch=False` fills the rejected mass plainly: plotly.js 4.1 cannot animate bars with
    a pattern fill (its transition code throws "classed is not a function"), so the
    widgets, which animate, use it; static figures keep the hatching.
    """
    patch = money_diagram_patch(p, q, vocab, step, annotate)
    d = patch["data"]
    fig = go.Figure()
    fig.add_bar(name="min(p, q): accepted", meta="overlap", offsetgroup="p",
                marker=dict(color=PALETTE["overlap"], line=dict(width=0)),
                textposition="inside", insidetextanchor="middle",
                hovertemplate="%{x}: min(p, q) = %{y:.4f}<extra></extra>", **d["overlap"])
    fig.add_bar(name="(p − q)⁺: resampled after rejection", meta="residual",
                offsetgroup="p", marker=dict(color=PALETTE["residual"], line=dict(width=0)),
                textposition="inside", insidetextanchor="middle",
                hovertemplate="%{x}: (p − q)⁺ = %{y:.4f}<extra></extra>", **d["residual"])
    fig.add_bar(name="p (target)", meta="p", offsetgroup="p",
                marker=dict(color=_NONE, line=dict(color=PALETTE["p"], width=3)),
                hovertemplate="%{x}: p = %{y:.4f}<extra></extra>", **d["p"])
    fig.add_bar(name="q (draft)", meta="q", offsetgroup="q",
                marker=dict(color="rgba(127,127,127,0.35)", line=dict(color=PALETTE["q"], width=1.5)),
                hovertemplate="%{x}: q = %{y:.4f}<extra></extra>", **d["q"])
    rejected_marker = dict(color="rgba(255,127,14,0.35)", line=dict(color=PALETTE["rejected"], width=1.5))
    if hatch:
        rejected_marker["pattern"] = dict(shape="/", fgcolor=PALETTE["rejected"], solidity=0.3)
    fig.add_bar(name="(q − p)⁺: draft mass rejected", meta="rejected",
                offsetgroup="q", marker=rejected_marker,
                hovertemplate="%{x}: (q − p)⁺ = %{y:.4f}<extra></extra>", **d["rejected"])
    lay = patch["layout"]
    _base_layout(fig, lay["title_text"] + "<br>" + lay["title_subtitle_text"], barmode="group", bargap=0.25, bargroupgap=0.05,
                 yaxis=dict(title="probability", range=lay["yaxis_range"]), xaxis=dict(title="token"),
                 height=480)
    if annotate:
        fig.update_layout(margin=dict(t=135))
        fig.add_annotation(text=lay["annotation_text"], name="summary", xref="paper", yref="paper",
                           x=0.0, y=1.01, xanchor="left", yanchor="bottom", showarrow=False, align="left",
                           bgcolor="#f6f8fa", bordercolor="#d0d7de", borderpad=4)
    return fig


def apply_patch(fig, patch: dict) -> None:
    """Apply a `*_patch` dict to a Figure or FigureWidget (inside `batch_update` for a widget).

    Only changed properties are sent to the browser. "annotation_text" sets the text of
    the first layout annotation.
    """
    by_meta = {t.meta: t for t in fig.data}
    for meta, props in patch["data"].items():
        by_meta[meta].update(props)
    layout = dict(patch["layout"])
    note = layout.pop("annotation_text", None)
    fig.update_layout(layout)
    if note is not None and fig.layout.annotations:
        fig.layout.annotations[0].text = note


def _money_note(p, q, names, step) -> str:
    s = money_summary(p, q, names)
    parts = [f"P(accept) = Σ min(p, q) = {s['p_accept']:.3f}"]
    if step >= 2:
        parts.append(f"P(reject) = Z = {s['z']:.3f}")
    if step >= 3:
        parts.append("<br>p′ = (p − q)⁺ / Z = (" + _fmt_vec(names, s["p_prime"]) + ")" if s["z"] > 0 else
                     "<br>Z = 0: rejection never happens, p′ is never used")
    return "   ·   ".join(parts).replace("   ·   <br>", "<br>")


# ----------------------------------------------------------------------------- acceptance


def acceptance_figure(p, q, vocab=None) -> go.Figure:
    """p/q and a(x) = min(1, p/q) per token; the dashed line marks the clip at 1.

    Traces: "ratio" y = p/q (None where q = 0: never drafted), "acceptance" y = min(1, p/q).
    """
    p, q = _pair(p, q)
    names = _vocab(vocab, p.size)
    ratio = [float(a / b) if b > 0 else None for a, b in zip(p, q)]
    acc = acceptance_prob(p, q)
    fig = go.Figure()
    fig.add_bar(x=names, y=ratio, name="p/q", meta="ratio",
                marker=dict(color="rgba(127,127,127,0.25)", line=dict(color=PALETTE["q"], width=1.5)),
                text=[f"{r:.2f}" if r is not None else "q = 0" for r in ratio], textposition="outside",
                hovertemplate="%{x}: p/q = %{y:.4f}<extra></extra>")
    fig.add_bar(x=names, y=acc, name="a(x) = min(1, p/q)", meta="acceptance",
                marker=dict(color=PALETTE["overlap"]), text=_labels(acc), textposition="inside",
                hovertemplate="%{x}: accept with %{y:.4f}<extra></extra>")
    fig.add_hline(y=1.0, line=dict(color=PALETTE["p"], dash="dash"),
                  annotation_text="clip at 1: tokens with p ≥ q are always accepted",
                  annotation_position="top left")
    finite = [r for r in ratio if r is not None] or [1.0]
    _base_layout(fig, "Acceptance probability a(x) = min(1, p(x)/q(x))", barmode="group",
                 yaxis=dict(title="ratio / probability", range=[0, max(1.3, max(finite) * 1.2)]),
                 xaxis=dict(title="token"), height=420)
    return fig


# ----------------------------------------------------------------------------- joint table


def joint_table(p, q, vocab=None, rule="lossless", tol=1e-9, **params) -> go.Figure:
    """The §6–§7 table: P(x ∧ accept), P(x ∧ reject), P(out = x), p(x), match, from `rule_joint`.

    Columns (numbers in `cells.values`): token, P(x ∧ accept), P(x ∧ reject), P(out = x),
    p(x), match (✓/✗ within `tol`); the last row holds the totals.
    """
    p, q = _pair(p, q)
    names = _vocab(vocab, p.size)
    j = rule_joint(p, q, rule, **params)
    acc, rej = j.accept.astype(np.float64), j.reject.astype(np.float64)
    out = acc + rej
    match = np.abs(out - p) <= tol
    cols = [names + ["total"],
            list(acc) + [float(acc.sum())],
            list(rej) + [float(rej.sum())],
            list(out) + [float(out.sum())],
            list(p) + [float(p.sum())],
            ["✓" if m else "✗" for m in match] + ["✓" if match.all() else "✗"]]
    ok_col, bad_col = "#dafbe1", "#ffebe9"
    fills = [["white"] * len(names) + ["#f0f0f0"]] * 5 + [[ok_col if m else bad_col for m in match]
                                                          + [ok_col if match.all() else bad_col]]
    fig = go.Figure(go.Table(
        meta="joint",
        header=dict(values=["token", "P(x ∧ accept)", "P(x ∧ reject)", "P(out = x)", "p(x)", "match"],
                    fill_color="#e8eef7", align="center", font=dict(size=14)),
        cells=dict(values=cols, format=[None, ".4f", ".4f", ".4f", ".4f", None], fill_color=fills,
                   align="center", height=28, font=dict(size=14)),
    ))
    verdict = "output = p: lossless" if match.all() else "output ≠ p: NOT lossless"
    _base_layout(fig, f"Rule {get_rule(rule).name!r}: P(out = x) = P(x ∧ accept) + P(x ∧ reject) — {verdict}",
                 height=100 + 30 * (len(names) + 2))
    fig.update_layout(margin=dict(b=10, t=55))
    return fig


# ----------------------------------------------------------------------------- importance & rejection sampling


def importance_figure(p, q, f=None, n=2000, seed=0, vocab=None) -> go.Figure:
    """Importance sampling: weights p/q per token, and the running IS estimate converging to E_p[f].

    `f` defaults to the indicator of the first token (so E_p[f] = p(token 0)). Traces:
    "weights", "estimate" (x = 1..n), "truth" (E_p[f]), "draft_mean" (E_q[f], what
    unweighted draft samples would give).
    """
    p, q = _pair(p, q)
    names = _vocab(vocab, p.size)
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
    fig = make_subplots(rows=1, cols=2, column_widths=[0.35, 0.65],
                        subplot_titles=("importance weights w(x) = p(x)/q(x)",
                                        f"running IS estimate of E_p[{f_name.split(' =')[0]}]"))
    w = importance_weights(p, q)
    fig.add_bar(x=names, y=w, name="w = p/q", meta="weights", marker=dict(color=PALETTE["q"]),
                text=[f"{v:.2f}" for v in w], textposition="outside", row=1, col=1)
    xs = np.arange(1, n + 1)
    fig.add_scatter(x=xs, y=est, mode="lines", name="IS estimate (1/n) Σ w(xᵢ) f(xᵢ)", meta="estimate",
                    line=dict(color=PALETTE["empirical"]), row=1, col=2)
    fig.add_scatter(x=[1, max(n, 2)], y=[truth, truth], mode="lines", name=f"E_p[f] = {truth:.3f}", meta="truth",
                    line=dict(color=PALETTE["p"], dash="dash"), row=1, col=2)
    fig.add_scatter(x=[1, max(n, 2)], y=[draft_mean, draft_mean], mode="lines",
                    name=f"E_q[f] = {draft_mean:.3f} (no weights)", meta="draft_mean",
                    line=dict(color=PALETTE["q"], dash="dot"), row=1, col=2)
    fig.update_xaxes(type="log", title="number of draft samples n", row=1, col=2)
    fig.update_xaxes(title="token", row=1, col=1)
    bias = importance_bias_mass(p, q)
    note = (f"{f_name}. IS gives an unbiased <i>expectation</i>, not samples from p."
            + (f" Warning: q = 0 on target mass {bias:.3f}: IS cannot see it." if bias > 0 else ""))
    _base_layout(fig, "Importance sampling: reweight draft samples by p/q<br><sup>" + note + "</sup>", height=430)
    return fig


def rejection_figure(p, q, M=None, vocab=None) -> go.Figure:
    """Classic rejection sampling: the envelope M·q over p, acceptance per try = 1/M.

    Traces: "envelope" y = M q, "accepted" y = min(p, M q) (what a try keeps, times M),
    "p" the target outline. With q = 0 where p > 0 no finite M exists.
    """
    p, q = _pair(p, q)
    names = _vocab(vocab, p.size)
    M_min = envelope_constant(p, q)
    M = M_min if M is None else float(M)
    fig = go.Figure()
    if not np.isfinite(M) or M <= 0:
        fig.add_bar(x=names, y=q, name="q (draft)", meta="q", marker=dict(color=PALETTE["q"]))
        fig.add_bar(x=names, y=p, name="p (target)", meta="p",
                    marker=dict(color=_NONE, line=dict(color=PALETTE["p"], width=3)))
        title = ("Rejection sampling needs M·q ≥ p everywhere<br><sup>q(x) = 0 where p(x) > 0: "
                 "no finite M, acceptance 0 — classic rejection sampling cannot reach p</sup>")
        _base_layout(fig, title, barmode="overlay", height=430, yaxis=dict(title="probability"))
        return fig
    env = M * q
    kept = np.minimum(p, env)
    acc = rejection_acceptance(p, q, M)
    fig.add_bar(x=names, y=env, name=f"envelope M·q (M = {M:.3g})", meta="envelope",
                marker=dict(color="rgba(127,127,127,0.25)", line=dict(color=PALETTE["q"], width=1.5)))
    fig.add_bar(x=names, y=kept, name="accepted: min(p, M·q)", meta="accepted",
                marker=dict(color=PALETTE["overlap"], opacity=0.8))
    fig.add_bar(x=names, y=p, name="p (target)", meta="p",
                marker=dict(color=_NONE, line=dict(color=PALETTE["p"], width=3)))
    valid = M >= M_min - 1e-12
    sub = (f"acceptance per try = Σ min(p, M·q) / M = {acc:.3f}" + (f" = 1/M" if valid else "")
           + ("" if valid else f" — M < max p/q = {M_min:.3g}: the output is clipped, not p"))
    _base_layout(fig, f"Rejection sampling with envelope M·q<br><sup>{sub}</sup>", barmode="overlay",
                 height=430, yaxis=dict(title="probability", range=[0, _y_top(env, p)]), xaxis=dict(title="token"))
    return fig


# ----------------------------------------------------------------------------- empirical checks


def _binomial_band(p: np.ndarray, n: int, ci: float):
    from scipy import stats

    lo_q, hi_q = (1 - ci) / 2, 1 - (1 - ci) / 2
    lo = stats.binom.ppf(lo_q, n, p) / n
    hi = stats.binom.ppf(hi_q, n, p) / n
    return np.nan_to_num(lo), np.nan_to_num(hi)


def _counts_from(p: np.ndarray, tokens_or_counts) -> np.ndarray:
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
    names = _vocab(vocab, p.size)
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
    fig.add_bar(x=names, y=emp, name=f"empirical (n = {n:,})", meta="empirical",
                marker=dict(color=[PALETTE["p"] if o else PALETTE["empirical"] for o in outside]),
                hovertemplate="%{x}: %{y:.4f}<extra></extra>")
    fig.add_scatter(x=names, y=p, mode="markers", name=f"exact p with {ci:.0%} binomial band", meta="exact",
                    marker=dict(symbol="line-ew-open", size=36, color=PALETTE["p"], line=dict(width=3, color=PALETTE["p"])),
                    error_y=dict(type="data", symmetric=False, array=hi - p, arrayminus=p - lo,
                                 color=PALETTE["p"], thickness=1.5, width=10))
    tv = float(np.abs(emp - p).sum() / 2)
    sub = f"TV(empirical, p) = {tv:.4f}; {int(outside.sum())} of {p.size} tokens outside the {ci:.0%} band"
    _base_layout(fig, f"Empirical vs exact<br><sup>{sub}</sup>", height=420,
                 yaxis=dict(title="probability", range=[0, _y_top(emp, hi)]), xaxis=dict(title="token"))
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
    p, q = _pair(p, q)
    ns = sorted({int(n) for n in ns})
    if not ns or ns[0] < 1:
        raise ValueError(f"ns must be positive sample sizes, got {ns}")
    rules = [rule] if isinstance(rule, str) else list(rule)
    fig = go.Figure()
    lossless_colours = iter([PALETTE["overlap"], "#6baed6", "#08519c"] * 4)
    lossy_colours = iter([PALETTE["lossy"], "#ff7f0e", "#e377c2", "#bcbd22"] * 4)
    for r in rules:
        s = spec_sample(p, q, ns[-1], rule=r, seed=seed, **params)
        tvs = [float(np.abs(np.bincount(s.tokens[:n], minlength=p.size) / n - p).sum() / 2) for n in ns]
        colour = next(lossless_colours) if get_rule(r).lossless else next(lossy_colours)
        fig.add_scatter(x=ns, y=tvs, mode="lines+markers", name=f"{get_rule(r).name}: TV(empirical, p)",
                        meta=f"tv:{get_rule(r).name}", line=dict(color=colour))
        exact_tv = float(np.abs(rule_joint(p, q, r, **params).output.astype(np.float64) - p).sum() / 2)
        if exact_tv > 1e-12:
            fig.add_scatter(x=[ns[0], ns[-1]], y=[exact_tv, exact_tv], mode="lines",
                            name=f"{get_rule(r).name}: exact TV(output, p) = {exact_tv:.3f}",
                            meta=f"floor:{get_rule(r).name}", line=dict(dash="dot", color=colour))
    c = tv_reference_constant(p)
    fig.add_scatter(x=ns, y=[c / math.sqrt(n) for n in ns], mode="lines", name=f"{c:.3f}/√n (sampling noise)",
                    meta="reference", line=dict(dash="dash", color=PALETTE["reference"]))
    _base_layout(fig, "Distance to p shrinks like 1/√n — unless the rule is lossy", height=430,
                 xaxis=dict(type="log", title="samples n"), yaxis=dict(type="log", title="TV(empirical, p)"))
    return fig


def monte_carlo_figure(p, q, sample=None, vocab=None, ci=0.99) -> go.Figure:
    """Sampled output split by path: accepted (blue) + resampled (green) fractions vs exact parts.

    `sample` is a SpecSample (or None: empty bars). Traces: "accepted" y = accepted
    counts / n (→ min(p, q)), "resampled" y = rejected-path counts / n (→ (p − q)⁺),
    stacked; "overlap_exact" markers at min(p, q); "p" outline with the binomial band.
    """
    p, q = _pair(p, q)
    names = _vocab(vocab, p.size)
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
    fig.add_bar(x=names, y=acc_f, name="sampled & accepted (→ min(p, q))", meta="accepted", offsetgroup="s",
                marker=dict(color=PALETTE["overlap"]), hovertemplate="%{x}: %{y:.4f}<extra></extra>")
    fig.add_bar(x=names, y=res_f, base=acc_f, name="sampled after rejection (→ (p − q)⁺)", meta="resampled",
                offsetgroup="s", marker=dict(color=PALETTE["residual"]),
                hovertemplate="%{x}: %{y:.4f}<extra></extra>")
    fig.add_bar(x=names, y=p, name="p (target)", meta="p", offsetgroup="s",
                marker=dict(color=_NONE, line=dict(color=PALETTE["p"], width=3)),
                hovertemplate="%{x}: p = %{y:.4f}<extra></extra>")
    fig.add_scatter(x=names, y=ov, mode="markers", name="exact min(p, q)", meta="overlap_exact",
                    marker=dict(symbol="line-ew-open", size=40, color="#0b3d91", line=dict(width=3, color="#0b3d91")),
                    hovertemplate="%{x}: min(p, q) = %{y:.4f}<extra></extra>")
    if n:
        emp = acc_f + res_f
        tv = float(np.abs(emp - p).sum() / 2)
        sub = f"n = {n:,} samples · TV(empirical, p) = {tv:.4f} · acceptance {acc_f.sum():.3f} (exact {ov.sum():.3f})"
    else:
        sub = "press Run to sample"
    _base_layout(fig, f"Monte-Carlo check: the histogram converges to p<br><sup>{sub}</sup>", barmode="group",
                 height=440, yaxis=dict(title="fraction of samples", range=[0, _y_top(p, acc_f + res_f)]),
                 xaxis=dict(title="token"))
    return fig


# ----------------------------------------------------------------------------- pitfalls


def rule_figure(p, q, rule="lossless", vocab=None, **params) -> go.Figure:
    """One rule's exact output split into accept (blue) and reject (green) parts vs the p outline.

    Traces: "accept" y = P(x ∧ accept), "reject" y = P(x ∧ reject) stacked on it,
    "p" the target outline, "q" the draft beside it. A lossy rule over- or undershoots
    the red outline.
    """
    p, q = _pair(p, q)
    names = _vocab(vocab, p.size)
    r = get_rule(rule)
    j = rule_joint(p, q, r, **params)
    acc, rej = j.accept.astype(np.float64), j.reject.astype(np.float64)
    out = acc + rej
    tv = float(np.abs(out - p).sum() / 2)
    fig = go.Figure()
    fig.add_bar(x=names, y=acc, name="P(x ∧ accept)", meta="accept", offsetgroup="p",
                marker=dict(color=PALETTE["overlap"]), text=_labels(acc), textposition="inside",
                hovertemplate="%{x}: %{y:.4f}<extra></extra>")
    fig.add_bar(x=names, y=rej, base=acc, name="P(x ∧ reject)", meta="reject", offsetgroup="p",
                marker=dict(color=PALETTE["residual"]), text=_labels(rej), textposition="inside",
                hovertemplate="%{x}: %{y:.4f}<extra></extra>")
    fig.add_bar(x=names, y=p, name="p (target)", meta="p", offsetgroup="p",
                marker=dict(color=_NONE, line=dict(color=PALETTE["p"], width=3)),
                hovertemplate="%{x}: p = %{y:.4f}<extra></extra>")
    fig.add_bar(x=names, y=q, name="q (draft)", meta="q", offsetgroup="q",
                marker=dict(color="rgba(127,127,127,0.35)", line=dict(color=PALETTE["q"], width=1.5)),
                hovertemplate="%{x}: q = %{y:.4f}<extra></extra>")
    verdict = "lossless ✓" if tv < 1e-9 else f"NOT lossless ✗ (TV(output, p) = {tv:.4f})"
    sub = f"{r.description} · acceptance {float(j.p_accept):.3f} · {verdict}"
    _base_layout(fig, f"Rule {r.name!r}: output vs target<br><sup>{sub}</sup>", barmode="group", height=460,
                 yaxis=dict(title="probability", range=[0, _y_top(p, q, out)]), xaxis=dict(title="token"))
    return fig


def rules_figure(p, q, rules=None, vocab=None, params=None) -> go.Figure:
    """Each rule's exact output (`compare_rules`) next to the target p, TV in the legend.

    Traces: "p" first, then one per rule with meta = the rule's name and y = its output.
    """
    p, q = _pair(p, q)
    names = _vocab(vocab, p.size)
    reports = compare_rules(p, q, rules, params)
    fig = go.Figure()
    fig.add_bar(x=names, y=p, name="p (target)", meta="p",
                marker=dict(color="rgba(214,39,40,0.15)", line=dict(color=PALETTE["p"], width=3)))
    lossless_colours = iter(["#1f77b4", "#6baed6", "#08519c", "#9ecae1"] * 4)
    lossy_colours = iter(["#ff7f0e", "#8c564b", "#e377c2", "#bcbd22", "#9467bd", "#17becf"] * 4)
    for rep in reports:
        mark = "✓" if rep.tv < 1e-9 else "✗"
        colour = next(lossless_colours) if rep.tv < 1e-9 else next(lossy_colours)
        fig.add_bar(x=names, y=rep.output, name=f"{rep.rule} {mark} TV {rep.tv:.3f}", meta=rep.rule,
                    marker=dict(color=colour),
                    hovertemplate=f"{rep.rule}: " + "%{x} %{y:.4f}<extra></extra>")
    _base_layout(fig, "Output of each verification rule vs the target p (TV(output, p) in the legend)",
                 barmode="group", height=460, yaxis=dict(title="P(output = x)"), xaxis=dict(title="token"))
    fig.update_layout(legend=dict(orientation="v", yref="paper", x=1.02, xanchor="left", y=1, yanchor="top"),
                      margin=dict(r=230, b=60))
    return fig


def tradeoff_figure(p, q, ls=None, eps=None, delta=0.3) -> go.Figure:
    """Acceptance vs TV(output, p) for lenient rules (l ∈ (0, 1]) and typical acceptance (eps sweep).

    Traces: "lenient" (customdata = l), "typical" (customdata = eps), and single points
    "lossless" and "token_match" (both at TV 0).
    """
    p, q = _pair(p, q)
    ls = np.linspace(0.05, 1.0, 39) if ls is None else np.asarray(ls, dtype=np.float64)
    eps = np.geomspace(1e-3, 1.0, 40) if eps is None else np.asarray(eps, dtype=np.float64)
    if np.any(ls <= 0) or np.any(ls > 1):
        raise ValueError("lenience values l must lie in (0, 1]")

    def point(rule, **kw):
        j = rule_joint(p, q, rule, **kw)
        return float(np.abs(j.output.astype(np.float64) - p).sum() / 2), float(j.p_accept)

    len_pts = [point("lenient", l=float(l)) for l in ls]
    typ_pts = [point("typical", eps=float(e), delta=float(delta)) for e in eps]
    fig = go.Figure()
    fig.add_scatter(x=[t for t, _ in len_pts], y=[a for _, a in len_pts], customdata=ls, mode="lines+markers",
                    name="lenient: accept min(1, p/(l·q))", meta="lenient", line=dict(color=PALETTE["lossy"]),
                    hovertemplate="l = %{customdata:.2f}<br>TV %{x:.4f}<br>acceptance %{y:.3f}<extra></extra>")
    fig.add_scatter(x=[t for t, _ in typ_pts], y=[a for _, a in typ_pts], customdata=eps, mode="lines+markers",
                    name=f"typical acceptance (δ = {delta:g}, ε swept)", meta="typical",
                    line=dict(color=PALETTE["rejected"]),
                    hovertemplate="ε = %{customdata:.3g}<br>TV %{x:.4f}<br>acceptance %{y:.3f}<extra></extra>")
    for rule, symbol in (("lossless", "star"), ("token_match", "diamond")):
        tv, a = point(rule)
        fig.add_scatter(x=[tv], y=[a], mode="markers+text", text=[rule], textposition="middle right",
                        name=f"{rule} (lossless)", meta=rule,
                        marker=dict(symbol=symbol, size=16, color=PALETTE["overlap"]))
    _base_layout(fig, "Trading exactness for acceptance: lossy relaxations move right", height=440,
                 xaxis=dict(title="TV(output, p): how far the output is from the target"),
                 yaxis=dict(title="acceptance rate", range=[0, 1.05]))
    return fig


# ----------------------------------------------------------------------------- γ-step


DEFAULT_ALPHAS = (0.5, 0.7, 0.8, 0.9)


def _expected_tokens_traces(alphas, gamma_max):
    gammas = np.arange(gamma_max + 1)
    traces = []
    for a in alphas:
        ys = [expected_tokens(float(a), int(g)) for g in gammas]
        traces.append(go.Scatter(x=gammas, y=ys, mode="lines+markers", name=f"α = {a:g}", meta=f"alpha={a:g}"))
    return traces


def expected_tokens_figure(alphas=DEFAULT_ALPHAS, gamma_max=10) -> go.Figure:
    """E[tokens per verify step] = (1 − α^(γ+1)) / (1 − α) vs γ for several α.

    Traces: "alpha=<α>" per α (x = γ = 0..gamma_max), and dotted "limit:<α>" at 1/(1 − α).
    """
    gamma_max = int(gamma_max)
    if gamma_max < 0:
        raise ValueError(f"gamma_max must be >= 0, got {gamma_max}")
    fig = go.Figure(_expected_tokens_traces(alphas, gamma_max))
    for a in alphas:
        if a < 1:
            fig.add_scatter(x=[0, gamma_max], y=[1 / (1 - a)] * 2, mode="lines", meta=f"limit:{a:g}",
                            name=f"limit 1/(1 − α) = {1 / (1 - a):.2f}", showlegend=False,
                            line=dict(dash="dot", width=1, color=PALETTE["reference"]))
    _base_layout(fig, "Tokens per verify step vs draft length γ (i.i.d. acceptance α)", height=420,
                 xaxis=dict(title="γ (drafted tokens per step)", dtick=1), yaxis=dict(title="E[tokens per step]"))
    return fig


def _speedup_grid(c, alphas, gammas):
    alphas = np.asarray(alphas, dtype=np.float64)
    gammas = np.asarray(gammas, dtype=np.int64)
    z = np.array([[speedup(float(a), int(g), c) for g in gammas] for a in alphas])
    best = gammas[np.argmax(z, axis=1)]
    return alphas, gammas, z, best


def speedup_heatmap(c=0.1, alphas=None, gammas=None) -> go.Figure:
    """Expected speedup (1 − α^(γ+1)) / ((1 − α)(γ c + 1)) over (γ, α); the best γ per α marked.

    Traces: "speedup" heat map (z[i][j] = speedup(alphas[i], gammas[j], c)) and
    "best_gamma" markers (x = the best γ in `gammas` for each α).
    """
    alphas = np.round(np.arange(0.05, 1.0, 0.05), 2) if alphas is None else alphas
    gammas = np.arange(0, 11) if gammas is None else gammas
    alphas, gammas, z, best = _speedup_grid(c, alphas, gammas)
    fig = go.Figure()
    fig.add_heatmap(x=gammas, y=alphas, z=z, meta="speedup", colorscale="Viridis", zmin=0,
                    colorbar=dict(title="speedup"),
                    hovertemplate="γ = %{x}<br>α = %{y}<br>speedup %{z:.2f}×<extra></extra>")
    fig.add_scatter(x=best, y=alphas, mode="markers", name="best γ for this α", meta="best_gamma",
                    marker=dict(symbol="star", size=12, color="white", line=dict(color="black", width=1)))
    _base_layout(fig, f"Speedup over plain decoding, draft/target cost c = {c:g}", height=460,
                 xaxis=dict(title="γ (drafted tokens per step)", dtick=1), yaxis=dict(title="α (acceptance rate)"))
    return fig


def simulate_accepted_lengths(alpha, gamma, n, seed=0) -> np.ndarray:
    """(n,) accepted drafts per verify step when each draft is accepted i.i.d. with prob α."""
    rng = np.random.default_rng(seed)
    if not 0 <= alpha <= 1:
        raise ValueError(f"alpha must be in [0, 1], got {alpha!r}")
    gamma, n = int(gamma), int(n)
    if gamma < 1 or n < 1:
        raise ValueError(f"gamma and n must be >= 1, got gamma={gamma}, n={n}")
    ok = rng.random((n, gamma)) < alpha
    return np.where(ok.all(axis=1), gamma, np.argmin(ok, axis=1))


def accepted_length_figure(accepted_counts, alpha, gamma) -> go.Figure:
    """Histogram of accepted drafts per verify step vs the exact α^k (1 − α) / α^γ law.

    `accepted_counts`: per-step accepted numbers in 0..γ (or a ChainSample). Traces:
    "empirical" (fractions, x = 0..γ) and "exact" (`accepted_length_dist`).
    """
    k = np.asarray(getattr(accepted_counts, "accepted_per_step", accepted_counts))
    gamma = int(gamma)
    exact = accepted_length_dist(alpha, gamma)
    if k.ndim != 1 or k.size == 0:
        raise ValueError("accepted_counts must be a non-empty 1-D array of per-step accepted counts")
    if np.any(k < 0) or np.any(k > gamma) or np.any(np.mod(k, 1) != 0):
        raise ValueError(f"accepted counts must be integers in 0..γ = {gamma}")
    emp = np.bincount(k.astype(np.int64), minlength=gamma + 1) / k.size
    xs = np.arange(gamma + 1)
    fig = go.Figure()
    fig.add_bar(x=xs, y=emp, name=f"empirical ({k.size:,} steps)", meta="empirical",
                marker=dict(color=PALETTE["empirical"]))
    fig.add_scatter(x=xs, y=exact, mode="markers", name="exact α^k (1 − α), α^γ at k = γ", meta="exact",
                    marker=dict(symbol="line-ew-open", size=30, color=PALETTE["p"], line=dict(width=3, color=PALETTE["p"])))
    sub = (f"mean tokens per step {np.mean(k) + 1:.3f} (exact {expected_tokens(alpha, gamma):.3f}) "
           f"for α = {alpha:g}, γ = {gamma}")
    _base_layout(fig, f"Accepted drafts per verify step<br><sup>{sub}</sup>", height=420,
                 xaxis=dict(title="accepted drafts k", dtick=1), yaxis=dict(title="fraction of steps"))
    return fig


def gamma_figure(alpha, gamma, c=0.1, alphas=DEFAULT_ALPHAS, gamma_max=10, accepted_counts=None) -> go.Figure:
    """The γ-step dashboard in one figure (one FigureWidget): three panels.

    Traces: "alpha=<α>" curves + "selected" (the chosen α) + "current" (marker at γ) in
    panel 1; "speedup" heat map, "best_gamma" and "current_cell" in panel 2; "empirical"
    and "exact" accepted-length distributions in panel 3 (empirical omitted if no counts).
    """
    gamma, gamma_max = int(gamma), int(gamma_max)
    if gamma < 1:
        raise ValueError(f"gamma must be >= 1, got {gamma}")
    gamma_max = max(gamma_max, gamma)
    fig = make_subplots(rows=1, cols=3, horizontal_spacing=0.11,
                        subplot_titles=("tokens per step vs γ", f"speedup, c = {c:g} (★ best γ)",
                                        f"accepted per step (γ = {gamma})"))
    for t in _expected_tokens_traces(alphas, gamma_max):
        t.update(line=dict(width=1), marker=dict(size=4), opacity=0.6)
        fig.add_trace(t, row=1, col=1)
    gs = np.arange(gamma_max + 1)
    fig.add_scatter(x=gs, y=[expected_tokens(alpha, int(g)) for g in gs], mode="lines", meta="selected",
                    name=f"α = {alpha:.2f} (selected)", line=dict(color="black", width=3), row=1, col=1)
    fig.add_scatter(x=[gamma], y=[expected_tokens(alpha, gamma)], mode="markers", meta="current",
                    name="current γ", marker=dict(size=14, color=PALETTE["p"], symbol="circle"), row=1, col=1)
    alphas_grid, gammas_grid, z, best = _speedup_grid(c, np.round(np.arange(0.05, 1.0, 0.05), 2), gs)
    fig.add_heatmap(x=gammas_grid, y=alphas_grid, z=z, meta="speedup", colorscale="Viridis", zmin=0,
                    colorbar=dict(title="×", x=0.635, xanchor="left", len=0.85, thickness=10), row=1, col=2,
                    hovertemplate="γ = %{x}<br>α = %{y}<br>speedup %{z:.2f}×<extra></extra>")
    fig.add_scatter(x=best, y=alphas_grid, mode="markers", meta="best_gamma", name="best γ",
                    marker=dict(symbol="star", size=9, color="white", line=dict(color="black", width=1)),
                    row=1, col=2)
    fig.add_scatter(x=[gamma], y=[alpha], mode="markers", meta="current_cell", name="(γ, α) selected",
                    marker=dict(symbol="circle-open", size=16, color=PALETTE["p"], line=dict(width=3)),
                    row=1, col=2)
    ks = np.arange(gamma + 1)
    if accepted_counts is not None:
        k = np.asarray(accepted_counts).astype(np.int64)
        emp = np.bincount(np.clip(k, 0, gamma), minlength=gamma + 1)[: gamma + 1] / max(k.size, 1)
    else:
        emp = np.zeros(gamma + 1)
    fig.add_bar(x=ks, y=emp, meta="empirical", name="simulated steps", marker=dict(color=PALETTE["empirical"]),
                row=1, col=3)
    fig.add_scatter(x=ks, y=accepted_length_dist(alpha, gamma), mode="markers", meta="exact",
                    name="exact distribution",
                    marker=dict(symbol="line-ew-open", size=18, color=PALETTE["p"], line=dict(width=3, color=PALETTE["p"])),
                    row=1, col=3)
    fig.update_xaxes(title_text="γ", dtick=2, row=1, col=1)
    fig.update_xaxes(title_text="γ", dtick=2, row=1, col=2)
    fig.update_xaxes(title_text="accepted k", dtick=1 if gamma <= 12 else 2, row=1, col=3)
    fig.update_yaxes(title_text="tokens / step", row=1, col=1)
    fig.update_yaxes(title_text="α", row=1, col=2)
    fig.update_yaxes(title_text="fraction", row=1, col=3)
    title = (f"γ-step: α = {alpha:.2f}, γ = {gamma}, c = {c:g} → {expected_tokens(alpha, gamma):.2f} tokens/step, "
             f"speedup {speedup(alpha, gamma, c):.2f}×")
    _base_layout(fig, title, height=430, showlegend=False)
    return fig


# ----------------------------------------------------------------------------- multi-draft


def multidraft_figure(p, q, k_max=4, vocab=None) -> go.Figure:
    """k = 1..k_max i.i.d. drafts: acceptance and TV(output, p), with and without the residual update.

    Traces (x = k): "acceptance:update", "acceptance:naive", "tv:update", "tv:naive";
    panel 3 (x = tokens): "p", "output:update", "output:naive" at k = k_max.
    """
    p, q = _pair(p, q)
    names = _vocab(vocab, p.size)
    k_max = int(k_max)
    if k_max < 1:
        raise ValueError(f"k_max must be >= 1, got {k_max}")
    ks = np.arange(1, k_max + 1)
    fig = make_subplots(rows=1, cols=3, horizontal_spacing=0.08,
                        subplot_titles=("P(some draft accepted)", "TV(output, p)", f"output with k = {k_max} drafts"))
    styles = {True: ("update", "residual update R ← (R − q)⁺/Z (lossless)", PALETTE["overlap"], "solid"),
              False: ("naive", "naive: always compare with p", PALETTE["lossy"], "dash")}
    outs = {}
    for upd in (True, False):
        key, label, colour, dash = styles[upd]
        acc = [multi_draft_acceptance_rate(p, q, int(k), update_residual=upd) for k in ks]
        outs[upd] = [multi_draft_output_dist(p, q, int(k), update_residual=upd).astype(np.float64) for k in ks]
        tvs = [float(np.abs(o - p).sum() / 2) for o in outs[upd]]
        fig.add_scatter(x=ks, y=acc, mode="lines+markers", meta=f"acceptance:{key}", name=label,
                        line=dict(color=colour, dash=dash), legendgroup=key, row=1, col=1)
        fig.add_scatter(x=ks, y=tvs, mode="lines+markers", meta=f"tv:{key}", name=label, showlegend=False,
                        line=dict(color=colour, dash=dash), legendgroup=key, row=1, col=2)
    fig.add_bar(x=names, y=p, meta="p", name="p (target)",
                marker=dict(color=_NONE, line=dict(color=PALETTE["p"], width=3)), row=1, col=3)
    for upd in (True, False):
        key, label, colour, _ = styles[upd]
        fig.add_bar(x=names, y=outs[upd][-1], meta=f"output:{key}", name=f"output ({key})",
                    marker=dict(color=colour, opacity=0.75), showlegend=False, row=1, col=3)
    fig.update_xaxes(title_text="drafts k", dtick=1, row=1, col=1)
    fig.update_xaxes(title_text="drafts k", dtick=1, row=1, col=2)
    fig.update_yaxes(range=[0, 1.05], row=1, col=1)
    _base_layout(fig, "Multi-draft (SpecInfer-style) verification: more drafts, more acceptance — "
                      "lossless only with the residual update", height=430, barmode="group")
    return fig


# ----------------------------------------------------------------------------- standardisation


def _as_sampling(s) -> Sampling | None:
    if s is None or isinstance(s, Sampling):
        return s
    if isinstance(s, dict):
        return Sampling(**s)
    if isinstance(s, (int, float)):
        return Sampling(temperature=float(s))
    raise ValueError(f"expected a Sampling, a dict of its fields or a temperature, got {s!r}")


def _describe(s: Sampling) -> str:
    parts = ["greedy" if s.temperature == 0 else f"T={s.temperature:g}"]
    if s.top_k:
        parts.append(f"top-k={s.top_k}")
    if s.top_p is not None and s.top_p < 1:
        parts.append(f"top-p={s.top_p:g}")
    return ", ".join(parts)


def standardization_figure(target_logits, draft_logits, intended=None, target_used=None, draft_sampled=None,
                           draft_ratio=None, vocab=None) -> go.Figure:
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
    names = _vocab(vocab, m.output.size)
    p_used = standardize(target_logits, target_used.temperature, target_used.top_k, target_used.top_p)
    q_s = standardize(draft_logits, draft_sampled.temperature, draft_sampled.top_k, draft_sampled.top_p)
    fig = go.Figure()
    fig.add_bar(x=names, y=q_s, name=f"q sampled ({_describe(draft_sampled)})", meta="q_sampled",
                marker=dict(color="rgba(127,127,127,0.35)", line=dict(color=PALETTE["q"], width=1)))
    fig.add_bar(x=names, y=p_used, name=f"p in the ratio ({_describe(target_used)})", meta="p_used",
                marker=dict(color="rgba(44,160,44,0.35)", line=dict(color=PALETTE["residual"], width=1)))
    fig.add_bar(x=names, y=m.output, name="actual output", meta="output", marker=dict(color=PALETTE["overlap"]))
    fig.add_bar(x=names, y=m.intended, name=f"intended target ({_describe(intended)})", meta="intended",
                marker=dict(color=_NONE, line=dict(color=PALETTE["p"], width=3)))
    ok = m.tv < 1e-9
    verdict = "lossless ✓" if ok else f"TV(output, intended) = {m.tv:.4f} ✗"
    sub = (f"draft q in the ratio: {_describe(draft_ratio)} · {verdict}"
           + ("" if ok else " — fold temperature/top-k/top-p into p and q the same way before verifying"))
    _base_layout(fig, f"Standardised sampling: ratio and samples must use the same distributions<br><sup>{sub}</sup>",
                 barmode="group", height=440, yaxis=dict(title="probability"), xaxis=dict(title="token"))
    return fig


# ----------------------------------------------------------------------------- numerics


def numerics_figure(target_logits=None, draft_logits=None, dtypes=("float64", "float32", "float16", "bfloat16"),
                    temperature=1.0,
                    draft_dtype=None, report=None) -> go.Figure:
    """The lossless output computed exactly in fp64 / fp32 / fp16 / bf16, vs the fp64 target p.

    Left: per dtype, TV(p in dtype, p) ("p_tv"), TV(output in dtype, p) ("out_tv") and
    TV(output, p in dtype) ("verify_tv"), log scale (exact zeros are not drawn).
    Right: |output(x) − p(x)| per token, tokens sorted by p, one trace per dtype
    ("abs_err:<dtype>"). No sampling: everything is exact arithmetic in that dtype.
    Pass `report` (from `specviz.numerics.precision_report`) to reuse a computed one.
    """
    from . import numerics  # torch is imported only when a numerics figure is built

    if report is None:
        if target_logits is None or draft_logits is None:
            target_logits, draft_logits = numerics.example_logits()
        report = numerics.precision_report(target_logits, draft_logits, dtypes, temperature, draft_dtype)
    p64 = None
    if target_logits is not None:
        p64 = numerics.softmax_in(target_logits, "float64", temperature).numpy()
    names = [r.dtype for r in report]
    fig = make_subplots(rows=1, cols=2, column_widths=[0.4, 0.6], horizontal_spacing=0.1,
                        subplot_titles=("distance from the fp64 target p", "|output(x) − p(x)| per token"))
    for key, label, colour in (("p_tv", "TV(p in dtype, p): the target itself drifts", PALETTE["rejected"]),
                               ("verify_tv", "TV(output, p in dtype): verification arithmetic", PALETTE["residual"]),
                               ("out_tv", "TV(output, p): what you get", PALETTE["p"])):
        vals = [getattr(r, key) for r in report]
        fig.add_bar(x=names, y=vals, meta=key, name=label, marker=dict(color=colour),
                    hovertemplate="%{x}: %{y:.3e}<extra>" + key + "</extra>", row=1, col=1)
    ref = p64 if p64 is not None else report[0].p
    order = np.argsort(-ref, kind="stable")
    ranks = np.arange(1, ref.size + 1)
    for r in report:
        err = np.abs(r.output - ref)[order]
        fig.add_scatter(x=ranks, y=err, mode="markers", meta=f"abs_err:{r.dtype}",
                        name=f"{r.dtype}: max {r.max_abs:.1e}" + (f", {r.underflow} underflow(s)" if r.underflow else ""),
                        marker=dict(size=6, color=PALETTE["dtypes"].get(r.dtype)), row=1, col=2)
    fig.update_yaxes(type="log", exponentformat="power", row=1, col=1)
    fig.update_yaxes(type="log", exponentformat="power", row=1, col=2)
    fig.update_xaxes(title_text="dtype", row=1, col=1)
    fig.update_xaxes(title_text="token rank (by p)", row=1, col=2)
    V = ref.size
    _base_layout(fig, f"Lossless within hardware numerics: one exact step in each dtype (V = {V}, T = {temperature:g})",
                 height=470, barmode="group")
    return fig


# ----------------------------------------------------------------------------- export


def find_browser() -> str | None:
    """A Chrome/Chromium for static export: $BROWSER_PATH, /usr/bin/chromium, or one on PATH."""
    env = os.environ.get("BROWSER_PATH")
    candidates = [env, "/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]
    candidates += [shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome", "chrome")]
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


_NO_BROWSER = ("static image export (PNG/SVG/PDF) needs Chrome or Chromium through kaleido, and none was found. "
               "Install one (Debian/Ubuntu: `apt-get install chromium`, or `make chromium`), or point "
               "BROWSER_PATH at an existing chrome/chromium binary. HTML export works without it.")


def export_figure(fig, path, width=None, height=None, scale=None, include_plotlyjs=True) -> Path:
    """Write `fig` to `path`: .html (standalone, plotly.js embedded for offline rooms) or .png/.svg/.pdf/.jpeg/.webp.

    Static formats use kaleido, which drives a Chrome/Chromium; without one a
    RuntimeError explains how to get it. Returns the written path.
    """
    path = Path(path)
    fmt = path.suffix.lower().lstrip(".")
    if fmt in ("html", "htm"):
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.write_html(str(path), include_plotlyjs=include_plotlyjs, full_html=True,
                       config={"displaylogo": False})
        return path
    if fmt not in ("png", "svg", "pdf", "jpg", "jpeg", "webp"):
        raise ValueError(f"unsupported export format {path.suffix!r}: use .html, .png, .svg, .pdf, .jpeg or .webp")
    browser = find_browser()
    if browser is not None and not os.environ.get("BROWSER_PATH"):
        os.environ["BROWSER_PATH"] = browser  # kaleido 1.x reads it
    try:
        import kaleido  # noqa: F401
    except ImportError:  # pragma: no cover - kaleido is a dependency
        raise RuntimeError("static export needs the `kaleido` package: pip install 'kaleido>=1'") from None
    path.parent.mkdir(parents=True, exist_ok=True)
    if width is None and fig.layout.width is None:
        width = 1000  # slides: wider than kaleido's 700 px default
    try:
        fig.write_image(str(path), format="jpeg" if fmt == "jpg" else fmt, width=width, height=height, scale=scale)
    except Exception as e:  # kaleido raises RuntimeError/ChromeNotFoundError without a browser
        text = str(e)
        if browser is None or "chrome" in text.lower() and "install" in text.lower():
            raise RuntimeError(_NO_BROWSER) from e
        raise
    return path


__all__ = [
    "PALETTE", "MONEY_STEPS", "DEFAULT_NS", "DEFAULT_ALPHAS", "acceptance_figure", "accepted_length_figure",
    "convergence_figure", "default_vocab", "empirical_figure", "expected_tokens_figure", "export_figure",
    "find_browser", "gamma_figure", "importance_figure", "joint_table", "money_diagram", "money_diagram_patch", "apply_patch", "money_summary",
    "monte_carlo_figure", "multidraft_figure", "numerics_figure", "rejection_figure", "rule_figure",
    "rules_figure", "simulate_accepted_lengths", "speedup_heatmap", "standardization_figure", "trace_by_meta",
    "trace_metas", "tradeoff_figure", "tv_reference_constant",
]
