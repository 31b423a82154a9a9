"""The lossless step in pictures: the money diagram, and the same proof in numbers as the joint table.

>>> from specviz.figures.style import trace_by_meta
>>> P, Q = [0.6, 0.3, 0.1], [0.4, 0.5, 0.1]
>>> [float(v) for v in trace_by_meta(money_diagram(P, Q), "overlap").y]
[0.4, 0.3, 0.1]
>>> list(joint_table(P, Q).data[0].cells.values[5])
['✓', '✓', '✓', '✓']
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go

from ..exact.rules import get_rule, rule_joint
from ..exact.theory import acceptance_rate, overlap, rejection_mass, resample_dist, residual, tv_distance
from ..foundation.i18n import t
from ..foundation.palette import STATUS_BG
from .style import INK, base_layout, float_pair, mass_labels, mass_marker, p_outline, q_fill, vocab_names, y_top


class _MoneySteps(Mapping):
    """Step 1..3 -> the caption of that step of the reveal, in the current language (read when used)."""

    _keys = {1: "money.step1", 2: "money.step2", 3: "money.step3"}

    def __getitem__(self, step: int) -> str:
        return t(self._keys[step])

    def __iter__(self):
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


MONEY_STEPS = _MoneySteps()
"""The captions of the three steps of the money diagram's reveal: MONEY_STEPS[1], [2], [3]."""


