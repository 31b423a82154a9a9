"""Static images of figures, for readers without a kernel (GitHub, nbviewer, HTML exports).

`figure_png(fig)` renders a figure to PNG bytes through kaleido (which drives a
Chrome/Chromium); it returns None, and records why in `static_image_problem()`, when no
browser or kaleido is available, so a notebook still runs, only without the picture.
`StaticImageRenderer` is a plotly renderer that puts the interactive plotly JSON and
that PNG in one output, so JupyterLab shows the live figure and static viewers the image.

>>> png_data_uri(b"PNG")
'data:image/png;base64,UE5H'
"""

from __future__ import annotations

import base64
import os
import warnings

from plotly.io.base_renderers import MimetypeRenderer, PlotlyRenderer

from .export import find_browser

DEFAULT_WIDTH = 900
"""Width in pixels of a static image when the figure sets none."""

_problem: str | None = None
_server_started = False


def static_image_problem() -> str | None:
    """Why the last static image could not be made (None when the last one worked)."""
    return _problem


def _start_server() -> None:
    """Start kaleido's browser once per process (later images then take ~0.2 s instead of ~3 s)."""
    global _server_started
    if _server_started:
        return
    import kaleido

    kaleido.start_sync_server(silence_warnings=True)
    _server_started = True


def figure_png(fig, width: int | None = None, height: int | None = None) -> bytes | None:
    """PNG bytes of `fig` (a go.Figure or its dict), or None when no static export is possible here."""
    global _problem
    import plotly.io as pio

    layout = fig.get("layout", {}) if isinstance(fig, dict) else fig.to_plotly_json().get("layout", {})
    width = width or layout.get("width") or DEFAULT_WIDTH
    height = height or layout.get("height")
    browser = find_browser()
    if browser is None:
        _problem = "no Chrome/Chromium found for kaleido (set BROWSER_PATH)"
        return None
    os.environ.setdefault("BROWSER_PATH", browser)
    try:
        _start_server()
        with warnings.catch_warnings():  # plotly passes options a running kaleido server ignores
            warnings.filterwarnings("ignore", message="The kopts argument is ignored", category=UserWarning)
            png = pio.to_image(fig, format="png", width=width, height=height)
    except Exception as e:  # noqa: BLE001 - a missing image must never stop a notebook
        _problem = f"{type(e).__name__}: {e}"
        return None
    _problem = None
    return png


def png_data_uri(png: bytes) -> str:
    """`png` as a data: URI, for an <img> that needs no file."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


class StaticImageRenderer(MimetypeRenderer):
    """Plotly renderer: the interactive figure (plotly mimetype) plus a PNG of it in the same output."""

    def to_mimebundle(self, fig_dict):
        bundle = PlotlyRenderer().to_mimebundle(fig_dict)
        png = figure_png(fig_dict)
        if png is not None:
            bundle["image/png"] = base64.b64encode(png).decode("ascii")
        return bundle
