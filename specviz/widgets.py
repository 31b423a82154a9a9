"""ipywidgets apps: controls wired to the figure builders of `specviz.figures`.

Every app is one call that returns a displayable container (an `ipywidgets.VBox`
subclass) whose useful parts are attributes, so a test can drive it without a browser:

>>> app = money_diagram_app()                       # doctest: +SKIP
>>> app.sliders_p[0].description, app.sliders_p[0].value   # doctest: +SKIP
('p(cat)', 0.6)
>>> app.sliders_p[0].value = 0.5                    # the other p sliders rescale  # doctest: +SKIP

Plots are `plotly.graph_objects.FigureWidget`s built with their real initial data and
updated in place inside `batch_update()`; their traces carry `meta` names (see the
builders). Anything the core rejects (a ValueError) becomes a message in
`app.message`, never a traceback, and the app stays usable.
"""

from __future__ import annotations

import contextlib
import functools
import html
import sys
import types
from typing import Callable, Iterable, Sequence


def _defer_rfc3987_syntax() -> None:
    """Make the first `go.FigureWidget` seconds faster: a lazy stand-in for `rfc3987_syntax`.

    Creating a FigureWidget imports plotly.io's renderers -> nbformat -> jsonschema, whose
    format checkers import `rfc3987_syntax` when it is installed (Jupyter's dependencies
    pull it in), and that module compiles ~40 lark grammars at import time: ~2.5 s on an
    idle core, and on a busy 2-core machine the Voila dashboard's first plot came 12-20 s
    sooner without it (benchmarks/bench_browser.py). The stand-in imports the real module
    on first use, so jsonschema's "iri" format checks still work.
    """
    import importlib
    import importlib.util

    name = "rfc3987_syntax"
    if name in sys.modules or "jsonschema" in sys.modules:
        return
    try:
        if importlib.util.find_spec(name) is None:
            return
    except (ImportError, ValueError):
        return
    proxy = types.ModuleType(name, "stand-in for rfc3987_syntax, imported on first use (specviz.widgets)")

    def real() -> types.ModuleType:
        if sys.modules.get(name) is proxy:
            del sys.modules[name]
        return importlib.import_module(name)

    def is_valid_syntax(*args, **kwargs):
        return real().is_valid_syntax(*args, **kwargs)

    def getattr_(attr: str):
        if attr.startswith("__"):  # the import system probes __path__ etc.: not a reason to load
            raise AttributeError(attr)
        return getattr(real(), attr)

    proxy.is_valid_syntax = is_valid_syntax
    proxy.__getattr__ = getattr_
    sys.modules[name] = proxy


_defer_rfc3987_syntax()

import ipywidgets as W  # noqa: E402
import numpy as np  # noqa: E402
import plotly.graph_objects as go  # noqa: E402

from .htmlkit import html_table  # noqa: E402

from . import figures as F
from .audit import audit
from .rules import RULES, get_rule, rule_joint
from .sampling import SpecSample, spec_sample
from .standardize import Sampling
from .theory import acceptance_rate, rejection_mass, resample_dist, tv_distance
from .validate import as_pair, normalize

TUTORIAL_P = (0.6, 0.3, 0.1)
TUTORIAL_Q = (0.4, 0.5, 0.1)
VOCAB_MIN, VOCAB_MAX = 3, 10

PRESETS = {
    "tutorial": "Tutorial example",
    "perfect": "Perfect draft q = p",
    "disjoint": "Disjoint support",
    "uniform": "Uniform draft",
    "one_hot": "Near one-hot",
}
"""Preset keys -> button labels of the distribution editor."""

_ERROR_STYLE = "color:#cf222e;background:#ffebe9;border:1px solid #ff818266;padding:4px 8px;border-radius:4px"
_INFO_STYLE = "color:#0550ae;padding:4px 8px"


# ----------------------------------------------------------------------------- helpers


def snap(weights, units: int = 100) -> np.ndarray:
    """Non-negative weights -> integer counts summing to `units` (largest remainder rounding).

    The editor keeps p and q on this grid, so the values the sliders show (k / units)
    are exactly the values the figures use, and they always sum to 1.

    >>> snap([1, 1, 1]).tolist()
    [34, 33, 33]
    """
    w = normalize(weights)  # ValueError for negative / NaN / all-zero weights
    x = np.asarray(w, dtype=np.float64) * units
    base = np.floor(x).astype(np.int64)
    short = int(units - base.sum())
    if short > 0:
        order = np.argsort(-(x - base), kind="stable")
        base[order[:short]] += 1
    return base


def parse_weights(text: str, name: str = "p") -> np.ndarray:
    """'0.6, 0.3 0.1' -> array([0.6, 0.3, 0.1]); ValueError with a readable message otherwise."""
    parts = [s for s in text.replace(";", ",").replace(",", " ").split() if s]
    if not parts:
        raise ValueError(f"{name}: type numbers separated by commas, e.g. 0.6, 0.3, 0.1")
    try:
        return np.array([float(s) for s in parts])
    except ValueError:
        raise ValueError(f"{name}: {text!r} is not a list of numbers (e.g. 0.6, 0.3, 0.1)") from None


def sync_figure(fw: go.FigureWidget, fig: go.Figure) -> None:
    """Make FigureWidget `fw` show `fig`, in place (one `batch_update` message when the traces match).

    Only properties that changed are sent. If the number or types of traces differ,
    the traces are replaced instead.
    """
    new_data = [t.to_plotly_json() for t in fig.data]
    layout = fig.layout.to_plotly_json()
    layout.pop("template", None)
    same = len(new_data) == len(fw.data) and all(d["type"] == t.type for d, t in zip(new_data, fw.data))
    if not same:
        fw.data = []
        fw.add_traces(list(fig.data))
    with fw.batch_update():
        if same:
            for t, d in zip(fw.data, new_data):
                d = {k: v for k, v in d.items() if k not in ("type", "uid")}
                t.update(d)
        fw.layout.update(layout)


@contextlib.contextmanager
def transition(fw: go.FigureWidget, duration_ms: int = 250, easing: str = "cubic-in-out"):
    """Like `fw.batch_animate`, but each new transition interrupts the running one.

    Property changes made inside the block reach the browser as one `Plotly.animate`
    call that tweens bars from their old to their new heights over `duration_ms`.
    plotly.py's own `batch_animate` queues transitions (plotly.js mode "afterall"), so
    a dragged slider would lag behind; here the mode is "immediate". With
    `duration_ms <= 0`, or a plotly.py without the batch-animate internals used here,
    it falls back to an instant `batch_update`.
    """
    perform = getattr(fw, "_perform_batch_animate", None)
    if duration_ms <= 0 or perform is None or getattr(fw, "_in_batch_mode", True):
        with fw.batch_update():
            yield
        return
    fw._in_batch_mode = True
    try:
        yield
    finally:
        fw._in_batch_mode = False
        if fw._batch_trace_edits or fw._batch_layout_edits:  # nothing changed: no message
            perform({"transition": {"duration": int(duration_ms), "easing": easing},
                     "frame": {"duration": int(duration_ms), "redraw": True}, "mode": "immediate"})


