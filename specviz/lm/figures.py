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
>>> list(trace_by_meta(accepted_hist_figure(st), "accepted_measured").y) == st.accepted_hist.tolist()
True
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..figures import (  # noqa: F401  (TUTORIAL_VOCAB, apply_patch, trace_by_meta: re-exported)
    PALETTE,
    TUTORIAL_VOCAB,
    apply_patch,
    base_layout,
    money_diagram,
    money_diagram_patch,
    rgba,
    trace_by_meta,
    y_top,
)
from ..i18n import t
from .results import FATE_COLORS, FATE_LABELS, FATES  # noqa: F401  (one home for the token fates; re-exported)

OTHER = "other"
"""The English name of the bucket of every token not shown (`other_label()` is the current language's)."""


def other_label() -> str:
    """The name of the "other" bucket (every token not shown) in the current language."""
    return t("lmfig.other")


def host_array(values, dtype=np.float64) -> np.ndarray:
    """Numbers as a NumPy array in host memory: a torch tensor on any device is copied to the CPU first.

    `np.asarray` on a CUDA tensor raises (NumPy cannot read GPU memory), so every figure input that
    may come from a model goes through here: `.detach().to("cpu", float64)`, then NumPy.
    """
    if hasattr(values, "detach") and hasattr(values, "to"):  # a torch tensor, wherever it lives
        import torch

        values = values.detach().to(device="cpu", dtype=torch.float64).numpy()
    return np.asarray(values, dtype=dtype)


def _nan_list(values) -> list:
    """Floats with NaN -> None (plotly draws a gap; JSON has no NaN)."""
    return [None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v) for v in values]


def _empty_stats(gamma: int):
    g = int(gamma)
    nan = float("nan")
    return dict(
        gamma=g,
        per_position=np.zeros(g),
        per_position_conditional=np.full(g, nan),
        accepted_hist=np.zeros(g + 1, np.int64),
        accepted_hist_theory=np.zeros(g + 1),
        alpha=nan,
        steps=0,
    )


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
    sub = t("lmfig.per_position_sub", alpha=alpha, steps=steps) if has_alpha else t("lmfig.per_position_empty")
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
    fig.add_bar(
        name=t("lmfig.unconditional"),
        meta="unconditional",
        marker=dict(color=PALETTE["overlap"]),
        hovertemplate=t("lmfig.position_hover"),
        **d["unconditional"],
    )
    fig.add_scatter(
        name=t("lmfig.conditional"),
        meta="conditional",
        mode="lines+markers",
        line=dict(color=PALETTE["residual"], width=2),
        marker=dict(size=9),
        hovertemplate=t("lmfig.position_hover"),
        **d["conditional"],
    )
    fig.add_scatter(
        name=t("lmfig.theory_power"),
        meta="theory_unconditional",
        mode="markers",
        marker=dict(symbol="line-ew-open", size=26, color=PALETTE["p"], line=dict(width=3, color=PALETTE["p"])),
        hovertemplate="α^%{x} = %{y:.3f}<extra></extra>",
        **d["theory_unconditional"],
    )
    fig.add_scatter(
        name="α",
        meta="alpha",
        mode="lines",
        line=dict(dash="dash", color=PALETTE["reference"], width=2),
        hoverinfo="skip",
        **d["alpha"],
    )
    base_layout(
        fig,
        t("lmfig.per_position_title") + "<br>" + patch["layout"]["title_subtitle_text"],
        height=height,
        xaxis=dict(title=t("lmfig.draft_position"), dtick=1, range=patch["layout"]["xaxis_range"]),
        yaxis=dict(title=t("lmfig.acceptance_rate"), range=[0, 1.05]),
    )
    return fig


# ----------------------------------------------------------------------------- accepted-length histogram


