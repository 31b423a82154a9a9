"""`App`, the base class of every app, and the message helpers the apps share."""

from __future__ import annotations

import functools
import html
import re

import ipywidgets as W

from ..foundation.i18n import t
from ..foundation.palette import STATUS, STATUS_BG, pass_fail
from .a11y import a11y_helper
from .fastload import defer_rfc3987_syntax
from .snapshot import snapshot_html, snapshots_enabled

ERROR_STYLE = (
    f"color:{STATUS['fail']};background:{STATUS_BG['fail']};border:1px solid {STATUS_BG['fail_border']};"
    "padding:4px 8px;border-radius:4px"
)
"""CSS of an app's error message."""
INFO_STYLE = f"color:{STATUS['info']};padding:4px 8px"
"""CSS of an app's informational message."""


def error_html(text: str) -> str:
    """`text` as an app's red error box (HTML-escaped)."""
    return f"<div class='specviz-error' style='{ERROR_STYLE}'>⚠ {html.escape(text)}</div>"


def _audit_explanation(report) -> str:
    """The audit's one-line explanation in the current language, from the report's numbers."""
    p, emp = report.target, report.empirical
    if report.impossible_tokens.size:
        return t("app.audit_impossible", x=int(report.impossible_tokens[0]))
    if not report.passed and report.p_value == 0 and not report.chi2 < float("inf"):
        return t("app.audit_outside", last=p.size - 1)
    if not report.passed:
        worst = int(abs(emp - p).argmax())
        return t(
            "app.audit_gap",
            pval=report.p_value,
            sig=report.significance,
            tv=report.tv,
            worst=worst,
            emp=emp[worst],
            p=p[worst],
        )
    return t("app.audit_ok", pval=report.p_value, sig=report.significance, tv=report.tv, n=report.n)


def verdict_html(report, what: str) -> str:
    """An audit report as one line of HTML: a green PASS or red FAIL, `what`, and the explanation."""
    colour = pass_fail(report.passed)
    cls, word = ("pass", t("app.pass")) if report.passed else ("fail", t("app.fail"))
    why = html.escape(_audit_explanation(report))
    return f"<b class='specviz-verdict-{cls}' style='color:{colour}'>{word}</b> " + t(
        "app.verdict_line", what=what, why=why
    )


def safe_callback(method):
    """Decorator for an app callback: a ValueError (or any error) becomes a message in `self.message`."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except ValueError as e:
            self.show_error(str(e))
        except Exception as e:  # noqa: BLE001 - a lecture must never show a traceback
            self.show_error(f"{type(e).__name__}: {e}")
        return None

    return wrapper


class App(W.VBox):
    """Base of every app: a VBox with a `message` HTML for errors and notes."""

    hint = ""
    """Appended to errors about normalisation (how to fix them in this app)."""

    def __init__(self, children=(), message: W.HTML | None = None, **kwargs):
        defer_rfc3987_syntax()  # before the app's first FigureWidget: see specviz.widgets.fastload
        self.message = message if message is not None else W.HTML(value="")
        self.message.add_class("specviz-message")
        self.last_error: str | None = None
        self.a11y = a11y_helper()  # names this app's slider handles in the browser (specviz.widgets.a11y)
        super().__init__(children=list(children), **kwargs)
        self.add_class("specviz-app")
        self.observe(self._keep_a11y_helper, names="children")
        self._keep_a11y_helper()

    def _keep_a11y_helper(self, change=None) -> None:
        """Keep the (invisible) accessibility helper last among the children, whatever an app puts there."""
        if self.a11y not in self.children:
            self.children = (*self.children, self.a11y)

    def show_error(self, text: str) -> None:
        """Show `text` as an error in `self.message` (and keep it in `self.last_error`)."""
        self.last_error = text
        hint = f" {self.hint}" if self.hint and "normalis" in text.lower() else ""
        self.message.value = error_html(text + hint)

    def show_info(self, text: str) -> None:
        """Show `text` as a note in `self.message`."""
        self.message.value = f"<div class='specviz-info' style='{INFO_STYLE}'>{html.escape(text)}</div>"

    def clear_message(self) -> None:
        """Remove the message (and forget the last error)."""
        self.last_error = None
        if self.message.value:
            self.message.value = ""

    def _repr_mimebundle_(self, **kwargs):
        """The live widget, plus (when snapshots are on) a static HTML snapshot for viewers without a kernel."""
        bundle = super()._repr_mimebundle_(**kwargs)
        if snapshots_enabled():
            bundle["text/html"] = snapshot_html(self)
        return bundle

    @property
    def message_text(self) -> str:
        """The message without HTML ('' when there is none)."""
        return html.unescape(re.sub(r"<[^>]+>", "", self.message.value)).strip()
