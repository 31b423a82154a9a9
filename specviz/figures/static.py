"""Static images of figures, for readers without a kernel (GitHub, nbviewer, HTML exports).

`figure_png(fig)` renders a figure to PNG bytes through kaleido (which drives a
Chrome/Chromium); it returns None, and records why in `static_image_problem()`, when no
browser or kaleido is available, so a notebook still runs, only without the picture.
`StaticImageRenderer` is a plotly renderer that puts the interactive plotly JSON and
that PNG in one output, so JupyterLab shows the live figure and static viewers the image.
A browser that cannot start or never answers costs at most `export.WAIT_S`, once per process; in the book's
batch run (`DEFER_ENV`) pictures are drawn after it, by `draw_deferred_outputs`, all in one process.

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

from .export import BrowserFailed, bounded, find_browser, one_line, passed_over, render_retrying, start_server

DEFAULT_WIDTH = 900
"""Width in pixels of a static image when the figure sets none."""

DEFER_ENV = "SPECVIZ_DEFER_PNG"
"""When this names a folder that `defer_into` marked, `figure_png` saves the figure there and returns a
placeholder; `draw_deferred` draws it later. tools/book.py runs the tutorials so: one browser draws every
notebook's pictures (each kernel would start its own, ~3 s each). Any other value is ignored, said once."""
DEFER_MARKER = ".specviz-book-build"
"""The file `defer_into` writes into the book build's folder (a folder without it is not honoured)."""
PLACEHOLDER = b"specviz-deferred-png:"
"""What a deferred PNG holds: this prefix, then the key of the figure saved in the DEFER_ENV folder."""
PLACEHOLDER_B64 = base64.b64encode(PLACEHOLDER).decode()
"""How a placeholder's base64 text starts (21 bytes: whole 3-byte groups, so whatever follows leaves it as is)."""

_problem: str | None = None
_warned_defer = False


def static_image_problem() -> str | None:
    """Why the last static image could not be made (None when the last one worked)."""
    return _problem


def _start_server() -> None:
    """kaleido's browser, the one `find_browser` finds, started once per process (`export.start_server`)."""
    start_server(find_browser())


def defer_into(folder) -> str:
    """Prepare `folder` for deferred pictures (the book build sets DEFER_ENV to what this returns)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / DEFER_MARKER).write_text("specviz book build: figures saved here are drawn after the run\n")
    return str(folder)


def _defer_folder() -> Path | None:
    """The book build's folder for deferred pictures, else None (a hand-set DEFER_ENV is ignored, with a warning)."""
    global _warned_defer
    value = os.environ.get(DEFER_ENV)
    if not value:
        return None
    folder = Path(value)
    if (folder / DEFER_MARKER).is_file():
        return folder
    if not _warned_defer:
        _warned_defer = True
        say = f"{DEFER_ENV}={value!r} is ignored: it is an internal switch of the book build (tools/book.py)"
        warnings.warn(say + "; figures are drawn as usual", UserWarning, stacklevel=3)
    return None


def figure_png(fig, width: int | None = None, height: int | None = None) -> bytes | None:
    """PNG bytes of `fig` (a go.Figure or its dict), or None when no static export is possible here."""
    global _problem
    import plotly.io as pio

    layout = fig.get("layout", {}) if isinstance(fig, dict) else fig.to_plotly_json().get("layout", {})
    width = width or layout.get("width") or DEFAULT_WIDTH
    height = height or layout.get("height")
    folder = _defer_folder()
    if folder is not None:
        return _defer(fig, width, height, folder)
    browser = find_browser()
    if browser is None:
        _problem = "no Chrome/Chromium found for kaleido (set BROWSER_PATH)" + passed_over()
        return None

    def render():
        with warnings.catch_warnings():  # plotly passes options a running kaleido server ignores
            warnings.filterwarnings("ignore", message="The kopts argument is ignored", category=UserWarning)
            return render_retrying(lambda: pio.to_image(fig, format="png", width=width, height=height))

    try:
        _start_server()  # BrowserFailed at once for a browser that failed before: one wait, not one a figure
        png = bounded(render, browser)
    except Exception as e:  # noqa: BLE001 - a missing image must never stop a notebook
        _problem = str(e) if isinstance(e, BrowserFailed) else one_line(e)
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
    """The PNG that a placeholder from `figure_png` (under DEFER_ENV = `folder`) stands for, drawn now; other bytes
    unchanged; None when it cannot be drawn (as `figure_png` returns None: no browser, a saved figure gone)."""
    if not png.startswith(PLACEHOLDER):
        return png
    saved = Path(folder) / f"{png[len(PLACEHOLDER) :].decode()}.json"
    if not saved.is_file():
        return None
    spec = json.loads(saved.read_text(encoding="utf-8"))
    return figure_png(spec["figure"], spec["width"], spec["height"])


_DATA_URI_IMG = re.compile(r"<img src='data:image/png;base64,([A-Za-z0-9+/=]+)'[^>]*>")


def draw_deferred_outputs(outputs: list, folder: Path) -> int:
    """Replace every placeholder PNG in notebook `outputs` (figures' image/png, app snapshots' <img>) by the picture,
    drawn now (one that cannot be drawn is left out, as `figure_png` leaves it out); returns how many were drawn."""
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
