"""The output half of the live view: coloured text, statistics, the one FigureWidget and the token close-up.

`LiveView` owns the output widgets and redraws them from a `LiveRun`, from any thread:
the decoding thread only records steps, a drawing thread calls `render(final=False)` at
most every `refresh_s` seconds, and the final redraw comes after the run. Locks keep the
drawing thread and a token selection from interleaving.

All plots live in ONE plotly FigureWidget (`specviz.figures.live_figure`, six panels),
updated in place with one message per redraw. Seen in Voila with plotly 7.1 / anywidget
0.11: on a page with several FigureWidgets, the later ones silently missed their in-place
updates (the first one never did; plotly.py#4933 is a related report), so a view that must
update live uses a single widget.
"""

from __future__ import annotations

import html
import math
import threading
import time

import ipywidgets as W
import plotly.graph_objects as go

from ...figures import apply_live_patch, gamma_sweep_patch, live_figure
from ...figures.live_panels import LIVE_PANELS
from ...figures.position_money import token_label
from ...foundation.i18n import t
from ...lm.gamma.payoff import payoff_sentence
from ...lm.stats.fates import DIM_STYLE, fates_of, legend_html, prompt_span, text_box, token_span
from ...lm.stats.stats import spec_stats
from ..figure_sync import responsive
from .closeup import closeup_info_html, default_token, token_closeup
from .render import (
    cost_ratio,
    plot_patches,
    stats_table_html,
    steps_table_html,
    target_token_seconds,
    throughput_panel_patch,
)
from .tree_panel import TreePanel