def accepted_hist_patch(stats=None, gamma: int = 4) -> dict:
    g = int(_get(stats, "gamma", gamma)) if stats is not None else int(gamma)
    xs = list(range(g + 1))
    hist = np.asarray(_get(stats, "accepted_hist", g), dtype=float)
    theory = np.asarray(_get(stats, "accepted_hist_theory", g), dtype=float)
    alpha = float(_get(stats, "alpha", g))
    if stats is not None and stats.steps:
        sub = t(
            "lmfig.hist_sub",
            steps=int(hist.sum()),
            alpha=alpha,
            mean=stats.mean_acceptance_length,
            theory=stats.expected_tokens_per_step,
        )
    else:
        sub = t("lmfig.hist_empty")
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
        name=t("lmfig.measured_steps"),
        meta="accepted_measured",
        marker=dict(color=PALETTE["empirical"]),
        hovertemplate=t("lmfig.hist_hover"),
        **d["accepted_measured"],
    )
    fig.add_scatter(
        name=t("lmfig.theory_alpha"),
        meta="accepted_theory",
        mode="markers",
        marker=dict(symbol="line-ew-open", size=26, color=PALETTE["p"], line=dict(width=3, color=PALETTE["p"])),
        hovertemplate=t("lmfig.hist_theory_hover"),
        **d["accepted_theory"],
    )
    base_layout(
        fig,
        t("lmfig.hist_title") + "<br>" + patch["layout"]["title_subtitle_text"],
        height=height,
        xaxis=dict(title=t("lmfig.accepted_k"), dtick=1, range=patch["layout"]["xaxis_range"]),
        yaxis=dict(title=t("lmfig.verify_steps"), rangemode="tozero"),
    )
    return fig


# ----------------------------------------------------------------------------- tokens per second


THROUGHPUT_BARS = ("speculative", "autoregressive")
"""The two bars of the tokens/s panel (English; `throughput_bars()` gives the current language's names)."""


def throughput_bars() -> tuple[str, str]:
    """The x categories of the tokens/s panel in the current language: (speculative, autoregressive)."""
    return t("lmfig.speculative"), t("lmfig.autoregressive")


def throughput_patch(spec_tps=float("nan"), ar_tps=float("nan"), predicted_tps=float("nan")) -> dict:
    def num(v):
        return None if v is None or not np.isfinite(v) else float(v)

    s, a, pr = num(spec_tps), num(ar_tps), num(predicted_tps)
    if s and a:
        sub = t("lmfig.tps_sub", speedup=s / a) + (t("lmfig.tps_predicts", speedup=pr / a) if pr else "")
    elif s:
        sub = t("lmfig.tps_no_ar")
    else:
        sub = t("lmfig.press_generate")
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
        name=t("lmfig.tps_measured"),
        meta="tokens_per_second",
        textposition="outside",
        marker=dict(color=[PALETTE["overlap"], PALETTE["p"]]),
        hovertemplate=t("lmfig.tps_hover"),
        **d["tokens_per_second"],
    )
    fig.add_scatter(
        name=t("lmfig.tps_predicted"),
        meta="predicted_tps",
        mode="markers",
        marker=dict(symbol="line-ew-open", size=40, color="black", line=dict(width=3, color="black")),
        hovertemplate=t("lmfig.tps_predicted_hover"),
        **d["predicted_tps"],
    )
    base_layout(
        fig,
        t("lmfig.tps_title") + "<br>" + patch["layout"]["title_subtitle_text"],
        height=height,
        xaxis=dict(title=t("lmfig.decoding"), type="category"),
        yaxis=dict(title=t("lmfig.tps_axis"), range=patch["layout"]["yaxis_range"]),
    )
    return fig


# ----------------------------------------------------------------------------- γ sweep


