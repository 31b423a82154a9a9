"""Figures to files: standalone HTML (plotly.js embedded, works offline) or static images through kaleido.

>>> import plotly.graph_objects as go
>>> export_figure(go.Figure(), "figure.txt")
Traceback (most recent call last):
...
ValueError: unsupported export format '.txt': use .html, .png, .svg, .pdf, .jpeg or .webp
"""

from __future__ import annotations

import os
import shutil
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


def export_figure(fig, path, width=None, height=None, scale=None, include_plotlyjs=True) -> Path:
    """Write `fig` to `path`: .html (standalone, plotly.js embedded for offline rooms) or .png/.svg/.pdf/.jpeg/.webp.

    Static formats use kaleido, which drives a Chrome/Chromium; without one a
    RuntimeError explains how to get it. Returns the written path.
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
    if browser is not None and not os.environ.get("BROWSER_PATH"):
        os.environ["BROWSER_PATH"] = browser  # kaleido 1.x reads it
    try:
        import kaleido  # noqa: F401
    except ImportError:  # pragma: no cover - kaleido is a dependency
        raise RuntimeError("static export needs the `kaleido` package: pip install 'kaleido>=1'") from None
    path.parent.mkdir(parents=True, exist_ok=True)
    if width is None and fig.layout.width is None:
        width = 1000  # slides: wider than kaleido's 700 px default
    try:
        form = "jpeg" if fmt == "jpg" else fmt
        render_retrying(lambda: fig.write_image(str(path), format=form, width=width, height=height, scale=scale))
    except Exception as e:  # kaleido raises RuntimeError/ChromeNotFoundError without a browser
        text = str(e)
        if browser is None or "chrome" in text.lower() and "install" in text.lower():
            raise RuntimeError(_NO_BROWSER) from e
        raise
    return path
