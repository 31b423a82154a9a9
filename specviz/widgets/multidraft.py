"""The multi-draft app: k drafts verified in turn, with vs without the residual update."""

from __future__ import annotations

import ipywidgets as W
import numpy as np

from ..exact.multidraft import multi_draft_acceptance_rate, multi_draft_output_dist
from ..figures import multidraft_figure
from ..foundation.i18n import t
from ..foundation.validate import as_pair
from ..htmlkit import html_table
from .base import safe_callback
from .editor import DistributionEditor
from .editor_app import EditorApp
from .figure_sync import figure_widget, sync_figure

MULTIDRAFT_P = (0.5, 0.3, 0.15, 0.05)
"""The multi-draft app's default target p."""
MULTIDRAFT_Q = (0.1, 0.2, 0.3, 0.4)
"""The multi-draft app's default draft q (far from p, so the residual update matters)."""


class MultiDraftApp(EditorApp):
    """k drafts verified in turn: acceptance and TV with vs without the residual update.

    Handles: `figure` (`multidraft_figure`), `editor`, `sliders_p`, `sliders_q`,
    `k_max` (IntSlider), `numbers`, `message`.
    """

    def __init__(self, p=None, q=None, vocab=None, k_max=4):
        super().__init__()
        p = MULTIDRAFT_P if p is None else p
        q = MULTIDRAFT_Q if q is None else q
        self.editor = DistributionEditor(p, q, vocab, message=self.message, on_error=self.show_error)
        self.k_max = W.IntSlider(value=k_max, min=1, max=8, description=t("multidraft.k_max"))
        self.numbers = W.HTML()
        self.figure = figure_widget(multidraft_figure(self.editor.p, self.editor.q, k_max, self.editor.vocab))
        self.editor.on_change(lambda *_: self.update())
        self.k_max.observe(lambda _: self.update(), names="value")
        self.children = [
            W.HTML(f"<h3 style='margin:4px 0'>{t('multidraft.heading')}</h3>"),
            self.editor,
            self.k_max,
            self.figure,
            self.numbers,
            self.message,
        ]
        self.update()

    @safe_callback
    def update(self):
        """Redraw and tabulate k = 1..k_max for the editor's p and q."""
        p, q = as_pair(self.editor.p, self.editor.q)
        k = int(self.k_max.value)
        sync_figure(self.figure, multidraft_figure(p, q, k, self.editor.vocab))
        rows = []
        for kk in range(1, k + 1):
            naive = multi_draft_output_dist(p, q, kk, update_residual=False).astype(np.float64)
            rows.append(
                [
                    str(kk),
                    f"{multi_draft_acceptance_rate(p, q, kk):.3f}",
                    f"{multi_draft_acceptance_rate(p, q, kk, update_residual=False):.3f}",
                    f"{np.abs(naive - p).sum() / 2:.4f}",
                ]
            )
        self.numbers.value = html_table(
            rows, ["k", t("multidraft.acc_update"), t("multidraft.acc_naive"), t("multidraft.tv_naive")]
        )
        self.clear_message()


def multidraft_app(p=None, q=None, vocab=None, k_max=4) -> MultiDraftApp:
    """Multi-draft explorer: acceptance and output for k = 1..k_max drafts, with and without the residual update."""
    return MultiDraftApp(p, q, vocab, k_max)