class LiveView:
    """The live view's outputs (widgets below) and how they are redrawn from a run.

    Widgets: `legend`, `text_html` (one `<span class='specviz-tok specviz-tok-FATE'>` per
    generated token), `stats_html`, `steps_html` (the verify steps, latest first, with the γ
    each drafted), `payoff_html` (the "when does this pay?" line),
    `token_selector`, `token_info`, `figure` (the one FigureWidget; `figures` maps each panel
    name to it), `tree_panel` (`TreePanel`: a tree run's step slider and that step's tree, which
    follows the selected token). `selected` is the dict of the selected token (`token_closeup`).
    """

    WIDGETS = (
        "legend",
        "text_html",
        "stats_html",
        "steps_html",
        "payoff_html",
        "token_selector",
        "token_info",
        "figure",
        "figures",
        "tree_panel",
    )
    """The outputs the live app shows as its own handles."""

    def __init__(self, gamma: int = 4, label_style: dict | None = None):
        lab = label_style or {"description_width": "110px"}
        self.run = None  # the LiveRun shown
        self.speed = None  # its SpeedRounds against plain decoding (`sweep.speed_rounds`), once timed
        self.selected: dict | None = None
        self.pieces: list[str] = []
        self.fates: list[str] = []
        self.spans: list[str] = []
        self.text_lock = threading.RLock()  # the drawing thread and token selection both touch the spans
        self.figure_lock = threading.RLock()  # ... and the figure
        self.legend = W.HTML(legend_html())
        self.text_html = W.HTML(text_box(""))
        self.text_html.add_class("specviz-live-text")
        self.stats_html = W.HTML("")
        self.stats_html.add_class("specviz-live-stats")
        self.steps_html = W.HTML(steps_table_html([]))
        self.steps_html.add_class("specviz-live-steps")
        self.payoff_html = W.HTML("")
        self.payoff_html.add_class("specviz-live-payoff")
        self.token_selector = W.IntSlider(
            value=0,
            min=0,
            max=0,
            description=t("live.token_number"),
            disabled=True,
            style=lab,
            continuous_update=False,
            layout=W.Layout(width="520px"),
        )
        self.token_info = W.HTML(f"<i>{html.escape(t('live.pick_hint'))}</i>")
        # ONE FigureWidget for all plots (see the module notes)
        self.figure = responsive(go.FigureWidget(live_figure(None, int(gamma))))  # fills the page width
        self.figure.add_class("specviz-live-figure")
        self.figures = {panel: self.figure for panel in LIVE_PANELS}
        self.tree_panel = TreePanel(lab)  # a tree run's step slider and tree (its own widgets: see tree_panel)

    def widgets(self) -> list:
        """The output widgets in the order the app shows them."""
        return [
            self.legend,
            self.text_html,
            W.HBox([self.stats_html, self.steps_html], layout=W.Layout(flex_flow="row wrap", align_items="flex-start")),
            self.payoff_html,
            W.HTML(f"<b>{html.escape(t('live.closeup_heading'))}</b> {html.escape(t('live.closeup_hint'))}"),
            self.token_selector,
            self.token_info,
            self.figure,
            self.tree_panel.box,
        ]

    # ------------------------------------------------------------------ a run

    def begin(self, run, ar_result=None) -> None:
        """Clear the outputs for a new run (`ar_result`: the autoregressive baseline still shown, if any)."""
        self.run, self.selected, self.speed = run, None, None
        with self.text_lock:
            self.pieces, self.fates, self.spans = [], [], []
        self.text_html.value = text_box(self.prompt_html())
        self.token_selector.disabled = True
        self.token_selector.max = 0
        self.token_info.value = f"<i>{html.escape(t('live.generating'))}</i>"
        self.steps_html.value = steps_table_html([])
        self.tree_panel.begin(tree_run=run.settings.tree is not None)
        self.patch(*plot_patches(None, run.longest, run.steps, run.gamma), throughput_panel_patch(None, ar_result))
        self.show_numbers(None, None)

    def render(self, final: bool, stats=None, ar_result=None) -> None:
        """Redraw text, plots and numbers from the run so far (live: data only, cheap; final: everything)."""
        run = self.run
        if run is None:
            return
        res = run.partial()
        self.extend_text(res, final)
        stats = stats if final else (spec_stats(res) if res.steps else None)
        patches = plot_patches(stats, run.longest, res.steps, run.gamma, layout=final)
        now = time.perf_counter()
        if final or now - run.drawn_tps > 1.0:  # tokens/s and the tables: about once a second
            run.drawn_tps = now
            patches.append(throughput_panel_patch(stats, ar_result, self.speed))
            self.show_numbers(stats, ar_result)
            with self.text_lock:
                pieces = list(self.pieces)
            self.steps_html.value = steps_table_html(res.steps, pieces)
        self.patch(*patches)
        if final:
            self.tree_panel.finish(res.steps, lambda i: token_label(run.tokenizer, i))
        n = len(res.new_ids)
        if n:
            self.token_selector.max = n - 1
            self.token_selector.disabled = False

    # ------------------------------------------------------------------ text

    def prompt_html(self) -> str:
        return "" if self.run is None else prompt_span(self.run.decoder.prompt_text())

    def span(self, i: int) -> str:
        sel = self.selected is not None and self.selected.get("position") == i
        return token_span(i, self.fates[i], self.pieces[i], sel)

    def extend_text(self, res, final: bool) -> None:
        """Add the spans of tokens not shown yet (and, at the end, any held-back partial character)."""
        with self.text_lock:
            dec = self.run.decoder
            new_ids = res.new_ids
            fates = fates_of(res.steps)[: len(new_ids)]
            for i in range(len(self.pieces), len(new_ids)):
                self.pieces.append(dec.piece(new_ids, i))
                self.fates.append(fates[i])
                self.spans.append(self.span(i))
            if final and new_ids:
                rest = dec.finish(new_ids)  # bytes that never completed a character, shown as U+FFFD
                if rest:
                    self.pieces[-1] += rest
                    self.spans[-1] = self.span(len(self.pieces) - 1)
            self.text_html.value = text_box(self.prompt_html() + "".join(self.spans))

    # ------------------------------------------------------------------ plots and numbers

    def patch(self, *panels) -> None:
        """Apply (panel, patch) pairs to the one FigureWidget in a single update message."""
        fw = self.figure
        with self.figure_lock, fw.batch_update():
            for panel, patch in panels:
                apply_live_patch(fw, panel, patch)

    def show_numbers(self, stats, ar_result) -> None:
        """The statistics table and the "when does this pay?" line."""
        gamma = None if self.run is None else self.run.gamma
        self.stats_html.value = stats_table_html(stats, ar_result, gamma, self.speed)
        if stats is None or not stats.steps or not math.isfinite(stats.alpha):
            self.payoff_html.value = ""
            return
        c, t_t = cost_ratio(stats, ar_result), target_token_seconds(ar_result)
        verify = stats.verify_step_s / t_t if (c is not None and math.isfinite(stats.verify_step_s)) else None
        text = payoff_sentence(min(max(stats.alpha, 0.0), 1.0), c, verify=verify)
        self.payoff_html.value = (
            f"<div style='font-size:13px;padding:0 8px'>{html.escape(text)} "
            f"<span style='{DIM_STYLE}'>{html.escape(t('live.payoff_source'))}</span></div>"
        )

    def show_sweep(self, data) -> None:
        """The γ-sweep panel from `gamma_sweep_run` data (the points so far; γ auto as a level line)."""
        auto = data.get("auto")
        self.patch(
            (
                "sweep",
                gamma_sweep_patch(
                    data["gammas"],
                    data["measured"],
                    data["bound"],
                    data["predicted"],
                    auto=None if auto is None else auto["measured"],
                ),
            )
        )

    # ------------------------------------------------------------------ one token up close

    def default_token(self) -> int | None:
        """The token shown after a run: the rejection whose draft was most confident (largest q), else #0."""
        return None if self.run is None else default_token(self.run.steps, len(self.fates))

    def select(self, i: int) -> dict:
        """Show generated token i's real p and q (top tokens + "other") as a money diagram; ValueError if none."""
        run = self.run
        if run is None or not self.pieces:
            raise ValueError(t("live.generate_first"))
        if not 0 <= i < len(self.pieces):
            raise ValueError(t("live.token_outside", i=i, n=len(self.pieces)))
        s = run.settings
        sel = token_closeup(run.pair, run.partial(), i, s.temperature, s.top_k, s.top_p)
        self.patch(("money", sel["patch"]))
        self.token_info.value = closeup_info_html(sel, run.tokenizer)
        self.tree_panel.follow(sel["step"])  # a tree run: the tree of this token's step
        self.selected = sel
        with self.text_lock:  # outline the selected token in the text
            self.spans = [self.span(k) for k in range(len(self.pieces))]
            self.text_html.value = text_box(self.prompt_html() + "".join(self.spans))
        return sel


__all__ = ["LiveView"]
