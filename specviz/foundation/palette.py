"""The one home of specviz's colours: roles, series, patterns, marks, pass/fail, token fates and colour helpers.

No plotly and no numpy here (plain Python), so the text views (`specviz.lm.stats.fates`,
`specviz.samplers.audit`, the exercises) and the figures share one colour language; every other
module takes its colours from this one (tests/test_palette.py: no hex colour elsewhere).

>>> PALETTE["overlap"], FATE_COLORS["accepted"] == PALETTE["overlap"]
('#0072B2', True)
>>> rgba(PALETTE["overlap"], 0.5), round(contrast_ratio(INK["text"]), 1)
('rgba(0,114,178,0.5)', 14.7)
"""

from __future__ import annotations

from collections.abc import Iterable

PALETTE = {
    # Okabe & Ito's colour-blind-safe set ("Color Universal Design", 2008, jfly.uni-koeln.de/color/):
    # every pair below stays apart under simulated protanopia, deuteranopia and tritanopia
    # (tests/test_palette.py: Machado et al. 2009 matrices, CIELAB distance).
    "overlap": "#0072B2",  # blue: min(p, q), accepted
    "residual": "#009E73",  # bluish green (dotted): (p - q)+, resampled after a rejection
    "p": "#D55E00",  # vermillion: the target p (outline)
    "q": "#5A5A5A",  # dark grey: the draft q
    "rejected": "#E69F00",  # orange (hatched): (q - p)+, draft mass that is rejected
    "empirical": "#CC79A7",  # reddish purple: anything measured by sampling
    "reference": "#56B4E9",  # sky blue: reference curves (1/sqrt(n), limits)
    "lossy": "#8C510A",  # brown: lossy rules / variants
    "exact": "#0B3D91",  # dark blue: the exact value's tick over sampled bars
    "dtypes": {"float64": "#0072B2", "float32": "#009E73", "float16": "#E69F00", "bfloat16": "#D55E00"},
}
"""The shared colour language of every specviz figure (colour-blind safe; see `PATTERNS` for greyscale)."""

LOSSLESS_SERIES = (PALETTE["overlap"], PALETTE["reference"], "#004C77", PALETTE["residual"])
"""Colours of several lossless variants in one figure (blues and the residual's green)."""
LOSSY_SERIES = (PALETTE["rejected"], PALETTE["lossy"], PALETTE["empirical"], PALETTE["p"], "#7A6A00", "#000000")
"""Colours of several lossy variants in one figure (oranges, browns, purple, black)."""

COLORWAY = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
"""Okabe & Ito's eight colours: plotly's colours for traces that set none (e.g. one curve per α)."""

PATTERNS = {"overlap": "", "residual": ".", "rejected": "/"}
"""plotly bar pattern (marker.pattern.shape) per mass: solid overlap, dotted residual, hatched rejected
mass, so the three differ without colour (in greyscale, print, or for colour-blind readers)."""

MASS_MARKS = {"overlap": "✓", "residual": "↻", "rejected": "✗"}
"""The mark before a mass's value in its bar (accepted, resampled, rejected): a label that needs no colour."""

FATE_COLORS = {
    "accepted": PALETTE["overlap"],  # blue: a draft token the target kept (the min(p, q) part)
    "resampled": PALETTE["residual"],  # bluish green: drawn from (p - q)+ after a rejection
    "bonus": PALETTE["empirical"],  # reddish purple: the extra token from p when all γ drafts pass
    "target": PALETTE["p"],  # vermillion: a plain draw from the target (autoregressive / γ = 0)
}
"""Colour of each token fate, the money diagram's roles (blue overlap, green residual); labels say it too."""

STATUS = {
    "pass": "#1a7f37",  # green: a check or an answer that passed
    "fail": "#cf222e",  # red: one that failed
    "info": "#0550ae",  # blue: not answered yet, or a note
    "near": "#9a6700",  # amber: close, but not close enough
}
"""Text colours of a verdict (all reach WCAG AA 4.5:1 on white, and the verdict is also said in words)."""

