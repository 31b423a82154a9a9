"""A static snapshot of an app: its controls' values and its figures as PNGs, as one HTML block.

Static viewers (GitHub, nbviewer, nbconvert HTML) cannot run widgets; when snapshots are on
(`enable_snapshots()`, done by `specviz.notebook_setup`) every `App` adds this HTML to its
output next to the live widget, so a reader without a kernel still sees what it showed.
"""

from __future__ import annotations

import html

import ipywidgets as W
import plotly.graph_objects as go

from ..figures.static import figure_png, png_data_uri
from ..foundation.i18n import t

_enabled = False


def enable_snapshots(on: bool = True) -> None:
    """Turn the static snapshots of apps on (or off) for this process."""
    global _enabled
    _enabled = bool(on)


def snapshots_enabled() -> bool:
    """Whether apps add a static snapshot to their output."""
    return _enabled


def walk(widget):
    """Every widget inside `widget` (itself first), depth first."""
    yield widget
    for child in getattr(widget, "children", ()) or ():
        yield from walk(child)


def control_text(widget) -> str | None:
    """'description: value' of a value control (slider, dropdown, toggle, ...), None for other widgets."""
    skip = W.HTML | W.HTMLMath | W.Label | W.Output | W.Play | W.Text | W.Textarea
    if isinstance(widget, W.ValueWidget) and not isinstance(widget, skip):
        name = widget.description or type(widget).__name__
        value = widget.value
        if isinstance(value, float):
            value = f"{value:.4g}"
        return f"{name}: {value}"
    return None


def snapshot_html(app) -> str:
    """The static snapshot of `app`: a line of control values, then each figure as an <img>."""
    parts, controls = [], []
    for w in walk(app):
        text = control_text(w)
        if text:
            controls.append(html.escape(text))
        elif isinstance(w, go.FigureWidget):
            png = figure_png(go.Figure(w))
            if png is not None:
                title = w.layout.title.text or t("app.figure")
                parts.append(f"<img src='{png_data_uri(png)}' alt='{html.escape(title)}' style='max-width:100%'>")
    head = f"<p class='specviz-snapshot-controls'>{' · '.join(controls)}</p>" if controls else ""
    return f"<div class='specviz-snapshot'>{head}{''.join(parts)}</div>"
