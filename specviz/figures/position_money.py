"""One generated position of a real run: the money diagram of its p and q (top tokens + "other"), or p alone.

>>> ids, p, q = with_other([5, 7], top_p=[(5, 0.6), (7, 0.3)], top_q=[(7, 0.5), (5, 0.4)])
>>> ids, [round(float(v), 2) for v in p], [round(float(v), 2) for v in q]
([5, 7], [0.6, 0.3, 0.1], [0.4, 0.5, 0.1])
>>> [tr.meta for tr in position_money_diagram(p, q, distinct_labels(None, ids) + [other_label()]).data]
['overlap', 'residual', 'p', 'q', 'rejected']
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ..foundation.i18n import t
from .money import money_diagram, money_diagram_patch
from .run_data import OTHER, host_array, other_label
from .style import PALETTE, base_layout, rgba, y_top


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
    fig.update_xaxes(type="category", title=t("run.token_axis"))  # the money diagram leaves room for its box
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
        (title or t("run.target_title")) + "<br>" + (subtitle or ""),
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
                "annotation_text": t("run.p_only"),
            },
        }
    patch["layout"]["title_text"] = title or t("run.money_title")
    patch["layout"]["title_subtitle_text"] = subtitle
    return patch


__all__ = [
    "distinct_labels",
    "position_money_diagram",
    "position_money_patch",
    "target_only_figure",
    "token_label",
    "top_union",
    "with_other",
]
