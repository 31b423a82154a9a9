"""The dashboard: every app in one `ipywidgets.Tab`, each tab built the first time it is shown.

Its text comes from the message catalogue (`specviz.foundation.i18n`); the language toggle on top
("English | 中文") switches the language and rebuilds the tabs in it:

>>> d = dashboard_app(lang="zh")
>>> d.titles[0], d.language.value
('质量分解图', 'zh')
>>> d.set_language("en"); d.titles[0]
'Money diagram'
"""

from __future__ import annotations

import html
from collections.abc import Callable

import ipywidgets as W

from ..foundation.i18n import CATALOGUE, LANGUAGES, check_language, language, set_language, t
from .a11y import HTML_LANG, a11y_helper
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
    # the money tab's numbers panel shows P(accept), Z, p′: no annotation above its plot
    ("dashboard.money", "dashboard.money_text", lambda: money_diagram_app(annotate=False)),
    ("dashboard.sampling", "dashboard.sampling_text", lambda: monte_carlo_app()),
    ("dashboard.pitfalls", "dashboard.pitfalls_text", lambda: pitfall_app()),
    ("dashboard.gamma", "dashboard.gamma_text", lambda: W.VBox([gamma_app(), multidraft_app()])),
    ("dashboard.numerics", "dashboard.numerics_text", lambda: W.VBox([numerics_app(), standardization_app()])),
)
"""The dashboard's tabs: (title message, explanation message, zero-argument factory); messages are catalogue keys."""

REAL_MODELS_TAB = ("dashboard.real_models", "dashboard.real_models_text")
"""Title and explanation messages of the optional "Real models" tab (`dashboard_app(real_models=...)`)."""


def localized(text) -> str:
    """`text` in the current language when it is a catalogue key, else `text` itself (a fixed title)."""
    return t(text) if isinstance(text, str) and text in CATALOGUE else str(text)


def language_toggle(lang: str | None = None) -> W.ToggleButtons:
    """The "English | 中文" switch; its label and tooltips are in both languages, so either reader finds it."""
    toggle = W.ToggleButtons(
        options=[(t("lang.name", lang=code), code) for code in LANGUAGES],
        value=check_language(lang or language()),
        description=" / ".join(t("lang.toggle", lang=code) for code in LANGUAGES),
        tooltips=[t("dashboard.language_tip", lang=code) for code in LANGUAGES],
        style={"button_width": "80px", "description_width": "initial"},
    )
    toggle.add_class("specviz-language")
    return toggle


def close_tree(widget: W.Widget) -> None:
    """Close `widget` and every widget inside it (frees their comms when a tab is rebuilt)."""
    for child in getattr(widget, "children", ()) or ():
        close_tree(child)
    widget.close()


