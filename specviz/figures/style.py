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
    # Okabe & Ito's colour-blind-safe set ("Color Universal Design", 2008, jfly.uni-koeln.de/color/):
    # every pair below stays apart under simulated protanopia, deuteranopia and tritanopia
    # (tests/test_figures.py: Machado et al. 2009 matrices, CIELAB distance).
    "overlap": "#0072B2",  # blue: min(p, q), accepted
    "residual": "#009E73",  # bluish green (dotted): (p - q)+, resampled after a rejection
    "p": "#D55E00",  # vermillion: the target p (outline)
    "q": "#5A5A5A",  # dark grey: the draft q
    "rejected": "#E69F00",  # orange (hatched): (q - p)+, draft mass that is rejected
    "empirical": "#CC79A7",  # reddish purple: anything measured by sampling
    "reference": "#56B4E9",  # sky blue: reference curves (1/sqrt(n), limits)
    "lossy": "#8C510A",  # brown: lossy rules / variants
    "dtypes": {"float64": "#0072B2", "float32": "#009E73", "float16": "#E69F00", "bfloat16": "#D55E00"},
}
"""The shared colour language of every specviz figure (colour-blind safe; see `PATTERNS` for greyscale)."""

LOSSLESS_SERIES = ("#0072B2", "#56B4E9", "#004C77", "#009E73")
"""Colours of several lossless variants in one figure (blues and the residual's green)."""
LOSSY_SERIES = ("#E69F00", "#8C510A", "#CC79A7", "#D55E00", "#7A6A00", "#000000")
"""Colours of several lossy variants in one figure (oranges, browns, purple, black)."""

COLORWAY = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
"""Okabe & Ito's eight colours: plotly's colours for traces that set none (e.g. one curve per α)."""

PATTERNS = {"overlap": "", "residual": ".", "rejected": "/"}
"""plotly bar pattern (marker.pattern.shape) per mass: solid overlap, dotted residual, hatched rejected
mass, so the three differ without colour (in greyscale, print, or for colour-blind readers)."""


MASS_MARKS = {"overlap": "✓", "residual": "↻", "rejected": "✗"}
"""The mark before a mass's value in its bar (accepted, resampled, rejected): a label that needs no colour."""


def mass_labels(role: str, values: Iterable[float], fmt: str = "{:.2f}") -> list[str]:
    """Bar text of a mass: its mark and value ("✓ 0.40"), or '' for (numerically) zero bars.

    >>> mass_labels("residual", [0.2, 0.0])
    ['↻ 0.20', '']
    """
    return bar_labels(values, MASS_MARKS[role] + " " + fmt)


def rgba(colour: str, alpha: float) -> str:
    """A "#rrggbb" colour as a CSS rgba() string with opacity `alpha`.

    >>> rgba("#0072B2", 0.5)
    'rgba(0,114,178,0.5)'
    """
    r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha:g})"


def relative_luminance(colour: str) -> float:
    """WCAG 2 relative luminance of a "#rrggbb" colour (0 = black, 1 = white)."""
    c = np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)]) / 255.0
    lin = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return float(lin @ [0.2126, 0.7152, 0.0722])


def contrast_ratio(fg: str, bg: str = "#ffffff") -> float:
    """WCAG 2 contrast ratio of two "#rrggbb" colours (1 to 21; text needs 4.5, large text 3).

    >>> round(contrast_ratio("#000000"), 1)
    21.0
    """
    hi, lo = sorted((relative_luminance(fg), relative_luminance(bg)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def text_colour(colour: str, bg: str = "#ffffff", ratio: float = 4.5) -> str:
    """`colour`, darkened just enough for text on `bg` to reach the WCAG AA `ratio`.

    >>> contrast_ratio(text_colour(PALETTE["p"])) >= 4.5
    True
    """
    rgb = np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)], dtype=np.float64)
    out = colour
    for k in range(101):
        out = "#" + "".join(f"{int(round(v)):02x}" for v in rgb * (1 - k / 100))
        if contrast_ratio(out, bg) >= ratio:
            break
    return out


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
        colorway=list(COLORWAY),
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
    """Bar marker of the target p: a vermillion outline, no fill (what sits inside it shows through)."""
    return dict(color=TRANSPARENT, line=dict(color=PALETTE["p"], width=width))


def q_fill(width: float = 1.5) -> dict:
    """Bar marker of the draft q: translucent grey with a grey edge."""
    return dict(color=rgba(PALETTE["q"], 0.3), line=dict(color=PALETTE["q"], width=width))


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
