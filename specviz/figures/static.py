"""Static images of figures, for readers without a kernel (GitHub, nbviewer, HTML exports).

`figure_png(fig)` renders a figure to PNG bytes through kaleido (which drives a
Chrome/Chromium); it returns None, and records why in `static_image_problem()`, when no
browser or kaleido is available, so a notebook still runs, only without the picture.
`StaticImageRenderer` is a plotly renderer that puts the interactive plotly JSON and
that PNG in one output, so JupyterLab shows the live figure and static viewers the image.
With `DEFER_ENV` set (the book's batch execution), the picture is drawn after the run instead,
by `draw_deferred_outputs`, in one process for every notebook.

>>> png_data_uri(b"PNG")
'data:image/png;base64,UE5H'
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import warnings
from pathlib import Path

from plotly.io.base_renderers import MimetypeRenderer, PlotlyRenderer

from .export import find_browser, render_retrying

DEFAULT_WIDTH = 900
"""Width in pixels of a static image when the figure sets none."""

DEFER_ENV = "SPECVIZ_DEFER_PNG"
"""When this names a folder, `figure_png` saves the figure there and returns a placeholder instead of
drawing it; `draw_deferred` draws it later. tools/book.py executes the tutorials this way, so that one
process with one browser draws every notebook's pictures (each kernel would start its own, ~3 s each)."""
PLACEHOLDER = b"specviz-deferred-png:"
"""What a deferred PNG holds: this prefix, then the key of the figure saved in the DEFER_ENV folder."""
PLACEHOLDER_B64 = base64.b64encode(PLACEHOLDER).decode()
"""How a placeholder's base64 text starts (21 bytes: whole 3-byte groups, so whatever follows leaves it as is)."""

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
    folder = os.environ.get(DEFER_ENV)
    if folder:
        return _defer(fig, width, height, Path(folder))
    browser = find_browser()
    if browser is None:
        _problem = "no Chrome/Chromium found for kaleido (set BROWSER_PATH)"
        return None
    os.environ.setdefault("BROWSER_PATH", browser)
    try:
        _start_server()
        with warnings.catch_warnings():  # plotly passes options a running kaleido server ignores
            warnings.filterwarnings("ignore", message="The kopts argument is ignored", category=UserWarning)
            png = render_retrying(lambda: pio.to_image(fig, format="png", width=width, height=height))
    except Exception as e:  # noqa: BLE001 - a missing image must never stop a notebook
        _problem = f"{type(e).__name__}: {e}"
        return None
    _problem = None
    return png


def _defer(fig, width, height, folder: Path) -> bytes:
    """Save `fig` with its size under `folder` and return the placeholder that names it."""
    import plotly.io as pio

    text = json.dumps({"figure": json.loads(pio.to_json(fig)), "width": width, "height": height}, sort_keys=True)
    key = hashlib.sha256(text.encode()).hexdigest()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{key}.json").write_text(text, encoding="utf-8")
    return PLACEHOLDER + key.encode()


def draw_deferred(png: bytes, folder: Path) -> bytes | None:
    """The PNG that a placeholder from `figure_png` (under DEFER_ENV = `folder`) stands for, drawn now.

    Bytes that are not a placeholder come back unchanged; None when the picture cannot be drawn
    (as `figure_png` itself returns None: no browser, a saved figure gone).
    """
    if not png.startswith(PLACEHOLDER):
        return png
    saved = Path(folder) / f"{png[len(PLACEHOLDER) :].decode()}.json"
    if not saved.is_file():
        return None
    spec = json.loads(saved.read_text(encoding="utf-8"))
    return figure_png(spec["figure"], spec["width"], spec["height"])


_DATA_URI_IMG = re.compile(r"<img src='data:image/png;base64,([A-Za-z0-9+/=]+)'[^>]*>")


def draw_deferred_outputs(outputs: list, folder: Path) -> int:
    """Replace every placeholder PNG in notebook `outputs` (plotly figures' image/png, app snapshots' <img>)
    by the picture, drawn now; a picture that cannot be drawn is left out, as `figure_png` leaves it out.
    Returns how many were drawn."""
    drawn = 0

    def swap(b64: str) -> str | None:
        nonlocal drawn
        if not b64.startswith(PLACEHOLDER_B64):  # a real PNG: not decoded
            return b64
        png = draw_deferred(base64.b64decode(b64), folder)
        drawn += png is not None
        return None if png is None else base64.b64encode(png).decode("ascii")

    def swap_img(m: re.Match) -> str:
        new = swap(m.group(1))
        return "" if new is None else m.group(0).replace(m.group(1), new)

    for out in outputs:
        data = out.get("data", {})
        if "image/png" in data:
            new = swap(data["image/png"])
            if new is None:
                del data["image/png"]
            else:
                data["image/png"] = new
        text = data.get("text/html", "")
        text = "".join(text) if isinstance(text, list) else text
        if PLACEHOLDER_B64 in text:
            data["text/html"] = _DATA_URI_IMG.sub(swap_img, text)
    return drawn


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
