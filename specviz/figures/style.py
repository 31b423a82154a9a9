"""The look every specviz figure shares: the base layout, bar markers, and the helpers the builders share.

The colours themselves live in `specviz.foundation.palette` (plotly-free); this module re-exports them
(PALETTE, PATTERNS, MASS_MARKS, rgba, ...) and turns them into plotly markers and layouts.

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

from ..foundation.examples import TUTORIAL_VOCAB  # the tutorial's token names (one home)
from ..foundation.palette import (  # the colour language lives in specviz.foundation.palette; re-exported for the builders
    COLORWAY,
    INK,
    LOSSLESS_SERIES,
    LOSSY_SERIES,
    MASS_MARKS,
    PALETTE,
    PATTERNS,
    TRANSPARENT,
    bar_labels,
    contrast_ratio,
    mass_labels,
    relative_luminance,
    rgba,
    text_colour,
)
from ..foundation.validate import as_pair


def mass_marker(role: str, pattern: bool = True, **extra) -> dict:
    """Bar marker of a mass ("overlap", "residual" or "rejected"): its colour and, with `pattern`, its pattern."""
    colour = PALETTE[role]
    marker = dict(color=colour, **extra)
    if pattern and PATTERNS[role]:
        fg = "white" if role == "residual" else colour
        marker["pattern"] = dict(shape=PATTERNS[role], fgcolor=fg, size=8, solidity=0.3)
    if role == "rejected":
        marker.update(color=rgba(colour, 0.35), line=dict(color=colour, width=1.5))
    return marker


_GRID = INK["grid"]
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
    """p (target) and q (draft) validated by the core (`specviz.foundation.validate.as_pair`), as float64 arrays."""
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
        colorway=list(COLORWAY),
        margin=dict(l=60, r=30, t=100 if sub else 65, b=100),
        legend=dict(orientation="h", yref="container", y=0.0, yanchor="bottom", x=0.0, xanchor="left"),
        **kw,
    )
    return style_axes(fig)


def style_axes(fig: go.Figure) -> go.Figure:
    """Every axis of `fig` in the shared look: light grid, dark axis line, grey y = 0 line, room for its labels."""
    fig.update_xaxes(gridcolor=_GRID, linecolor=INK["axis"], zerolinecolor=_GRID, automargin=True)
    fig.update_yaxes(gridcolor=_GRID, linecolor=INK["axis"], zerolinecolor=INK["zeroline"], automargin=True)
    return fig


def p_outline(width: float = 3) -> dict:
    """Bar marker of the target p: a vermillion outline, no fill (what sits inside it shows through)."""
    return dict(color=TRANSPARENT, line=dict(color=PALETTE["p"], width=width))


def q_fill(width: float = 1.5) -> dict:
    """Bar marker of the draft q: translucent grey with a grey edge."""
    return dict(color=rgba(PALETTE["q"], 0.3), line=dict(color=PALETTE["q"], width=width))


def exact_tick(size: int, color: str = PALETTE["p"]) -> dict:
    """Scatter marker of an exact value: a horizontal tick (plotly's "line-ew-open") as wide as a bar."""
    return dict(symbol="line-ew-open", size=size, color=color, line=dict(width=3, color=color))


def patched_layout(fig: go.Figure, title: str, patch: dict, xaxis: dict, yaxis: dict, **kw) -> go.Figure:
    """`base_layout` of a figure that a `*_patch` keeps current: `title` over the patch's subtitle
    ("title_subtitle_text"), and each axis's range from the patch ("xaxis_range", "yaxis_range")
    unless the axis sets its own, so the built figure and its patch draw the same axes.

    >>> patch = {"data": {}, "layout": {"title_subtitle_text": "3 steps", "xaxis_range": [0.5, 3.5]}}
    >>> fig = patched_layout(go.Figure(), "Per step", patch, dict(title="step", dtick=1), dict(range=[0, 1]))
    >>> fig.layout.title.subtitle.text, fig.layout.xaxis.range, fig.layout.yaxis.range
    ('3 steps', (0.5, 3.5), (0, 1))
    """
    layout = patch["layout"]
    axes = {
        name: {"range": layout[f"{name}_range"], **props} if f"{name}_range" in layout else props
        for name, props in (("xaxis", xaxis), ("yaxis", yaxis))
    }
    return base_layout(fig, title + "<br>" + layout["title_subtitle_text"], **axes, **kw)


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


__all__ = [
    # the colour language, from specviz.foundation.palette
    "COLORWAY",
    "INK",
    "LOSSLESS_SERIES",
    "LOSSY_SERIES",
    "MASS_MARKS",
    "PALETTE",
    "PATTERNS",
    "TRANSPARENT",
    "bar_labels",
    "contrast_ratio",
    "mass_labels",
    "relative_luminance",
    "rgba",
    "text_colour",
    # the tutorial's token names, from specviz.foundation.examples
    "TUTORIAL_VOCAB",
    # plotly markers, layout and traces
    "apply_patch",
    "base_layout",
    "default_vocab",
    "exact_tick",
    "float_pair",
    "mass_marker",
    "p_outline",
    "patched_layout",
    "q_fill",
    "style_axes",
    "trace_by_meta",
    "trace_metas",
    "vocab_names",
    "y_top",
]
