"""Notebook set-up: the language of figures and apps, and static images for readers without a kernel.

Every tutorial starts with `sv.notebook_setup(lang="en")` (or `lang="zh"` in its Chinese twin).
It sets the language of every figure and app built afterwards, and makes each output carry a
static picture beside the interactive one: plotly figures a PNG, apps a snapshot (control
values and PNGs of their figures). JupyterLab and Voila still show the live versions; GitHub,
nbviewer and HTML exports show the pictures.
"""

from __future__ import annotations

from .foundation.i18n import set_language

RENDERER = "specviz_static"
"""Name of the plotly renderer `notebook_setup` registers and makes the default."""


def notebook_setup(lang: str = "en", static: bool = True) -> None:
    """Set the language ("en" or "zh") and, with `static`, add static images to figure and app outputs."""
    if not isinstance(static, bool):
        raise ValueError(f"static must be True or False, got {static!r}")
    set_language(lang)
    from .widgets.fastload import defer_rfc3987_syntax

    defer_rfc3987_syntax()  # plotly.io's renderers import jsonschema: ~1.3 s less per notebook (widgets.fastload)
    import plotly.io as pio

    from .figures.static import StaticImageRenderer
    from .widgets.snapshot import enable_snapshots

    if static:
        pio.renderers[RENDERER] = StaticImageRenderer()
        pio.renderers.default = RENDERER
    elif pio.renderers.default == RENDERER:
        pio.renderers.default = "plotly_mimetype"
    enable_snapshots(static)