def gamma_sweep_patch(gammas=(), measured=(), bound=(), predicted=(), auto=None) -> dict:
    gammas = [int(g) for g in gammas]
    m, b, pr = _nan_list(measured), _nan_list(bound), _nan_list(predicted)
    best = ""
    finite = [(v, g) for g, v in zip(gammas, m) if v is not None]
    if finite:
        v, g = max(finite)
        best = t("lmfig.sweep_best", gamma=g, speedup=v)
    hi = max(8, max(gammas) if gammas else 8)
    a = [] if auto is None else [v for v in _nan_list([auto]) if v is not None]
    top = max([v for v in m + b + pr + a if v is not None] + [1.5]) * 1.15
    return {
        "data": {
            "sweep_measured": dict(x=gammas, y=m),
            "sweep_bound": dict(x=gammas, y=b),
            "sweep_predicted": dict(x=gammas, y=pr),
            "break_even": dict(x=[0.5, hi + 0.5], y=[1, 1]),
            "sweep_auto": dict(x=[0.5, hi + 0.5], y=_nan_list([auto, auto]) if auto is not None else [None, None]),
        },
        "layout": {
            "title_subtitle_text": best or t("lmfig.sweep_empty"),
            "yaxis_range": [0, top],
            "xaxis_range": [0.5, hi + 0.5],
        },
    }


def gamma_sweep_figure(
    gammas=(), measured=(), bound=(), predicted=(), height: int = 380, auto: float | None = None
) -> go.Figure:
    """Measured speedup over autoregressive decoding vs γ, against the theory curves.

    Traces: "sweep_measured" (speculative tokens/s ÷ autoregressive tokens/s), "sweep_bound" (the textbook
    (1 − α^(γ+1)) / ((1 − α)(γc + 1)) at the measured α and c), "sweep_predicted" (the cost model
    from measured draft-token and verify-step times), "break_even" (speedup 1) and "sweep_auto"
    (the measured speedup of a γ-auto run as a level line, when `auto` is given).
    """
    patch = gamma_sweep_patch(gammas, measured, bound, predicted, auto)
    d = patch["data"]
    fig = go.Figure()
    fig.add_scatter(
        name=t("lmfig.measured"),
        meta="sweep_measured",
        mode="lines+markers",
        line=dict(color=PALETTE["empirical"], width=3),
        marker=dict(size=10),
        hovertemplate=t("lmfig.sweep_hover_measured"),
        **d["sweep_measured"],
    )
    fig.add_scatter(
        name=t("lmfig.textbook_bound"),
        meta="sweep_bound",
        mode="lines+markers",
        line=dict(color=PALETTE["p"], dash="dot", width=2),
        hovertemplate=t("lmfig.sweep_hover_bound"),
        **d["sweep_bound"],
    )
    fig.add_scatter(
        name=t("lmfig.cost_model"),
        meta="sweep_predicted",
        mode="lines+markers",
        line=dict(color=PALETTE["overlap"], dash="dash", width=2),
        hovertemplate=t("lmfig.sweep_hover_predicted"),
        **d["sweep_predicted"],
    )
    fig.add_scatter(
        name=t("lmfig.no_speedup"),
        meta="break_even",
        mode="lines",
        showlegend=False,
        hoverinfo="skip",
        line=dict(color="#999", width=1),
        **d["break_even"],
    )
    fig.add_scatter(
        name=t("lmfig.sweep_auto"),
        meta="sweep_auto",
        mode="lines",
        line=dict(color=PALETTE["reference"], dash="dashdot", width=2),
        hovertemplate=t("lmfig.sweep_hover_auto"),
        **d["sweep_auto"],
    )
    base_layout(
        fig,
        t("lmfig.sweep_title") + "<br>" + patch["layout"]["title_subtitle_text"],
        height=height,
        xaxis=dict(title=t("lmfig.sweep_x"), dtick=1, range=patch["layout"]["xaxis_range"]),
        yaxis=dict(title=t("lmfig.sweep_y"), range=patch["layout"]["yaxis_range"]),
    )
    return fig


# ----------------------------------------------------------------------------- γ at each verify step


def gamma_steps_patch(drafted=(), accepted=(), setting=None) -> dict:
    """Data of `gamma_steps_figure`."""
    d, a = [int(g) for g in drafted], [int(k) for k in accepted]
    xs = list(range(1, len(d) + 1))
    if d:
        name = t("lmfig.gamma_steps_auto") if setting == "auto" else ("γ" if setting is None else f"γ = {setting}")
        sub = t("lmfig.gamma_steps_sub", setting=name, mean=sum(d) / len(d), longest=max(d), steps=len(d))
    else:
        sub = t("lmfig.gamma_steps_empty")
    return {
        # an empty panel holds one null point: plotly.js draws NaN paths for empty traces here
        "data": {
            "gamma_drafted": dict(x=xs or [None], y=d or [None]),
            "gamma_accepted": dict(x=xs[: len(a)] or [None], y=a or [None]),
        },
        "layout": {
            "title_subtitle_text": sub,
            "xaxis_range": [0.4, max(len(d), 10) + 0.6],
            "yaxis_range": [0, max(d + [1]) + 0.6],
        },
    }