def money_summary(p, q, vocab=None) -> dict:
    """The live numbers of the money diagram: P(accept), Z = P(reject), TV, p'."""
    p, q = float_pair(p, q)
    names = vocab_names(vocab, p.size)
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
    p, q = float_pair(p, q)
    names = vocab_names(vocab, p.size)
    step = int(step)
    if step not in (1, 2, 3):
        raise ValueError(f"step must be 1, 2 or 3, got {step!r}")
    ov, res = overlap(p, q), residual(p, q)
    rej = np.maximum(q - p, 0.0)

    def vis(shown):
        """Trace properties that show a trace, or hide it while keeping its data."""
        return dict(opacity=1.0 if shown else 0.0, showlegend=shown, hoverinfo="all" if shown else "skip")

    data = {
        "overlap": dict(x=names, y=ov, text=mass_labels("overlap", ov)),
        "residual": dict(x=names, y=res, base=ov, text=mass_labels("residual", res), **vis(step >= 3)),
        "p": dict(x=names, y=p),
        "q": dict(x=names, y=q),
        "rejected": dict(
            x=names,
            y=rej,
            base=ov,
            text=mass_labels("rejected", rej),
            marker_line_width=[1.5 if v > 1e-12 else 0 for v in rej],
            **vis(step >= 2),
        ),
    }
    layout = {
        "title_text": t("money.title"),
        "title_subtitle_text": MONEY_STEPS[step],
        "yaxis_range": [0, y_top(p, q)],
    }
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
    No fact rests on colour alone: the residual is dotted and the rejected mass hatched
    (`PATTERNS`), and each mass's bar text carries its mark (✓ accepted, ↻ resampled,
    ✗ rejected: `MASS_MARKS`). `hatch=False` leaves the patterns out (the marks stay):
    plotly.js 4.1 cannot animate bars with a pattern fill (its transition code throws
    "classed is not a function"), so the widgets, which animate, use it.
    """
    patch = money_diagram_patch(p, q, vocab, step, annotate)
    d = patch["data"]
    fig = go.Figure()
    fig.add_bar(
        name=t("money.legend_overlap"),
        meta="overlap",
        offsetgroup="p",
        marker=mass_marker("overlap", line=dict(width=0)),
        textposition="inside",
        insidetextanchor="middle",
        hovertemplate="%{x}: min(p, q) = %{y:.4f}<extra></extra>",
        **d["overlap"],
    )
    fig.add_bar(
        name=t("money.legend_residual"),
        meta="residual",
        offsetgroup="p",
        marker=mass_marker("residual", pattern=hatch, line=dict(width=0)),
        textposition="inside",
        insidetextanchor="middle",
        hovertemplate="%{x}: (p − q)⁺ = %{y:.4f}<extra></extra>",
        **d["residual"],
    )
    fig.add_bar(
        name=t("figure.p_target"),
        meta="p",
        offsetgroup="p",
        marker=p_outline(),
        hovertemplate="%{x}: p = %{y:.4f}<extra></extra>",
        **d["p"],
    )
    fig.add_bar(
        name=t("figure.q_draft"),
        meta="q",
        offsetgroup="q",
        marker=q_fill(),
        hovertemplate="%{x}: q = %{y:.4f}<extra></extra>",
        **d["q"],
    )
    fig.add_bar(
        name=t("money.legend_rejected"),
        meta="rejected",
        offsetgroup="q",
        marker=mass_marker("rejected", pattern=hatch),
        textposition="inside",
        insidetextanchor="middle",
        hovertemplate="%{x}: (q − p)⁺ = %{y:.4f}<extra></extra>",
        **d["rejected"],
    )
    lay = patch["layout"]
    base_layout(
        fig,
        lay["title_text"] + "<br>" + lay["title_subtitle_text"],
        barmode="group",
        bargap=0.25,
        bargroupgap=0.05,
        yaxis=dict(title=t("figure.probability"), range=lay["yaxis_range"]),
        xaxis=dict(title=t("figure.token")),
        height=480,
    )
    if annotate:  # title and subtitle pinned to the top, the summary box (≤ 2 lines) just above the plot
        fig.update_layout(margin=dict(t=130), title=dict(yref="container", y=1.0, yanchor="top", pad=dict(t=12)))
        fig.add_annotation(
            text=lay["annotation_text"],
            name="summary",
            xref="paper",
            yref="paper",
            x=0.0,
            y=1.01,
            xanchor="left",
            yanchor="bottom",
            showarrow=False,
            align="left",
            bgcolor=INK["panel"],
            bordercolor=INK["border"],
            borderpad=4,
        )
    return fig


def _fmt_vec(names, values, digits=3) -> str:
    """ "cat 1.000, dog 0.000, ...": one number per named token."""
    return ", ".join(f"{n} {v:.{digits}f}" for n, v in zip(names, values))


def _money_note(p, q, names, step) -> str:
    """The annotation above the money diagram: P(accept), then Z, then p′, as `step` reveals them."""
    s = money_summary(p, q, names)
    parts = [f"{t('money.p_accept')} = Σ min(p, q) = {s['p_accept']:.3f}"]
    if step >= 2:
        parts.append(f"{t('money.p_reject')} = Z = {s['z']:.3f}")
    if step >= 3:
        parts.append(
            "<br>p′ = (p − q)⁺ / Z = (" + _fmt_vec(names, s["p_prime"]) + ")"
            if s["z"] > 0
            else "<br>" + t("money.z_zero")
        )
    return "   ·   ".join(parts).replace("   ·   <br>", "<br>")


def joint_table(p, q, vocab=None, rule="lossless", tol=1e-9, **params) -> go.Figure:
    """The §6–§7 table: P(x ∧ accept), P(x ∧ reject), P(out = x), p(x), match, from `rule_joint`.

    Columns (numbers in `cells.values`): token, P(x ∧ accept), P(x ∧ reject), P(out = x),
    p(x), match (✓/✗ within `tol`); the last row holds the totals.
    """
    p, q = float_pair(p, q)
    names = vocab_names(vocab, p.size)
    j = rule_joint(p, q, rule, **params)
    acc, rej = j.accept.astype(np.float64), j.reject.astype(np.float64)
    out = acc + rej
    match = np.abs(out - p) <= tol
    cols = [
        names + [t("money.table_total")],
        list(acc) + [float(acc.sum())],
        list(rej) + [float(rej.sum())],
        list(out) + [float(out.sum())],
        list(p) + [float(p.sum())],
        ["✓" if m else "✗" for m in match] + ["✓" if match.all() else "✗"],
    ]
    ok_col, bad_col = STATUS_BG["pass"], STATUS_BG["fail"]
    fills = [["white"] * len(names) + [INK["cell"]]] * 5 + [
        [ok_col if m else bad_col for m in match] + [ok_col if match.all() else bad_col]
    ]
    fig = go.Figure(
        go.Table(
            meta="joint",
            header=dict(
                values=[
                    t("figure.token"),
                    t("figure.joint_accept"),
                    t("figure.joint_reject"),
                    t("money.table_out"),
                    "p(x)",
                    t("money.table_match"),
                ],
                fill_color=INK["header"],
                align="center",
                font=dict(size=14),
            ),
            cells=dict(
                values=cols,
                format=[None, ".4f", ".4f", ".4f", ".4f", None],
                fill_color=fills,
                align="center",
                height=28,
                font=dict(size=14),
            ),
        )
    )
    verdict = t("money.table_lossless") if match.all() else t("money.table_lossy")
    base_layout(
        fig,
        t("money.table_title", rule=get_rule(rule).name, verdict=verdict),
        height=100 + 30 * (len(names) + 2),
    )
    fig.update_layout(margin=dict(b=10, t=55))
    return fig
