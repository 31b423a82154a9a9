"""Figure builders for real-model speculative decoding: statistics in, `plotly.graph_objects.Figure` out.

Same conventions as `specviz.figures`: one colour language (`PALETTE`, plus `FATE_COLORS`
for the fate of each generated token), every trace tagged with a stable `meta` name, and
for the figures a live view redraws often, a `*_patch` function returning the data part
as plain dicts ({"data": {meta: props}, "layout": props}) that `specviz.figures.apply_patch`
applies to a FigureWidget in place. The figure builders are built from the same patches,
so a figure and a patched widget always show the same numbers.

>>> from specviz.lm import NGramModel, Pair, speculative_generate
>>> from specviz.lm.stats import spec_stats
>>> pair = Pair(NGramModel.random(4, seed=0), NGramModel.random(4, seed=1))
>>> st = spec_stats(speculative_generate(pair, [0], 100, 3, seed=0))
>>> fig = per_position_figure(st)
>>> [t.meta for t in fig.data]
['unconditional', 'conditional', 'theory_unconditional', 'alpha']
>>> list(trace_by_meta(accepted_hist_figure(st), "measured").y) == st.accepted_hist.tolist()
True
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from ..figures import PALETTE, _base_layout, apply_patch, money_diagram, trace_by_meta  # noqa: F401

FATES = ("accepted", "resampled", "bonus", "target")
FATE_COLORS = {
    "accepted": PALETTE["overlap"],  # blue: a draft token the target kept (the min(p, q) part)
    "resampled": PALETTE["residual"],  # green: drawn from (p - q)+ after a rejection
    "bonus": "#e377c2",  # pink: the extra token from p when all γ drafts pass
    "target": PALETTE["p"],  # red: a plain draw from the target (autoregressive / γ = 0)
}
"""Colour of each token fate, matching the money diagram (blue overlap, green residual)."""

FATE_LABELS = {
    "accepted": "accepted draft",
    "resampled": "resampled after a rejection",
    "bonus": "bonus token (all γ drafts accepted)",
    "target": "plain target draw",
}

OTHER = "other"


def _nan_list(values) -> list:
    """Floats with NaN -> None (plotly draws a gap; JSON has no NaN)."""
    return [None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v) for v in values]


def _empty_stats(gamma: int):
    g = int(gamma)
    nan = float("nan")
    return dict(gamma=g, per_position=np.zeros(g), per_position_conditional=np.full(g, nan),
                accepted_hist=np.zeros(g + 1, np.int64), accepted_hist_theory=np.zeros(g + 1), alpha=nan, steps=0)


def _get(stats, name, gamma=4):
    if stats is None:
        return _empty_stats(gamma)[name]
    return getattr(stats, name)


# ----------------------------------------------------------------------------- per-position acceptance


def per_position_patch(stats=None, gamma: int = 4) -> dict:
    """Data of `per_position_figure` (stats None: an empty plot for `gamma` positions)."""
    g = int(_get(stats, "gamma", gamma)) if stats is not None else int(gamma)
    xs = list(range(1, g + 1))
    alpha = float(_get(stats, "alpha", g))
    uncond = np.asarray(_get(stats, "per_position", g), dtype=float)
    cond = np.asarray(_get(stats, "per_position_conditional", g), dtype=float)
    has_alpha = not math.isnan(alpha)
    theory = [min(alpha, 1.0) ** i for i in xs] if has_alpha else [None] * g
    steps = int(_get(stats, "steps", g))
    sub = (f"α = mean Σ min(p, q) = {alpha:.3f} over {steps} verify steps: conditional ≈ α, unconditional ≈ α^i"
           if has_alpha else "press Generate: bars fill in as the target verifies drafts")
    return {
        "data": {
            "unconditional": dict(x=xs, y=_nan_list(uncond)),
            "conditional": dict(x=xs, y=_nan_list(cond)),
            "theory_unconditional": dict(x=xs, y=theory),
            "alpha": dict(x=[0.5, g + 0.5], y=[alpha, alpha] if has_alpha else [None, None]),
        },
        "layout": {"title_subtitle_text": sub, "xaxis_range": [0.4, g + 0.6]},
    }


def per_position_figure(stats=None, gamma: int = 4, height: int = 360) -> go.Figure:
    """Acceptance per draft position i = 1..γ: unconditional (vLLM) and conditional (sglang).

    Traces: "unconditional" bars (accepted at i / steps), "conditional" line (accepted at i /
    steps that reached i), "theory_unconditional" markers α^i and "alpha" the dashed level α
    (what the conditional rate is if acceptances are i.i.d.). Values equal `spec_stats`.
    """
    patch = per_position_patch(stats, gamma)
    d = patch["data"]
    fig = go.Figure()
    fig.add_bar(name="unconditional: accepted / steps", meta="unconditional",
                marker=dict(color=PALETTE["overlap"]), hovertemplate="position %{x}: %{y:.3f}<extra></extra>",
                **d["unconditional"])
    fig.add_scatter(name="conditional: accepted / reached", meta="conditional", mode="lines+markers",
                    line=dict(color=PALETTE["residual"], width=2), marker=dict(size=9),
                    hovertemplate="position %{x}: %{y:.3f}<extra></extra>", **d["conditional"])
    fig.add_scatter(name="theory α^i", meta="theory_unconditional", mode="markers",
                    marker=dict(symbol="line-ew-open", size=26, color=PALETTE["p"], line=dict(width=3, color=PALETTE["p"])),
                    hovertemplate="α^%{x} = %{y:.3f}<extra></extra>", **d["theory_unconditional"])
    fig.add_scatter(name="α", meta="alpha", mode="lines", line=dict(dash="dash", color=PALETTE["reference"], width=2),
                    hoverinfo="skip", **d["alpha"])
    _base_layout(fig, "Acceptance per draft position<br>" + patch["layout"]["title_subtitle_text"], height=height,
                 xaxis=dict(title="draft position i", dtick=1, range=patch["layout"]["xaxis_range"]),
                 yaxis=dict(title="acceptance rate", range=[0, 1.05]))
    return fig


# ----------------------------------------------------------------------------- accepted-length histogram


def accepted_hist_patch(stats=None, gamma: int = 4) -> dict:
    g = int(_get(stats, "gamma", gamma)) if stats is not None else int(gamma)
    xs = list(range(g + 1))
    hist = np.asarray(_get(stats, "accepted_hist", g), dtype=float)
    theory = np.asarray(_get(stats, "accepted_hist_theory", g), dtype=float)
    alpha = float(_get(stats, "alpha", g))
    if stats is not None and stats.steps:
        sub = (f"{int(hist.sum())} full verify steps; theory: α^k (1 − α), α^γ at k = γ, for the measured α = "
               f"{alpha:.3f}; tokens/step {stats.mean_acceptance_length:.2f} (theory {stats.expected_tokens_per_step:.2f})")
    else:
        sub = "theory: α^k (1 − α) for k < γ, α^γ at k = γ, from the measured α"
    return {
        "data": {"measured": dict(x=xs, y=hist.tolist()), "theory": dict(x=xs, y=theory.tolist())},
        "layout": {"title_subtitle_text": sub, "xaxis_range": [-0.6, g + 0.6]},
    }


def accepted_hist_figure(stats=None, gamma: int = 4, height: int = 360) -> go.Figure:
    """Accepted drafts per verify step: measured counts vs the counts theory expects from α.

    Traces: "measured" bars (`spec_stats(...).accepted_hist`, x = k = 0..γ) and "theory"
    markers (`accepted_hist_theory`).
    """
    patch = accepted_hist_patch(stats, gamma)
    d = patch["data"]
    fig = go.Figure()
    fig.add_bar(name="measured steps", meta="measured", marker=dict(color=PALETTE["empirical"]),
                hovertemplate="k = %{x}: %{y} steps<extra></extra>", **d["measured"])
    fig.add_scatter(name="theory from α", meta="theory", mode="markers",
                    marker=dict(symbol="line-ew-open", size=26, color=PALETTE["p"], line=dict(width=3, color=PALETTE["p"])),
                    hovertemplate="k = %{x}: %{y:.1f} expected<extra></extra>", **d["theory"])
    _base_layout(fig, "Accepted drafts per verify step<br>" + patch["layout"]["title_subtitle_text"], height=height,
                 xaxis=dict(title="accepted drafts k", dtick=1, range=patch["layout"]["xaxis_range"]),
                 yaxis=dict(title="verify steps", rangemode="tozero"))
    return fig


# ----------------------------------------------------------------------------- tokens per second


THROUGHPUT_BARS = ("speculative", "autoregressive")


def throughput_patch(spec_tps=float("nan"), ar_tps=float("nan"), predicted_tps=float("nan")) -> dict:
    def num(v):
        return None if v is None or not np.isfinite(v) else float(v)

    s, a, pr = num(spec_tps), num(ar_tps), num(predicted_tps)
    if s and a:
        sub = f"measured speedup {s / a:.2f}×" + (f" (cost model predicts {pr / a:.2f}×)" if pr else "")
    elif s:
        sub = "autoregressive baseline not run yet"
    else:
        sub = "press Generate"
    top = max([v for v in (s, a, pr) if v] + [1.0]) * 1.2
    return {
        "data": {
            "tokens_per_second": dict(x=list(THROUGHPUT_BARS), y=[s, a],
                                      text=[f"{v:.0f}" if v else "" for v in (s, a)]),
            "predicted": dict(x=["speculative"], y=[pr]),
        },
        "layout": {"title_subtitle_text": sub, "yaxis_range": [0, top]},
    }


def throughput_figure(spec_tps=float("nan"), ar_tps=float("nan"), predicted_tps=float("nan"),
                      height: int = 360) -> go.Figure:
    """Generated tokens per second: speculative vs autoregressive decoding of the same target.

    Traces: "tokens_per_second" bars (x = "speculative", "autoregressive"; None until
    measured) and "predicted" (the cost-model prediction for the speculative run).
    """
    patch = throughput_patch(spec_tps, ar_tps, predicted_tps)
    d = patch["data"]
    fig = go.Figure()
    fig.add_bar(name="measured tokens/s", meta="tokens_per_second", textposition="outside",
                marker=dict(color=[PALETTE["overlap"], PALETTE["p"]]),
                hovertemplate="%{x}: %{y:.1f} tokens/s<extra></extra>", **d["tokens_per_second"])
    fig.add_scatter(name="cost-model prediction", meta="predicted", mode="markers",
                    marker=dict(symbol="line-ew-open", size=40, color="black", line=dict(width=3, color="black")),
                    hovertemplate="predicted %{y:.1f} tokens/s<extra></extra>", **d["predicted"])
    _base_layout(fig, "Tokens per second<br>" + patch["layout"]["title_subtitle_text"], height=height,
                 xaxis=dict(title="decoding", type="category"),
                 yaxis=dict(title="generated tokens / s", range=patch["layout"]["yaxis_range"]))
    return fig


# ----------------------------------------------------------------------------- γ sweep


def gamma_sweep_patch(gammas=(), measured=(), bound=(), predicted=()) -> dict:
    gammas = [int(g) for g in gammas]
    m, b, pr = _nan_list(measured), _nan_list(bound), _nan_list(predicted)
    best = ""
    finite = [(v, g) for g, v in zip(gammas, m) if v is not None]
    if finite:
        v, g = max(finite)
        best = f"best measured γ = {g} ({v:.2f}×)"
    hi = max(8, max(gammas) if gammas else 8)
    top = max([v for v in m + b + pr if v is not None] + [1.5]) * 1.15
    return {
        "data": {"measured": dict(x=gammas, y=m), "bound": dict(x=gammas, y=b), "predicted": dict(x=gammas, y=pr),
                 "break_even": dict(x=[0.5, hi + 0.5], y=[1, 1])},
        "layout": {"title_subtitle_text": best or "press “γ sweep” to run γ = 1..8 on the prompt",
                   "yaxis_range": [0, top], "xaxis_range": [0.5, hi + 0.5]},
    }


def gamma_sweep_figure(gammas=(), measured=(), bound=(), predicted=(), height: int = 380) -> go.Figure:
    """Measured speedup over autoregressive decoding vs γ, against the theory curves.

    Traces: "measured" (speculative tokens/s ÷ autoregressive tokens/s), "bound" (the textbook
    (1 − α^(γ+1)) / ((1 − α)(γc + 1)) at the measured α and c), "predicted" (the cost model
    from measured draft-token and verify-step times) and "break_even" (speedup 1).
    """
    patch = gamma_sweep_patch(gammas, measured, bound, predicted)
    d = patch["data"]
    fig = go.Figure()
    fig.add_scatter(name="measured", meta="measured", mode="lines+markers",
                    line=dict(color=PALETTE["empirical"], width=3), marker=dict(size=10),
                    hovertemplate="γ = %{x}: %{y:.2f}× measured<extra></extra>", **d["measured"])
    fig.add_scatter(name="textbook bound", meta="bound", mode="lines+markers",
                    line=dict(color=PALETTE["p"], dash="dot", width=2),
                    hovertemplate="γ = %{x}: bound %{y:.2f}×<extra></extra>", **d["bound"])
    fig.add_scatter(name="cost model (measured step times)", meta="predicted", mode="lines+markers",
                    line=dict(color=PALETTE["overlap"], dash="dash", width=2),
                    hovertemplate="γ = %{x}: predicted %{y:.2f}×<extra></extra>", **d["predicted"])
    fig.add_scatter(name="no speedup", meta="break_even", mode="lines", showlegend=False, hoverinfo="skip",
                    line=dict(color="#999", width=1), **d["break_even"])
    _base_layout(fig, "Speedup vs γ: measured against theory<br>" + patch["layout"]["title_subtitle_text"],
                 height=height, xaxis=dict(title="γ (drafted tokens per verify step)", dtick=1,
                                           range=patch["layout"]["xaxis_range"]),
                 yaxis=dict(title="speedup over autoregressive", range=patch["layout"]["yaxis_range"]))
    return fig


# ----------------------------------------------------------------------------- one position's p and q


def token_label(tokenizer, token_id: int) -> str:
    """A short visible name for one token: whitespace made visible, partial UTF-8 as its id."""
    if tokenizer is None:
        return f"#{int(token_id)}"
    try:
        s = tokenizer.decode([int(token_id)], skip_special_tokens=False, clean_up_tokenization_spaces=False)
    except Exception:  # noqa: BLE001 - a name must never fail
        s = ""
    if not s or "\ufffd" in s:
        return f"#{int(token_id)}"
    s = s.replace(" ", "␣").replace("\n", "↵").replace("\t", "⇥").replace("\r", "␍")
    return s if len(s) <= 12 else s[:11] + "…"


def distinct_labels(tokenizer, ids) -> list[str]:
    """`token_label` of each id, made distinct (an id suffix on collisions, never "other")."""
    names = [token_label(tokenizer, i) for i in ids]
    seen: dict[str, int] = {}
    for n in names:
        seen[n] = seen.get(n, 0) + 1
    out = []
    for i, n in zip(ids, names):
        if seen[n] > 1 or n == OTHER:
            n = f"{n}·#{int(i)}"
        out.append(n)
    return out


def top_union(top_p, top_q, extra_ids=()) -> list[int]:
    """Token ids of both top lists (and `extra_ids`), without repeats, in order of appearance."""
    out: list[int] = []
    for i, _ in list(top_p) + list(top_q):
        if int(i) not in out:
            out.append(int(i))
    for i in extra_ids:
        if i is not None and int(i) not in out:
            out.append(int(i))
    return out


def with_other(ids, p_full=None, q_full=None, top_p=(), top_q=()):
    """p and q restricted to `ids` plus an "other" bucket 1 − Σ, so both still sum to 1.

    Values come from the full distributions `p_full` / `q_full` (exact) when given, else
    from the recorded top lists (a token missing from a list then counts as 0 there and its
    true mass sits in "other"). Tokens are ordered by p, then q, descending; "other" last.
    Returns (ids, p_vec, q_vec) with len(p_vec) = len(ids) + 1.
    """
    def values(full, top):
        if full is not None:
            full = np.asarray(full, dtype=np.float64)
            return np.array([full[i] for i in ids], dtype=np.float64)
        d = {int(i): float(v) for i, v in top}
        return np.array([d.get(int(i), 0.0) for i in ids], dtype=np.float64)

    ids = [int(i) for i in ids]
    p, q = values(p_full, top_p), values(q_full, top_q)
    order = sorted(range(len(ids)), key=lambda k: (-p[k], -q[k], ids[k]))
    ids = [ids[k] for k in order]
    p, q = p[order], q[order]

    def close(v):
        rest = max(0.0, 1.0 - float(v.sum()))
        out = np.append(v, rest)
        return out / out.sum()

    return ids, close(p), close(q)


def position_money_diagram(p_vec, q_vec, names, title: str = "", subtitle: str = "", annotate: bool = True) -> go.Figure:
    """`specviz.figures.money_diagram` of one generated position's real p and q (top tokens + "other").

    Same traces as the toy diagram ("overlap", "residual", "p", "q", "rejected"); the x axis is
    forced to categories (token names such as "1" must not become numbers).
    """
    fig = money_diagram(p_vec, q_vec, vocab=list(names), annotate=annotate)
    fig.update_xaxes(type="category", title="token (top of p ∪ top of q, then everything else)")
    if title:
        fig.update_layout(title_text=title)
    if subtitle:
        fig.update_layout(title_subtitle_text=subtitle)
    return fig


def target_only_figure(p_vec, names, title: str = "", subtitle: str = "") -> go.Figure:
    """p alone at a position the draft did not propose (a bonus or plain target token).

    Trace: "p" (the red outline, filled lightly: the token is a plain draw from p).
    """
    fig = go.Figure()
    fig.add_bar(x=list(names), y=list(map(float, p_vec)), name="p (target)", meta="p",
                marker=dict(color="rgba(214,39,40,0.15)", line=dict(color=PALETTE["p"], width=3)),
                hovertemplate="%{x}: p = %{y:.4f}<extra></extra>")
    _base_layout(fig, (title or "Target distribution p") + "<br>" + (subtitle or ""), height=480,
                 xaxis=dict(title="token", type="category"), yaxis=dict(title="probability", range=[0, 1.05]))
    return fig


__all__ = [
    "FATES", "FATE_COLORS", "FATE_LABELS", "OTHER", "accepted_hist_figure", "accepted_hist_patch", "apply_patch",
    "distinct_labels", "gamma_sweep_figure", "gamma_sweep_patch", "per_position_figure", "per_position_patch",
    "position_money_diagram", "target_only_figure", "throughput_figure", "throughput_patch", "token_label",
    "top_union", "trace_by_meta", "with_other",
]
