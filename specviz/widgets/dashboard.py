"""The dashboard: every app in one `ipywidgets.Tab`, each tab built the first time it is shown."""

from __future__ import annotations

import html
from collections.abc import Callable

import ipywidgets as W

from .base import error_html
from .fastload import defer_rfc3987_syntax
from .gamma import gamma_app
from .money import money_diagram_app
from .monte_carlo import monte_carlo_app
from .multidraft import multidraft_app
from .numerics import numerics_app
from .pitfalls import pitfall_app
from .standardization import standardization_app

DASHBOARD_TABS = (
    (
        "Money diagram",
        "Drag p and q: the blue overlap min(p, q) plus the green residual (p − q)⁺ always fills the red outline p "
        "— that is the whole proof; use Next/Back to walk through it in three steps.",
        lambda: money_diagram_app(annotate=False),
    ),  # the numbers panel shows P(accept), Z, p′
    (
        "Sampling check",
        "Run the sampler many times: the histogram converges to p, its accepted part to min(p, q) and its "
        "resampled part to (p − q)⁺, and a chi-square audit gives the verdict.",
        lambda: monte_carlo_app(),
    ),
    (
        "Pitfalls",
        "Rules that look plausible — resampling from p, from |p − q|, lenient or typical acceptance — "
        "miss the red outline, and the audit catches them.",
        lambda: pitfall_app(),
    ),
    (
        "γ-steps & trees",
        "Drafting γ tokens per target call multiplies throughput, and verifying several drafts stays lossless "
        "only if the residual is updated after each rejection.",
        lambda: W.VBox([gamma_app(), multidraft_app()]),
    ),
    (
        "Numerics",
        "The proof assumes exact arithmetic and one standardised distribution: low precision and "
        "mismatched temperature / top-k move the output away from p.",
        lambda: W.VBox([numerics_app(), standardization_app()]),
    ),
)
"""The dashboard's tabs: (title, one-sentence explanation, zero-argument factory)."""


class DashboardApp(W.VBox):
    """All apps in one `ipywidgets.Tab`, each tab built on first view (keeps the first plot fast).

    Handles: `tabs` (the Tab), `titles` (tab titles), `apps` (title -> built widget),
    `build(i)`, `build_all()`, `add_tab(title, widget_or_factory, explanation)`.
    """

    def __init__(self, extra_tabs=None, lazy: bool = True):
        defer_rfc3987_syntax()  # before the first tab's FigureWidget: see specviz.widgets.fastload
        self.tabs = W.Tab()
        self.tabs.add_class("specviz-dashboard-tabs")
        self.titles: list[str] = []
        self.apps: dict[str, W.Widget] = {}
        self._factories: list[Callable[[], W.Widget]] = []
        self._explanations: list[str] = []
        self._bodies: list[W.VBox] = []
        super().__init__(
            [W.HTML("<h2 style='margin:4px 0'>specviz — why speculative decoding is lossless</h2>"), self.tabs]
        )
        self.add_class("specviz-dashboard")
        for title, text, factory in DASHBOARD_TABS:
            self.add_tab(title, factory, text)
        for item in extra_tabs or ():
            self.add_tab(*item)
        self.tabs.observe(lambda ch: self.build(ch["new"]), names="selected_index")
        self.tabs.selected_index = 0
        self.build(0)
        if not lazy:
            self.build_all()

    def add_tab(self, title: str, widget_or_factory, explanation: str = "") -> None:
        """Append a tab (e.g. a "Real models" tab); a callable is built when the tab is first shown."""
        factory = (
            widget_or_factory
            if callable(widget_or_factory) and not isinstance(widget_or_factory, W.Widget)
            else (lambda w=widget_or_factory: w)
        )
        body = W.VBox(
            [W.HTML(f"<p class='specviz-tab-explanation'>{html.escape(explanation)}</p>"), W.HTML("<i>loading…</i>")]
        )
        self.titles.append(title)
        self._factories.append(factory)
        self._explanations.append(explanation)
        self._bodies.append(body)
        self.tabs.children = list(self.tabs.children) + [body]
        self.tabs.titles = tuple(self.titles)

    def build(self, i) -> W.Widget | None:
        """Build tab i's app if it is not built yet; returns it."""
        if i is None or not 0 <= i < len(self.titles):
            return None
        title = self.titles[i]
        if title not in self.apps:
            body = self._bodies[i]
            try:
                app = self._factories[i]()
            except Exception as e:  # noqa: BLE001 - show, don't crash the dashboard
                app = W.HTML(error_html(f"could not build this tab: {type(e).__name__}: {e}"))
            self.apps[title] = app
            body.children = [body.children[0], app]
        return self.apps[title]

    def build_all(self) -> None:
        """Build every tab that is not built yet."""
        for i in range(len(self.titles)):
            self.build(i)


def dashboard_app(extra_tabs=None, lazy: bool = True) -> DashboardApp:
    """The whole course in one tabbed widget.

    Tabs: "Money diagram", "Sampling check", "Pitfalls", "γ-steps & trees", "Numerics",
    each with a one-sentence explanation. `extra_tabs`: a list of
    (title, widget or zero-argument factory[, explanation]) appended after them — the
    hook for e.g. a "Real models" tab. Tabs are built when first selected (`lazy`).
    """
    return DashboardApp(extra_tabs, lazy=lazy)
