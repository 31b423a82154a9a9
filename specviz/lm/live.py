"""The live view: speculative decoding on real language models, token by token, with statistics.

`live_app()` returns an ipywidgets container (a `LiveApp`) with a pair selector, the prompt
and sampling settings, Generate / Stop, the generated text with each token coloured by its
fate (blue: an accepted draft token, green: resampled from (p − q)⁺ after a rejection,
pink: the bonus token drawn from p when all γ drafts pass), live plots of the acceptance
statistics next to their theory, tokens/s against autoregressive decoding, a γ sweep,
and for any generated token its real p and q as a money diagram: the bridge back to the
toy proof.

Generation runs in a background thread, so the notebook stays responsive; the text and the
plots are redrawn by a second thread at most every `refresh_s` seconds (the decoding
thread itself only records steps, so the measured tokens/s are not slowed by drawing).

All plots live in ONE plotly FigureWidget (`specviz.lm.figures.live_figure`, five panels),
updated in place with one message per redraw. Seen in Voila with plotly 7.1 / anywidget
0.11: on a page with several FigureWidgets, the later ones silently missed their in-place
updates (the first one never did; plotly.py#4933 is a related report), so a view that must
update live uses a single widget.
Stop takes effect after the verify step in progress. Every error (a bad model path,
incompatible tokenizers, an empty prompt, a context overflow) becomes a message in
`app.message` and the app stays usable.

Driving it without a browser (tests, scripts):

>>> from specviz.lm import NGramModel, Pair
>>> app = live_app(Pair(NGramModel.random(6, seed=0), NGramModel.random(6, seed=1)), prompt="0 1",
...                max_new_tokens=30, ar_baseline=False)
>>> result = app.generate(blocking=True)
>>> len(result.new_ids), app.text_html.value.count("class='specviz-tok ")
(30, 30)
"""

from __future__ import annotations

import html
import math
import threading
import time

import ipywidgets as W
import numpy as np
import plotly.graph_objects as go

from ..standardize import Sampling
from ..widgets import _App, _html_table
from . import figures as LF
from .engine import GenerationResult, autoregressive_generate, process_logits, speculative_generate
from .loading import load_pair
from .stats import spec_stats

GAMMAS = tuple(range(1, 9))
_DIM = "color:#57606a"


