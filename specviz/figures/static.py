"""Static images of figures, for readers without a kernel (GitHub, nbviewer, HTML exports).

`figure_png(fig)` renders a figure to PNG bytes through kaleido (which drives a
Chrome/Chromium); it returns None, and records why in `static_image_problem()`, when no
browser or kaleido is available, so a notebook still runs, only without the picture.
`StaticImageRenderer` is a plotly renderer that puts the interactive plotly JSON and
that PNG in one output, so JupyterLab shows the live figure and static viewers the image.
A browser that cannot start or never answers costs at most `WAIT_S`, once per process; in the book's
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
import threading
import time
import warnings
import weakref
from pathlib import Path

from plotly.io.base_renderers import MimetypeRenderer, PlotlyRenderer

from .export import find_browser, render_retrying

DEFAULT_WIDTH = 900
"""Width in pixels of a static image when the figure sets none."""

DEFER_ENV = "SPECVIZ_DEFER_PNG"
"""When this names a folder that `defer_into` marked, `figure_png` saves the figure there and returns a
placeholder; `draw_deferred` draws it later. tools/book.py runs the tutorials so: one browser draws every
notebook's pictures (each kernel would start its own, ~3 s each). Any other value is ignored, said once."""
DEFER_MARKER = ".specviz-book-build"
"""The file `defer_into` writes into the book build's folder (a folder without it is not honoured)."""
WAIT_S = 120.0
"""The longest wait for one picture, the browser's start included (kaleido's limit is 90 s an image)."""
PLACEHOLDER = b"specviz-deferred-png:"
"""What a deferred PNG holds: this prefix, then the key of the figure saved in the DEFER_ENV folder."""
PLACEHOLDER_B64 = base64.b64encode(PLACEHOLDER).decode()
"""How a placeholder's base64 text starts (21 bytes: whole 3-byte groups, so whatever follows leaves it as is)."""

_problem: str | None = None
_server_started = False
_failed: dict = {}  # browser path -> why it could not draw (not tried again in this process)
_died: list = []  # the exception that ended kaleido's server thread (kept here, not printed as a traceback)
_warned_defer = False


def static_image_problem() -> str | None:
    """Why the last static image could not be made (None when the last one worked)."""
    return _problem


def _start_server() -> None:
    """Start kaleido's browser once per process (then ~0.2 s an image, not ~3 s): the one `find_browser` found,
    named to kaleido, so a stale $BROWSER_PATH that `find_browser` passed over is not used behind its back."""
    global _server_started
    if _server_started:
        return
    import kaleido

    _keep_server_death()
    _died.clear()
    # make Python's finalizers' exit hook run after kaleido's (atexit is last-in first-out); else the browser's
    # profile folder is removed while the browser still writes there, at times with a traceback at exit
    weakref.finalize(_start_server, int)
    kaleido.start_sync_server(path=find_browser(), silence_warnings=True)
    _server_started = True


def _server_thread():
    """The thread of kaleido's running sync server (None when none runs or kaleido keeps it elsewhere)."""
    import kaleido

    server = getattr(kaleido, "_global_server", None)
    return getattr(server, "_thread", None) if server is not None and server.is_running() else None


def _keep_server_death() -> None:
    """Keep the error that ends kaleido's server thread (a browser that cannot start) for the reason, not stderr."""
    previous = threading.excepthook
    if getattr(previous, "specviz_keeps_server_death", False):
        return

    def hook(args):
        if args.thread is not None and args.thread is _server_thread():
            _died.append(args.exc_value)
            return
        previous(args)

    hook.specviz_keeps_server_death = True
    threading.excepthook = hook


def _stop_dead_server() -> None:
    """Forget a server whose thread has ended (kaleido's close() returns at once then), so none is reused."""
    global _server_started
    if (thread := _server_thread()) is not None and not thread.is_alive():
        import kaleido

        kaleido.stop_sync_server(silence_warnings=True)
    _server_started = False


def _why(e: BaseException) -> str:
    """An exception in one line: its type and first argument (kaleido's errors carry tuples of hints)."""
    hints = len(e.args) > 1 and all(isinstance(a, str) for a in e.args)
    return f"{type(e).__name__}: {e.args[0] if hints else e}".rstrip(": ")


def _end_stuck_browser(grace_s: float = 10.0) -> None:
    """SIGTERM choreographer's wrapper (our child; it ends the browser) of a browser that never answered (Linux)."""
    import signal  # (else kaleido's exit hook would wait for that browser when the process ends)

    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = stat.read_text().rsplit(")", 1)[1].split()[1]
            cmd = (stat.parent / "cmdline").read_bytes()
            if ppid == str(os.getpid()) and b"_unix_pipe_chromium_wrapper" in cmd:
                os.kill(int(stat.parent.name), signal.SIGTERM)
        except (OSError, IndexError, ValueError):  # gone meanwhile, or not ours to read
            continue
    if (thread := _server_thread()) is not None:
        thread.join(grace_s)  # the server then fails as for a browser that did not start
        _stop_dead_server()


class BrowserFailed(RuntimeError):
    """The browser did not start, or gave no picture in WAIT_S: not tried again in this process."""


def _bounded(render, browser: str):
    """render() in a worker thread, waited for at most WAIT_S; BrowserFailed at once when the browser died."""
    box: dict = {}

    def work():
        try:
            box["png"] = render()
        except BaseException as e:  # noqa: BLE001 - passed on to the caller below
            box["error"] = e

    worker = threading.Thread(target=work, name="specviz-figure-png", daemon=True)
    worker.start()
    deadline = time.monotonic() + WAIT_S
    while True:
        worker.join(0.02)
        if not worker.is_alive():
            break
        server = _server_thread()
        if server is not None and not server.is_alive():  # kaleido waits for ever on a server that died
            cause = f" ({_why(_died[-1])})" if _died else ""
            _stop_dead_server()
            raise BrowserFailed(f"the browser {browser} did not start{cause}; set BROWSER_PATH to a working one")
        if time.monotonic() > deadline:
            _end_stuck_browser()
            raise BrowserFailed(f"the browser {browser} gave no picture in {WAIT_S:g} s; restart to try again")
    if "error" in box:
        raise box["error"]
    return box["png"]


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
        _problem = "no Chrome/Chromium found for kaleido (set BROWSER_PATH)"
        return None
    if browser in _failed:
        _problem = _failed[browser]
        return None

    def render():
        with warnings.catch_warnings():  # plotly passes options a running kaleido server ignores
            warnings.filterwarnings("ignore", message="The kopts argument is ignored", category=UserWarning)
            return render_retrying(lambda: pio.to_image(fig, format="png", width=width, height=height))

    try:
        _start_server()
        png = _bounded(render, browser)
    except BrowserFailed as e:  # one broken browser must not cost every later figure its own wait
        _problem = _failed[browser] = str(e)
        return None
    except Exception as e:  # noqa: BLE001 - a missing image must never stop a notebook
        _problem = _why(e)
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
