"""Figures to files: standalone HTML (plotly.js embedded, works offline) or static images through kaleido, and the
one browser kaleido draws with (`find_browser`), started once per process (`start_server`), each picture bounded
(`bounded`): a browser that cannot start or never answers ends in `BrowserFailed`, naming it and why.

>>> import plotly.graph_objects as go
>>> export_figure(go.Figure(), "figure.txt")
Traceback (most recent call last):
...
ValueError: unsupported export format '.txt': use .html, .png, .svg, .pdf, .jpeg or .webp
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
import time
import warnings
import weakref
from pathlib import Path


def find_browser() -> str | None:
    """A Chrome/Chromium for static export: $BROWSER_PATH, /usr/bin/chromium, or one on PATH."""
    env = os.environ.get("BROWSER_PATH")
    candidates = [env, "/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]
    candidates += [shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome", "chrome")]
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


PAGE_NOT_READY = "kaleido_scopes is not defined"
"""What kaleido (1.x) raises when it renders before its page has loaded: a race of its own, seen under CPU
load (3 renders in 15 failed with both cores busy), gone on a second try."""
RENDER_TRIES = 5
"""Renders tried in all by `render_retrying` before a PAGE_NOT_READY failure is passed on."""


def render_retrying(render, tries: int = RENDER_TRIES):
    """`render()` (a call into kaleido), again while it fails with PAGE_NOT_READY, `tries` times in all.

    >>> calls = []
    >>> def flaky():
    ...     calls.append(1)
    ...     if len(calls) < 3:
    ...         raise RuntimeError("ReferenceError: " + PAGE_NOT_READY)
    ...     return b"PNG"
    >>> render_retrying(flaky), len(calls)
    (b'PNG', 3)
    """
    for attempt in range(1, tries + 1):
        try:
            return render()
        except Exception as e:
            if PAGE_NOT_READY not in str(e) or attempt == tries:
                raise


_NO_BROWSER = (
    "static image export (PNG/SVG/PDF) needs Chrome or Chromium through kaleido, and none was found. "
    "Install one (Debian/Ubuntu: `apt-get install chromium`, or `make chromium`), or point "
    "BROWSER_PATH at an existing chrome/chromium binary. HTML export works without it."
)


WAIT_S = 120.0
"""The longest wait for one picture, the browser's start included (kaleido's limit is 90 s an image)."""

_server_started = False
_failed: dict = {}  # browser path -> why it could not draw (not tried again in this process)
_died: list = []  # the exception that ended kaleido's server thread (kept here, not printed as a traceback)


def start_server(browser: str) -> None:
    """Start kaleido's `browser` once per process (then ~0.2 s an image, not ~3 s), named to kaleido, so a stale
    $BROWSER_PATH that `find_browser` passed over is not used behind its back; `BrowserFailed` at once for a browser
    that failed before in this process."""
    global _server_started
    if browser in _failed:
        raise BrowserFailed(_failed[browser])
    if _server_started:
        return
    import kaleido

    _keep_server_death()
    quiet_ignored_messages()
    _died.clear()
    # make Python's finalizers' exit hook run after kaleido's (atexit is last-in first-out); else the browser's
    # profile folder is removed while the browser still writes there, at times with a traceback at exit
    weakref.finalize(start_server, int)
    kaleido.start_sync_server(path=browser, silence_warnings=True)
    _server_started = True


IGNORED_MESSAGE = "JSONError decoding message. Ignoring"
"""What choreographer (kaleido's browser driver) logs, with a full traceback, when a read off the browser's pipe
holds a piece that is not JSON (seen once in a CI run under load); it drops that piece and the picture is drawn."""
ignored_messages: list = []  # one line for each such piece dropped in this process (for a bug report, not stderr)


class _DropIgnored(logging.Filter):
    """Keeps choreographer's ignored-message log (and its traceback) off stderr, counted in `ignored_messages`."""

    def filter(self, record: logging.LogRecord) -> bool:
        if IGNORED_MESSAGE in str(record.msg):
            ignored_messages.append(one_line(record.exc_info[1]) if record.exc_info else IGNORED_MESSAGE)
            return False
        return True


def quiet_ignored_messages() -> None:
    """Install `_DropIgnored` once on choreographer's pipe logger: a lecturer's export prints no traceback it survived.

    >>> quiet_ignored_messages(); quiet_ignored_messages()
    >>> log = logging.getLogger("choreographer.channels.pipe")
    >>> sum(isinstance(f, _DropIgnored) for f in log.filters)
    1
    >>> try:
    ...     raise ValueError("Expecting property name")
    ... except ValueError:
    ...     log.exception(IGNORED_MESSAGE)
    >>> ignored_messages[-1]
    'ValueError: Expecting property name'
    """
    import choreographer.channels.pipe  # noqa: F401 - first, so its logger is logistro's class (it calls .debug2)

    log = logging.getLogger("choreographer.channels.pipe")
    if not any(isinstance(f, _DropIgnored) for f in log.filters):
        log.addFilter(_DropIgnored())


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


def one_line(e: BaseException) -> str:
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


def bounded(render, browser: str):
    """render() in a worker thread, waited for at most WAIT_S; `BrowserFailed` at once when the browser died (then
    `browser` is not tried again in this process)."""
    if browser in _failed:
        raise BrowserFailed(_failed[browser])
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
            cause = f" ({one_line(_died[-1])})" if _died else ""
            _stop_dead_server()
            _failed[browser] = f"the browser {browser} did not start{cause}; set BROWSER_PATH to a working one"
            raise BrowserFailed(_failed[browser])
        if time.monotonic() > deadline:
            _end_stuck_browser()
            _failed[browser] = (
                f"the browser {browser} gave no picture in {WAIT_S:g} s; restart Python (or the kernel) to try again"
            )
            raise BrowserFailed(_failed[browser])
    if "error" in box:
        raise box["error"]
    return box["png"]


def passed_over() -> str:
    """Why $BROWSER_PATH was not used (it names no executable file), or "" when it was or is unset."""
    value = os.environ.get("BROWSER_PATH")
    if not value or os.path.isfile(value) and os.access(value, os.X_OK):
        return ""
    return f" (BROWSER_PATH={value!r} names no executable file, so it was passed over)"


def export_figure(fig, path, width=None, height=None, scale=None, include_plotlyjs=True) -> Path:
    """Write `fig` to `path`: .html (standalone, plotly.js embedded for offline rooms) or .png/.svg/.pdf/.jpeg/.webp.

    Static formats use kaleido, which drives the Chrome/Chromium `find_browser` finds; without one a RuntimeError
    explains how to get it, and one that cannot start or gives no image in WAIT_S seconds a `BrowserFailed` (a
    RuntimeError) naming it and why. Returns the written path.
    """
    path = Path(path)
    fmt = path.suffix.lower().lstrip(".")
    if fmt in ("html", "htm"):
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.write_html(str(path), include_plotlyjs=include_plotlyjs, full_html=True, config={"displaylogo": False})
        return path
    if fmt not in ("png", "svg", "pdf", "jpg", "jpeg", "webp"):
        raise ValueError(f"unsupported export format {path.suffix!r}: use .html, .png, .svg, .pdf, .jpeg or .webp")
    browser = find_browser()
    if browser is None:
        raise RuntimeError(_NO_BROWSER + passed_over())
    try:
        import kaleido  # noqa: F401
    except ImportError:  # pragma: no cover - kaleido is a dependency
        raise RuntimeError("static export needs the `kaleido` package: pip install 'kaleido>=1'") from None
    path.parent.mkdir(parents=True, exist_ok=True)
    if width is None and fig.layout.width is None:
        width = 1000  # slides: wider than kaleido's 700 px default
    form = "jpeg" if fmt == "jpg" else fmt

    def render():
        with warnings.catch_warnings():  # plotly passes options a running kaleido server ignores
            warnings.filterwarnings("ignore", message="The kopts argument is ignored", category=UserWarning)
            write = lambda: fig.write_image(str(path), format=form, width=width, height=height, scale=scale)
            return render_retrying(write)

    start_server(browser)
    bounded(render, browser)
    return path