def gamma_steps_figure(drafted=(), accepted=(), setting=None, height: int = 300) -> go.Figure:
    """How many tokens each verify step drafted (its γ; with γ "auto" it changes step by step) and kept.

    Traces: "gamma_drafted" bars (len(record.drafted) per step; 0: a plain target step) and
    "gamma_accepted" markers (record.accepted). `setting` ("auto" or a whole number) names
    the run's γ in the subtitle.
    """
    patch = gamma_steps_patch(drafted, accepted, setting)
    d = patch["data"]
    fig = go.Figure()
    fig.add_bar(
        name=t("lmfig.gamma_drafted"),
        meta="gamma_drafted",
        marker=dict(color=rgba(PALETTE["q"], 0.45), line=dict(color=PALETTE["q"], width=1)),
        hovertemplate=t("lmfig.gamma_drafted_hover"),
        **d["gamma_drafted"],
    )
    fig.add_scatter(
        name=t("lmfig.gamma_accepted"),
        meta="gamma_accepted",
        mode="markers",
        marker=dict(
            symbol="line-ew-open", size=12, color=PALETTE["overlap"], line=dict(width=3, color=PALETTE["overlap"])
        ),
        hovertemplate=t("lmfig.gamma_accepted_hover"),
        **d["gamma_accepted"],
    )
    base_layout(
        fig,
        t("lmfig.gamma_steps_title") + "<br>" + patch["layout"]["title_subtitle_text"],
        height=height,
        xaxis=dict(title=t("lmfig.verify_step_axis"), range=patch["layout"]["xaxis_range"]),
        yaxis=dict(title=t("lmfig.tokens_axis"), dtick=1, range=patch["layout"]["yaxis_range"]),
    )
    return fig


# ----------------------------------------------------------------------------- when does speculation pay?


def payoff_figure(alpha: float, cs=(0.05, 0.25, 0.5), labels=None, max_gamma: int = 16, height: int = 400) -> go.Figure:
    """The best textbook speed-up against the draft's cost ratio c, at acceptance α (`specviz.lm.payoff`).

    Traces: "best_speedup" (the curve over c in [0, 1], each point at its best γ), "payoff_points"
    (the costs `cs`, labelled with `labels` when given), "break_even" (c = α: to its right no γ pays)
    and "no_gain" (speed-up 1).
    """
    from .payoff import payoff_table

    grid = payoff_table(alpha, np.linspace(0.0, 1.0, 201), max_gamma)
    pts = payoff_table(alpha, cs, max_gamma)
    labels = list(labels) if labels is not None else [""] * len(pts)
    text = [f"{lab + ': ' if lab else ''}{r.speedup:.2f}× (γ = {r.best_gamma})" for lab, r in zip(labels, pts)]
    top = max(r.speedup for r in grid) * 1.12
    order = sorted(range(len(pts)), key=lambda k: pts[k].c)  # neighbours' labels alternate above and below
    where = {k: ("top right" if n % 2 == 0 else "bottom right") for n, k in enumerate(order)}
    fig = go.Figure()
    fig.add_scatter(
        x=[r.c for r in grid],
        y=[r.speedup for r in grid],
        mode="lines",
        name=t("lmfig.payoff_best"),
        meta="best_speedup",
        line=dict(color=PALETTE["overlap"], width=3),
        customdata=[r.best_gamma for r in grid],
        hovertemplate=t("lmfig.payoff_hover"),
    )
    fig.add_scatter(
        x=[r.c for r in pts],
        y=[r.speedup for r in pts],
        mode="markers+text",
        text=text,
        textposition=[where[k] for k in range(len(pts))],
        name=t("lmfig.payoff_points"),
        meta="payoff_points",
        marker=dict(size=11, color=PALETTE["p"]),
        hovertemplate="c = %{x:.2f}: %{text}<extra></extra>",
    )
    fig.add_scatter(
        x=[alpha, alpha],
        y=[0, top],
        mode="lines",
        name=t("lmfig.payoff_break_even"),
        meta="break_even",
        line=dict(color=PALETTE["reference"], dash="dash", width=2),
        hoverinfo="skip",
    )
    fig.add_scatter(
        x=[0, 1],
        y=[1, 1],
        mode="lines",
        name=t("lmfig.payoff_no_gain"),
        meta="no_gain",
        showlegend=False,
        line=dict(color="#999", width=1),
        hoverinfo="skip",
    )
    base_layout(
        fig,
        t("lmfig.payoff_title", alpha=alpha, max_gamma=max_gamma),
        height=height,
        xaxis=dict(title=t("lmfig.payoff_x"), range=[0, 1]),
        yaxis=dict(title=t("lmfig.payoff_y"), range=[0, top]),
    )
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
    """`token_label` of each id, made distinct (an id suffix on collisions, never "other" in any language)."""
    names = [token_label(tokenizer, i) for i in ids]
    others = {OTHER, other_label()}
    seen: dict[str, int] = {}
    for n in names:
        seen[n] = seen.get(n, 0) + 1
    out = []
    for i, n in zip(ids, names):
        if seen[n] > 1 or n in others:
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
            full = host_array(full).reshape(-1)
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


