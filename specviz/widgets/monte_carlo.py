"""The Monte-Carlo app: sample N speculative steps, watch the histogram fill p, read the audit's verdict."""

from __future__ import annotations

import ipywidgets as W
import numpy as np

from ..exact.rules import RULES, get_rule
from ..figures import monte_carlo_figure
from ..foundation.examples import TUTORIAL_P, TUTORIAL_Q
from ..foundation.i18n import t
from ..foundation.validate import as_pair
from ..samplers.audit import audit
from ..samplers.sampling import SpecSample, spec_sample
from .base import safe_callback, verdict_html
from .editor import DistributionEditor
from .editor_app import EditorApp
from .figure_sync import figure_widget, sync_figure

N_CHOICES = (100, 1_000, 10_000, 100_000, 1_000_000)
"""The sample sizes the N dropdown offers."""


class MonteCarloApp(EditorApp):
    """Sample N speculative steps, watch the histogram fill p, read the audit's verdict.

    Handles: `figure` (traces "accepted", "resampled", "p", "overlap_exact"), `editor`,
    `sliders_p`, `sliders_q`, `rule` (Dropdown), `n` (Dropdown of N), `seed` (IntText),
    `run_button`, `progress` (IntProgress), `verdict` (HTML), `message`; after `run()`:
    `last_sample` (SpecSample) and `last_report` (AuditReport).
    """

    def __init__(self, p=None, q=None, vocab=None, rule="lossless", n=10_000, seed=0, chunks=10):
        super().__init__()
        p = TUTORIAL_P if p is None else p
        q = TUTORIAL_Q if q is None else q
        self.editor = DistributionEditor(p, q, vocab, message=self.message, on_error=self.show_error)
        self.rule = W.Dropdown(
            options=[
                (t("app.rule_lossless", rule=k) if r.lossless else t("app.rule_lossy", rule=k), k)
                for k, r in RULES.items()
            ],
            value=get_rule(rule).name,
            description=t("app.rule"),
        )
        opts = list(N_CHOICES) if n in N_CHOICES else sorted(set(N_CHOICES) | {int(n)})
        self.n = W.Dropdown(options=[(f"{v:,}", v) for v in opts], value=int(n), description=t("empirical.n_samples"))
        self.seed = W.IntText(value=int(seed), description=t("app.seed"), layout=W.Layout(width="160px"))
        self.run_button = W.Button(
            description=t("empirical.run"), button_style="primary", layout=W.Layout(width="90px")
        )
        self.chunks = int(chunks)
        self.progress = W.IntProgress(value=0, min=0, max=self.chunks, description=t("empirical.progress"))
        self.verdict = W.HTML(f"<i>{t('empirical.press_run')}</i>")
        self.verdict.add_class("specviz-verdict")
        self.figure = figure_widget(monte_carlo_figure(self.editor.p, self.editor.q, None, self.editor.vocab))
        self.last_sample: SpecSample | None = None
        self.last_report = None
        self.editor.on_change(lambda *_: self.reset())
        self.rule.observe(lambda _: self.reset(), names="value")
        self.run_button.on_click(lambda _: self.run())
        self.children = [
            W.HTML(f"<h3 style='margin:4px 0'>{t('empirical.heading')}</h3>"),
            self.editor,
            W.HBox([self.rule, self.n, self.seed, self.run_button], layout=W.Layout(flex_flow="row wrap")),
            self.progress,
            self.figure,
            self.verdict,
            self.message,
        ]

    @safe_callback
    def reset(self) -> None:
        """Drop the last run (p, q or the rule changed): exact parts redrawn, empirical bars empty."""
        p, q = as_pair(self.editor.p, self.editor.q)
        self.last_sample, self.last_report = None, None
        self.progress.value = 0
        sync_figure(self.figure, monte_carlo_figure(p, q, None, self.editor.vocab))
        self.verdict.value = f"<i>{t('empirical.press_run')}</i>"
        self.clear_message()

    @safe_callback
    def run(self):
        """Sample N steps in chunks (updating the progress bar and histogram), then audit them."""
        p, q = as_pair(self.editor.p, self.editor.q)
        n, rule = int(self.n.value), self.rule.value
        if n < 1:
            raise ValueError(t("empirical.n_positive"))
        rng = np.random.default_rng(int(self.seed.value))
        chunks = max(1, min(self.chunks, n // 100))
        sizes = [n // chunks + (1 if i < n % chunks else 0) for i in range(chunks)]
        self.progress.max, self.progress.value = chunks, 0
        self.run_button.disabled = True
        tokens, accepted, drafts = [], [], []
        try:
            for i, m in enumerate(sizes):
                s = spec_sample(p, q, m, rule=rule, seed=rng)
                tokens.append(s.tokens)
                accepted.append(s.accepted)
                drafts.append(s.drafts)
                sample = SpecSample(np.concatenate(tokens), np.concatenate(accepted), np.concatenate(drafts), p.size)
                sync_figure(self.figure, monte_carlo_figure(p, q, sample, self.editor.vocab))
                self.progress.value = i + 1
        finally:
            self.run_button.disabled = False
        all_tokens = sample.tokens
        report = audit(lambda *_: all_tokens, p, q, n=n, time_limit=None)  # tokens already drawn: nothing to bound
        self.last_sample, self.last_report = sample, report
        self.verdict.value = verdict_html(report, t("empirical.audit", n=n))
        self.clear_message()
        return report


def monte_carlo_app(p=None, q=None, vocab=None, rule="lossless", n=10_000, seed=0) -> MonteCarloApp:
    """Monte-Carlo panel: choose N, Run (with progress), the histogram converging to p, and the audit's verdict.

    The histogram is split into accepted (→ min(p, q)) and resampled (→ (p − q)⁺) parts.
    """
    return MonteCarloApp(p, q, vocab, rule=rule, n=n, seed=seed)