class DashboardApp(W.VBox):
    """All apps in one `ipywidgets.Tab`, each tab built on first view (keeps the first plot fast).

    Handles: `tabs` (the Tab), `titles` (tab titles, current language), `apps` (title ->
    built widget), `language` (the "English | 中文" ToggleButtons), `build(i)`, `build_all()`,
    `add_tab(title, widget_or_factory, explanation)`, `set_language(lang)`. Titles and
    explanations that are catalogue keys follow the language; other text is shown as given.
    """

    def __init__(self, extra_tabs=None, lazy: bool = True, lang: str | None = None, real_models=None):
        if lang is not None:
            set_language(lang)
        defer_rfc3987_syntax()  # before the first tab's FigureWidget: see specviz.widgets.fastload
        self.tabs = W.Tab()
        self.tabs.add_class("specviz-dashboard-tabs")
        self.titles: list[str] = []
        self.apps: dict[str, W.Widget] = {}
        self._specs: list[tuple] = []  # (title, factory, explanation, fixed widget or None) as given
        self._bodies: list[W.VBox] = []
        self.heading, self.intro = W.HTML(), W.HTML()
        self.language = language_toggle()
        self.a11y = a11y_helper()  # names slider handles, readable tab titles, lang (specviz.widgets.a11y)
        super().__init__([self.heading, self.language, self.intro, self.tabs, self.a11y])
        self.add_class("specviz-dashboard")
        self._write_texts()
        for title, text, factory in DASHBOARD_TABS:
            self.add_tab(title, factory, text)
        if real_models is not None:
            self.add_tab(REAL_MODELS_TAB[0], real_models_factory(real_models), REAL_MODELS_TAB[1])
        for item in extra_tabs or ():
            self.add_tab(*item)
        self.tabs.observe(lambda ch: self.build(ch["new"]), names="selected_index")
        self.language.observe(lambda ch: self.set_language(ch["new"]), names="value")
        self.tabs.selected_index = 0
        self.build(0)
        if not lazy:
            self.build_all()

    def _write_texts(self) -> None:
        """Heading and introduction in the current language."""
        self.heading.value = f"<h2 style='margin:4px 0'>{html.escape(t('dashboard.heading'))}</h2>"
        self.intro.value = f"<p class='specviz-dashboard-intro'>{html.escape(t('dashboard.intro'))}</p>"

    @staticmethod
    def _fresh_body(body: W.VBox, explanation) -> None:
        """Show `explanation` (localized) and a loading note in tab `body`."""
        text = html.escape(localized(explanation))
        body.children = [
            W.HTML(f"<p class='specviz-tab-explanation'>{text}</p>"),
            W.HTML(f"<i>{html.escape(t('dashboard.loading'))}</i>"),
        ]

    def add_tab(self, title: str, widget_or_factory, explanation: str = "") -> None:
        """Append a tab (e.g. a "Real models" tab); a callable is built when the tab is first shown.

        `title` and `explanation` may be catalogue keys (they then follow the language) or fixed text.
        """
        fixed = widget_or_factory if isinstance(widget_or_factory, W.Widget) else None
        factory = widget_or_factory if fixed is None and callable(widget_or_factory) else (lambda w=fixed: w)
        body = W.VBox()
        self._fresh_body(body, explanation)
        self._specs.append((title, factory, explanation, fixed))
        self._bodies.append(body)
        self.titles.append(localized(title))
        self.tabs.children = list(self.tabs.children) + [body]
        self.tabs.titles = tuple(self.titles)

    def set_language(self, lang: str) -> None:
        """Switch to `lang` ("en" or "zh"): texts, tab titles and the built tabs are rebuilt in it."""
        lang = check_language(lang)
        set_language(lang)
        if self.language.value != lang:
            self.language.value = lang  # its observer calls this again
            return
        old = [
            self.apps[title] for title, spec in zip(self.titles, self._specs) if title in self.apps and spec[3] is None
        ]
        self.apps = {}
        self._write_texts()
        self.a11y.lang = HTML_LANG.get(lang, "en")
        self.titles = [localized(spec[0]) for spec in self._specs]
        for body, spec in zip(self._bodies, self._specs):
            self._fresh_body(body, spec[2])
        self.tabs.titles = tuple(self.titles)
        self.build(self.tabs.selected_index)
        for app in old:
            close_tree(app)

    def build(self, i) -> W.Widget | None:
        """Build tab i's app if it is not built yet; returns it."""
        if i is None or not 0 <= i < len(self.titles):
            return None
        title = self.titles[i]
        if title not in self.apps:
            body = self._bodies[i]
            try:
                app = self._specs[i][1]()
            except Exception as e:  # noqa: BLE001 - show, don't crash the dashboard
                app = W.HTML(error_html(t("dashboard.build_failed", error=f"{type(e).__name__}: {e}")))
            self.apps[title] = app
            body.children = [body.children[0], app]
        return self.apps[title]

    def build_all(self) -> None:
        """Build every tab that is not built yet."""
        for i in range(len(self.titles)):
            self.build(i)


def real_models_factory(factory: Callable[[], W.Widget]) -> Callable[[], W.Widget]:
    """`factory`, with an ImportError (no [lm] extra installed) shown as a message instead of raised."""

    def build() -> W.Widget:
        try:
            return factory()
        except ImportError as err:
            return W.HTML(error_html(t("dashboard.real_models_missing", error=f"{type(err).__name__}: {err}")))

    return build


def dashboard_app(extra_tabs=None, lazy: bool = True, lang: str | None = None, real_models=None) -> DashboardApp:
    """The whole course in one tabbed widget, in English or Chinese, with a language toggle on top.

    Tabs: "Money diagram", "Sampling check", "Pitfalls", "γ-steps & trees", "Numerics",
    each with a one-sentence explanation. `lang` ("en" / "zh") sets the language first
    (default: the current one, e.g. from $SPECVIZ_LANG). `real_models`: a zero-argument
    factory of the "Real models" tab (the dashboard notebook passes one that imports
    `specviz.widgets.live`). `extra_tabs`: a list of (title, widget or zero-argument
    factory[, explanation]) appended after them. Tabs are built when first selected (`lazy`).
    """
    return DashboardApp(extra_tabs, lazy=lazy, lang=lang, real_models=real_models)
