"""The pitfall app: pick a verification rule, see its exact output vs p, its TV and the audit's verdict."""

from __future__ import annotations

import html

import ipywidgets as W
import numpy as np

from ..exact.rules import RULES, get_rule, rule_joint
from ..figures import rule_figure
from ..figures.pitfalls import rule_description
from ..foundation.examples import TUTORIAL_P, TUTORIAL_Q
from ..foundation.i18n import t
from ..foundation.validate import as_pair
from ..htmlkit import html_table
from ..samplers.audit import audit
from .base import safe_callback, verdict_html
from .editor import DistributionEditor
from .editor_app import EditorApp
from .figure_sync import figure_widget, sync_figure


class PitfallApp(EditorApp):
    """Pick a verification rule; see its exact output vs p, its TV and the audit's verdict.

    Handles: `figure` (`rule_figure`: traces "accept", "reject", "p", "q"), `editor`,
    `sliders_p`, `sliders_q`, `rule` (Dropdown of rule names), `lenience` (l),
    `eps`, `delta`, `audit_n`, `numbers`, `verdict`, `message`, `last_report`.
    """

    def __init__(self, p=None, q=None, vocab=None, rule="resample_target", audit_n=20_000, seed=0):
        super().__init__()
        p = TUTORIAL_P if p is None else p
        q = TUTORIAL_Q if q is None else q
        self.editor = DistributionEditor(p, q, vocab, message=self.message, on_error=self.show_error)
        self.rule = W.Dropdown(
            options=[
                (t("app.rule_lossless", rule=k) if r.lossless else t("pitfalls.option_pitfall", rule=k), k)
                for k, r in RULES.items()
            ],
            value=get_rule(rule).name,
            description=t("app.rule"),
        )
        self.lenience = W.FloatSlider(
            value=0.5,
            min=0.05,
            max=1.0,
            step=0.05,
            description=t("pitfalls.lenience"),
            continuous_update=False,
            style={"description_width": "80px"},
        )
        self.eps = W.FloatSlider(value=0.09, min=0.0, max=0.5, step=0.01, description="ε", continuous_update=False)
        self.delta = W.FloatSlider(value=0.3, min=0.0, max=1.0, step=0.05, description="δ", continuous_update=False)
        self.audit_n = W.Dropdown(
            options=[(f"{v:,}", v) for v in (1_000, 20_000, 100_000)],
            value=int(audit_n),
            description=t("pitfalls.audit_n"),
        )
        self.seed = int(seed)
        self.description = W.HTML()
        self.numbers = W.HTML()
        self.verdict = W.HTML()
        self.verdict.add_class("specviz-verdict")
        self.last_report = None
        self._param_box = W.HBox()
        self.figure = figure_widget(
            rule_figure(self.editor.p, self.editor.q, self.rule.value, self.editor.vocab, **self._params())
        )
        self.editor.on_change(lambda *_: self.update())
        for w in (self.rule, self.lenience, self.eps, self.delta, self.audit_n):
            w.observe(lambda _: self.update(), names="value")
        self.children = [
            W.HTML(f"<h3 style='margin:4px 0'>{t('pitfalls.heading')}</h3>"),
            self.editor,
            W.HBox([self.rule, self.audit_n]),
            self._param_box,
            self.description,
            self.figure,
            self.numbers,
            self.verdict,
            self.message,
        ]
        self.update()

    def _params(self) -> dict:
        name = self.rule.value
        if name == "lenient":
            return {"l": float(self.lenience.value)}
        if name == "typical":
            return {"eps": float(self.eps.value), "delta": float(self.delta.value)}
        return {}

    @safe_callback
    def update(self):
        """Redraw for the chosen rule and its parameters, and audit it (returns the AuditReport)."""
        p, q = as_pair(self.editor.p, self.editor.q)
        name = self.rule.value
        description = rule_description(name)
        params = self._params()
        self._param_box.children = (
            [self.lenience] if name == "lenient" else [self.eps, self.delta] if name == "typical" else []
        )
        sync_figure(self.figure, rule_figure(p, q, name, self.editor.vocab, **params))
        j = rule_joint(p, q, name, **params)
        out = j.output.astype(np.float64)
        tv = float(np.abs(out - p).sum() / 2)
        self.description.value = f"<i>{html.escape(description)}</i>"
        self.numbers.value = html_table(
            [
                [t("figure.tv_output_p"), f"<span class='specviz-rule-tv'>{tv:.4f}</span>"],
                [t("pitfalls.acceptance"), f"{float(j.p_accept):.3f}"],
                [t("pitfalls.output"), html.escape(", ".join(f"{n} {v:.3f}" for n, v in zip(self.editor.vocab, out)))],
                [t("pitfalls.target_p"), html.escape(", ".join(f"{n} {v:.3f}" for n, v in zip(self.editor.vocab, p)))],
            ]
        )
        report = audit(name, p, q, n=int(self.audit_n.value), seed=self.seed, **params)
        self.last_report = report
        self.verdict.value = verdict_html(report, t("pitfalls.audit", n=int(self.audit_n.value)))
        self.clear_message()
        return report


def pitfall_app(p=None, q=None, vocab=None, rule="resample_target", audit_n=20_000) -> PitfallApp:
    """Pitfall explorer: rule dropdown → exact output vs p (accept/reject parts), TV, audit verdict."""
    return PitfallApp(p, q, vocab, rule=rule, audit_n=audit_n)
