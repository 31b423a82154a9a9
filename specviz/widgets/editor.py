"""`DistributionEditor`: p and q sliders that stay distributions, with presets and typed values."""

from __future__ import annotations

import functools
from collections.abc import Callable

import ipywidgets as W
import numpy as np

from ..figures.style import (
    default_vocab,
    text_colour,  # text in a palette colour, at WCAG AA contrast
    vocab_names,
)
from ..foundation.examples import TUTORIAL_P, TUTORIAL_Q
from ..foundation.i18n import t
from ..foundation.palette import PALETTE
from ..foundation.validate import as_pair
from .base import error_html, safe_callback
from .editor_controls import mode_toggle, preset_buttons, probability_slider, vocab_slider, weights_text
from .presets import preset_weights
from .weights import parse_weights, rescale_others, snap

VOCAB_MIN, VOCAB_MAX = 3, 10
"""The range of the editor's vocabulary-size slider."""


class DistributionEditor(W.VBox):
    """p and q sliders that stay distributions, on a grid of 1/`resolution`.

    * mode "rescale" (default): moving one token's slider rescales the others of the
      same distribution so it still sums to 1;
    * mode "free": sliders move independently; "Normalise" rescales them (the app
      shows the core's "sums to ..., not 1" message until then).

    Also: vocabulary size (3..10), presets (`PRESETS`), and typed values ("type p",
    "type q" + "Apply"). Listeners registered with `on_change(fn)` get (p, q, vocab)
    after every change; programmatic slider updates are guarded against feedback.
    """

    def __init__(
        self,
        p=TUTORIAL_P,
        q=TUTORIAL_Q,
        vocab=None,
        resolution: int = 100,
        message: W.HTML | None = None,
        on_error: Callable[[str], None] | None = None,
        vocab_range=(VOCAB_MIN, VOCAB_MAX),
    ):
        self.units = int(resolution)
        if self.units < 10:
            raise ValueError(f"resolution must be >= 10, got {resolution}")
        p, q = as_pair(p, q)
        V = p.size
        self._names = vocab_names(vocab, V)
        self._cp, self._cq = snap(p, self.units), snap(q, self.units)
        self._updating = False
        self._listeners: list[Callable] = []
        self._on_error = on_error
        self.message = message if message is not None else W.HTML()
        self._fmt = f".{max(2, int(np.ceil(np.log10(self.units))))}f"
        self.mode = mode_toggle()
        self.normalise_button = W.Button(
            description=t("editor.normalise"), tooltip=t("editor.normalise_tip"), layout=W.Layout(width="100px")
        )
        self.vocab_size = vocab_slider(V, vocab_range)
        self.preset_buttons = preset_buttons()
        self.text_p, self.text_q = weights_text("p", "0.6, 0.3, 0.1"), weights_text("q", "0.4, 0.5, 0.1")
        self.apply_button = W.Button(description=t("editor.apply"), layout=W.Layout(width="80px"))
        self.sliders_p: list[W.FloatSlider] = []
        self.sliders_q: list[W.FloatSlider] = []
        self._slider_box = W.HBox()
        self._build_sliders()

        self.mode.observe(self._on_mode, names="value")
        self.normalise_button.on_click(lambda _: self.normalise())
        self.vocab_size.observe(self._on_vocab_size, names="value")
        for key, b in self.preset_buttons.items():
            b.on_click(lambda _, key=key: self.apply_preset(key))
        self.apply_button.on_click(lambda _: self.apply_text())

        wrap = W.Layout(flex_flow="row wrap")
        super().__init__(
            [
                W.HBox([W.Label(t("editor.presets"))] + list(self.preset_buttons.values()), layout=wrap),
                self._slider_box,
                W.HBox([self.mode, self.normalise_button, self.vocab_size], layout=wrap),
                W.HBox([self.text_p, self.text_q, self.apply_button], layout=wrap),
            ]
        )
        self.add_class("specviz-editor")

    # --- state
    @property
    def p(self) -> np.ndarray:
        """Current p slider values (a distribution except in "free" mode before Normalise)."""
        return self._cp / self.units

    @property
    def q(self) -> np.ndarray:
        """Current q slider values (a distribution except in "free" mode before Normalise)."""
        return self._cq / self.units

    @property
    def vocab(self) -> list[str]:
        """The token names."""
        return list(self._names)

    @property
    def V(self) -> int:
        """The vocabulary size."""
        return len(self._names)

    def on_change(self, fn: Callable) -> None:
        """Register fn(p, q, vocab), called after every change of p, q or the vocabulary."""
        self._listeners.append(fn)

    def _emit(self) -> None:
        for fn in self._listeners:
            fn(self.p, self.q, self.vocab)

    def show_error(self, text: str) -> None:
        """Show an error: through `on_error` (the app's message) if given, else in `self.message`."""
        if self._on_error is not None:
            self._on_error(text)
        else:
            self.message.value = error_html(text)

    # --- sliders
    def _make_slider(self, which: str, i: int, value: float) -> W.FloatSlider:
        s = probability_slider(which, self._names[i], value, self.units, self._fmt)
        s.observe(functools.partial(self._on_slider, which, i), names="value")
        return s

    def _build_sliders(self) -> None:
        self.sliders_p = [self._make_slider("p", i, v / self.units) for i, v in enumerate(self._cp)]
        self.sliders_q = [self._make_slider("q", i, v / self.units) for i, v in enumerate(self._cq)]
        self._slider_box.children = [
            W.VBox(
                [W.HTML(f"<b style='color:{text_colour(PALETTE['p'])}'>{t('editor.target_p')}</b>")] + self.sliders_p
            ),
            W.VBox(
                [W.HTML(f"<b style='color:{text_colour(PALETTE['q'])}'>{t('editor.draft_q')}</b>")] + self.sliders_q
            ),
        ]

    def _write_sliders(self) -> None:
        """Push the counts into the sliders without triggering their observers."""
        self._updating = True
        try:
            for sliders, counts in ((self.sliders_p, self._cp), (self.sliders_q, self._cq)):
                for s, c in zip(sliders, counts):
                    v = c / self.units
                    if abs(s.value - v) > 1e-12:
                        s.value = v
        finally:
            self._updating = False

    def _on_slider(self, which: str, i: int, change) -> None:
        if self._updating:
            return
        k = int(np.clip(round(change["new"] * self.units), 0, self.units))
        counts = self._cp if which == "p" else self._cq  # changed in place
        if self.mode.value == "rescale":
            counts[:] = rescale_others(counts, i, k, self.units)
        counts[i] = k
        self._write_sliders()
        self._emit()

    # --- operations (errors become a message: see safe_callback)
    @safe_callback
    def set_distributions(self, p=None, q=None, vocab=None) -> None:
        """Set p and/or q (any non-negative weights; normalised and snapped to the grid)."""
        self._set(p, q, vocab)

    def _set(self, p=None, q=None, vocab=None) -> None:
        cp = snap(p, self.units) if p is not None else self._cp
        cq = snap(q, self.units) if q is not None else self._cq
        if cp.size != cq.size:
            raise ValueError(t("editor.size_mismatch", np=cp.size, nq=cq.size))
        V = cp.size
        if not (self.vocab_size.min <= V <= self.vocab_size.max):
            raise ValueError(t("editor.vocab_range", V=V, lo=self.vocab_size.min, hi=self.vocab_size.max))
        names = (
            vocab_names(vocab, V)
            if vocab is not None
            else (self._names if V == len(self._names) else list(default_vocab(V)))
        )
        rebuild = V != len(self._names) or names != self._names
        self._cp, self._cq, self._names = cp.copy(), cq.copy(), names
        if rebuild:
            self._updating = True
            try:
                self.vocab_size.value = V
            finally:
                self._updating = False
            self._build_sliders()
        else:
            self._write_sliders()
        self._emit()

    def set_q(self, q) -> None:
        """Set the draft q (any non-negative weights)."""
        self.set_distributions(q=q)

    @safe_callback
    def normalise(self) -> None:
        """Rescale p and q to sum to 1 (a message if one of them is all zero)."""
        self._set(self._cp, self._cq)

    @safe_callback
    def apply_preset(self, key: str) -> None:
        """Apply one of `PRESETS` ('tutorial', 'perfect', 'disjoint', 'uniform', 'one_hot')."""
        self._set(*preset_weights(key, self._cp, self.units))

    @safe_callback
    def apply_text(self) -> None:
        """Apply the typed weights in `text_p` / `text_q` (empty = keep)."""
        tp, tq = self.text_p.value.strip(), self.text_q.value.strip()
        if not tp and not tq:
            raise ValueError(t("editor.type_first"))
        p = parse_weights(tp, "p") if tp else None
        q = parse_weights(tq, "q") if tq else None
        for typed in (p, q):
            if typed is not None:
                snap(typed, self.units)  # validate before touching anything
        if p is not None and q is None and p.size != self.V:
            raise ValueError(t("editor.typed_size", which="p", n=p.size, V=self.V, other="q"))
        if q is not None and p is None and q.size != self.V:
            raise ValueError(t("editor.typed_size", which="q", n=q.size, V=self.V, other="p"))
        self._set(p, q)

    @safe_callback
    def resize(self, V: int) -> None:
        """Change the vocabulary size: existing tokens keep their mass, new tokens start at 0."""
        V = int(V)

        def fit(c):
            out = np.zeros(V)
            m = min(V, c.size)
            out[:m] = c[:m]
            return out if out.sum() > 0 else np.ones(V)

        self._set(fit(self._cp), fit(self._cq), vocab=default_vocab(V))

    def _on_vocab_size(self, change) -> None:
        if self._updating:
            return
        self.resize(change["new"])

    def _on_mode(self, change) -> None:
        if change["new"] == "rescale" and (self._cp.sum() != self.units or self._cq.sum() != self.units):
            try:
                self._set(self._cp, self._cq)
            except ValueError as e:
                self.show_error(str(e) + t("editor.stay_free"))
                self.mode.value = "free"
