"""The numerics app: the lossless step computed in fp64/fp32/fp16/bf16 (torch) vs the fp64 target."""

from __future__ import annotations

import ipywidgets as W

from ..figures import numerics_figure
from ..foundation.i18n import t
from ..htmlkit import html_table
from .base import App, safe_callback
from .figure_sync import figure_widget, sync_figure

VOCAB_CHOICES = (16, 64, 256, 1024, 4096)
"""The vocabulary sizes the numerics app offers."""


def _core_numerics():
    """`specviz.exact.numerics`, imported on first use: it needs torch (the [lm] extra)."""
    try:
        from ..exact import numerics
    except ImportError as e:
        raise ImportError(f"the numerics app needs torch, in the [lm] extra: pip install 'specviz[lm]' ({e})") from e
    return numerics


class NumericsApp(App):
    """The lossless step computed exactly in fp64/fp32/fp16/bf16 (torch) vs the fp64 target.

    Handles: `figure` (`numerics_figure`: "p_tv", "verify_tv", "out_tv",
    "abs_err:<dtype>"), `vocab_size`, `scale`, `noise`, `temperature`, `seed`,
    `draft_dtype`, `table` (HTML), `message`, `last_report`.
    """

    def __init__(self, V=256, scale=6.0, noise=1.0, temperature=1.0, seed=0):
        super().__init__()
        self._numerics = numerics = _core_numerics()
        self.vocab_size = W.Dropdown(options=list(VOCAB_CHOICES), value=int(V), description=t("editor.vocabulary"))
        self.scale = W.FloatSlider(
            value=scale,
            min=0.0,
            max=16.0,
            step=0.5,
            description=t("numerics.logit_scale"),
            continuous_update=False,
            style={"description_width": "90px"},
        )
        self.noise = W.FloatSlider(
            value=noise,
            min=0.0,
            max=4.0,
            step=0.1,
            description=t("numerics.noise"),
            continuous_update=False,
            style={"description_width": "90px"},
        )
        self.temperature = W.FloatSlider(
            value=temperature,
            min=0.05,
            max=2.0,
            step=0.05,
            description=t("numerics.temperature"),
            continuous_update=False,
            style={"description_width": "90px"},
        )
        self.seed = W.IntText(value=int(seed), description=t("app.seed"), layout=W.Layout(width="160px"))
        self.draft_dtype = W.Dropdown(
            options=[(t("numerics.same_as_target"), None)] + [(d, d) for d in numerics.DTYPES],
            value=None,
            description=t("numerics.draft_dtype"),
        )
        self.table = W.HTML()
        self.last_report = None
        self.figure = figure_widget(self._figure())
        for w in (self.vocab_size, self.scale, self.noise, self.temperature, self.seed, self.draft_dtype):
            w.observe(lambda _: self.update(), names="value")
        self.children = [
            W.HTML(f"<h3 style='margin:4px 0'>{t('numerics.heading')}</h3>"),
            W.HBox(
                [
                    W.VBox([self.vocab_size, self.draft_dtype, self.seed]),
                    W.VBox([self.scale, self.noise, self.temperature]),
                ]
            ),
            self.figure,
            self.table,
            self.message,
        ]
        self.update()

    def _figure(self):
        t, d = self._numerics.example_logits(
            int(self.vocab_size.value), float(self.scale.value), float(self.noise.value), int(self.seed.value)
        )
        self.last_report = self._numerics.precision_report(
            t, d, temperature=float(self.temperature.value), draft_dtype=self.draft_dtype.value
        )
        return numerics_figure(t, d, temperature=float(self.temperature.value), report=self.last_report)

    @safe_callback
    def update(self):
        """Recompute the precision report and redraw."""
        sync_figure(self.figure, self._figure())
        rows = [
            [r.dtype, f"{r.p_tv:.2e}", f"{r.verify_tv:.2e}", f"{r.out_tv:.2e}", f"{r.max_abs:.2e}", str(r.underflow)]
            for r in self.last_report
        ]
        self.table.value = html_table(
            rows,
            [
                t("numerics.dtype"),
                t("numerics.col_p_tv"),
                t("numerics.col_verify_tv"),
                t("numerics.col_out_tv"),
                t("numerics.col_max"),
                t("numerics.col_underflow"),
            ],
        )
        self.clear_message()


def numerics_app(V=256, scale=6.0, noise=1.0, temperature=1.0) -> NumericsApp:
    """Numerics explorer: how far the output drifts from p when p and q are computed in low precision."""
    return NumericsApp(V, scale, noise, temperature)
