"""The live view: speculative decoding on real language models, token by token, with statistics.

`live_app()` returns an ipywidgets container (a `LiveApp`) with a model choice (the bundled
pair, SmolLM2-135M with prompt lookup, any fetched catalogue model, or a folder / .gguf /
hub id typed in), the prompt (through an instruct model's chat template, which "Show the
formatted prompt" displays) and sampling settings, γ as a whole number or "auto",
Generate / Stop, the generated text with each token coloured by its fate (blue: an
accepted draft token, green: resampled from (p − q)⁺ after a rejection, pink: the bonus
token drawn from p when all γ drafts pass, vermillion: a plain target step, γ = 0), the
verify steps with the γ each one drafted, live plots of the acceptance statistics next to
their theory, tokens/s against autoregressive decoding with a "when does this pay?" line, a
γ sweep with progress, and for any generated token its real p and q as a money diagram:
the bridge back to the toy proof. Runs stop at the end token (an instruct model's end of
turn) unless "ignore the end token" is ticked.

The parts, one job each: `live_controls` (the input widgets), `live_models` (the model
choice, what needs fetching, an instruct model's defaults), `live_jobs` (background jobs,
Stop, the runs and the γ sweep), `live_view` (the output widgets and their redraws),
`live_render` (HTML of text and tables), `closeup` (one token's p and q), `payoff` (when
speculation pays). This module wires them together and re-exports the names notebooks use.

Generation runs in a background thread, so the notebook stays responsive; the text and the
plots are redrawn by a second thread at most every `refresh_s` seconds (the decoding
thread itself only records steps, so the measured tokens/s are not slowed by drawing).
Stop takes effect after the verify step in progress. Every error (a bad model path,
incompatible tokenizers, an empty prompt, a context overflow) becomes a message in
`app.message` and the app stays usable. Models may be on a GPU: the view copies what it
shows to the host explicitly.

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
import threading
import time

import ipywidgets as W

from ..checks import flag, integer, real
from ..i18n import t
from ..widgets import App
from .closeup import token_closeup
from .engine import GenerationResult, autoregressive_generate, speculative_generate
from .live_controls import LABEL_STYLE, LiveControls, check_device, new_tokens_room
from .live_jobs import (
    AUTO,
    GAMMAS,
    PLACEHOLDER_GAMMA,
    JobRunner,
    LiveRun,
    gamma_setting,
    gamma_sweep_run,
    in_range,
    prompt_ids_for,
    warm_up,
)
from .live_models import BUNDLED_PAIR, check_fetched, formatted_prompt_html, named_pair
from .live_render import (
    PieceDecoder,
    fates_html,
    fates_of,
    legend_html,
    status_html,
    steps_table_html,
    text_box,
    token_pieces,
    token_span,
)
from .live_view import LiveView
from .loading import load_pair
from .stats import spec_stats

REFRESH_S = (0.01, 60.0)
"""The range of `refresh_s`, the seconds between redraws while a run streams."""


def check_pair(pair, target, draft) -> tuple:
    """(pair, target, draft) with a pair given by name turned into its target and draft; errors say what a pair is."""
    if isinstance(pair, str):
        if (target, draft) != BUNDLED_PAIR:
            raise ValueError(f"give the pair by name (pair={pair!r}) or as target= and draft=, not both")
        return (None, *named_pair(pair))
    if pair is not None and not all(hasattr(pair, role) for role in ("target", "draft")):
        raise TypeError(
            f"pair must be a Pair (specviz.lm.load_pair(target, draft)), the name of an offered pair or None, "
            f"got {type(pair).__name__}"
        )
    return pair, target, draft


def check_room(pair, max_new_tokens) -> None:
    """ValueError when max_new_tokens does not fit the pair's context (the box would silently lower it)."""
    room = new_tokens_room(pair)
    if integer(max_new_tokens, "max_new_tokens") > room:
        raise ValueError(f"max_new_tokens={max_new_tokens} does not fit this pair's context: at most {room}")