STATUS_BG = {"pass": "#dafbe1", "fail": "#ffebe9", "fail_border": "#ff818266"}
"""Backgrounds (and the error box's translucent border) behind a verdict's text."""

INK = {
    "text": "#24292f",  # near-black: body text, the selected token's outline
    "dim": "#57606a",  # grey: secondary text (the prompt, notes)
    "mark": "#222222",  # near-black: markers' edges, the draft tree's chosen path
    "axis": "#444444",  # dark grey: axis lines, the draft tree's root
    "zeroline": "#999999",  # mid grey: a y = 0 line, reference lines, an unknown fate
    "edge": "#b0b0b0",  # light grey: the draft tree's edges
    "border": "#d0d7de",  # light grey: box borders
    "grid": "#e5e5e5",  # lighter grey: grid lines
    "rule": "#eeeeee",  # lightest grey: table rules
    "panel": "#f6f8fa",  # off-white: a note's background
    "cell": "#f0f0f0",  # off-white: a table's total column
    "header": "#e8eef7",  # pale blue: a table's header
}
"""The neutral greys of text, axes, grids, borders and panels."""

TRANSPARENT = "rgba(0,0,0,0)"
"""A fill that draws nothing: outline-only bars (the target p) use it."""


def pass_fail(passed: bool) -> str:
    """The text colour of a verdict: STATUS["pass"] or STATUS["fail"].

    >>> pass_fail(True) == STATUS["pass"]
    True
    """
    return STATUS["pass" if passed else "fail"]


def rgb(colour: str) -> tuple[int, int, int]:
    """The (r, g, b) bytes of a "#rrggbb" colour (an alpha byte, if any, is ignored).

    >>> rgb("#0072B2")
    (0, 114, 178)
    """
    return tuple(int(colour[i : i + 2], 16) for i in (1, 3, 5))


def hex_colour(r: float, g: float, b: float) -> str:
    """The "#rrggbb" colour of three 0-255 channel values (rounded).

    >>> hex_colour(0, 114, 178)
    '#0072b2'
    """
    return "#" + "".join(f"{int(round(v)):02x}" for v in (r, g, b))


def rgba(colour: str, alpha: float) -> str:
    """A "#rrggbb" colour as a CSS rgba() string with opacity `alpha`.

    >>> rgba("#0072B2", 0.5)
    'rgba(0,114,178,0.5)'
    """
    r, g, b = rgb(colour)
    return f"rgba({r},{g},{b},{alpha:g})"


def relative_luminance(colour: str) -> float:
    """WCAG 2 relative luminance of a "#rrggbb" colour (0 = black, 1 = white)."""
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in (v / 255.0 for v in rgb(colour))]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


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
    channels = rgb(colour)
    out = colour
    for k in range(101):
        out = hex_colour(*(v * (1 - k / 100) for v in channels))
        if contrast_ratio(out, bg) >= ratio:
            break
    return out


def bar_labels(values: Iterable[float], fmt: str = "{:.2f}") -> list[str]:
    """Bar text: the value, or '' for (numerically) zero bars."""
    return [fmt.format(v) if abs(v) > 1e-12 else "" for v in values]


def mass_labels(role: str, values: Iterable[float], fmt: str = "{:.2f}") -> list[str]:
    """Bar text of a mass: its mark and value ("✓ 0.40"), or '' for (numerically) zero bars.

    >>> mass_labels("residual", [0.2, 0.0])
    ['↻ 0.20', '']
    """
    return bar_labels(values, MASS_MARKS[role] + " " + fmt)


__all__ = [
    "PALETTE",
    "LOSSLESS_SERIES",
    "LOSSY_SERIES",
    "COLORWAY",
    "PATTERNS",
    "MASS_MARKS",
    "FATE_COLORS",
    "STATUS",
    "STATUS_BG",
    "INK",
    "TRANSPARENT",
    "pass_fail",
    "rgb",
    "hex_colour",
    "rgba",
    "relative_luminance",
    "contrast_ratio",
    "text_colour",
    "bar_labels",
    "mass_labels",
]
