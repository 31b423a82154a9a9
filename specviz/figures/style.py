"""The look every specviz figure shares: the colour language, the base layout, and the helpers the builders share.

Builders take (p, q) through `float_pair`, token names through `vocab_names`, style a
figure with `base_layout`, and tag each trace with a stable `meta` that `trace_by_meta`
finds again; a live view changes a figure in place with `apply_patch`.

>>> vocab_names(None, 3)
['cat', 'dog', 'fish']
>>> y_top([0.6, 0.3, 0.1])
0.7
>>> fig = base_layout(go.Figure(go.Bar(y=[1.0], meta="bar")), "A title<br>its subtitle")
>>> trace_metas(fig), fig.layout.title.subtitle.text
(['bar'], 'its subtitle')
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from ..examples import TUTORIAL_VOCAB  # the tutorial's token names (one home)
from ..validate import as_pair

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

TRANSPARENT = "rgba(0,0,0,0)"
"""A fill that draws nothing: outline-only bars (the target p) use it."""

_GRID = "#e5e5e5"
_FONT = dict(family="DejaVu Sans, Liberation Sans, Arial, sans-serif", size=13)


def default_vocab(V: int) -> tuple[str, ...]:
    """cat/dog/fish for three tokens (the tutorial), else t0, t1, ..."""
    return TUTORIAL_VOCAB if V == 3 else tuple(f"t{i}" for i in range(V))


def vocab_names(vocab: Iterable | None, V: int) -> list[str]:
    """The V token names of an axis: `vocab` as strings (checked: V distinct names), or `default_vocab(V)`."""
    if vocab is None:
        return list(default_vocab(V))
    names = [str(v) for v in vocab]
    if len(names) != V:
        raise ValueError(f"vocab has {len(names)} names for {V} tokens")
    if len(set(names)) != len(names):
        raise ValueError(f"vocab names must be distinct, got {names}")
    return names


def float_pair(p: ArrayLike, q: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """p (target) and q (draft) validated by the core (`specviz.validate.as_pair`), as float64 arrays."""
    p, q = as_pair(p, q)
    return p.astype(np.float64), q.astype(np.float64)


def base_layout(fig: go.Figure, title: str, **kw) -> go.Figure:
    """Shared look: title (text after "<br>" becomes the subtitle) on top, legend at the bottom.

    Styled explicitly rather than with layout.template: copying a template costs ~50 ms
    per figure, too slow for widgets that rebuild a figure on every slider move.
    """
    main, _, sub = title.partition("<br>")
    sub = sub.replace("<sup>", "").replace("</sup>", "")
    fig.update_layout(
        font=_FONT,
        title=dict(text=main, x=0.01, xanchor="left", subtitle=dict(text=sub, font=dict(size=12))),
        paper_bgcolor="white",
        plot_bgcolor="white",
        margin=dict(l=60, r=30, t=100 if sub else 65, b=100),
        legend=dict(orientation="h", yref="container", y=0.0, yanchor="bottom", x=0.0, xanchor="left"),
        **kw,
    )
    fig.update_xaxes(gridcolor=_GRID, linecolor="#444", zerolinecolor=_GRID, automargin=True)
    fig.update_yaxes(gridcolor=_GRID, linecolor="#444", zerolinecolor="#999", automargin=True)
    return fig


def bar_labels(values: Iterable[float], fmt: str = "{:.2f}") -> list[str]:
    """Bar text: the value, or '' for (numerically) zero bars."""
    return [fmt.format(v) if abs(v) > 1e-12 else "" for v in values]


def p_outline(width: float = 3) -> dict:
    """Bar marker of the target p: a red outline, no fill (what sits inside it shows through)."""
    return dict(color=TRANSPARENT, line=dict(color=PALETTE["p"], width=width))


def q_fill(width: float = 1.5) -> dict:
    """Bar marker of the draft q: translucent grey with a grey edge."""
    return dict(color="rgba(127,127,127,0.35)", line=dict(color=PALETTE["q"], width=width))


def exact_tick(size: int, color: str = PALETTE["p"]) -> dict:
    """Scatter marker of an exact value: a horizontal tick (plotly's "line-ew-open") as wide as a bar."""
    return dict(symbol="line-ew-open", size=size, color=color, line=dict(width=3, color=color))


def y_top(*arrays: ArrayLike, floor: float = 0.1) -> float:
    """The top of a probability axis: 15% above the largest value, rounded up to 0.05, at least `floor`."""
    top = max(float(np.max(a)) for a in arrays)
    return max(floor, math.ceil(top * 1.15 * 20) / 20)


def trace_by_meta(fig, meta: str):
    """The first trace of `fig` whose `meta` equals `meta` (KeyError if none)."""
    for t in fig.data:
        if t.meta == meta:
            return t
    raise KeyError(f"no trace with meta {meta!r}; metas: {[t.meta for t in fig.data]}")


def trace_metas(fig) -> list:
    """The `meta` of every trace, in order."""
    return [t.meta for t in fig.data]


def apply_patch(fig, patch: dict) -> None:
    """Apply a `*_patch` dict to a Figure or FigureWidget (inside `batch_update` for a widget).

    A patch is {"data": {meta: props}, "layout": props}; only changed properties are
    sent to the browser. "annotation_text" sets the text of the first layout annotation.
    """
    by_meta = {t.meta: t for t in fig.data}
    for meta, props in patch["data"].items():
        by_meta[meta].update(props)
    layout = dict(patch["layout"])
    note = layout.pop("annotation_text", None)
    fig.update_layout(layout)
    if note is not None and fig.layout.annotations:
        fig.layout.annotations[0].text = note