def _rgba(hex_color: str, alpha: float) -> str:
    h = hex_color.lstrip("#")
    r, g, b = (int(h[i: i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


def _fmt(v, spec=".3f", suffix="") -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "—"
    return f"{v:{spec}}{suffix}"


def fates_of(steps) -> list:
    """Per emitted token, from step records: "accepted", then the step's kind ("resampled"/"bonus"/"target")."""
    out = []
    for s in steps:
        out += ["accepted"] * s.accepted + [s.kind]
    return out


class PieceDecoder:
    """The text each generated token adds, decoded defensively.

    Decodes the whole prefix (prompt + tokens so far) and takes the difference, so a
    tokenizer that merges or re-spaces across tokens is handled; trailing U+FFFD (bytes of
    a character not complete yet, e.g. from a byte-level model) are held back until a later
    token completes the character, or shown as U+FFFD at the end (`finish`). Without a
    tokenizer the "text" of a token is its id. The pieces always join to the decoded
    continuation.
    """

    def __init__(self, tokenizer, prompt_ids):
        self.tokenizer = tokenizer
        self.prompt_ids = [int(t) for t in prompt_ids]
        self.base = self._decode(self.prompt_ids) if tokenizer is not None else ""
        self.stable = ""

    def _decode(self, ids) -> str:
        return self.tokenizer.decode(list(ids), skip_special_tokens=True, clean_up_tokenization_spaces=False)

    def prompt_text(self) -> str:
        return self.base if self.tokenizer is not None else " ".join(map(str, self.prompt_ids)) + " "

    def _continuation(self, new_ids) -> str:
        full = self._decode(self.prompt_ids + list(new_ids))
        if full.startswith(self.base):
            return full[len(self.base):]
        return self._decode(new_ids)  # a tokenizer that re-spaces across the boundary

    def piece(self, new_ids, i: int) -> str:
        """Text added by token i, given tokens new_ids[:i+1] (call for i = 0, 1, 2, ... in order)."""
        if self.tokenizer is None:
            return f"{int(new_ids[i])} "
        stable = self._continuation(new_ids[: i + 1]).rstrip("\ufffd")
        if stable.startswith(self.stable):
            out = stable[len(self.stable):]
        else:  # earlier text changed: show only what is new from the first difference
            k = 0
            while k < min(len(stable), len(self.stable)) and stable[k] == self.stable[k]:
                k += 1
            out = stable[k:]
        self.stable = stable
        return out

    def finish(self, new_ids) -> str:
        """Whatever the held-back bytes decode to at the very end ('' if nothing was held back)."""
        if self.tokenizer is None or not new_ids:
            return ""
        rest = self._continuation(new_ids)
        if rest.startswith(self.stable) and len(rest) > len(self.stable):
            out = rest[len(self.stable):]
            self.stable = rest
            return out
        return ""


def token_pieces(tokenizer, prompt_ids, new_ids) -> list:
    """The text each of `new_ids` adds after `prompt_ids` (see `PieceDecoder`)."""
    dec = PieceDecoder(tokenizer, prompt_ids)
    pieces = [dec.piece(new_ids, i) for i in range(len(new_ids))]
    if pieces:
        pieces[-1] += dec.finish(new_ids)
    return pieces


def token_span(i: int, fate: str, piece: str, selected: bool = False) -> str:
    """One generated token as `<span class='specviz-tok specviz-tok-FATE'>`, coloured by its fate."""
    c = LF.FATE_COLORS.get(fate, "#999999")
    style = f"background:{_rgba(c, 0.22)};border-bottom:2px solid {c}"
    if not piece:  # a token that only carried part of a character: keep it visible
        style += ";display:inline-block;min-width:4px;height:1em"
    if selected:
        style += ";outline:2px solid #24292f"
    label = f"#{i}: {LF.FATE_LABELS.get(fate, fate)}"
    return (f"<span class='specviz-tok specviz-tok-{fate}' data-pos='{i}' title='{html.escape(label)}' "
            f"style='{style}'>{html.escape(piece)}</span>")


def text_box(inner: str) -> str:
    """The framed, whitespace-preserving box the coloured text is shown in."""
    return ("<div class='specviz-text' style='white-space:pre-wrap;font-family:DejaVu Sans Mono,monospace;"
            "font-size:14px;line-height:1.7;border:1px solid #d0d7de;border-radius:6px;padding:8px;"
            f"max-height:260px;overflow-y:auto'>{inner}</div>")


def fates_html(result, tokenizer=None, legend: bool = True) -> str:
    """A finished speculative GenerationResult as HTML: the prompt in grey, each token coloured by its fate."""
    pieces = token_pieces(tokenizer, result.prompt_ids, result.new_ids)
    fates = result.fates()
    prompt = PieceDecoder(tokenizer, result.prompt_ids).prompt_text()
    body = (f"<span class='specviz-prompt' style='{_DIM}'>{html.escape(prompt)}</span>"
            + "".join(token_span(i, f, pc) for i, (f, pc) in enumerate(zip(fates, pieces))))
    return (legend_html() if legend else "") + text_box(body)


def legend_html() -> str:
    items = " ".join(
        f"<span style='background:{_rgba(LF.FATE_COLORS[f], 0.22)};border-bottom:3px solid {LF.FATE_COLORS[f]};"
        f"padding:0 4px'>{html.escape(LF.FATE_LABELS[f])}</span>" for f in ("accepted", "resampled", "bonus"))
    return f"<div style='font-size:12px;margin:2px 0'>{items} <span style='{_DIM}'>· grey: the prompt</span></div>"


def token_closeup(pair, result, i: int, temperature=1.0, top_k=None, top_p=None, exact: bool = True) -> dict:
    """Generated token i of a speculative run: its real p and q as a money diagram.

    The tokens shown are the union of the recorded top-8 lists of p and q at that position
    (plus the drafted and the emitted token), then "other" = 1 − Σ for each. With `exact`
    the values come from fresh forward passes of both models over the prefix with the run's
    sampling settings (the recorded lists only know their own tokens); if that fails, from
    the recorded lists. A bonus token (no draft at that position) gets a p-only figure.

    Returns a dict: figure, patch (`position_money_patch`, for `live_figure`), position, token, fate ("accepted", "resampled", "bonus",
    "target"), step, offset (draft position − 1), ids, names (with "other" last), p, q
    (None for a bonus token), top_p, top_q, alpha (exact Σ min(p, q) there, recorded),
    exact, title, subtitle, explanation (a sentence saying what happened).
    """
    i = int(i)
    if not 0 <= i < len(result.new_ids):
        raise ValueError(f"token #{i} is outside the {len(result.new_ids)} generated tokens")
    rec = next((s for s in result.steps if s.start <= i < s.start + s.n_emitted), None)
    if rec is None:
        raise ValueError(f"token #{i} has no verify step record")
    j = i - rec.start
    tok = getattr(pair, "tokenizer", None)
    token = int(result.new_ids[i])
    fate = "accepted" if j < rec.accepted else rec.kind
    tp = rec.top_p[j]
    tq = rec.top_q[j] if j < len(rec.top_q) else []
    drafted = int(rec.drafted[j]) if j < rec.gamma else None
    p_full = q_full = None
    if exact:
        try:
            s = Sampling(temperature, top_k, top_p)
            prefix = list(result.prompt_ids) + list(result.new_ids[:i])
            p_full = process_logits(pair.target.session(prefix).next_logits, s)[0]
            q_full = process_logits(pair.draft.session(prefix).next_logits, s)[0]
        except Exception:  # noqa: BLE001 - fall back to the recorded top lists
            p_full = q_full = None
    name = LF.token_label(tok, token)
    title = f"Token #{i} “{name}”: {LF.FATE_LABELS[fate]}"
    if fate in ("bonus", "target") or not tq:
        ids, p_vec, _ = LF.with_other(LF.top_union(tp, [], [token]), p_full, None, tp, [])
        names = LF.distinct_labels(tok, ids) + [LF.OTHER]
        sub = ("all γ drafts passed: one more token drawn straight from the target's p"
               if fate == "bonus" else "a plain draw from the target p")
        explain = ("All γ drafts were accepted, so the target's distribution after them, computed in the same "
                   "verify pass, gives one more token for free; the draft proposed nothing here."
                   if fate == "bonus" else "A plain draw from the target p.")
        fig = LF.target_only_figure(p_vec, names, title, sub)
        q_vec = None
    else:
        ids, p_vec, q_vec = LF.with_other(LF.top_union(tp, tq, [drafted, token]), p_full, q_full, tp, tq)
        names = LF.distinct_labels(tok, ids) + [LF.OTHER]
        d = LF.token_label(tok, drafted)
        pd, qd = rec.p_drafted[j], rec.q_drafted[j]
        keep = min(1.0, pd / qd) if qd > 0 else 1.0
        if fate == "accepted":
            sub = f"draft “{d}” kept (q = {qd:.3f}, p = {pd:.3f}): it came through the blue overlap min(p, q)"
            explain = (f"The draft proposed “{d}” with q = {qd:.3f}; the target gives it p = {pd:.3f}, so it was kept "
                       f"with probability min(1, p/q) = {keep:.3f}: it came through the blue overlap min(p, q).")
        else:
            sub = f"draft “{d}” rejected (q = {qd:.3f} > p = {pd:.3f}) → “{name}” drawn from the green (p − q)⁺"
            explain = (f"The draft proposed “{d}” with q = {qd:.3f} but the target gives it only p = {pd:.3f}, so it "
                       f"was kept with probability p/q = {keep:.3f} only, and it was rejected; “{name}” was then "
                       "drawn from the green residual (p − q)⁺ / Z.")
        fig = LF.position_money_diagram(p_vec, q_vec, names, title, sub)
    alpha = rec.alphas[j] if (j < len(rec.alphas) and q_vec is not None) else None
    patch = LF.position_money_patch(p_vec, q_vec, names, title, sub)
    return dict(figure=fig, patch=patch, position=i, token=token, fate=fate, step=rec.index, offset=j, gamma=rec.gamma, ids=ids,
                names=names, p=p_vec, q=q_vec, top_p=tp, top_q=tq, alpha=alpha, exact=p_full is not None,
                title=title, subtitle=sub, explanation=explain)


class LiveApp(_App):
    """Real draft/target models, speculative decoding streamed token by token, statistics vs theory.

    Handles (widgets): `target_text`, `draft_text`, `device` (Dropdown), `load_button`,
    `pair_info` (HTML: `pair.describe()`, the device), `prompt` (Textarea), `gamma` (1..8),
    `temperature`, `top_k` (0 = off), `top_p` (1 = off), `max_new_tokens`, `seed`,
    `ar_checkbox` (run the autoregressive baseline after each run), `generate_button`,
    `stop_button`, `baseline_button`, `sweep_button`, `status`, `message`, `legend`,
    `text_html` (one `<span class='specviz-tok specviz-tok-FATE'>` per generated token),
    `token_selector` (IntSlider over generated positions), `token_info`, `stats_html`,
    `figure`: the one FigureWidget with all plots (`specviz.lm.figures.live_figure`; panels
    "per_position", "accepted_hist", "throughput", "sweep", "money", traces with unique
    `meta` names); `figures` maps each panel name to it.

    State after a run: `pair`, `result` (GenerationResult), `stats` (SpecStats),
    `ar_result`, `sweep_data`, `selected` (dict describing the selected token).

    Methods: `load(target, draft, device, blocking=True)`, `generate(blocking=False)`,
    `run_baseline(blocking=False)`, `gamma_sweep(blocking=False, gammas=GAMMAS)`, `stop()`,
    `wait(timeout)`, `select_token(i)`, `busy`. Functions in `step_listeners` are called with
    each StepRecord from the decoding thread (a test hook).
    """

    def __init__(self, pair=None, prompt: str = "ROMEO:\n", gamma: int = 4, temperature: float = 1.0,
                 top_k: int = 0, top_p: float = 1.0, max_new_tokens: int = 200, seed: int = 0,
                 target: str = "bundled", draft: str = "bundled", device: str = "auto", ar_baseline: bool = True,
                 refresh_s: float = 0.15, load: bool = True):
        super().__init__()
        self.refresh_s = float(refresh_s)
        self.pair = None
        self.result: GenerationResult | None = None
        self.stats = None
        self.ar_result: GenerationResult | None = None
        self.sweep_data: dict | None = None
        self.selected: dict | None = None
        self.step_listeners: list = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._busy: str | None = None
        self._warm: set = set()
        self._run: dict | None = None  # the run being shown: pair, prompt ids, sampling, steps, ...
        self._spans: list[str] = []
        self._pieces: list[str] = []
        self._fates: list[str] = []
        self._text_lock = threading.RLock()  # the drawing thread and token selection both touch the spans
        self._figure_lock = threading.RLock()  # ... and the figure

        lab = {"description_width": "110px"}
        self.target_text = W.Text(value=str(target), description="target", style=lab,
                                  placeholder="bundled, a folder, a .gguf file or a hub id",
                                  layout=W.Layout(width="360px"))
        self.draft_text = W.Text(value=str(draft), description="draft", style=lab,
                                 placeholder="bundled, a folder, a .gguf file or a hub id",
                                 layout=W.Layout(width="360px"))
        self.device = W.Dropdown(options=["auto", "cpu", "cuda"], value=device if device in ("auto", "cpu", "cuda")
                                 else "auto", description="device", layout=W.Layout(width="180px"),
                                 style={"description_width": "50px"})
        self.load_button = W.Button(description="Load pair", layout=W.Layout(width="110px"),
                                    tooltip="load the target and draft models named on the left")
        self.pair_info = W.HTML("<i>no pair loaded</i>")
        self.pair_info.add_class("specviz-pair-info")

        self.prompt = W.Textarea(value=prompt, description="prompt", style=lab,
                                 layout=W.Layout(width="640px", height="70px"))
        self.gamma = W.IntSlider(value=int(gamma), min=1, max=8, description="γ (drafts/step)", style=lab,
                                 continuous_update=False)
        self.temperature = W.FloatSlider(value=float(temperature), min=0.0, max=2.0, step=0.05,
                                         description="temperature", style=lab, continuous_update=False)
        self.top_k = W.BoundedIntText(value=int(top_k or 0), min=0, max=10_000_000, description="top-k (0 = off)",
                                      style=lab, layout=W.Layout(width="230px"))
        self.top_p = W.FloatSlider(value=float(top_p if top_p is not None else 1.0), min=0.05, max=1.0, step=0.01,
                                   description="top-p (1 = off)", style=lab, continuous_update=False)
        self.max_new_tokens = W.BoundedIntText(value=int(max_new_tokens), min=1, max=4096,
                                               description="max new tokens", style=lab, layout=W.Layout(width="230px"))
        self.seed = W.IntText(value=int(seed), description="seed", style=lab, layout=W.Layout(width="230px"))
        self.ar_checkbox = W.Checkbox(value=bool(ar_baseline), description="autoregressive baseline after each run",
                                      indent=False, layout=W.Layout(width="320px"))

        self.generate_button = W.Button(description="Generate", button_style="primary", layout=W.Layout(width="110px"))
        self.stop_button = W.Button(description="Stop", button_style="danger", disabled=True,
                                    layout=W.Layout(width="80px"), tooltip="stop after the current verify step")
        self.baseline_button = W.Button(description="AR baseline", layout=W.Layout(width="120px"),
                                        tooltip="plain autoregressive sampling from the target, same settings")
        self.sweep_button = W.Button(description="γ sweep", layout=W.Layout(width="100px"),
                                     tooltip="run γ = 1..8 on the prompt; plot measured speedup vs theory")
        self.status = W.HTML("")
        self.status.add_class("specviz-status")

        self.legend = W.HTML(legend_html())
        self.text_html = W.HTML(self._wrap_text(""))
        self.text_html.add_class("specviz-live-text")

        self.token_selector = W.IntSlider(value=0, min=0, max=0, description="token #", disabled=True, style=lab,
                                          continuous_update=False, layout=W.Layout(width="520px"))
        self.token_info = W.HTML("<i>generate some text, then pick a token to see its p and q</i>")
        self.stats_html = W.HTML("")
        self.stats_html.add_class("specviz-live-stats")

        # ONE FigureWidget for all plots: with plotly 7 (anywidget) a page's later FigureWidgets were
        # seen to miss in-place updates in Voila, the first one never did (see the module notes).
        self.figure = go.FigureWidget(LF.live_figure(None, int(gamma)))
        self.figure.add_class("specviz-live-figure")
        self.figures = {panel: self.figure for panel in LF.LIVE_PANELS}

        self.load_button.on_click(lambda _: self.load(blocking=False))
        self.generate_button.on_click(lambda _: self.generate(blocking=False))
        self.stop_button.on_click(lambda _: self.stop())
        self.baseline_button.on_click(lambda _: self.run_baseline(blocking=False))
        self.sweep_button.on_click(lambda _: self.gamma_sweep(blocking=False))
        self.token_selector.observe(lambda ch: self.select_token(ch["new"]), names="value")

        row = W.Layout(flex_flow="row wrap", align_items="center")
        self.children = [
            W.HTML("<h3 style='margin:4px 0'>Speculative decoding on real models: every token's fate, live</h3>"),
            W.HBox([W.VBox([self.target_text, self.draft_text]), self.device, self.load_button], layout=row),
            self.pair_info,
            self.prompt,
            W.HBox([self.gamma, self.temperature, self.top_p], layout=row),
            W.HBox([self.top_k, self.max_new_tokens, self.seed, self.ar_checkbox], layout=row),
            W.HBox([self.generate_button, self.stop_button, self.baseline_button, self.sweep_button, self.status],
                   layout=row),
            self.message,
            self.legend,
            self.text_html,
            self.stats_html,
            W.HTML("<b>One token up close</b> (the money diagram at the bottom): pick a generated token"),
            self.token_selector, self.token_info,
            self.figure,
        ]
        self.add_class("specviz-live")

        if pair is not None:
            self._set_pair(pair)
            if getattr(pair, "tokenizer", None) is None and prompt == "ROMEO:\n":
                self.prompt.value = "0"  # a toy pair without tokenizer reads token ids
        elif load:
            self.load(blocking=True)

    # ------------------------------------------------------------------ background jobs

    @property
    def busy(self) -> bool:
        """True while a load, generation, baseline or sweep runs."""
        return self._busy is not None

    def _set_buttons(self, running: bool) -> None:
        for b in (self.generate_button, self.load_button, self.baseline_button, self.sweep_button):
            b.disabled = running
        self.stop_button.disabled = not running

    def _start(self, name: str, fn, blocking: bool):
        """Run fn() in a background thread (joined when blocking); errors become a message."""
        if self._busy is not None:
            self.show_error(f"busy ({self._busy}): wait for it or press Stop first")
            return None
        self._busy = name
        self._stop.clear()
        self.clear_message()
        self._set_buttons(True)
        box = {}

        def target():
            try:
                box["value"] = fn()
            except ValueError as e:
                self.show_error(str(e))
            except Exception as e:  # noqa: BLE001 - a lecture must never show a traceback
                self.show_error(f"{type(e).__name__}: {e}")
            finally:
                self._busy = None
                self._set_buttons(False)

        t = threading.Thread(target=target, name=f"specviz-live-{name}", daemon=True)
        self._thread = t
        t.start()
        if blocking:
            t.join()
            return box.get("value")
        return None

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the running job; True when nothing is running any more."""
        t = self._thread
        if t is not None:
            t.join(timeout)
        return not self.busy

    def stop(self) -> None:
        """Ask the running job to stop (after the verify step in progress)."""
        self._stop.set()
        if self.busy:
            self.status.value = "<i>stopping…</i>"

    # ------------------------------------------------------------------ the pair

    def load(self, target: str | None = None, draft: str | None = None, device: str | None = None,
             blocking: bool = True):
        """Load a target/draft pair (`specviz.lm.load_pair`); errors go to `message`."""
        if target is not None:
            self.target_text.value = str(target)
        if draft is not None:
            self.draft_text.value = str(draft)
        if device is not None:
            self.device.value = device
        t, d, dev = self.target_text.value.strip() or "bundled", self.draft_text.value.strip() or "bundled", \
            self.device.value

        def job():
            self.status.value = f"<i>loading {html.escape(t)} + {html.escape(d)}…</i>"
            try:
                pair = load_pair(t, d, device=dev)
            finally:
                self.status.value = ""
            self._set_pair(pair)
            return pair

        return self._start("load", job, blocking)

    def _set_pair(self, pair) -> None:
        self.pair = pair
        try:
            desc = pair.describe()
        except Exception:  # noqa: BLE001
            desc = f"target {getattr(pair.target, 'name', '?')}, draft {getattr(pair.draft, 'name', '?')}"
        dev = getattr(pair, "device", "cpu")
        tok = "" if getattr(pair, "tokenizer", None) is not None else \
            " · <i>no tokenizer: type the prompt as token ids, e.g. 0 3 1</i>"
        ctx = [m.max_positions for m in (pair.target, pair.draft) if getattr(m, "max_positions", None)]
        ctx_txt = ""
        if ctx:
            ctx_txt = f" · context {min(ctx)} tokens (prompt + new tokens + γ must fit)"
            self.max_new_tokens.max = max(1, min(ctx) - 16)  # clamps the value too
        else:
            self.max_new_tokens.max = 4096
        self.pair_info.value = (f"<div style='font-size:13px'><b>pair:</b> {html.escape(desc)} · "
                                f"<b>device:</b> <span class='specviz-device'>{html.escape(str(dev))}</span>"
                                f"{html.escape(ctx_txt)}{tok}</div>")

    # ------------------------------------------------------------------ settings

    def _prompt_ids(self, pair) -> list:
        text = self.prompt.value
        tok = getattr(pair, "tokenizer", None)
        if tok is None:
            parts = text.replace(",", " ").split()
            if not parts:
                raise ValueError("the prompt is empty: this pair has no tokenizer, type token ids such as 0 3 1")
            try:
                ids = [int(s) for s in parts]
            except ValueError:
                raise ValueError(f"this pair has no tokenizer: type the prompt as token ids (e.g. 0 3 1), "
                                 f"not {text[:40]!r}") from None
        else:
            if not text:
                raise ValueError("the prompt is empty: type at least one character")
            ids = list(tok.encode(text, add_special_tokens=False))
            if not ids:
                raise ValueError("the prompt is empty after tokenization: type some text")
        V = pair.target.vocab_size
        bad = [i for i in ids if not 0 <= i < V]
        if bad:
            raise ValueError(f"prompt token id {bad[0]} is outside the vocabulary of {V} tokens")
        return ids

    def _settings(self) -> dict:
        top_k = int(self.top_k.value) or None
        top_p = float(self.top_p.value)
        s = dict(temperature=float(self.temperature.value), top_k=top_k, top_p=top_p if top_p < 1 else None,
                 max_new_tokens=int(self.max_new_tokens.value), seed=int(self.seed.value))
        Sampling(s["temperature"], s["top_k"], s["top_p"])  # ValueError with a clear message
        return s

    def _prepare(self):
        if self.pair is None:
            raise ValueError("no model pair loaded: press “Load pair” (bundled, or type a target and a draft)")
        pair = self.pair
        return pair, self._prompt_ids(pair), self._settings()

    def _warm_up(self, pair, ids, kw) -> None:
        """One tiny run per pair before anything is timed (first calls allocate and compile)."""
        if id(pair) in self._warm:
            return
        short = ids[-8:]
        room = min(m.max_positions or 10**9 for m in (pair.target, pair.draft))
        if len(short) + 4 < room:
            speculative_generate(pair, short, 2, 1, seed=0)
            autoregressive_generate(pair, short, 2, seed=0)
        self._warm.add(id(pair))

    # ------------------------------------------------------------------ generation

    def generate(self, blocking: bool = False):
        """Speculative decoding of the prompt with the current settings, streamed into the view.

        With `ar_checkbox` set, an autoregressive run with the same settings follows (for
        tokens/s). Returns the GenerationResult when `blocking`, else None (the job runs in a
        background thread; see `wait()`).
        """
        try:
            pair, ids, kw = self._prepare()
        except ValueError as e:
            self.show_error(str(e))
            return None
        gamma = int(self.gamma.value)
        with_ar = bool(self.ar_checkbox.value)

        def job():
            self._warm_up(pair, ids, kw)
            self._begin_run(pair, ids, kw, gamma)
            run = self._run
            done = threading.Event()

            def on_step(rec):
                run["steps"].append(rec)
                for fn in list(self.step_listeners):
                    fn(rec)
                return not self._stop.is_set()

            drawer = threading.Thread(target=self._draw_loop, args=(done,), daemon=True)
            drawer.start()
            run["t0"] = time.perf_counter()
            try:
                result = speculative_generate(pair, ids, gamma=gamma, on_step=on_step, **kw)
            finally:
                done.set()
                drawer.join()
            run["result"] = result
            self.result = result
            self.stats = spec_stats(result)
            self.ar_result = None
            self._render(final=True)
            self._select_default()
            if with_ar and not result.stopped and not self._stop.is_set():
                self._baseline_job(pair, ids, kw)
            return result

        return self._start("generate", job, blocking)

    def run_baseline(self, blocking: bool = False):
        """Autoregressive sampling from the target with the same settings (tokens/s for the comparison)."""
        try:
            pair, ids, kw = self._prepare()
        except ValueError as e:
            self.show_error(str(e))
            return None

        def job():
            self._warm_up(pair, ids, kw)
            return self._baseline_job(pair, ids, kw)

        return self._start("baseline", job, blocking)

    def _baseline_job(self, pair, ids, kw):
        self.status.value = "<i>autoregressive baseline…</i>"
        ar = autoregressive_generate(pair, ids, on_token=lambda _: not self._stop.is_set(), **kw)
        self.ar_result = ar
        self._render_throughput()
        self._render_stats_table()
        self._set_status()
        return ar

    def _begin_run(self, pair, ids, kw, gamma) -> None:
        tok = getattr(pair, "tokenizer", None)
        self._run = dict(pair=pair, prompt_ids=list(ids), kw=dict(kw), gamma=gamma, steps=[], t0=time.perf_counter(),
                         result=None, tokenizer=tok, decoder=PieceDecoder(tok, ids))
        self.result, self.stats, self.selected = None, None, None
        with self._text_lock:
            self._spans, self._pieces, self._fates = [], [], []
        self.text_html.value = self._wrap_text(self._prompt_html())
        self.token_selector.disabled = True
        self.token_selector.max = 0
        self.token_info.value = "<i>generating…</i>"
        self._patch(*self._plot_patches(None, gamma), self._throughput_patch())
        self._render_stats_table()

    def _draw_loop(self, done: threading.Event) -> None:
        while not done.wait(self.refresh_s):
            try:
                self._render(final=False)
            except Exception as e:  # noqa: BLE001
                self.show_error(f"drawing failed: {type(e).__name__}: {e}")

    def _partial(self) -> GenerationResult:
        run = self._run
        steps = list(run["steps"])
        new = [t for s in steps for t in s.emitted]
        return GenerationResult(run["prompt_ids"], new, steps=steps, seconds=time.perf_counter() - run["t0"],
                                gamma=run["gamma"])

    def _render(self, final: bool) -> None:
        """Redraw text, plots and numbers from the run so far (live: data only, cheap; final: everything)."""
        run = self._run
        if run is None:
            return
        res = run["result"] if final and run["result"] is not None else self._partial()
        self._extend_text(res, final)
        stats = self.stats if final else (spec_stats(res) if res.steps else None)
        patches = self._plot_patches(stats, run["gamma"], layout=final)
        now = time.perf_counter()
        if final or now - run.get("drawn_tps", 0.0) > 1.0:  # tokens/s and the table: about once a second
            run["drawn_tps"] = now
            patches.append(self._throughput_patch(stats))
            self._render_stats_table(stats)
        self._patch(*patches)
        n = len(res.new_ids)
        if n:
            self.token_selector.max = n - 1
            self.token_selector.disabled = False
        self._set_status(res, final)

    def _set_status(self, res=None, final=True) -> None:
        run = self._run
        res = res if res is not None else (run["result"] if run else None)
        if res is None:
            self.status.value = ""
            return
        n, steps = len(res.new_ids), len(res.steps)
        tps = _fmt(res.tokens_per_second, ".0f")
        if not final:
            self.status.value = (f"<i>generating… {n}/{run['kw']['max_new_tokens']} tokens, {steps} verify steps, "
                                 f"{tps} tokens/s</i>")
            return
        what = "stopped" if res.stopped else "done"
        text = f"<b>{what}:</b> {n} tokens in {steps} verify steps, {res.seconds:.2f} s ({tps} tokens/s)"
        if self.ar_result is not None:
            text += f" · autoregressive {_fmt(self.ar_result.tokens_per_second, '.0f')} tokens/s"
        self.status.value = text

    # ------------------------------------------------------------------ text

    @staticmethod
    def _wrap_text(inner: str) -> str:
        return text_box(inner)

    def _prompt_html(self) -> str:
        run = self._run
        if run is None:
            return ""
        return f"<span class='specviz-prompt' style='{_DIM}'>{html.escape(run['decoder'].prompt_text())}</span>"

    def _span(self, i: int) -> str:
        sel = self.selected is not None and self.selected.get("position") == i
        return token_span(i, self._fates[i], self._pieces[i], sel)

    def _extend_text(self, res, final: bool) -> None:
        with self._text_lock:
            dec = self._run["decoder"]
            new_ids = res.new_ids
            fates = fates_of(res.steps)[: len(new_ids)]
            for i in range(len(self._pieces), len(new_ids)):
                self._pieces.append(dec.piece(new_ids, i))
                self._fates.append(fates[i])
                self._spans.append(self._span(i))
            if final and new_ids:
                rest = dec.finish(new_ids)  # bytes that never completed a character, shown as U+FFFD
                if rest:
                    self._pieces[-1] += rest
                    self._spans[-1] = self._span(len(self._pieces) - 1)
            self.text_html.value = self._wrap_text(self._prompt_html() + "".join(self._spans))

    @property
    def token_pieces(self) -> list:
        """The text each generated token added (what its span shows)."""
        return list(self._pieces)

    @property
    def token_fates(self) -> list:
        """The fate shown for each generated token."""
        return list(self._fates)

    # ------------------------------------------------------------------ plots

    def _patch(self, *panels) -> None:
        """Apply (panel, patch) pairs to the one FigureWidget in a single update message."""
        fw = self.figure
        with self._figure_lock, fw.batch_update():
            for panel, patch in panels:
                LF.apply_live_patch(fw, panel, patch)

    def _plot_patches(self, stats, gamma, layout: bool = True) -> list:
        """The acceptance panels' patches; `layout=False` keeps only trace data (cheap live redraws)."""
        out = []
        for key, patch in (("per_position", LF.per_position_patch(stats, gamma)),
                           ("accepted_hist", LF.accepted_hist_patch(stats, gamma))):
            out.append((key, patch if layout else {"data": patch["data"], "layout": {}}))
        return out

    def _render_plots(self, stats, gamma, layout: bool = True) -> None:
        self._patch(*self._plot_patches(stats, gamma, layout))

    def _target_token_s(self):
        ar = self.ar_result
        if ar is None or not ar.new_ids or ar.seconds <= 0:
            return None
        return ar.seconds / len(ar.new_ids)

    def _throughput_patch(self, stats=None):
        stats = stats if stats is not None else self.stats
        spec = stats.tokens_per_second if stats is not None else float("nan")
        ar = self.ar_result.tokens_per_second if self.ar_result is not None else float("nan")
        t_t = self._target_token_s()
        pred = ar * stats.predicted_speedup(t_t) if (stats is not None and t_t and stats.steps) else float("nan")
        return ("throughput", LF.throughput_patch(spec, ar, pred))

    def _render_throughput(self, stats=None) -> None:
        self._patch(self._throughput_patch(stats))

    def _render_stats_table(self, stats=None) -> None:
        stats = stats if stats is not None else self.stats
        if stats is None or not stats.steps:
            self.stats_html.value = "<i style='color:#57606a'>statistics appear here while generating</i>"
            return
        t_t = self._target_token_s()
        ar_tps = self.ar_result.tokens_per_second if self.ar_result is not None else None
        c = stats.draft_token_s / t_t if t_t else None
        rows = [
            ["γ · verify steps · tokens", f"{stats.gamma} · {stats.steps} · {stats.generated}"],
            ["draft acceptance rate (accepted / drafted)", _fmt(stats.acceptance_rate)],
            ["α = mean Σ min(p, q) over verified positions", _fmt(stats.alpha)],
            ["tokens per verify step: measured", _fmt(stats.mean_acceptance_length)],
            ["tokens per verify step: theory (1 − α^(γ+1)) / (1 − α)", _fmt(stats.expected_tokens_per_step)],
            ["speculative tokens/s", _fmt(stats.tokens_per_second, ".1f")],
            ["autoregressive tokens/s", _fmt(ar_tps, ".1f")],
            ["measured speedup", _fmt(stats.tokens_per_second / ar_tps if ar_tps else None, ".2f", "×")],
            ["cost ratio c = draft token / target token", _fmt(c)],
            ["textbook bound at c", _fmt(stats.bound(c) if c is not None else None, ".2f", "×")],
            ["cost-model prediction", _fmt(stats.predicted_speedup(t_t) if t_t else None, ".2f", "×")],
            ["suggested γ (cost model)", str(stats.suggested_gamma(t_t)) if t_t else "—"],
        ]
        self.stats_html.value = ("<div style='padding:8px'><b>This run vs theory</b>" + _html_table(rows) +
                                 ("" if t_t else f"<div style='{_DIM};font-size:12px'>run the autoregressive "
                                  "baseline for tokens/s, c and the speedup predictions</div>") + "</div>")

    # ------------------------------------------------------------------ one token up close

    def default_token(self) -> int | None:
        """The token shown after a run: the rejection whose draft was most confident (largest q), else #0."""
        run = self._run
        if run is None or not self._fates:
            return None
        rej = [(s.q_drafted[s.accepted], s.start + s.accepted) for s in run["steps"]
               if s.kind == "resampled" and s.start + s.accepted < len(self._fates)]
        return max(rej)[1] if rej else 0

    def _select_default(self) -> None:
        i = self.default_token()
        if i is None:
            return
        if self.token_selector.value != i:
            self.token_selector.value = i  # the observer selects it
        else:
            self.select_token(i)

    def select_token(self, i: int):
        """Show generated token i's real p and q (top tokens + "other") as a money diagram (`token_closeup`)."""
        try:
            return self._select_token(int(i))
        except ValueError as e:
            self.show_error(str(e))
        except Exception as e:  # noqa: BLE001
            self.show_error(f"{type(e).__name__}: {e}")
        return None

    def _select_token(self, i: int):
        run = self._run
        if run is None or not self._pieces:
            raise ValueError("generate some text first, then pick a token")
        if not 0 <= i < len(self._pieces):
            raise ValueError(f"token #{i} is outside the {len(self._pieces)} generated tokens")
        res = run["result"] or self._partial()
        kw = run["kw"]
        sel = token_closeup(run["pair"], res, i, kw["temperature"], kw["top_k"], kw["top_p"])
        self._patch(("money", sel["patch"]))
        fate, alpha = sel["fate"], sel["alpha"]
        alpha_txt = (f" · exact acceptance probability here Σ min(p, q) = <b>{alpha:.3f}</b> (the diagram lumps the "
                     "tail into “other”, so its Σ min can be a little larger)" if alpha is not None else "")
        note = "" if sel["exact"] else " (values from the recorded top-8 lists; the rest is in “other”)"
        name = LF.token_label(run["tokenizer"], sel["token"])
        self.token_info.value = (f"<div style='font-size:13px'>token #{i} “{html.escape(name)}” (id {sel['token']}) · "
                                 f"verify step {sel['step']}, draft position {sel['offset'] + 1} of γ = {sel['gamma']}"
                                 f" · <b style='color:{LF.FATE_COLORS[fate]}'>{html.escape(LF.FATE_LABELS[fate])}</b>"
                                 f"{alpha_txt}{html.escape(note)}<br>{html.escape(sel['explanation'])}</div>")
        self.selected = sel
        with self._text_lock:  # outline the selected token in the text
            self._spans = [self._span(k) for k in range(len(self._pieces))]
            self.text_html.value = self._wrap_text(self._prompt_html() + "".join(self._spans))
        return sel

    # ------------------------------------------------------------------ γ sweep

    def gamma_sweep(self, blocking: bool = False, gammas=GAMMAS):
        """Run γ = 1..8 (same prompt and settings): measured speedup vs the bound and the cost model.

        One autoregressive run gives the target's time per token; each γ's own α, draft-token
        and verify-step times give its theory points. Returns `sweep_data` when blocking.
        """
        try:
            pair, ids, kw = self._prepare()
        except ValueError as e:
            self.show_error(str(e))
            return None
        gammas = [int(g) for g in gammas]

        def job():
            self._warm_up(pair, ids, kw)
            self.status.value = "<i>γ sweep: autoregressive baseline…</i>"
            go_on = lambda *_: not self._stop.is_set()  # noqa: E731
            ar = autoregressive_generate(pair, ids, on_token=go_on, **kw)
            if not ar.new_ids or ar.seconds <= 0:
                raise ValueError("the autoregressive baseline produced no tokens")
            t_t = ar.seconds / len(ar.new_ids)
            data = dict(gammas=[], measured=[], bound=[], predicted=[], alpha=[], results=[], ar=ar)
            self.sweep_data = data
            for g in gammas:
                if self._stop.is_set():
                    break
                self.status.value = f"<i>γ sweep: γ = {g}…</i>"
                r = speculative_generate(pair, ids, gamma=g, on_step=go_on, **kw)
                st = spec_stats(r)
                data["gammas"].append(g)
                data["measured"].append(st.tokens_per_second / ar.tokens_per_second)
                data["bound"].append(st.bound(st.draft_token_s / t_t))
                data["predicted"].append(st.predicted_speedup(t_t))
                data["alpha"].append(st.alpha)
                data["results"].append(r)
                self._patch(("sweep", LF.gamma_sweep_patch(data["gammas"], data["measured"], data["bound"],
                                                           data["predicted"])))
            done = "stopped" if self._stop.is_set() else "done"
            self.status.value = (f"<b>γ sweep {done}:</b> autoregressive {ar.tokens_per_second:.0f} tokens/s; "
                                 + ", ".join(f"γ={g}: {m:.2f}×" for g, m in zip(data["gammas"], data["measured"])))
            return data

        return self._start("sweep", job, blocking)


def live_app(pair=None, prompt: str = "ROMEO:\n", **kwargs) -> LiveApp:
    """The live real-model view (see `LiveApp`); `pair=None` loads the bundled offline pair.

    Keyword arguments: gamma, temperature, top_k, top_p, max_new_tokens, seed, target, draft,
    device, ar_baseline, refresh_s, load.
    """
    return LiveApp(pair, prompt, **kwargs)


__all__ = ["GAMMAS", "LiveApp", "PieceDecoder", "fates_html", "fates_of", "legend_html", "live_app", "text_box",
           "token_closeup", "token_pieces", "token_span"]