class LiveApp(App):
    """Real draft/target models, speculative decoding streamed token by token, statistics vs theory.

    Handles (widgets): `pair_choice` (Dropdown of pairs), `target_text`, `draft_text`
    (Comboboxes taking free text), `models_hint`, `device` (Dropdown), `load_button`,
    `pair_info` (HTML: `pair.describe()`, the device), `prompt` (Textarea), `chat_checkbox`,
    `show_prompt` (ToggleButton) and `formatted_prompt` (HTML), `ignore_eos`, `gamma`
    (Dropdown: "auto", 0..8), `temperature`, `top_k` (0 = off), `top_p` (1 = off),
    `max_new_tokens`, `seed`, `ar_checkbox` (run the autoregressive baseline after each
    run), `generate_button`, `stop_button`, `baseline_button`, `sweep_button`, `status`,
    `progress` (IntProgress of the γ sweep), `message`, and the outputs of `view`
    (`LiveView`): `legend`, `text_html` (one `<span class='specviz-tok specviz-tok-FATE'>`
    per generated token), `stats_html`, `steps_html` (the verify steps, latest first),
    `payoff_html`, `token_selector`, `token_info`, `figure` (the one FigureWidget:
    `specviz.lm.figures.live_figure`; `figures` maps each panel name to it).

    `model_defaults`: after loading an instruct model (a tokenizer with a chat template) set
    its sampling defaults (greedy unless its generation config samples) and, if the prompt is
    still the Shakespeare one, a chat prompt; loading another pair puts back what was set.

    State after a run: `pair`, `current_run` (`LiveRun`), `result` (GenerationResult),
    `stats` (SpecStats), `ar_result`, `sweep_data`, `selected` (dict of the selected token).

    Methods: `load(target, draft, device, blocking=True)`, `generate(blocking=False)`,
    `run_baseline(blocking=False)`, `gamma_sweep(blocking=False, gammas=GAMMAS)`, `stop()`,
    `wait(timeout)`, `select_token(i)`, `busy`. Functions in `step_listeners` are called with
    each StepRecord from the decoding thread (a test hook).
    """

    def __init__(
        self,
        pair=None,
        prompt: str = "ROMEO:\n",
        gamma: int | str = 4,
        temperature: float = 1.0,
        top_k: int = 0,
        top_p: float = 1.0,
        max_new_tokens: int = 200,
        seed: int = 0,
        target: str = "bundled",
        draft: str = "bundled",
        device: str = "auto",
        ar_baseline: bool = True,
        refresh_s: float = 0.15,
        load: bool = True,
        chat: bool = True,
        stop_at_eos: bool = True,
        model_defaults: bool = True,
    ):
        pair, target, draft = check_pair(pair, target, draft)
        refresh_s = in_range(real, refresh_s, "refresh_s", *REFRESH_S, " seconds")
        load, model_defaults = flag(load, "load"), flag(model_defaults, "model_defaults")
        super().__init__()
        self.refresh_s = refresh_s
        self.pair = None
        self.result: GenerationResult | None = None
        self.stats = None
        self.ar_result: GenerationResult | None = None
        self.sweep_data: dict | None = None
        self.step_listeners: list = []
        self.warmed: set = set()
        self.model_defaults = model_defaults
        self.controls = LiveControls(
            prompt,
            gamma,
            temperature,
            top_k,
            top_p,
            max_new_tokens,
            seed,
            target,
            draft,
            device,
            ar_baseline,
            chat=chat,
            stop_at_eos=stop_at_eos,
        )
        g = self.controls.gamma_value()
        self.view = LiveView(PLACEHOLDER_GAMMA if g == AUTO else g, LABEL_STYLE)
        for name in LiveControls.WIDGETS:  # the widgets are handles of the app itself
            setattr(self, name, getattr(self.controls, name))
        v = self.view
        self.legend, self.text_html, self.stats_html, self.steps_html, self.payoff_html = (
            v.legend,
            v.text_html,
            v.stats_html,
            v.steps_html,
            v.payoff_html,
        )
        self.token_selector, self.token_info, self.figure, self.figures = (
            v.token_selector,
            v.token_info,
            v.figure,
            v.figures,
        )
        self.jobs = JobRunner(on_error=self.show_error, on_busy=self.controls.set_running, on_start=self.clear_message)
        self.load_button.on_click(lambda _: self.load(blocking=False))
        self.generate_button.on_click(lambda _: self.generate(blocking=False))
        self.stop_button.on_click(lambda _: self.stop())
        self.baseline_button.on_click(lambda _: self.run_baseline(blocking=False))
        self.sweep_button.on_click(lambda _: self.gamma_sweep(blocking=False))
        self.token_selector.observe(self._token_picked, names="value")
        for w in (self.show_prompt, self.prompt, self.chat_checkbox):
            w.observe(lambda _: self.show_formatted_prompt(), names="value")
        self.children = [
            W.HTML(f"<h3 style='margin:4px 0'>{html.escape(t('live.heading'))}</h3>"),
            *self.controls.rows(),
            self.message,
            *v.widgets(),
        ]
        self.add_class("specviz-live")

        if pair is not None:
            check_room(pair, max_new_tokens)
            self._set_pair(pair)
            if getattr(pair, "tokenizer", None) is None and prompt == "ROMEO:\n":
                self.prompt.value = "0"  # a toy pair without tokenizer reads token ids
        elif load:
            self.load(blocking=True)

    # ------------------------------------------------------------------ jobs

    @property
    def busy(self) -> bool:
        """True while a load, generation, baseline or sweep runs."""
        return self.jobs.busy

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the running job; True when nothing is running any more."""
        return self.jobs.wait(timeout)

    def stop(self) -> None:
        """Ask the running job to stop (after the verify step in progress)."""
        self.jobs.stop()
        if self.busy:
            self.status.value = f"<i>{html.escape(t('live.stopping'))}</i>"

    @property
    def current_run(self) -> LiveRun | None:
        """The run being shown (its pair, prompt ids, settings, step records, result)."""
        return self.view.run

    @property
    def selected(self) -> dict | None:
        """The selected token's close-up (`token_closeup`'s dict), None before any selection."""
        return self.view.selected

    @property
    def token_pieces(self) -> list:
        """The text each generated token added (what its span shows)."""
        return list(self.view.pieces)

    @property
    def token_fates(self) -> list:
        """The fate shown for each generated token."""
        return list(self.view.fates)

    # ------------------------------------------------------------------ the pair and the settings

    def load(
        self, target: str | None = None, draft: str | None = None, device: str | None = None, blocking: bool = True
    ):
        """Load a target/draft pair (`specviz.lm.load_pair`); errors go to `message`."""
        if target is not None:
            self.target_text.value = str(target)
        if draft is not None:
            self.draft_text.value = str(draft)
        if device is not None:
            self.device.value = check_device(device)
        self.controls.models.refresh()
        tgt, drf = self.controls.models.names()
        dev = self.device.value

        def job():
            check_fetched(tgt, drf)  # a clear message, before anything loads
            head = html.escape(t("live.loading", target=tgt, draft=drf))
            self.status.value = f"<i>{head}…</i>"

            def stage(line):  # one line per loading stage, in the status line (no HF bars in the page)
                self.status.value = f"<i>{head}: {html.escape(str(line))}…</i>"

            try:
                pair = load_pair(tgt, drf, device=dev, progress=stage, hf_progress=False)
            finally:
                self.status.value = ""
            self._set_pair(pair)
            return pair

        return self.jobs.start("load", job, blocking)

    def _set_pair(self, pair) -> None:
        self.pair = pair
        self.controls.show_pair(pair)
        if self.model_defaults:
            self.controls.apply_model_defaults(pair)
        self.show_formatted_prompt()

    def _prompt_ids(self) -> list:
        if self.pair is None:
            raise ValueError(t("live.no_pair"))
        return prompt_ids_for(self.pair, self.prompt.value, chat=self.chat_checkbox.value)

    def _prepare(self):
        """(pair, prompt ids, engine keyword arguments) from the controls; ValueError saying what is wrong."""
        return self.pair, self._prompt_ids(), self.controls.settings()

    def show_formatted_prompt(self) -> None:
        """Show what the model reads (the prompt in its chat template) while `show_prompt` is on."""
        box = self.controls.formatted_prompt
        if not self.show_prompt.value:
            box.layout.display, box.value = "none", ""
            return
        box.layout.display = None
        try:
            ids = self._prompt_ids()
        except ValueError as e:
            box.value = f"<i>{html.escape(str(e))}</i>"
            return
        box.value = formatted_prompt_html(self.pair, ids, self.chat_checkbox.value)

    def _start(self, name: str, job, blocking: bool):
        """Check the settings, then run job(pair, ids, kw) in the background (warmed up first)."""
        try:
            pair, ids, kw = self._prepare()
        except ValueError as e:
            self.show_error(str(e))
            return None

        def run():
            warm_up(pair, ids, self.warmed)
            return job(pair, ids, kw)

        return self.jobs.start(name, run, blocking)

    # ------------------------------------------------------------------ generation

    def generate(self, blocking: bool = False):
        """Speculative decoding of the prompt with the current settings, streamed into the view.

        With `ar_checkbox` set, an autoregressive run with the same settings follows (for
        tokens/s). Returns the GenerationResult when `blocking`, else None (the job runs in a
        background thread; see `wait()`).
        """
        gamma, with_ar = self.controls.gamma_value(), bool(self.ar_checkbox.value)

        def job(pair, ids, kw):
            run = LiveRun(pair, list(ids), dict(kw), gamma)
            self.result, self.stats = None, None
            self.view.begin(run, self.ar_result)
            done = threading.Event()

            def on_step(rec):
                run.steps.append(rec)
                for fn in list(self.step_listeners):
                    fn(rec)
                return self.jobs.keep_going()

            drawer = threading.Thread(target=self._draw_loop, args=(done, run), daemon=True)
            drawer.start()
            run.t0 = time.perf_counter()
            try:
                result = speculative_generate(pair, ids, gamma=gamma, on_step=on_step, **kw)
            finally:
                done.set()
                drawer.join()
            run.result = self.result = result
            self.stats = spec_stats(result)
            self.ar_result = None
            self._render_final()
            self._select_default()
            if with_ar and not result.stopped and self.jobs.keep_going():
                self._baseline(pair, ids, kw)
            return result

        return self._start("generate", job, blocking)

    def run_baseline(self, blocking: bool = False):
        """Autoregressive sampling from the target with the same settings (tokens/s for the comparison)."""
        return self._start("baseline", self._baseline, blocking)

    def _baseline(self, pair, ids, kw):
        self.status.value = f"<i>{html.escape(t('live.baseline_running'))}</i>"
        self.ar_result = autoregressive_generate(pair, ids, on_token=self.jobs.keep_going, **kw)
        self.view.patch(self.view.throughput_patch(self.stats, self.ar_result))
        self.view.show_numbers(self.stats, self.ar_result)
        self._set_status()
        return self.ar_result

    def _draw_loop(self, done: threading.Event, run: LiveRun) -> None:
        while not done.wait(self.refresh_s):
            try:
                self.view.render(final=False, ar_result=self.ar_result)
                self.status.value = status_html(run.partial(), False, run.kw["max_new_tokens"])
            except Exception as e:  # noqa: BLE001
                self.show_error(t("live.drawing_failed", error=f"{type(e).__name__}: {e}"))

    def _render_final(self) -> None:
        self.view.render(final=True, stats=self.stats, ar_result=self.ar_result)
        self._set_status()

    def _set_status(self) -> None:
        run = self.view.run
        self.status.value = status_html(run.result if run else None, True, ar_result=self.ar_result)

    # ------------------------------------------------------------------ one token up close

    def default_token(self) -> int | None:
        """The token shown after a run: the rejection whose draft was most confident (largest q), else #0."""
        return self.view.default_token()

    def _select_default(self) -> None:
        i = self.default_token()
        if i is None:
            return
        if self.token_selector.value != i:
            self.token_selector.value = i  # the observer selects it
        else:
            self.select_token(i)

    def _token_picked(self, change) -> None:
        if not self.token_selector.disabled:  # a new run resets the slider while it is disabled: nothing to show
            self.select_token(change["new"])

    def select_token(self, i: int):
        """Show generated token i's real p and q (top tokens + "other") as a money diagram (`token_closeup`)."""
        try:
            return self.view.select(integer(i, "i (a generated token's position)", lo=0))
        except ValueError as e:
            self.show_error(str(e))
        except Exception as e:  # noqa: BLE001
            self.show_error(f"{type(e).__name__}: {e}")
        return None

    # ------------------------------------------------------------------ γ sweep

    def gamma_sweep(self, blocking: bool = False, gammas=GAMMAS):
        """Run γ = 1..8 (same prompt and settings): measured speedup vs the bound and the cost model.

        One autoregressive run gives the target's time per token; each γ's own α, draft-token
        and verify-step times give its theory points. With the γ control on "auto", an auto
        run follows, shown as a level line. The status line and `progress` show which run is
        going ("γ = 3 (3/8)"). Returns `sweep_data` when blocking.
        """
        gammas = [gamma_setting(g) for g in gammas]
        if not gammas:
            raise ValueError("gammas must hold at least one γ (a whole number or 'auto')")
        if self.controls.gamma_value() == AUTO and AUTO not in gammas:
            gammas.append(AUTO)

        def progress(done, total, what, data):
            self.sweep_data = data
            self.controls.show_progress(done, total)
            if data["gammas"] or data["auto"]:
                self.view.show_sweep(data)
            if what == "baseline":
                self.status.value = f"<i>{t('live.sweep_baseline', total=len(gammas))}</i>"
            elif what is not None:
                g = t("live.gamma_auto") if what == AUTO else what
                self.status.value = f"<i>{t('live.sweep_gamma', gamma=g, done=done, total=len(gammas))}</i>"

        def job(pair, ids, kw):
            try:
                data = gamma_sweep_run(pair, ids, kw, gammas, self.jobs.keep_going, progress)
            finally:
                self.controls.show_progress(None)
            self.sweep_data = data
            ar = data["ar"]
            head = t("live.sweep_stopped") if data["stopped"] else t("live.sweep_done")
            pts = list(zip(data["gammas"], data["measured"]))
            if data["auto"] is not None:
                pts.append((t("live.gamma_auto"), data["auto"]["measured"]))
            points = t("live.list_sep").join(f"γ={g}: {m:.2f}×" for g, m in pts)
            self.status.value = f"<b>{head}</b> " + t("live.sweep_summary", tps=ar.tokens_per_second, points=points)
            return data

        return self._start("sweep", job, blocking)


