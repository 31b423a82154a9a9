"""`defer_rfc3987_syntax()`: a lazy stand-in for `rfc3987_syntax`, so the first FigureWidget comes sooner.

Why: creating the first `go.FigureWidget` imports plotly.io's renderers -> nbformat ->
jsonschema, whose format checkers import `rfc3987_syntax` when it is installed (Jupyter's
dependencies pull it in), and that module compiles ~40 lark grammars at import time:
about 1 s on an idle core here (2.5 s on a slower one), and on a busy 2-core machine the
Voila dashboard's first plot came 12-20 s sooner without it (benchmarks/bench_browser.py).

How: the stand-in goes into `sys.modules` and imports the real module on first use, so
jsonschema's "iri" format checks still work. It only helps if it is in place before
jsonschema is first imported, which in a kernel happens inside the first FigureWidget.

When: never at import time (importing a library must not change the interpreter for
code that never builds an app). `App.__init__`, `figure_widget` and `DashboardApp` call
it, explicitly, just before the first FigureWidget; later calls return at once.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types

MODULE = "rfc3987_syntax"


def defer_rfc3987_syntax() -> bool:
    """Put the lazy stand-in for `rfc3987_syntax` into `sys.modules` if it can still help; True if it is there."""
    current = sys.modules.get(MODULE)
    if current is not None:
        return getattr(current, "__specviz_stand_in__", False)
    if "jsonschema" in sys.modules:  # too late: jsonschema has already looked for the real module
        return False
    try:
        spec = importlib.util.find_spec(MODULE)
    except (ImportError, ValueError):
        return False
    if spec is None:
        return False
    sys.modules[MODULE] = _stand_in(spec)
    return True


def _stand_in(spec) -> types.ModuleType:
    """A module that replaces itself with the real `rfc3987_syntax` on first attribute use."""
    proxy = types.ModuleType(MODULE, "stand-in for rfc3987_syntax, imported on first use (specviz.widgets)")
    proxy.__spec__ = spec  # the real module's spec: importlib.util.find_spec still answers

    def real() -> types.ModuleType:
        if sys.modules.get(MODULE) is proxy:
            del sys.modules[MODULE]
        return importlib.import_module(MODULE)

    def is_valid_syntax(*args, **kwargs):
        return real().is_valid_syntax(*args, **kwargs)

    def getattr_(attr: str):
        if attr.startswith("__"):  # the import system probes __path__ etc.: not a reason to load
            raise AttributeError(attr)
        return getattr(real(), attr)

    proxy.__specviz_stand_in__ = True
    proxy.is_valid_syntax = is_valid_syntax
    proxy.__getattr__ = getattr_
    return proxy
