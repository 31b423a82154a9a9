"""The money-diagram app: p and q sliders, min(p, q) + (p − q)⁺ = p live, the 3-step reveal and the morph."""

from __future__ import annotations

import html

import ipywidgets as W
import numpy as np
import plotly.graph_objects as go

from ..exact.theory import acceptance_rate, rejection_mass, resample_dist, tv_distance
from ..figures import apply_patch, money_diagram, money_diagram_patch
from ..figures.money import MONEY_STEPS
from ..foundation.examples import TUTORIAL_P, TUTORIAL_Q
from ..foundation.i18n import t
from ..foundation.validate import as_pair, normalize
from ..htmlkit import html_table
from .base import safe_callback
from .editor import DistributionEditor
from .editor_app import EditorApp
from .figure_sync import figure_widget, sync_figure, transition


class MoneyDiagramApp(EditorApp):
    """Sliders -> the money diagram, live numbers, the 3-step reveal and the p -> disjoint morph.

    Handles: `figure` (FigureWidget; traces by meta "overlap", "residual", "p", "q",
    "rejected"), `editor`, `sliders_p`, `sliders_q` (descriptions "p(cat)", "q(cat)", ...),
    `numbers` (HTML), `step` (1..3), `step_label`, `next_button`, `back_button`,
    `play` (hidden ipywidgets.Play driving `frame_slider`), `play_button`,
    `frame_slider` ("morph"), `message`. Methods: `next_step()`, `back_step()`,
    `set_step(k)`, `set_frame(i)`, `advance_frame()`, `update()`.
    """

    def __init__(
        self,
        p=None,
        q=None,
        vocab=None,
        step: int = 3,
        annotate: bool = True,
        frames: int = 21,
        interval_ms: int = 250,
        resolution: int = 100,
        transition_ms: int = 250,
    ):
        super().__init__()
        self.transition_ms = int(transition_ms)  # 0: instant redraws
        p = TUTORIAL_P if p is None else p
        q = TUTORIAL_Q if q is None else q
        self.step = int(step)
        if self.step not in (1, 2, 3):
            raise ValueError(f"step must be 1, 2 or 3, got {step!r}")
        self.annotate = annotate
        self.editor = DistributionEditor(
            p, q, vocab, resolution=resolution, message=self.message, on_error=self.show_error
        )
        self.figure = figure_widget(self._full_figure(self.editor.p, self.editor.q, self.editor.vocab))
        self._drawn_step = self.step
        self.numbers = W.HTML()
        self.numbers.add_class("specviz-numbers")
        self.back_button = W.Button(description=t("money.back"), layout=W.Layout(width="auto"))
        self.next_button = W.Button(description=t("money.next"), layout=W.Layout(width="auto"))
        self.step_label = W.HTML()
        self.step_label.add_class("specviz-step-label")
        self.frames = int(frames)
        self.play = W.Play(
            value=0, min=0, max=self.frames - 1, step=1, interval=int(interval_ms), layout=W.Layout(display="none")
        )
        self.frame_slider = W.IntSlider(
            value=0,
            min=0,
            max=self.frames - 1,
            description=t("money.morph"),
            readout=False,
            style={"description_width": "50px"},
            layout=W.Layout(width="260px"),
        )
        W.link((self.play, "value"), (self.frame_slider, "value"))
        self.play_button = W.Button(
            description=t("money.play"),
            layout=W.Layout(width="auto"),
            tooltip=t("money.play_tooltip"),
        )
        self.morph_label = W.HTML()

        self.editor.on_change(lambda *_: self.update())
        self.next_button.on_click(lambda _: self.next_step())
        self.back_button.on_click(lambda _: self.back_step())
        self.play_button.on_click(lambda _: self.toggle_play())
        self.play.observe(self._on_playing, names="playing")
        self.frame_slider.observe(lambda ch: self.set_frame(ch["new"]), names="value")

        title = W.HTML(f"<h3 style='margin:4px 0'>{html.escape(t('money.heading'))}</h3>")
        self.children = [
            title,
            self.editor,
            W.HBox([self.back_button, self.step_label, self.next_button], layout=W.Layout(align_items="center")),
            self.figure,
            self.numbers,
            W.HBox(
                [self.play_button, self.frame_slider, self.morph_label, self.play],
                layout=W.Layout(align_items="center"),
            ),
            self.message,
        ]
        self.update()

    @safe_callback
    def update(self) -> None:
        """Redraw from the editor's p and q (errors become a message)."""
        p, q = as_pair(self.editor.p, self.editor.q)
        names = self.editor.vocab
        patch = money_diagram_patch(p, q, names, self.step, self.annotate)
        if list(self.figure.data[0].x) != names:  # new vocabulary: new categories everywhere
            sync_figure(self.figure, self._full_figure(p, q, names))
        else:
            # New p or q: the bars glide to their new heights (one interrupting Plotly.animate);
            # a step of the reveal switches traces on or off at once (Plotly.update).
            moved = self.step == self._drawn_step
            with transition(self.figure, self.transition_ms if moved else 0):
                apply_patch(self.figure, patch)
        self._drawn_step = self.step
        self.numbers.value = self._numbers_html(p, q, names)
        self.step_label.value = (
            f"<b>{t('money.step_label', step=self.step)}</b> — {html.escape(MONEY_STEPS[self.step].split(' · ', 1)[1])}"
        )
        self.back_button.disabled = self.step <= 1
        self.next_button.disabled = self.step >= 3
        self.clear_message()

    def _full_figure(self, p, q, names) -> go.Figure:
        # no hatching when animating: plotly.js cannot animate pattern-filled bars
        return money_diagram(p, q, names, self.step, self.annotate, hatch=self.transition_ms <= 0)

    @staticmethod
    def _numbers_html(p, q, names) -> str:
        pa, z, tv = acceptance_rate(p, q), rejection_mass(p, q), tv_distance(p, q)
        pp = resample_dist(p, q)
        pp_text = ", ".join(f"{n} {v:.3f}" for n, v in zip(names, pp)) if z > 0 else t("money.never_used")
        rows = [
            [f"{t('money.p_accept')} = Σ min(p, q)", f"<span class='specviz-p-accept'>{pa:.3f}</span>"],
            [f"{t('money.p_reject')} = Z = Σ (p − q)⁺", f"<span class='specviz-z'>{z:.3f}</span>"],
            ["TV(p, q)", f"<span class='specviz-tv'>{tv:.3f}</span>"],
            ["p′ = (p − q)⁺ / Z", f"<span class='specviz-p-prime'>{html.escape(pp_text)}</span>"],
        ]
        return html_table(rows)

    # --- step reveal
    def set_step(self, k: int) -> None:
        """Show step k of the reveal (clipped to 1..3)."""
        self.step = int(min(3, max(1, k)))
        self.update()

    def next_step(self) -> None:
        """Show the next step of the reveal."""
        self.set_step(self.step + 1)

    def back_step(self) -> None:
        """Show the previous step of the reveal."""
        self.set_step(self.step - 1)

    # --- morph q from p to a disjoint draft
    def morph_target(self) -> np.ndarray:
        """The end of the morph: a one-hot q on p's least likely token (disjoint when p there is 0)."""
        p = self.editor.p
        end = np.zeros(p.size)
        end[int(np.argmin(p))] = 1.0
        return end

    @safe_callback
    def set_frame(self, i: int) -> None:
        """Show morph frame i: q = (1 − t) p + t · one-hot, t = i / (frames − 1)."""
        i = int(min(self.frames - 1, max(0, i)))
        if self.frame_slider.value != i:
            self.frame_slider.value = i  # its observer calls set_frame again
            return
        frac = i / (self.frames - 1)
        p = normalize(self.editor.p)
        end = self.morph_target()
        self.editor.set_q((1 - frac) * p + frac * end)
        j = int(np.argmax(end))
        self.morph_label.value = f"t = {frac:.2f}: q = (1 − t)·p + t·one-hot({html.escape(self.editor.vocab[j])})" + (
            t("money.disjoint") if frac == 1 and p[j] == 0 else ""
        )

    def advance_frame(self) -> int:
        """Advance the morph by one frame (what Play does on a timer); returns the new frame."""
        nxt = self.frame_slider.value + 1
        if nxt > self.frames - 1:
            nxt = 0
        self.set_frame(nxt)
        return self.frame_slider.value

    def toggle_play(self) -> None:
        """Start or pause the morph."""
        if not self.play.playing and self.play.value >= self.play.max:
            self.play.value = 0
        self.play.playing = not self.play.playing

    def _on_playing(self, change) -> None:
        self.play_button.description = t("money.pause") if change["new"] else t("money.play")


def money_diagram_app(p=None, q=None, vocab=None, step: int = 3, annotate: bool = True, **kwargs) -> MoneyDiagramApp:
    """The money-diagram app: sliders for p and q, the diagram updating in place, and the morph.

    Also live numbers, the 3-step reveal (Next/Back) and a Play button morphing q from p to
    a disjoint draft. Bars glide to new heights over `transition_ms` (default 250; 0 =
    instant redraws).
    """
    return MoneyDiagramApp(p, q, vocab, step=step, annotate=annotate, **kwargs)
