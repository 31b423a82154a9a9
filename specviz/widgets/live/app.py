"""The live view: speculative decoding on real language models, token by token, with statistics.

`live_app()` returns an ipywidgets container (a `LiveApp`) with a model choice (the bundled
pair, SmolLM2-135M with prompt lookup, any fetched catalogue model, or a folder / .gguf /
hub id typed in), the prompt (through an instruct model's chat template, which "Show the
formatted prompt" displays) and sampling settings, γ as a whole number or "auto", a draft tree
(off, or its shape: each verify step's tree then drawn node by node, `tree_panel`),
Generate / Stop, the generated text with each token coloured by its fate (blue: an
accepted draft token, green: resampled from (p − q)⁺ after a rejection, pink: the bonus
token drawn from p when all γ drafts pass, vermillion: a plain target step, γ = 0), the
verify steps with the γ each one drafted, live plots of the acceptance statistics next to
their theory, tokens/s against autoregressive decoding with a "when does this pay?" line, a
γ sweep with progress, and for any generated token its real p and q as a money diagram:
the bridge back to the toy proof. Runs stop at the end token (an instruct model's end of
turn) unless "ignore the end token" is ticked.

`LiveApp` holds its parts (all in `specviz.widgets.live`) and wires them: `controls`
(`LiveControls`: the inputs, with `settings` for their ranges and the one `GenerationSettings`
a click builds, `pair_info` and `models` for the model choice), `view` (`LiveView`: the
outputs, drawn with `render` and `closeup`), `jobs` (`JobRunner`: background jobs, Stop),
`loader` (`PairLoader`: the pair and the prompt) and `runs` (`LiveRuns`: what the buttons run,
with `sweep` for the runs as plain functions). The figure is `specviz.figures.live_figure`.

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

import ipywidgets as W

from ...foundation.checks import AUTO, flag, integer, real
from ...foundation.i18n import t
from ...lm.engine.settings import DEFAULT_GAMMA, DEFAULT_MAX_NEW_TOKENS, DEFAULT_TREE
from ..base import App
from .controls import LABEL_STYLE, LiveControls
from .jobs import JobRunner
from .loading import PairLoader
from .models import BUNDLED_PAIR, named_pair
from .pair_info import new_tokens_room
from .runs import LiveRuns
from .settings import PLACEHOLDER_GAMMA, in_range, live_settings
from .view import LiveView
from .vllm import VLLMLiveApp

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


def part(name: str, attribute: str, doc: str = "") -> property:
    """A handle of the app on one attribute (or method) of one of its parts: `app.X` is `app.<name>.<attribute>`."""
    return property(lambda app: getattr(getattr(app, name), attribute), doc=doc or f"`{name}.{attribute}`")


class LiveApp(App):
    """Real draft/target models, speculative decoding streamed token by token, statistics vs theory.

    Handles (widgets): `pair_choice` (Dropdown of pairs), `target_text`, `draft_text`
    (Comboboxes taking free text), `models_hint`, `device` (Dropdown), `load_button`,
    `pair_info` (HTML: `pair.describe()`, the device), `prompt` (Textarea), `chat_checkbox`,
    `show_prompt` (ToggleButton) and `formatted_prompt` (HTML), `ignore_eos`, `gamma`
    (Dropdown: "auto", the default, 0..8), `tree` (Combobox: off, the default, or a draft
    tree's shape, typed or picked), `temperature`, `top_k` (0 = off), `top_p` (1 = off), `max_new_tokens`, `seed`, `ar_checkbox` (run the autoregressive baseline after each
    run), `generate_button`, `stop_button`, `baseline_button`, `sweep_button`, `status`,
    `progress` (IntProgress of the γ sweep), `message`, and the outputs of `view`
    (`LiveView`): `legend`, `text_html` (one `<span class='specviz-tok specviz-tok-FATE'>`
    per generated token), `stats_html`, `steps_html` (the verify steps, latest first),
    `payoff_html`, `token_selector`, `token_info`, `figure` (the one FigureWidget:
    `specviz.figures.live_figure`; `figures` maps each panel name to it), `tree_panel`
    (`TreePanel`: a tree run's step slider and each step's tree, `real_tree_figure`).

    `model_defaults`: after loading an instruct model (a tokenizer with a chat template) set
    its sampling defaults (greedy unless its generation config samples) and, if the prompt is
    still the Shakespeare one, a chat prompt; loading another pair puts back what was set.

    State after a run (handles on the parts): `pair`, `current_run` (`LiveRun`), `result`
    (GenerationResult), `stats` (SpecStats), `ar_result`, `speed` (`sweep.SpeedRounds`: after the
    baseline, more rounds of both decoders with the next seeds until `sweep.TIMING_S` seconds or
    MAX_ROUNDS; the speed-up shown is pooled over them, since one short run is noise),
    `sweep_data`, `selected` (dict of the selected token). A pair is warmed up (run once,
    untimed) as it loads.

    Methods: `load(target, draft, device, blocking=True)`, `generate(blocking=False)`,
    `run_baseline(blocking=False)`, `gamma_sweep(blocking=False, gammas=GAMMAS)`, `stop()`,
    `wait(timeout)`, `select_token(i)`, `busy`. Functions in `step_listeners` are called with
    each StepRecord from the decoding thread (a test hook).
    """

    pair = part("loader", "pair", "The loaded Pair (None before one loads).")
    warmed = part("loader", "warmed", "The pairs already run once, untimed.")
    model_defaults = part("loader", "model_defaults", "Whether an instruct model sets its sampling defaults.")
    load = part("loader", "load")
    show_formatted_prompt = part("loader", "show_formatted_prompt")
    _set_pair = part("loader", "set_pair")
    result = part("runs", "result", "The last speculative run's GenerationResult.")
    stats = part("runs", "stats", "Its SpecStats.")
    ar_result = part("runs", "ar_result", "The autoregressive baseline's GenerationResult.")
    speed = part("runs", "speed", "SpeedRounds: speculative against plain decoding, pooled over timing rounds.")
    sweep_data = part("runs", "sweep_data", "The γ sweep's data (`sweep.gamma_sweep_run`).")
    step_listeners = part("runs", "step_listeners", "Functions called with each StepRecord (a test hook).")
    refresh_s = part("runs", "refresh_s", "Seconds between redraws while a run streams.")
    generate = part("runs", "generate")
    run_baseline = part("runs", "run_baseline")
    gamma_sweep = part("runs", "gamma_sweep")
    select_token = part("runs", "select_token")
    stop = part("runs", "stop")
    busy = part("jobs", "busy", "True while a load, generation, baseline or sweep runs.")
    wait = part("jobs", "wait")
    current_run = part("view", "run", "The run being shown (LiveRun: its pair, prompt ids, settings, steps, result).")
    selected = part("view", "selected", "The selected token's close-up (`token_closeup`'s dict), None before any.")
    default_token = part("view", "default_token")

    def __init__(
        self,
        pair=None,
        prompt: str = "ROMEO:\n",
        gamma: int | str = DEFAULT_GAMMA,
        temperature: float = 1.0,
        top_k: int = 0,
        top_p: float = 1.0,
        max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
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
        tree: tuple | int | str | None = DEFAULT_TREE,
    ):
        pair, target, draft = check_pair(pair, target, draft)
        refresh_s = in_range(real, refresh_s, "refresh_s", *REFRESH_S, " seconds")
        load, model_defaults = flag(load, "load"), flag(model_defaults, "model_defaults")
        start = live_settings(gamma, temperature, top_k, top_p, max_new_tokens, seed, stop_at_eos, tree)
        super().__init__()
        self.controls = LiveControls(prompt, start, target, draft, device, ar_baseline, chat)
        self.view = LiveView(PLACEHOLDER_GAMMA if start.gamma == AUTO else start.gamma, LABEL_STYLE)
        for name in LiveControls.WIDGETS:  # the widgets are handles of the app itself
            setattr(self, name, getattr(self.controls, name))
        for name in self.view.WIDGETS:  # and so are the view's
            setattr(self, name, getattr(self.view, name))
        self.jobs = JobRunner(on_error=self.show_error, on_busy=self.controls.set_running, on_start=self.clear_message)
        self.loader = PairLoader(self.controls, self.jobs, self.show_error, model_defaults)
        self.runs = LiveRuns(self.controls, self.view, self.jobs, self.loader, self.show_error, refresh_s)
        self.load_button.on_click(lambda _: self.load(blocking=False))
        self.generate_button.on_click(lambda _: self.generate(blocking=False))
        self.stop_button.on_click(lambda _: self.stop())
        self.baseline_button.on_click(lambda _: self.run_baseline(blocking=False))
        self.sweep_button.on_click(lambda _: self.gamma_sweep(blocking=False))
        self.token_selector.observe(self.runs.token_picked, names="value")
        for w in (self.show_prompt, self.prompt, self.chat_checkbox):
            w.observe(lambda _: self.show_formatted_prompt(), names="value")
        self.children = [
            W.HTML(f"<h3 style='margin:4px 0'>{html.escape(t('live.heading'))}</h3>"),
            *self.controls.rows(),
            self.message,
            *self.view.widgets(),
        ]
        self.add_class("specviz-live")

        if pair is not None:
            check_room(pair, max_new_tokens)
            self._set_pair(pair)
            if getattr(pair, "tokenizer", None) is None and prompt == "ROMEO:\n":
                self.prompt.value = "0"  # a toy pair without tokenizer reads token ids
        elif load:
            self.load(blocking=True)

    @property
    def token_pieces(self) -> list:
        """The text each generated token added (what its span shows)."""
        return list(self.view.pieces)

    @property
    def token_fates(self) -> list:
        """The fate shown for each generated token."""
        return list(self.view.fates)


def live_app(pair=None, prompt: str = "ROMEO:\n", source: str | None = None, **kwargs):
    """The live real-model view (see `LiveApp`); `pair=None` loads the bundled offline pair.

    Keyword arguments: gamma (a whole number or "auto", the default: the γ control's value, with a tree
    too, where it caps the depth), temperature, top_k, top_p,
    max_new_tokens, seed, target, draft, device, ar_baseline, refresh_s, load, chat,
    stop_at_eos, model_defaults, tree (a draft tree's shape such as (3, 2, 1), or k). `source="http://HOST:8000"` instead shows a running
    vLLM server's counters in the same acceptance plots (`specviz.widgets.live.vllm.VLLMLiveApp`;
    keywords interval_s, gamma, timeout).
    """
    if source is not None:
        if not isinstance(source, str):
            raise TypeError(f"source must be a vLLM server's URL as a string (http://HOST:8000), got {source!r}")
        if pair is not None:
            raise ValueError("give a pair or a vLLM source, not both")
        return VLLMLiveApp(source, **kwargs)
    return LiveApp(pair, prompt, **kwargs)


__all__ = ["REFRESH_S", "LiveApp", "check_pair", "check_room", "live_app", "part"]