def position_money_diagram(
    p_vec, q_vec, names, title: str = "", subtitle: str = "", annotate: bool = True
) -> go.Figure:
    """`specviz.figures.money_diagram` of one generated position's real p and q (top tokens + "other").

    Same traces as the toy diagram ("overlap", "residual", "p", "q", "rejected"); the x axis is
    forced to categories (token names such as "1" must not become numbers).
    """
    fig = money_diagram(p_vec, q_vec, vocab=list(names), annotate=annotate)
    fig.update_xaxes(type="category", title=t("lmfig.token_axis"))  # the money diagram leaves room for its box
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
    fig.add_bar(
        x=list(names),
        y=[float(v) for v in p_vec],
        name=t("figure.p_target"),
        meta="p",
        marker=dict(color=rgba(PALETTE["p"], 0.15), line=dict(color=PALETTE["p"], width=3)),
        hovertemplate="%{x}: p = %{y:.4f}<extra></extra>",
    )
    base_layout(
        fig,
        (title or t("lmfig.target_title")) + "<br>" + (subtitle or ""),
        height=480,
        xaxis=dict(title=t("figure.token"), type="category"),
        yaxis=dict(title=t("figure.probability"), range=[0, 1.05]),
    )
    return fig


def position_money_patch(p_vec, q_vec, names, title: str = "", subtitle: str = "") -> dict:
    """The data of `position_money_diagram` as a patch (q_vec None: the p-only view of a bonus token).

    Same traces as the money diagram; for a bonus token the draft traces are all zero and p
    is its red outline alone. Layout keys: "title_text", "title_subtitle_text",
    "annotation_text" (the money summary), "yaxis_range".
    """
    names = list(names)
    if q_vec is not None:
        patch = money_diagram_patch(p_vec, q_vec, vocab=names, step=3, annotate=True)
    else:
        p = np.asarray(p_vec, dtype=np.float64)
        zero = np.zeros(p.size)
        patch = {
            "data": {
                "overlap": dict(x=names, y=zero, text=[""] * p.size),
                "residual": dict(x=names, y=zero, base=zero, text=[""] * p.size),
                "p": dict(x=names, y=p),
                "q": dict(x=names, y=zero),
                "rejected": dict(x=names, y=zero, base=zero, marker_line_width=[0] * p.size),
            },
            "layout": {
                "yaxis_range": [0, y_top(p)],
                "annotation_text": t("lmfig.p_only"),
            },
        }
    patch["layout"]["title_text"] = title or t("lmfig.money_title")
    patch["layout"]["title_subtitle_text"] = subtitle
    return patch


