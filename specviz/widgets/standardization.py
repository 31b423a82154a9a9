"""The standardisation app (`specviz.exact.standardize`): the ratio and the repair use the q the draft was sampled from."""

from __future__ import annotations

import ipywidgets as W
import numpy as np

from ..exact.standardize import Sampling, mismatch_output_dist
from ..figures import standardization_figure
from ..figures.style import vocab_names
from ..foundation.i18n import t
from ..foundation.palette import pass_fail
from .base import App, safe_callback
from .figure_sync import figure_widget, sync_figure

DEFAULT_TARGET_LOGITS = (2.0, 1.5, 0.5, 0.0, -0.5, -1.0)
"""The standardisation app's default target logits."""
DEFAULT_DRAFT_LOGITS = (1.5, 2.0, 0.0, 0.5, -1.0, -0.5)
"""The standardisation app's default draft logits."""


class SamplingRow(W.HBox):
    """One row of sampling settings (T, top-k, top-p), optionally "same as" another row."""

    def __init__(self, label, T, top_k=0, top_p=1.0, V=6, same_as=None, same=False):
        self.label = W.HTML(f"<b>{label}</b>", layout=W.Layout(width="190px"))
        self.temperature = W.FloatSlider(
            value=T,
            min=0.0,
            max=2.0,
            step=0.05,
            description="T",
            continuous_update=False,
            style={"description_width": "20px"},
            layout=W.Layout(width="220px"),
        )
        self.top_k = W.IntSlider(
            value=top_k,
            min=0,
            max=V,
            description="top-k",
            continuous_update=False,
            style={"description_width": "40px"},
            layout=W.Layout(width="200px"),
        )
        self.top_p = W.FloatSlider(
            value=top_p,
            min=0.05,
            max=1.0,
            step=0.05,
            description="top-p",
            continuous_update=False,
            style={"description_width": "40px"},
            layout=W.Layout(width="200px"),
        )
        self.same = (
            W.Checkbox(value=same, description=t("standardization.same_as", name=same_as), indent=False)
            if same_as
            else None
        )
        kids = [self.label, self.temperature, self.top_k, self.top_p] + ([self.same] if self.same else [])
        super().__init__(kids, layout=W.Layout(align_items="center", flex_flow="row wrap"))
        if self.same is not None:
            self.same.observe(lambda _: self._sync_disabled(), names="value")
            self._sync_disabled()

    def _sync_disabled(self):
        for w in (self.temperature, self.top_k, self.top_p):
            w.disabled = bool(self.same.value)

    def sampling(self) -> Sampling:
        """The row's settings as a `Sampling` (top-k 0 and top-p 1 mean off)."""
        return Sampling(
            float(self.temperature.value),
            int(self.top_k.value) or None,
            float(self.top_p.value) if self.top_p.value < 1 else None,
        )

    def controls(self):
        """The row's input widgets."""
        return [self.temperature, self.top_k, self.top_p] + ([self.same] if self.same else [])


class StandardizationApp(App):
    """Temperature / top-k / top-p mismatch: the ratio must use the distributions actually sampled.

    Handles: `figure` (`standardization_figure`: "q_sampled", "p_used", "output",
    "intended"), `intended`, `target_used`, `draft_sampled`, `draft_ratio` (rows with
    `.temperature`, `.top_k`, `.top_p` and `.same` checkboxes), `fix_button`,
    `numbers`, `message`.
    """

    def __init__(self, target_logits=DEFAULT_TARGET_LOGITS, draft_logits=DEFAULT_DRAFT_LOGITS, vocab=None):
        super().__init__()
        self.target_logits = np.asarray(target_logits, dtype=np.float64)
        self.draft_logits = np.asarray(draft_logits, dtype=np.float64)
        V = self.target_logits.size
        self.vocab = vocab_names(vocab, V)
        intended, sampled = t("standardization.name_intended"), t("standardization.name_draft_sampled")
        self.intended = SamplingRow(t("standardization.row_intended"), 0.7, V=V)
        self.target_used = SamplingRow(t("standardization.row_target_used"), 1.0, V=V, same_as=intended, same=False)
        self.draft_sampled = SamplingRow(t("standardization.row_draft_sampled"), 0.7, V=V, same_as=intended, same=True)
        self.draft_ratio = SamplingRow(t("standardization.row_draft_ratio"), 1.0, V=V, same_as=sampled, same=True)
        self.fix_button = W.Button(description=t("standardization.fix"), layout=W.Layout(width="auto"))
        self.numbers = W.HTML()
        self.figure = figure_widget(
            standardization_figure(self.target_logits, self.draft_logits, **self._settings(), vocab=self.vocab)
        )
        for row in (self.intended, self.target_used, self.draft_sampled, self.draft_ratio):
            for w in row.controls():
                w.observe(lambda _: self.update(), names="value")
        self.fix_button.on_click(lambda _: self.fix())
        self.children = [
            W.HTML(f"<h3 style='margin:4px 0'>{t('standardization.heading')}</h3>"),
            self.intended,
            self.target_used,
            self.draft_sampled,
            self.draft_ratio,
            self.fix_button,
            self.figure,
            self.numbers,
            self.message,
        ]
        self.update()

    def _settings(self) -> dict:
        intended = self.intended.sampling()
        target_used = intended if self.target_used.same.value else self.target_used.sampling()
        draft_sampled = intended if self.draft_sampled.same.value else self.draft_sampled.sampling()
        draft_ratio = draft_sampled if self.draft_ratio.same.value else self.draft_ratio.sampling()
        return dict(intended=intended, target_used=target_used, draft_sampled=draft_sampled, draft_ratio=draft_ratio)

    def fix(self) -> None:
        """Tick every 'same as' box: one standardised distribution everywhere (lossless again)."""
        for row in (self.target_used, self.draft_sampled, self.draft_ratio):
            row.same.value = True
        self.update()

    @safe_callback
    def update(self):
        """Redraw for the current settings; returns the mismatch result (its `tv` is 0 when lossless)."""
        s = self._settings()
        sync_figure(self.figure, standardization_figure(self.target_logits, self.draft_logits, **s, vocab=self.vocab))
        m = mismatch_output_dist(self.target_logits, self.draft_logits, **s)
        ok = m.tv < 1e-9
        word = t("standardization.lossless") if ok else t("standardization.not_asked")
        self.numbers.value = (
            f"{t('standardization.tv_label')} = <b class='specviz-std-tv'>{m.tv:.4f}</b> — "
            f"<b style='color:{pass_fail(ok)}'>{word}</b>"
        )
        self.clear_message()
        return m


def standardization_app(
    target_logits=DEFAULT_TARGET_LOGITS, draft_logits=DEFAULT_DRAFT_LOGITS, vocab=None
) -> StandardizationApp:
    """Temperature / top-k standardisation explorer showing the mismatch pitfall."""
    return StandardizationApp(target_logits, draft_logits, vocab)
