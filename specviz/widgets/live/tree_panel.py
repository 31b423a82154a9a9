"""The live view's tree panel: one verify step's draft tree (`specviz.figures.real_tree_figure`) and its step slider.

Shown only for a run with a draft tree (`GenerationSettings.tree` set). After the run the
slider moves to the step of the token the close-up shows (`follow`; after a run, the most
confident rejection's step), and any step can be picked with it. A step that drafted a chain
or nothing says so in words. Each step shown gets a new FigureWidget: in Voila the later of
several FigureWidgets on a page may miss in-place updates (see `specviz.widgets.live.view`),
never a new widget's first drawing. A figure that cannot be drawn becomes a message.

>>> from specviz.lm import NGramModel, Pair, speculative_generate
>>> r = speculative_generate(Pair(NGramModel.random(6, seed=0), NGramModel.random(6, seed=1)), [0], 12, 3,
...                          tree=(2, 2), seed=0)
>>> panel = TreePanel()
>>> panel.begin(tree_run=True)
>>> panel.finish(r.steps)
>>> panel.step.value == len(r.steps), panel.figure is not None, panel.info.value
(True, True, '')
>>> panel.follow(0); panel.step.value
1
"""

from __future__ import annotations

import html

import ipywidgets as W
import plotly.graph_objects as go

from ...figures import real_tree_figure
from ...foundation.i18n import t
from ..base import error_html
from ..figure_sync import responsive


class TreePanel:
    """The tree panel's widgets: `box` (hidden unless the run drafts trees) holds `step` (IntSlider, the verify
    step from 1), `info` (HTML: a note or an error) and the current `figure` (a FigureWidget, or None)."""

    def __init__(self, label_style: dict | None = None):
        lab = label_style or {"description_width": "110px"}
        self.steps: list = []  # the run's step records
        self.token_text = None  # id -> the token's display text
        self.figure: go.FigureWidget | None = None
        self.step = W.IntSlider(
            value=1,
            min=1,
            max=1,
            description=t("live.tree_step"),
            disabled=True,
            style=lab,
            continuous_update=False,
            layout=W.Layout(width="520px"),
        )
        self.info = W.HTML("")
        self.info.add_class("specviz-live-tree-info")
        self.holder = W.Box([])
        heading = W.HTML(f"<b>{html.escape(t('live.tree_heading'))}</b> {html.escape(t('live.tree_hint'))}")
        self.box = W.VBox([heading, self.step, self.info, self.holder], layout=W.Layout(display="none"))
        self.box.add_class("specviz-live-tree")
        self.step.observe(self.picked, names="value")

    @property
    def shown(self) -> bool:
        """Whether the panel is on the page (the run shown drafts trees)."""
        return self.box.layout.display != "none"

    def begin(self, tree_run: bool) -> None:
        """A new run: show the panel (empty until the run ends) when it drafts trees, hide it otherwise."""
        self.steps = []
        self.step.disabled = True
        self.box.layout.display = None if tree_run else "none"
        self.info.value = f"<i>{html.escape(t('live.generating'))}</i>" if tree_run else ""
        self.set_figure(None)

    def finish(self, steps, token_text=None) -> None:
        """The run is done: the slider spans its verify steps and the last one is drawn."""
        if not self.shown:
            return
        self.steps, self.token_text = list(steps), token_text
        if not self.steps:
            return
        self.step.max = len(self.steps)
        self.step.disabled = False
        if self.step.value != len(self.steps):
            self.step.value = len(self.steps)  # the observer draws it
        else:
            self.show(len(self.steps))

    def follow(self, step_index: int) -> None:
        """Show verify step `step_index` (from 0: a record's `index`), the step of the token picked in the close-up."""
        if self.shown and self.steps and 0 <= step_index < len(self.steps):
            if self.step.value != step_index + 1:
                self.step.value = step_index + 1  # the observer draws it

    def picked(self, change) -> None:
        """The slider moved: draw that step (not while a new run has it disabled)."""
        if not self.step.disabled:
            self.show(change["new"])

    def show(self, number: int) -> None:
        """Draw verify step `number` (from 1): its tree, or a note for a chain or plain step; an error as a message."""
        try:
            rec = self.steps[int(number) - 1]
            if rec.tree is None:
                self.info.value = f"<i>{html.escape(t('live.tree_none', step=number, gamma=len(rec.drafted)))}</i>"
                self.set_figure(None)
                return
            self.set_figure(real_tree_figure(rec, self.token_text))
            self.info.value = ""
        except Exception as e:  # noqa: BLE001 - the house rule: a message, never a traceback
            self.set_figure(None)
            error = f"{t('live.tree_step')} {number}: {type(e).__name__}: {e}"
            self.info.value = error_html(t("live.drawing_failed", error=error))

    def set_figure(self, fig: go.Figure | None) -> None:
        """Show `fig` in a new FigureWidget (None: none), closing the one it replaces."""
        old, self.figure = self.figure, None if fig is None else responsive(go.FigureWidget(fig))
        self.holder.children = () if self.figure is None else (self.figure,)
        if old is not None:
            old.close()


__all__ = ["TreePanel"]