def live_app(pair=None, prompt: str = "ROMEO:\n", source: str | None = None, **kwargs):
    """The live real-model view (see `LiveApp`); `pair=None` loads the bundled offline pair.

    Keyword arguments: gamma (a whole number or "auto"), temperature, top_k, top_p,
    max_new_tokens, seed, target, draft, device, ar_baseline, refresh_s, load, chat,
    stop_at_eos, model_defaults. `source="http://HOST:8000"` instead shows a running
    vLLM server's counters in the same acceptance plots (`specviz.lm.vllm_live.VLLMLiveApp`;
    keywords interval_s, gamma, timeout).
    """
    if source is not None:
        from .vllm_live import VLLMLiveApp

        if not isinstance(source, str):
            raise TypeError(f"source must be a vLLM server's URL as a string (http://HOST:8000), got {source!r}")
        if pair is not None:
            raise ValueError("give a pair or a vLLM source, not both")
        return VLLMLiveApp(source, **kwargs)
    return LiveApp(pair, prompt, **kwargs)


__all__ = [
    "GAMMAS",
    "LiveApp",
    "LiveRun",
    "LiveView",
    "PieceDecoder",
    "fates_html",
    "fates_of",
    "legend_html",
    "live_app",
    "steps_table_html",
    "text_box",
    "token_closeup",
    "token_pieces",
    "token_span",
]