# ----------------------------------------------------------------------------- everything in one widget

LIVE_PANELS = {  # panel -> (row, col, axis number, message of the default title)
    "per_position": (1, 1, 1, "lmfig.per_position_title"),
    "accepted_hist": (1, 2, 2, "lmfig.hist_title"),
    "throughput": (2, 1, 3, "lmfig.tps_title"),
    "sweep": (2, 2, 4, "lmfig.sweep_title"),
    "gamma_steps": (3, 1, 5, "lmfig.gamma_steps_title"),
    "money": (4, 1, 6, "lmfig.money_title"),
}
"""The panels of `live_figure`: grid position, axis number (xaxisN / yaxisN) and the message key of the default title."""


def _panel_title(title: str, *lines: str) -> str:
    rest = "".join(f"<br><span style='font-size:11px'>{ln}</span>" for ln in lines if ln)
    return f"<b>{title}</b>{rest}"


def _placeholder_money_patch() -> dict:
    from ..examples import TUTORIAL_P, TUTORIAL_Q

    return position_money_patch(TUTORIAL_P, TUTORIAL_Q, TUTORIAL_VOCAB, subtitle=t("lmfig.placeholder"))


def live_figure(
    stats=None,
    gamma: int = 4,
    throughput=(float("nan"),) * 3,
    sweep=((), (), (), ()),
    money: dict | None = None,
    height: int = 1700,
    gamma_steps=((), (), None),
) -> go.Figure:
    """All live plots in one figure (one FigureWidget in the live view), six panels.

    Row 1: acceptance per draft position ("unconditional", "conditional",
    "theory_unconditional", "alpha") and the accepted-length histogram ("accepted_measured",
    "accepted_theory"); row 2: tokens/s ("tokens_per_second", "predicted_tps") and the γ sweep
    ("sweep_measured", "sweep_bound", "sweep_predicted", "break_even", "sweep_auto"); row 3:
    the γ of each verify step ("gamma_drafted", "gamma_accepted"; `gamma_steps` = the
    arguments of `gamma_steps_patch`); row 4: the money diagram of one generated token
    ("overlap", "residual", "p", "q", "rejected"). Every meta is unique, so `trace_by_meta`
    finds any trace; `apply_live_patch` applies the per-panel `*_patch` dicts. `money` is a
    `position_money_patch` (default: cat/dog/fish).
    """
    fig = make_subplots(
        rows=4,
        cols=2,
        specs=[[{}, {}], [{}, {}], [{"colspan": 2}, None], [{"colspan": 2}, None]],
        vertical_spacing=0.115,
        horizontal_spacing=0.09,
        row_heights=[0.25, 0.25, 0.17, 0.33],
        subplot_titles=[t(v[3]) for v in LIVE_PANELS.values()],
    )
    for ann, (panel, (_, _, n, _)) in zip(fig.layout.annotations, LIVE_PANELS.items()):
        x0 = fig.layout[f"xaxis{n if n > 1 else ''}"].domain[0]
        ann.update(name=f"title:{panel}", x=x0, xanchor="left", align="left", yanchor="bottom")
    money = money or _placeholder_money_patch()
    parts = {
        "per_position": per_position_figure(stats, gamma),
        "accepted_hist": accepted_hist_figure(stats, gamma),
        "throughput": throughput_figure(*throughput),
        "sweep": gamma_sweep_figure(*sweep),
        "gamma_steps": gamma_steps_figure(*gamma_steps),
        "money": money_diagram(
            money["data"]["p"]["y"],
            np.ones(len(money["data"]["p"]["y"])) / len(money["data"]["p"]["y"]),
            vocab=money["data"]["p"]["x"],
            annotate=False,
        ),
    }
    for k, (panel, sub) in enumerate(parts.items(), start=1):
        row, col, n, _ = LIVE_PANELS[panel]
        legend = "legend" if k == 1 else f"legend{k}"
        for tr in sub.data:
            tr.update(legend=legend)
            fig.add_trace(tr, row=row, col=col)
        for axis in ("xaxis", "yaxis"):
            props = sub.layout[axis].to_plotly_json()
            props.pop("domain", None), props.pop("anchor", None)
            getattr(fig, f"update_{axis[0]}axes")(props, row=row, col=col)
    fig.update_layout(
        barmode="group",
        bargap=0.25,
        bargroupgap=0.05,
        font=dict(size=12),
        height=height,
        paper_bgcolor="white",
        plot_bgcolor="white",
        margin=dict(l=60, r=30, t=60, b=40),
    )
    fig.update_xaxes(gridcolor="#e5e5e5", linecolor="#444", zerolinecolor="#e5e5e5", automargin=True)
    fig.update_yaxes(gridcolor="#e5e5e5", linecolor="#444", zerolinecolor="#999", automargin=True)
    fig.update_xaxes(type="category", title_text=t("lmfig.token_axis"), row=4, col=1)
    for k, panel in enumerate(LIVE_PANELS, start=1):  # one legend under each panel
        _, _, n, _ = LIVE_PANELS[panel]
        xd = fig.layout[f"xaxis{n if n > 1 else ''}"].domain
        yd = fig.layout[f"yaxis{n if n > 1 else ''}"].domain
        fig.update_layout(
            {
                ("legend" if k == 1 else f"legend{k}"): dict(
                    x=xd[0],
                    y=yd[0] - (0.035 if panel != "money" else 0.045),
                    xanchor="left",
                    yanchor="top",
                    orientation="h",
                    font=dict(size=11),
                    bgcolor="rgba(255,255,255,0)",
                )
            }
        )
    for panel, patch in (
        ("per_position", per_position_patch(stats, gamma)),
        ("accepted_hist", accepted_hist_patch(stats, gamma)),
        ("throughput", throughput_patch(*throughput)),
        ("sweep", gamma_sweep_patch(*sweep)),
        ("gamma_steps", gamma_steps_patch(*gamma_steps)),
        ("money", money),
    ):
        apply_live_patch(fig, panel, patch)
    return fig