def _figure_widget(fig: go.Figure) -> go.FigureWidget:
    fw = go.FigureWidget(fig)
    return fw


def _verdict_html(report, what: str) -> str:
    """An audit report as one line of HTML: a green PASS or red FAIL, `what`, and the explanation."""
    colour = "#1a7f37" if report.passed else "#cf222e"
    word = "PASS" if report.passed else "FAIL"
    return (f"<b class='specviz-verdict-{word.lower()}' style='color:{colour}'>{word}</b> "
            f"{what}: {html.escape(report.explanation)}")


_html_table = html_table  # the name the apps below (and older code) use


def _safe(method):
    """Run an app callback; a ValueError (or any error) becomes a message in `self.message`."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except ValueError as e:
            self.show_error(str(e))
        except Exception as e:  # noqa: BLE001 - a lecture must never show a traceback
            self.show_error(f"{type(e).__name__}: {e}")
        return None

    return wrapper


class _App(W.VBox):
    """Base of every app: a VBox with a `message` HTML for errors and notes."""

    hint = ""

    def __init__(self, children=(), message: W.HTML | None = None, **kwargs):
        self.message = message if message is not None else W.HTML(value="")
        self.message.add_class("specviz-message")
        self.last_error: str | None = None
        super().__init__(children=list(children), **kwargs)
        self.add_class("specviz-app")

    def show_error(self, text: str) -> None:
        """Show `text` as an error in `self.message` (and keep it in `self.last_error`)."""
        self.last_error = text
        hint = f" {self.hint}" if self.hint and "normalis" in text.lower() else ""
        self.message.value = (f"<div class='specviz-error' style='{_ERROR_STYLE}'>⚠ "
                              f"{html.escape(text)}{html.escape(hint)}</div>")

    def show_info(self, text: str) -> None:
        self.message.value = f"<div class='specviz-info' style='{_INFO_STYLE}'>{html.escape(text)}</div>"

    def clear_message(self) -> None:
        self.last_error = None
        if self.message.value:
            self.message.value = ""

    @property
    def message_text(self) -> str:
        """The message without HTML ('' when there is none)."""
        import re

        return html.unescape(re.sub(r"<[^>]+>", "", self.message.value)).strip()


# ----------------------------------------------------------------------------- distribution editor


def _editor_safe(method):
    """Editor operations show errors in the app's message instead of raising."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        return self._guarded(method, self, *args, **kwargs)

    return wrapper


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

    def __init__(self, p=TUTORIAL_P, q=TUTORIAL_Q, vocab=None, resolution: int = 100,
                 message: W.HTML | None = None, on_error: Callable[[str], None] | None = None,
                 vocab_range=(VOCAB_MIN, VOCAB_MAX)):
        self.units = int(resolution)
        if self.units < 10:
            raise ValueError(f"resolution must be >= 10, got {resolution}")
        p, q = as_pair(p, q)
        V = p.size
        self._names = list(F._vocab(vocab, V))
        self._custom_vocab = vocab is not None
        self._cp, self._cq = snap(p, self.units), snap(q, self.units)
        self._updating = False
        self._listeners: list[Callable] = []
        self._on_error = on_error
        self.message = message if message is not None else W.HTML()
        digits = max(2, int(np.ceil(np.log10(self.units))))
        self._fmt = f".{digits}f"
        self.mode = W.ToggleButtons(options=[("rescale others", "rescale"), ("free + normalise", "free")],
                                    value="rescale", description="sliders",
                                    tooltips=["moving one slider rescales the others: always a distribution",
                                              "sliders move independently; press Normalise"],
                                    style={"button_width": "130px"})
        self.normalise_button = W.Button(description="Normalise", tooltip="rescale p and q to sum to 1",
                                         layout=W.Layout(width="100px"))
        lo, hi = min(vocab_range[0], V), max(vocab_range[1], V)
        self.vocab_size = W.IntSlider(value=V, min=lo, max=hi, description="vocabulary",
                                      continuous_update=False, style={"description_width": "initial"})
        self.preset_buttons = {key: W.Button(description=label, layout=W.Layout(width="auto"))
                               for key, label in PRESETS.items()}
        self.text_p = W.Text(description="type p", placeholder="e.g. 0.6, 0.3, 0.1",
                             style={"description_width": "50px"}, layout=W.Layout(width="260px"))
        self.text_q = W.Text(description="type q", placeholder="e.g. 0.4, 0.5, 0.1",
                             style={"description_width": "50px"}, layout=W.Layout(width="260px"))
        self.apply_button = W.Button(description="Apply", layout=W.Layout(width="80px"))
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

        presets = W.HBox([W.Label("presets:")] + list(self.preset_buttons.values()),
                         layout=W.Layout(flex_flow="row wrap"))
        super().__init__([
            presets,
            self._slider_box,
            W.HBox([self.mode, self.normalise_button, self.vocab_size], layout=W.Layout(flex_flow="row wrap")),
            W.HBox([self.text_p, self.text_q, self.apply_button], layout=W.Layout(flex_flow="row wrap")),
        ])
        self.add_class("specviz-editor")

    # --- state
    @property
    def p(self) -> np.ndarray:
        """Current p slider values (a distribution except in "free" mode before Normalise)."""
        return self._cp / self.units

    @property
    def q(self) -> np.ndarray:
        return self._cq / self.units

    @property
    def vocab(self) -> list[str]:
        return list(self._names)

    @property
    def V(self) -> int:
        return len(self._names)

    def on_change(self, fn: Callable) -> None:
        """Register fn(p, q, vocab), called after every change of p, q or the vocabulary."""
        self._listeners.append(fn)

    def _emit(self) -> None:
        for fn in self._listeners:
            fn(self.p, self.q, self.vocab)

    def _guarded(self, fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except ValueError as e:
            self._error(str(e))
        except Exception as e:  # noqa: BLE001
            self._error(f"{type(e).__name__}: {e}")

    def _error(self, text: str) -> None:
        if self._on_error is not None:
            self._on_error(text)
        else:
            self.message.value = f"<div class='specviz-error' style='{_ERROR_STYLE}'>⚠ {html.escape(text)}</div>"

    # --- sliders
    def _make_slider(self, which: str, i: int, value: float) -> W.FloatSlider:
        s = W.FloatSlider(value=value, min=0.0, max=1.0, step=1 / self.units, description=f"{which}({self._names[i]})",
                          readout_format=self._fmt, continuous_update=True,
                          style={"description_width": "70px", "handle_color": F.PALETTE["p" if which == "p" else "q"]},
                          layout=W.Layout(width="330px"))
        s.add_class(f"specviz-slider-{which}")
        s.observe(functools.partial(self._on_slider, which, i), names="value")
        return s

    def _build_sliders(self) -> None:
        self.sliders_p = [self._make_slider("p", i, v / self.units) for i, v in enumerate(self._cp)]
        self.sliders_q = [self._make_slider("q", i, v / self.units) for i, v in enumerate(self._cq)]
        self._slider_box.children = [
            W.VBox([W.HTML(f"<b style='color:{F.PALETTE['p']}'>target p</b>")] + self.sliders_p),
            W.VBox([W.HTML(f"<b style='color:{F.PALETTE['q']}'>draft q</b>")] + self.sliders_q),
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
        counts = self._cp if which == "p" else self._cq
        k = int(np.clip(round(change["new"] * self.units), 0, self.units))
        if self.mode.value == "rescale":
            others = np.arange(counts.size) != i
            rest = self.units - k
            w = counts[others].astype(np.float64)
            if w.sum() <= 0:
                w = np.ones(w.size)
            counts[others] = snap(w, rest) if rest > 0 else 0
        counts[i] = k
        self._write_sliders()
        self._emit()

    # --- operations (errors become a message: see _editor_safe)
    @_editor_safe
    def set_distributions(self, p=None, q=None, vocab=None) -> None:
        """Set p and/or q (any non-negative weights; normalised and snapped to the grid)."""
        self._set(p, q, vocab)

    def _set(self, p=None, q=None, vocab=None) -> None:
        cp = snap(p, self.units) if p is not None else self._cp
        cq = snap(q, self.units) if q is not None else self._cq
        if cp.size != cq.size:
            raise ValueError(f"p and q have different lengths ({cp.size} vs {cq.size}): "
                             "target and draft must share one vocabulary")
        V = cp.size
        if not (self.vocab_size.min <= V <= self.vocab_size.max):
            raise ValueError(f"vocabulary size {V} is outside {self.vocab_size.min}..{self.vocab_size.max}")
        names = list(F._vocab(vocab, V)) if vocab is not None else (
            self._names if V == len(self._names) else list(F.default_vocab(V)))
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
        self.set_distributions(q=q)

    @_editor_safe
    def normalise(self) -> None:
        """Rescale p and q to sum to 1 (a message if one of them is all zero)."""
        self._set(self._cp, self._cq)

    @_editor_safe
    def apply_preset(self, key: str) -> None:
        """Apply one of `PRESETS` ('tutorial', 'perfect', 'disjoint', 'uniform', 'one_hot')."""
        V = self.V
        if key == "tutorial":
            self._set(TUTORIAL_P, TUTORIAL_Q, vocab=F.TUTORIAL_VOCAB)
        elif key == "perfect":
            p = snap(self._cp, self.units)
            self._set(p, p)
        elif key == "disjoint":
            q = np.zeros(V)
            q[0] = 1.0
            p = np.concatenate([[0.0], np.arange(V - 1, 0, -1, dtype=np.float64)])
            self._set(p, q)
        elif key == "uniform":
            self._set(self._cp if self._cp.sum() else None, np.ones(V))
        elif key == "one_hot":
            j = int(np.argmax(self._cp))
            p = np.ones(V, dtype=np.float64)
            p[j] = self.units - (V - 1)
            self._set(p, None)
        else:
            raise ValueError(f"unknown preset {key!r}; presets: {', '.join(PRESETS)}")

    @_editor_safe
    def apply_text(self) -> None:
        """Apply the typed weights in `text_p` / `text_q` (empty = keep)."""
        tp, tq = self.text_p.value.strip(), self.text_q.value.strip()
        if not tp and not tq:
            raise ValueError("type p and/or q first, e.g. 0.6, 0.3, 0.1")
        p = parse_weights(tp, "p") if tp else None
        q = parse_weights(tq, "q") if tq else None
        if p is not None:
            snap(p, self.units)  # validate before touching anything
        if q is not None:
            snap(q, self.units)
        if p is not None and q is None and p.size != self.V:
            raise ValueError(f"typed p has {p.size} values but the vocabulary has {self.V}: type q too")
        if q is not None and p is None and q.size != self.V:
            raise ValueError(f"typed q has {q.size} values but the vocabulary has {self.V}: type p too")
        self._set(p, q)

    @_editor_safe
    def resize(self, V: int) -> None:
        """Change the vocabulary size: existing tokens keep their mass, new tokens start at 0."""
        V = int(V)
        def fit(c):
            out = np.zeros(V)
            m = min(V, c.size)
            out[:m] = c[:m]
            return out if out.sum() > 0 else np.ones(V)
        self._set(fit(self._cp), fit(self._cq), vocab=F.default_vocab(V))

    def _on_vocab_size(self, change) -> None:
        if self._updating:
            return
        self.resize(change["new"])

    def _on_mode(self, change) -> None:
        if change["new"] == "rescale" and (self._cp.sum() != self.units or self._cq.sum() != self.units):
            try:
                self._set(self._cp, self._cq)
            except ValueError as e:
                self._error(str(e) + " — set some weight first; staying in free mode")
                self.mode.value = "free"


# ----------------------------------------------------------------------------- money diagram


class _EditorApp(_App):
    """An app driven by a `DistributionEditor` (`self.editor`): its handles follow the editor.

    `sliders_p` / `sliders_q` are properties because the editor rebuilds its sliders when
    the vocabulary size changes.
    """

    editor: "DistributionEditor"

    @property
    def sliders_p(self) -> list[W.FloatSlider]:
        return self.editor.sliders_p

    @property
    def sliders_q(self) -> list[W.FloatSlider]:
        return self.editor.sliders_q

    @property
    def p(self) -> np.ndarray:
        return self.editor.p

    @property
    def q(self) -> np.ndarray:
        return self.editor.q

    @property
    def vocab(self) -> list[str]:
        return self.editor.vocab


class MoneyDiagramApp(_EditorApp):
    """Sliders -> the money diagram, live numbers, the 3-step reveal and the p -> disjoint morph.

    Handles: `figure` (FigureWidget; traces by meta "overlap", "residual", "p", "q",
    "rejected"), `editor`, `sliders_p`, `sliders_q` (descriptions "p(cat)", "q(cat)", ...),
    `numbers` (HTML), `step` (1..3), `step_label`, `next_button`, `back_button`,
    `play` (hidden ipywidgets.Play driving `frame_slider`), `play_button`,
    `frame_slider` ("morph"), `message`. Methods: `next_step()`, `back_step()`,
    `set_step(k)`, `set_frame(i)`, `advance_frame()`, `update()`.
    """

    hint = "(switch the sliders to 'rescale others' or press Normalise)"

    def __init__(self, p=None, q=None, vocab=None, step: int = 3, annotate: bool = True, frames: int = 21,
                 interval_ms: int = 250, resolution: int = 100, transition_ms: int = 250):
        super().__init__()
        self.transition_ms = int(transition_ms)  # 0: instant redraws
        p = TUTORIAL_P if p is None else p
        q = TUTORIAL_Q if q is None else q
        self.step = int(step)
        if self.step not in (1, 2, 3):
            raise ValueError(f"step must be 1, 2 or 3, got {step!r}")
        self.annotate = annotate
        self.editor = DistributionEditor(p, q, vocab, resolution=resolution, message=self.message,
                                         on_error=self.show_error)
        self.figure = _figure_widget(self._full_figure(self.editor.p, self.editor.q, self.editor.vocab))
        self._drawn_step = self.step
        self.numbers = W.HTML()
        self.numbers.add_class("specviz-numbers")
        self.back_button = W.Button(description="◀ Back", layout=W.Layout(width="90px"))
        self.next_button = W.Button(description="Next ▶", layout=W.Layout(width="90px"))
        self.step_label = W.HTML()
        self.step_label.add_class("specviz-step-label")
        self.frames = int(frames)
        self.play = W.Play(value=0, min=0, max=self.frames - 1, step=1, interval=int(interval_ms),
                           layout=W.Layout(display="none"))
        self.frame_slider = W.IntSlider(value=0, min=0, max=self.frames - 1, description="morph",
                                        readout=False, style={"description_width": "50px"},
                                        layout=W.Layout(width="260px"))
        W.link((self.play, "value"), (self.frame_slider, "value"))
        self.play_button = W.Button(description="Play: q from p to disjoint", layout=W.Layout(width="auto"),
                                    tooltip="morph the draft q from q = p to a one-hot on p's least likely token")
        self.morph_label = W.HTML()

        self.editor.on_change(lambda *_: self.update())
        self.next_button.on_click(lambda _: self.next_step())
        self.back_button.on_click(lambda _: self.back_step())
        self.play_button.on_click(lambda _: self.toggle_play())
        self.play.observe(self._on_playing, names="playing")
        self.frame_slider.observe(lambda ch: self.set_frame(ch["new"]), names="value")

        title = W.HTML("<h3 style='margin:4px 0'>Why speculative decoding is lossless: "
                       "min(p, q) + (p − q)⁺ = p</h3>")
        self.children = [
            title, self.editor,
            W.HBox([self.back_button, self.step_label, self.next_button], layout=W.Layout(align_items="center")),
            self.figure, self.numbers,
            W.HBox([self.play_button, self.frame_slider, self.morph_label, self.play],
                   layout=W.Layout(align_items="center")),
            self.message,
        ]
        self.update()

    @_safe
    def update(self) -> None:
        """Redraw from the editor's p and q (errors become a message)."""
        p, q = as_pair(self.editor.p, self.editor.q)
        names = self.editor.vocab
        patch = F.money_diagram_patch(p, q, names, self.step, self.annotate)
        if list(self.figure.data[0].x) != names:  # new vocabulary: new categories everywhere
            sync_figure(self.figure, self._full_figure(p, q, names))
        else:
            # New p or q: the bars glide to their new heights (one interrupting Plotly.animate);
            # a step of the reveal switches traces on or off at once (Plotly.update).
            moved = self.step == self._drawn_step
            with transition(self.figure, self.transition_ms if moved else 0):
                F.apply_patch(self.figure, patch)
        self._drawn_step = self.step
        self.numbers.value = self._numbers_html(p, q, names)
        self.step_label.value = (f"<b>Step {self.step} of 3</b> — "
                                 f"{html.escape(F.MONEY_STEPS[self.step].split(' · ', 1)[1])}")
        self.back_button.disabled = self.step <= 1
        self.next_button.disabled = self.step >= 3
        self.clear_message()

    def _full_figure(self, p, q, names) -> go.Figure:
        # no hatching when animating: plotly.js cannot animate pattern-filled bars
        return F.money_diagram(p, q, names, self.step, self.annotate, hatch=self.transition_ms <= 0)

    @staticmethod
    def _numbers_html(p, q, names) -> str:
        pa, z, tv = acceptance_rate(p, q), rejection_mass(p, q), tv_distance(p, q)
        pp = resample_dist(p, q)
        pp_text = ", ".join(f"{n} {v:.3f}" for n, v in zip(names, pp)) if z > 0 else "never used (Z = 0)"
        rows = [["P(accept) = Σ min(p, q)", f"<span class='specviz-p-accept'>{pa:.3f}</span>"],
                ["P(reject) = Z = Σ (p − q)⁺", f"<span class='specviz-z'>{z:.3f}</span>"],
                ["TV(p, q)", f"<span class='specviz-tv'>{tv:.3f}</span>"],
                ["p′ = (p − q)⁺ / Z", f"<span class='specviz-p-prime'>{html.escape(pp_text)}</span>"]]
        return _html_table(rows)

    # --- step reveal
    def set_step(self, k: int) -> None:
        self.step = int(min(3, max(1, k)))
        self.update()

    def next_step(self) -> None:
        self.set_step(self.step + 1)

    def back_step(self) -> None:
        self.set_step(self.step - 1)

    # --- morph q from p to a disjoint draft
    def morph_target(self) -> np.ndarray:
        """The end of the morph: a one-hot q on p's least likely token (disjoint when p there is 0)."""
        p = self.editor.p
        end = np.zeros(p.size)
        end[int(np.argmin(p))] = 1.0
        return end

    @_safe
    def set_frame(self, i: int) -> None:
        """Show morph frame i: q = (1 − t) p + t · one-hot, t = i / (frames − 1)."""
        i = int(min(self.frames - 1, max(0, i)))
        if self.frame_slider.value != i:
            self.frame_slider.value = i  # its observer calls set_frame again
            return
        t = i / (self.frames - 1)
        p = normalize(self.editor.p)
        end = self.morph_target()
        self.editor.set_q((1 - t) * p + t * end)
        j = int(np.argmax(end))
        self.morph_label.value = (f"t = {t:.2f}: q = (1 − t)·p + t·one-hot({html.escape(self.editor.vocab[j])})"
                                  + (" — disjoint from p" if t == 1 and p[j] == 0 else ""))

    def advance_frame(self) -> int:
        """Advance the morph by one frame (what Play does on a timer); returns the new frame."""
        nxt = self.frame_slider.value + 1
        if nxt > self.frames - 1:
            nxt = 0
        self.set_frame(nxt)
        return self.frame_slider.value

    def toggle_play(self) -> None:
        if not self.play.playing and self.play.value >= self.play.max:
            self.play.value = 0
        self.play.playing = not self.play.playing

    def _on_playing(self, change) -> None:
        self.play_button.description = "Pause" if change["new"] else "Play: q from p to disjoint"


def money_diagram_app(p=None, q=None, vocab=None, step: int = 3, annotate: bool = True, **kwargs) -> MoneyDiagramApp:
    """The money-diagram app: sliders for p and q, the diagram updating in place, live numbers,
    the 3-step reveal (Next/Back) and a Play button morphing q from p to a disjoint draft.

    Bars glide to new heights over `transition_ms` (default 250; 0 = instant redraws).
    """
    return MoneyDiagramApp(p, q, vocab, step=step, annotate=annotate, **kwargs)


# ----------------------------------------------------------------------------- Monte-Carlo


N_CHOICES = (100, 1_000, 10_000, 100_000, 1_000_000)


class MonteCarloApp(_EditorApp):
    """Sample N speculative steps, watch the histogram fill p, read the audit's verdict.

    Handles: `figure` (traces "accepted", "resampled", "p", "overlap_exact"), `editor`,
    `sliders_p`, `sliders_q`, `rule` (Dropdown), `n` (Dropdown of N), `seed` (IntText),
    `run_button`, `progress` (IntProgress), `verdict` (HTML), `message`; after `run()`:
    `last_sample` (SpecSample) and `last_report` (AuditReport).
    """

    hint = "(switch the sliders to 'rescale others' or press Normalise)"

    def __init__(self, p=None, q=None, vocab=None, rule="lossless", n=10_000, seed=0, chunks=10):
        super().__init__()
        p = TUTORIAL_P if p is None else p
        q = TUTORIAL_Q if q is None else q
        self.editor = DistributionEditor(p, q, vocab, message=self.message, on_error=self.show_error)
        self.rule = W.Dropdown(options=[(f"{k} ({'lossless' if r.lossless else 'lossy'})", k) for k, r in RULES.items()],
                               value=get_rule(rule).name, description="rule")
        opts = list(N_CHOICES) if n in N_CHOICES else sorted(set(N_CHOICES) | {int(n)})
        self.n = W.Dropdown(options=[(f"{v:,}", v) for v in opts], value=int(n), description="N samples")
        self.seed = W.IntText(value=int(seed), description="seed", layout=W.Layout(width="160px"))
        self.run_button = W.Button(description="Run", button_style="primary", layout=W.Layout(width="90px"))
        self.chunks = int(chunks)
        self.progress = W.IntProgress(value=0, min=0, max=self.chunks, description="progress")
        self.verdict = W.HTML("<i>press Run to sample</i>")
        self.verdict.add_class("specviz-verdict")
        self.figure = _figure_widget(F.monte_carlo_figure(self.editor.p, self.editor.q, None, self.editor.vocab))
        self.last_sample: SpecSample | None = None
        self.last_report = None
        self.editor.on_change(lambda *_: self.reset())
        self.rule.observe(lambda _: self.reset(), names="value")
        self.run_button.on_click(lambda _: self.run())
        self.children = [
            W.HTML("<h3 style='margin:4px 0'>Sampling check: does the output follow p?</h3>"),
            self.editor,
            W.HBox([self.rule, self.n, self.seed, self.run_button], layout=W.Layout(flex_flow="row wrap")),
            self.progress, self.figure, self.verdict, self.message,
        ]

    @_safe
    def reset(self) -> None:
        """Drop the last run (p, q or the rule changed): exact parts redrawn, empirical bars empty."""
        p, q = as_pair(self.editor.p, self.editor.q)
        self.last_sample, self.last_report = None, None
        self.progress.value = 0
        sync_figure(self.figure, F.monte_carlo_figure(p, q, None, self.editor.vocab))
        self.verdict.value = "<i>press Run to sample</i>"
        self.clear_message()

    @_safe
    def run(self):
        """Sample N steps in chunks (updating the progress bar and histogram), then audit them."""
        p, q = as_pair(self.editor.p, self.editor.q)
        n, rule = int(self.n.value), self.rule.value
        if n < 1:
            raise ValueError("N must be >= 1")
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
                sync_figure(self.figure, F.monte_carlo_figure(p, q, sample, self.editor.vocab))
                self.progress.value = i + 1
        finally:
            self.run_button.disabled = False
        all_tokens = sample.tokens
        report = audit(lambda *_: all_tokens, p, q, n=n)
        self.last_sample, self.last_report = sample, report
        self.verdict.value = _verdict_html(report, f"audit of these {n:,} samples")
        self.clear_message()
        return report


def monte_carlo_app(p=None, q=None, vocab=None, rule="lossless", n=10_000, seed=0) -> MonteCarloApp:
    """Monte-Carlo panel: choose N, Run (with progress), the histogram converging to p split into
    accepted (→ min(p, q)) and resampled (→ (p − q)⁺) parts, and the audit's verdict."""
    return MonteCarloApp(p, q, vocab, rule=rule, n=n, seed=seed)


# ----------------------------------------------------------------------------- pitfalls


class PitfallApp(_EditorApp):
    """Pick a verification rule; see its exact output vs p, its TV and the audit's verdict.

    Handles: `figure` (`rule_figure`: traces "accept", "reject", "p", "q"), `editor`,
    `sliders_p`, `sliders_q`, `rule` (Dropdown of rule names), `lenience` (l),
    `eps`, `delta`, `audit_n`, `numbers`, `verdict`, `message`, `last_report`.
    """

    hint = "(switch the sliders to 'rescale others' or press Normalise)"

    def __init__(self, p=None, q=None, vocab=None, rule="resample_target", audit_n=20_000, seed=0):
        super().__init__()
        p = TUTORIAL_P if p is None else p
        q = TUTORIAL_Q if q is None else q
        self.editor = DistributionEditor(p, q, vocab, message=self.message, on_error=self.show_error)
        self.rule = W.Dropdown(options=[(f"{k} ({'lossless' if r.lossless else 'pitfall / lossy'})", k)
                                        for k, r in RULES.items()], value=get_rule(rule).name, description="rule")
        self.lenience = W.FloatSlider(value=0.5, min=0.05, max=1.0, step=0.05, description="lenience l",
                                      continuous_update=False, style={"description_width": "80px"})
        self.eps = W.FloatSlider(value=0.09, min=0.0, max=0.5, step=0.01, description="ε", continuous_update=False)
        self.delta = W.FloatSlider(value=0.3, min=0.0, max=1.0, step=0.05, description="δ", continuous_update=False)
        self.audit_n = W.Dropdown(options=[(f"{v:,}", v) for v in (1_000, 20_000, 100_000)], value=int(audit_n),
                                  description="audit N")
        self.seed = int(seed)
        self.description = W.HTML()
        self.numbers = W.HTML()
        self.verdict = W.HTML()
        self.verdict.add_class("specviz-verdict")
        self.last_report = None
        self._param_box = W.HBox()
        self.figure = _figure_widget(F.rule_figure(self.editor.p, self.editor.q, self.rule.value, self.editor.vocab,
                                                   **self._params()))
        self.editor.on_change(lambda *_: self.update())
        for w in (self.rule, self.lenience, self.eps, self.delta, self.audit_n):
            w.observe(lambda _: self.update(), names="value")
        self.children = [
            W.HTML("<h3 style='margin:4px 0'>Pitfalls: rules that look right but are not lossless</h3>"),
            self.editor, W.HBox([self.rule, self.audit_n]), self._param_box, self.description,
            self.figure, self.numbers, self.verdict, self.message,
        ]
        self.update()

    def _params(self) -> dict:
        name = self.rule.value
        if name == "lenient":
            return {"l": float(self.lenience.value)}
        if name == "typical":
            return {"eps": float(self.eps.value), "delta": float(self.delta.value)}
        return {}

    @_safe
    def update(self):
        p, q = as_pair(self.editor.p, self.editor.q)
        name = self.rule.value
        r = get_rule(name)
        params = self._params()
        self._param_box.children = ([self.lenience] if name == "lenient" else
                                    [self.eps, self.delta] if name == "typical" else [])
        sync_figure(self.figure, F.rule_figure(p, q, name, self.editor.vocab, **params))
        j = rule_joint(p, q, name, **params)
        out = j.output.astype(np.float64)
        tv = float(np.abs(out - p).sum() / 2)
        self.description.value = f"<i>{html.escape(r.description)}</i>"
        self.numbers.value = _html_table([
            ["TV(output, p)", f"<span class='specviz-rule-tv'>{tv:.4f}</span>"],
            ["acceptance", f"{float(j.p_accept):.3f}"],
            ["output", html.escape(", ".join(f"{n} {v:.3f}" for n, v in zip(self.editor.vocab, out)))],
            ["target p", html.escape(", ".join(f"{n} {v:.3f}" for n, v in zip(self.editor.vocab, p)))],
        ])
        report = audit(name, p, q, n=int(self.audit_n.value), seed=self.seed, **params)
        self.last_report = report
        self.verdict.value = _verdict_html(report, f"audit ({int(self.audit_n.value):,} samples)")
        self.clear_message()
        return report


def pitfall_app(p=None, q=None, vocab=None, rule="resample_target", audit_n=20_000) -> PitfallApp:
    """Pitfall explorer: rule dropdown → exact output vs p (accept/reject parts), TV, audit verdict."""
    return PitfallApp(p, q, vocab, rule=rule, audit_n=audit_n)


# ----------------------------------------------------------------------------- γ-step


class GammaApp(_App):
    """α, γ and the cost ratio c → tokens per step, the speedup map and accepted-length histogram.

    Handles: `figure` (`gamma_figure`), `alpha`, `gamma`, `cost` (sliders), `n_steps`,
    `numbers`, `message`; `last_counts` (simulated accepted drafts per step).
    """

    def __init__(self, alpha=0.8, gamma=4, c=0.1, n_steps=2000, seed=0):
        super().__init__()
        self.alpha = W.FloatSlider(value=alpha, min=0.0, max=1.0, step=0.01, description="α (acceptance)",
                                   style={"description_width": "100px"})
        self.gamma = W.IntSlider(value=gamma, min=1, max=16, description="γ (drafts)",
                                 style={"description_width": "100px"})
        self.cost = W.FloatSlider(value=c, min=0.0, max=1.0, step=0.01, description="c (draft cost)",
                                  style={"description_width": "100px"})
        self.n_steps = W.Dropdown(options=[(f"{v:,}", v) for v in (100, 2000, 20_000)], value=int(n_steps),
                                  description="simulated steps")
        self.seed = int(seed)
        self.numbers = W.HTML()
        self.last_counts = F.simulate_accepted_lengths(alpha, gamma, n_steps, self.seed)
        self.figure = _figure_widget(F.gamma_figure(alpha, gamma, c, accepted_counts=self.last_counts))
        for w in (self.alpha, self.gamma, self.cost, self.n_steps):
            w.observe(lambda _: self.update(), names="value")
        self.children = [
            W.HTML("<h3 style='margin:4px 0'>γ-step decoding: how many tokens per target call?</h3>"),
            W.HBox([W.VBox([self.alpha, self.gamma, self.cost]), self.n_steps]),
            self.figure, self.numbers, self.message,
        ]
        self.update()

    @_safe
    def update(self):
        from .gamma import best_gamma, expected_tokens, speedup

        a, g, c = float(self.alpha.value), int(self.gamma.value), float(self.cost.value)
        self.last_counts = F.simulate_accepted_lengths(a, g, int(self.n_steps.value), self.seed)
        sync_figure(self.figure, F.gamma_figure(a, g, c, accepted_counts=self.last_counts))
        self.numbers.value = _html_table([
            ["E[tokens per verify step]", f"<span class='specviz-expected'>{expected_tokens(a, g):.3f}</span>"],
            ["simulated mean", f"{np.mean(self.last_counts) + 1:.3f}"],
            ["speedup (γ c + 1 cost)", f"<span class='specviz-speedup'>{speedup(a, g, c):.3f}×</span>"],
            ["best γ for this α, c", f"{best_gamma(a, c)}"],
        ])
        self.clear_message()


def gamma_app(alpha=0.8, gamma=4, c=0.1) -> GammaApp:
    """γ-step explorer: expected tokens per step, the speedup heat map (best γ marked) and
    the simulated vs exact accepted-length distribution."""
    return GammaApp(alpha, gamma, c)


# ----------------------------------------------------------------------------- multi-draft


class MultiDraftApp(_EditorApp):
    """k drafts verified in turn: acceptance and TV with vs without the residual update.

    Handles: `figure` (`multidraft_figure`), `editor`, `sliders_p`, `sliders_q`,
    `k_max` (IntSlider), `numbers`, `message`.
    """

    hint = "(switch the sliders to 'rescale others' or press Normalise)"

    def __init__(self, p=None, q=None, vocab=None, k_max=4):
        super().__init__()
        p = (0.5, 0.3, 0.15, 0.05) if p is None else p
        q = (0.1, 0.2, 0.3, 0.4) if q is None else q
        self.editor = DistributionEditor(p, q, vocab, message=self.message, on_error=self.show_error)
        self.k_max = W.IntSlider(value=k_max, min=1, max=8, description="drafts k ≤")
        self.numbers = W.HTML()
        self.figure = _figure_widget(F.multidraft_figure(self.editor.p, self.editor.q, k_max, self.editor.vocab))
        self.editor.on_change(lambda *_: self.update())
        self.k_max.observe(lambda _: self.update(), names="value")
        self.children = [
            W.HTML("<h3 style='margin:4px 0'>Multi-draft / tree verification</h3>"),
            self.editor, self.k_max, self.figure, self.numbers, self.message,
        ]
        self.update()

    @_safe
    def update(self):
        from .multidraft import multi_draft_acceptance_rate, multi_draft_output_dist

        p, q = as_pair(self.editor.p, self.editor.q)
        k = int(self.k_max.value)
        sync_figure(self.figure, F.multidraft_figure(p, q, k, self.editor.vocab))
        rows = []
        for kk in range(1, k + 1):
            naive = multi_draft_output_dist(p, q, kk, update_residual=False).astype(np.float64)
            rows.append([str(kk), f"{multi_draft_acceptance_rate(p, q, kk):.3f}",
                         f"{multi_draft_acceptance_rate(p, q, kk, update_residual=False):.3f}",
                         f"{np.abs(naive - p).sum() / 2:.4f}"])
        self.numbers.value = _html_table(rows, ["k", "acceptance (update)", "acceptance (naive)", "TV naive"])
        self.clear_message()


def multidraft_app(p=None, q=None, vocab=None, k_max=4) -> MultiDraftApp:
    """Multi-draft explorer: acceptance and output for k = 1..k_max drafts, with and without the residual update."""
    return MultiDraftApp(p, q, vocab, k_max)


# ----------------------------------------------------------------------------- standardisation


DEFAULT_TARGET_LOGITS = (2.0, 1.5, 0.5, 0.0, -0.5, -1.0)
DEFAULT_DRAFT_LOGITS = (1.5, 2.0, 0.0, 0.5, -1.0, -0.5)


class _SamplingRow(W.HBox):
    def __init__(self, label, T, top_k=0, top_p=1.0, V=6, same_as=None, same=False):
        self.label = W.HTML(f"<b>{label}</b>", layout=W.Layout(width="190px"))
        self.temperature = W.FloatSlider(value=T, min=0.0, max=2.0, step=0.05, description="T",
                                         continuous_update=False, style={"description_width": "20px"},
                                         layout=W.Layout(width="220px"))
        self.top_k = W.IntSlider(value=top_k, min=0, max=V, description="top-k", continuous_update=False,
                                 style={"description_width": "40px"}, layout=W.Layout(width="200px"))
        self.top_p = W.FloatSlider(value=top_p, min=0.05, max=1.0, step=0.05, description="top-p",
                                   continuous_update=False, style={"description_width": "40px"},
                                   layout=W.Layout(width="200px"))
        self.same = W.Checkbox(value=same, description=f"same as {same_as}", indent=False) if same_as else None
        kids = [self.label, self.temperature, self.top_k, self.top_p] + ([self.same] if self.same else [])
        super().__init__(kids, layout=W.Layout(align_items="center", flex_flow="row wrap"))
        if self.same is not None:
            self.same.observe(lambda _: self._sync_disabled(), names="value")
            self._sync_disabled()

    def _sync_disabled(self):
        for w in (self.temperature, self.top_k, self.top_p):
            w.disabled = bool(self.same.value)

    def sampling(self) -> Sampling:
        return Sampling(float(self.temperature.value), int(self.top_k.value) or None,
                        float(self.top_p.value) if self.top_p.value < 1 else None)

    def controls(self):
        return [self.temperature, self.top_k, self.top_p] + ([self.same] if self.same else [])


class StandardizationApp(_App):
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
        self.vocab = F._vocab(vocab, V)
        self.intended = _SamplingRow("intended sampling", 0.7, V=V)
        self.target_used = _SamplingRow("p in the ratio made with", 1.0, V=V, same_as="intended", same=False)
        self.draft_sampled = _SamplingRow("draft token sampled with", 0.7, V=V, same_as="intended", same=True)
        self.draft_ratio = _SamplingRow("q in the ratio made with", 1.0, V=V, same_as="draft sampled", same=True)
        self.fix_button = W.Button(description="Fix: use one standardised distribution", layout=W.Layout(width="auto"))
        self.numbers = W.HTML()
        self.figure = _figure_widget(F.standardization_figure(self.target_logits, self.draft_logits,
                                                              **self._settings(), vocab=self.vocab))
        for row in (self.intended, self.target_used, self.draft_sampled, self.draft_ratio):
            for w in row.controls():
                w.observe(lambda _: self.update(), names="value")
        self.fix_button.on_click(lambda _: self.fix())
        self.children = [
            W.HTML("<h3 style='margin:4px 0'>Standardised sampling: temperature, top-k and top-p must be "
                   "folded into p and q before verifying</h3>"),
            self.intended, self.target_used, self.draft_sampled, self.draft_ratio, self.fix_button,
            self.figure, self.numbers, self.message,
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

    @_safe
    def update(self):
        from .standardize import mismatch_output_dist

        s = self._settings()
        sync_figure(self.figure, F.standardization_figure(self.target_logits, self.draft_logits, **s, vocab=self.vocab))
        m = mismatch_output_dist(self.target_logits, self.draft_logits, **s)
        ok = m.tv < 1e-9
        self.numbers.value = (f"TV(output, intended) = <b class='specviz-std-tv'>{m.tv:.4f}</b> — "
                              + ("<b style='color:#1a7f37'>lossless</b>" if ok else
                                 "<b style='color:#cf222e'>not the distribution you asked for</b>"))
        self.clear_message()
        return m


def standardization_app(target_logits=DEFAULT_TARGET_LOGITS, draft_logits=DEFAULT_DRAFT_LOGITS,
                        vocab=None) -> StandardizationApp:
    """Temperature / top-k standardisation explorer showing the mismatch pitfall."""
    return StandardizationApp(target_logits, draft_logits, vocab)


# ----------------------------------------------------------------------------- numerics


class NumericsApp(_App):
    """The lossless step computed exactly in fp64/fp32/fp16/bf16 (torch) vs the fp64 target.

    Handles: `figure` (`numerics_figure`: "p_tv", "verify_tv", "out_tv",
    "abs_err:<dtype>"), `vocab_size`, `scale`, `noise`, `temperature`, `seed`,
    `draft_dtype`, `table` (HTML), `message`, `last_report`.
    """

    def __init__(self, V=256, scale=6.0, noise=1.0, temperature=1.0, seed=0):
        super().__init__()
        from . import numerics

        self._numerics = numerics
        self.vocab_size = W.Dropdown(options=[16, 64, 256, 1024, 4096], value=int(V), description="vocabulary")
        self.scale = W.FloatSlider(value=scale, min=0.0, max=16.0, step=0.5, description="logit scale",
                                   continuous_update=False, style={"description_width": "90px"})
        self.noise = W.FloatSlider(value=noise, min=0.0, max=4.0, step=0.1, description="draft noise",
                                   continuous_update=False, style={"description_width": "90px"})
        self.temperature = W.FloatSlider(value=temperature, min=0.05, max=2.0, step=0.05, description="temperature",
                                         continuous_update=False, style={"description_width": "90px"})
        self.seed = W.IntText(value=int(seed), description="seed", layout=W.Layout(width="160px"))
        self.draft_dtype = W.Dropdown(options=[("same as target", None)] + [(d, d) for d in numerics.DTYPES],
                                      value=None, description="draft dtype")
        self.table = W.HTML()
        self.last_report = None
        self.figure = _figure_widget(self._figure())
        for w in (self.vocab_size, self.scale, self.noise, self.temperature, self.seed, self.draft_dtype):
            w.observe(lambda _: self.update(), names="value")
        self.children = [
            W.HTML("<h3 style='margin:4px 0'>Floating point: lossless within hardware numerics</h3>"),
            W.HBox([W.VBox([self.vocab_size, self.draft_dtype, self.seed]),
                    W.VBox([self.scale, self.noise, self.temperature])]),
            self.figure, self.table, self.message,
        ]
        self.update()

    def _figure(self):
        t, d = self._numerics.example_logits(int(self.vocab_size.value), float(self.scale.value),
                                             float(self.noise.value), int(self.seed.value))
        self.last_report = self._numerics.precision_report(t, d, temperature=float(self.temperature.value),
                                                           draft_dtype=self.draft_dtype.value)
        return F.numerics_figure(t, d, temperature=float(self.temperature.value), report=self.last_report)

    @_safe
    def update(self):
        sync_figure(self.figure, self._figure())
        rows = [[r.dtype, f"{r.p_tv:.2e}", f"{r.verify_tv:.2e}", f"{r.out_tv:.2e}", f"{r.max_abs:.2e}",
                 str(r.underflow)] for r in self.last_report]
        self.table.value = _html_table(rows, ["dtype", "TV(p_dtype, p)", "TV(out, p_dtype)", "TV(out, p)",
                                              "max |out − p|", "underflowed tokens"])
        self.clear_message()


def numerics_app(V=256, scale=6.0, noise=1.0, temperature=1.0) -> NumericsApp:
    """Numerics explorer: how far the output drifts from p when p and q are computed in low precision."""
    return NumericsApp(V, scale, noise, temperature)


# ----------------------------------------------------------------------------- dashboard

DASHBOARD_TABS = (
    ("Money diagram",
     "Drag p and q: the blue overlap min(p, q) plus the green residual (p − q)⁺ always fills the red outline p "
     "— that is the whole proof; use Next/Back to walk through it in three steps.",
     lambda: money_diagram_app(annotate=False)),  # the numbers panel shows P(accept), Z, p′
    ("Sampling check",
     "Run the sampler many times: the histogram converges to p, its accepted part to min(p, q) and its "
     "resampled part to (p − q)⁺, and a chi-square audit gives the verdict.",
     lambda: monte_carlo_app()),
    ("Pitfalls",
     "Rules that look plausible — resampling from p, from |p − q|, lenient or typical acceptance — "
     "miss the red outline, and the audit catches them.",
     lambda: pitfall_app()),
    ("γ-steps & trees",
     "Drafting γ tokens per target call multiplies throughput, and verifying several drafts stays lossless "
     "only if the residual is updated after each rejection.",
     lambda: W.VBox([gamma_app(), multidraft_app()])),
    ("Numerics",
     "The proof assumes exact arithmetic and one standardised distribution: low precision and "
     "mismatched temperature / top-k move the output away from p.",
     lambda: W.VBox([numerics_app(), standardization_app()])),
)


class DashboardApp(W.VBox):
    """All apps in one `ipywidgets.Tab`, each tab built on first view (keeps the first plot fast).

    Handles: `tabs` (the Tab), `titles` (tab titles), `apps` (title -> built widget),
    `build(i)`, `build_all()`, `add_tab(title, widget_or_factory, explanation)`.
    """

    def __init__(self, extra_tabs=None, lazy: bool = True):
        self.tabs = W.Tab()
        self.tabs.add_class("specviz-dashboard-tabs")
        self.titles: list[str] = []
        self.apps: dict[str, W.Widget] = {}
        self._factories: list[Callable[[], W.Widget]] = []
        self._explanations: list[str] = []
        self._bodies: list[W.VBox] = []
        super().__init__([W.HTML("<h2 style='margin:4px 0'>specviz — why speculative decoding is lossless</h2>"),
                          self.tabs])
        self.add_class("specviz-dashboard")
        for title, text, factory in DASHBOARD_TABS:
            self.add_tab(title, factory, text)
        for item in extra_tabs or ():
            self.add_tab(*item)
        self.tabs.observe(lambda ch: self.build(ch["new"]), names="selected_index")
        self.tabs.selected_index = 0
        self.build(0)
        if not lazy:
            self.build_all()

    def add_tab(self, title: str, widget_or_factory, explanation: str = "") -> None:
        """Append a tab (e.g. a "Real models" tab); a callable is built when the tab is first shown."""
        factory = widget_or_factory if callable(widget_or_factory) and not isinstance(widget_or_factory, W.Widget) \
            else (lambda w=widget_or_factory: w)
        body = W.VBox([W.HTML(f"<p class='specviz-tab-explanation'>{html.escape(explanation)}</p>"),
                       W.HTML("<i>loading…</i>")])
        self.titles.append(title)
        self._factories.append(factory)
        self._explanations.append(explanation)
        self._bodies.append(body)
        self.tabs.children = list(self.tabs.children) + [body]
        self.tabs.titles = tuple(self.titles)

    def build(self, i) -> W.Widget | None:
        """Build tab i's app if it is not built yet; returns it."""
        if i is None or not 0 <= i < len(self.titles):
            return None
        title = self.titles[i]
        if title not in self.apps:
            body = self._bodies[i]
            try:
                app = self._factories[i]()
            except Exception as e:  # noqa: BLE001 - show, don't crash the dashboard
                app = W.HTML(f"<div class='specviz-error' style='{_ERROR_STYLE}'>⚠ could not build this tab: "
                             f"{html.escape(f'{type(e).__name__}: {e}')}</div>")
            self.apps[title] = app
            body.children = [body.children[0], app]
        return self.apps[title]

    def build_all(self) -> None:
        for i in range(len(self.titles)):
            self.build(i)


def dashboard_app(extra_tabs=None, lazy: bool = True) -> DashboardApp:
    """The whole course in one tabbed widget.

    Tabs: "Money diagram", "Sampling check", "Pitfalls", "γ-steps & trees", "Numerics",
    each with a one-sentence explanation. `extra_tabs`: a list of
    (title, widget or zero-argument factory[, explanation]) appended after them — the
    hook for e.g. a "Real models" tab. Tabs are built when first selected (`lazy`).
    """
    return DashboardApp(extra_tabs, lazy=lazy)


__all__ = [
    "DASHBOARD_TABS", "DashboardApp", "DistributionEditor", "GammaApp", "MoneyDiagramApp", "MonteCarloApp",
    "MultiDraftApp", "NumericsApp", "PRESETS", "PitfallApp", "StandardizationApp", "dashboard_app", "gamma_app",
    "money_diagram_app", "monte_carlo_app", "multidraft_app", "numerics_app", "parse_weights", "pitfall_app",
    "snap", "standardization_app", "sync_figure",
]
