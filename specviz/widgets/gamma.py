"""The γ-step app: α, γ and the draft cost c → tokens per step, the speedup map and accepted lengths."""

from __future__ import annotations

import ipywidgets as W
import numpy as np

from ..exact.gamma import best_gamma, expected_tokens, simulate_accepted_lengths, speedup
from ..figures import gamma_figure
from ..foundation.i18n import t
from ..htmlkit import html_table
from .base import App, safe_callback
from .figure_sync import figure_widget, sync_figure


class GammaApp(App):
    """α, γ and the cost ratio c → tokens per step, the speedup map and accepted-length histogram.

    Handles: `figure` (`gamma_figure`), `alpha`, `gamma`, `cost` (sliders), `n_steps`,
    `numbers`, `message`; `last_counts` (simulated accepted drafts per step).
    """

    def __init__(self, alpha=0.8, gamma=4, c=0.1, n_steps=2000, seed=0):
        super().__init__()
        self.alpha = W.FloatSlider(
            value=alpha, min=0.0, max=1.0, step=0.01, description=t("gamma.alpha"), style={"description_width": "100px"}
        )
        self.gamma = W.IntSlider(
            value=gamma, min=1, max=16, description=t("gamma.gamma"), style={"description_width": "100px"}
        )
        self.cost = W.FloatSlider(
            value=c, min=0.0, max=1.0, step=0.01, description=t("gamma.cost"), style={"description_width": "100px"}
        )
        self.n_steps = W.Dropdown(
            options=[(f"{v:,}", v) for v in (100, 2000, 20_000)], value=int(n_steps), description=t("gamma.n_steps")
        )
        self.seed = int(seed)
        self.numbers = W.HTML()
        self.last_counts = simulate_accepted_lengths(alpha, gamma, n_steps, self.seed)
        self.figure = figure_widget(gamma_figure(alpha, gamma, c, accepted_counts=self.last_counts))
        for w in (self.alpha, self.gamma, self.cost, self.n_steps):
            w.observe(lambda _: self.update(), names="value")
        self.children = [
            W.HTML(f"<h3 style='margin:4px 0'>{t('gamma.heading')}</h3>"),
            W.HBox([W.VBox([self.alpha, self.gamma, self.cost]), self.n_steps]),
            self.figure,
            self.numbers,
            self.message,
        ]
        self.update()

    @safe_callback
    def update(self):
        """Simulate again and redraw for the current α, γ and c."""
        a, g, c = float(self.alpha.value), int(self.gamma.value), float(self.cost.value)
        self.last_counts = simulate_accepted_lengths(a, g, int(self.n_steps.value), self.seed)
        sync_figure(self.figure, gamma_figure(a, g, c, accepted_counts=self.last_counts))
        self.numbers.value = html_table(
            [
                [t("gamma.expected"), f"<span class='specviz-expected'>{expected_tokens(a, g):.3f}</span>"],
                [t("gamma.simulated_mean"), f"{np.mean(self.last_counts) + 1:.3f}"],
                [t("gamma.speedup_row"), f"<span class='specviz-speedup'>{speedup(a, g, c):.3f}×</span>"],
                [t("gamma.best_row"), f"{best_gamma(a, c)}"],
            ]
        )
        self.clear_message()


def gamma_app(alpha=0.8, gamma=4, c=0.1) -> GammaApp:
    """γ-step explorer: expected tokens per step, the speedup heat map (best γ marked) and accepted lengths.

    The accepted-length distribution is shown simulated vs exact.
    """
    return GammaApp(alpha, gamma, c)