def apply_live_patch(fig, panel: str, patch: dict) -> None:
    """Apply one panel's `*_patch` to a `live_figure` (Figure or FigureWidget, inside `batch_update`).

    Trace data by meta; "title_text" / "title_subtitle_text" / "annotation_text" become the
    panel's title annotation; "xaxis_range" / "yaxis_range" go to the panel's axes.
    """
    _, _, n, title_key = LIVE_PANELS[panel]
    by_meta = {t.meta: t for t in fig.data}
    for meta, props in patch["data"].items():
        by_meta[meta].update(props)
    lay = patch.get("layout", {})
    suffix = "" if n == 1 else str(n)
    for key in ("xaxis", "yaxis"):
        if f"{key}_range" in lay:
            fig.layout[f"{key}{suffix}"].range = lay[f"{key}_range"]
    if any(k in lay for k in ("title_text", "title_subtitle_text", "annotation_text")):
        text = _panel_title(
            lay.get("title_text") or t(title_key), lay.get("title_subtitle_text", ""), lay.get("annotation_text", "")
        )
        for ann in fig.layout.annotations:
            if ann.name == f"title:{panel}":
                ann.text = text


__all__ = [
    "FATES",
    "FATE_COLORS",
    "FATE_LABELS",
    "LIVE_PANELS",
    "OTHER",
    "THROUGHPUT_BARS",
    "accepted_hist_figure",
    "accepted_hist_patch",
    "apply_live_patch",
    "apply_patch",
    "live_figure",
    "position_money_patch",
    "distinct_labels",
    "gamma_steps_figure",
    "gamma_steps_patch",
    "gamma_sweep_figure",
    "host_array",
    "other_label",
    "payoff_figure",
    "gamma_sweep_patch",
    "per_position_figure",
    "per_position_patch",
    "position_money_diagram",
    "target_only_figure",
    "throughput_figure",
    "throughput_bars",
    "throughput_patch",
    "token_label",
    "top_union",
    "trace_by_meta",
    "with_other",
]
