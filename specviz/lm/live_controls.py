"""The input half of the live view: which pair, the prompt, the sampling settings, the buttons, the status.

`LiveControls` builds the widgets and reads them (`settings`, `gamma_value`); what the
buttons do is wired by `specviz.lm.live.LiveApp`. The model choice (`pair_choice`) fills the
target and draft boxes, which take any name, folder, .gguf file or hub id as free text
(`specviz.lm.live_models`). `describe_pair_html` is the line under the pair selector.

>>> c = LiveControls(prompt="0 1", gamma="auto", top_k=0, top_p=1.0)
>>> c.settings(), c.gamma_value()
({'temperature': 1.0, 'top_k': None, 'top_p': None, 'max_new_tokens': 200, 'seed': 0, 'stop_at_eos': True}, 'auto')
>>> c.pair_choice.value = ("smollm2-135m", "prompt-lookup")
>>> c.target_text.value, c.draft_text.value
('smollm2-135m', 'prompt-lookup')
"""

from __future__ import annotations

import html

import ipywidgets as W

from ..checks import flag
from ..i18n import t
from .live_jobs import (
    AUTO,
    MAX_NEW_TOKENS,
    TEMPERATURE_MAX,
    TOP_K_MAX,
    TOP_P_MIN,
    checked_settings,
    gamma_setting,
    sampling_settings,
)
from .live_models import DEFAULT_CHAT_PROMPT, DEFAULT_PROMPT, ModelChoice, has_chat_template, sampling_defaults

LABEL_STYLE = {"description_width": "110px"}
"""Label width shared by the live view's controls."""

DEVICES = ("auto", "cpu", "cuda")

GAMMA_CHOICES = (AUTO, *range(0, 9))
"""What the γ control offers: "auto" (the engine picks each step's draft length) and 0..8 (0: plain target steps)."""


def check_device(device) -> str:
    """`device` if the device control offers it ("auto", "cpu", "cuda"); errors name the choices."""
    if not isinstance(device, str):
        raise TypeError(f"device must be one of {', '.join(map(repr, DEVICES))}, got {device!r}")
    if device not in DEVICES:
        raise ValueError(f"device must be one of {', '.join(map(repr, DEVICES))}, got {device!r}")
    return device


def check_text(value, name: str) -> str:
    """`value` if it is a string (a prompt, a model name); TypeError naming `name` otherwise."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, got {value!r}")
    return value


def gamma_options(gamma=4) -> list:
    """(label, value) of the γ control: "auto" in the current language, then whole numbers (`gamma` too)."""
    values = list(GAMMA_CHOICES)
    if gamma not in values:
        values.append(gamma)
    return [(t("live.gamma_auto"), AUTO) if v == AUTO else (str(v), v) for v in values]


def model_size_text(model) -> str:
    """A model's name, with its parameter count when it has weights ("gpt2 (0.12 M params)")."""
    name = str(getattr(model, "name", "?"))
    mod = getattr(model, "model", None)
    if mod is None:
        return name
    return t("live.model_size", name=name, millions=sum(p.numel() for p in mod.parameters()) / 1e6)


def describe_pair_text(pair) -> str:
    """One line in the current language: both models with their sizes, the vocabulary and the device."""
    try:
        return t(
            "live.pair_desc",
            target=model_size_text(pair.target),
            draft=model_size_text(pair.draft),
            vocab=pair.target.vocab_size,
            device=getattr(pair, "device", "cpu"),
        )
    except Exception:  # noqa: BLE001 - a description must never fail
        return f"{getattr(pair.target, 'name', '?')} + {getattr(pair.draft, 'name', '?')}"


def describe_pair_html(pair) -> str:
    """The pair line: both models, the vocabulary, the device, the context, a hint for a pair without tokenizer."""
    desc = describe_pair_text(pair)
    dev = getattr(pair, "device", "cpu")
    tok = "" if getattr(pair, "tokenizer", None) is not None else f" · <i>{html.escape(t('live.no_tokenizer'))}</i>"
    ctx = context_limit(pair)
    ctx_txt = t("live.pair_context", ctx=ctx) if ctx else ""
    return (
        f"<div style='font-size:13px'><b>{html.escape(t('live.pair_line'))}</b> {html.escape(desc)} · "
        f"<b>{html.escape(t('live.device_line'))}</b> <span class='specviz-device'>{html.escape(str(dev))}</span>"
        f"{html.escape(ctx_txt)}{tok}</div>"
    )


def context_limit(pair) -> int | None:
    """The smaller context (max positions) of the two models, None when neither has one."""
    ctx = [m.max_positions for m in (pair.target, pair.draft) if getattr(m, "max_positions", None)]
    return min(ctx) if ctx else None


def new_tokens_room(pair) -> int:
    """The most new tokens the max-new-tokens box allows for `pair` (its context less a margin for prompt and γ)."""
    ctx = context_limit(pair)
    return max(1, ctx - 16) if ctx else MAX_NEW_TOKENS


class LiveControls:
    """The live view's input widgets.

    `pair_choice` (Dropdown of `live_models.pair_choices()`), `target_text`, `draft_text`
    (Comboboxes that take free text), `models_hint`, `device`, `load_button`, `pair_info`,
    `prompt`, `chat_checkbox` (read the prompt through the chat template), `show_prompt`
    (ToggleButton) and `formatted_prompt` (what the model reads), `gamma` (Dropdown: "auto",
    0..8), `temperature`, `top_k` (0 = off), `top_p` (1 = off), `max_new_tokens`, `seed`,
    `ar_checkbox`, `ignore_eos` (keep going past the end token), `generate_button`,
    `stop_button`, `baseline_button`, `sweep_button`, `progress` (IntProgress, shown while a
    γ sweep runs), `status`.
    """

    WIDGETS = (
        "pair_choice",
        "target_text",
        "draft_text",
        "models_hint",
        "device",
        "load_button",
        "pair_info",
        "prompt",
        "chat_checkbox",
        "show_prompt",
        "formatted_prompt",
        "ignore_eos",
        "gamma",
        "temperature",
        "top_k",
        "top_p",
        "max_new_tokens",
        "seed",
        "ar_checkbox",
        "generate_button",
        "stop_button",
        "baseline_button",
        "sweep_button",
        "progress",
        "status",
    )

    def __init__(
        self,
        prompt: str = DEFAULT_PROMPT,
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
        chat: bool = True,
        stop_at_eos: bool = True,
    ):
        temperature, top_k, top_p, max_new_tokens, seed = checked_settings(
            temperature, top_k, top_p, max_new_tokens, seed
        )
        g, device = gamma_setting(gamma), check_device(device)
        prompt, target, draft = (
            check_text(v, n) for v, n in ((prompt, "prompt"), (target, "target"), (draft, "draft"))
        )
        ar_baseline, chat, stop_at_eos = (
            flag(v, n) for v, n in ((ar_baseline, "ar_baseline"), (chat, "chat"), (stop_at_eos, "stop_at_eos"))
        )
        lab = LABEL_STYLE
        self.saved: dict | None = None  # settings an instruct model's defaults replaced (restored for another pair)
        self.models = ModelChoice(target, draft, lab)
        self.pair_choice, self.target_text, self.draft_text, self.models_hint = (
            self.models.pair_choice,
            self.models.target_text,
            self.models.draft_text,
            self.models.models_hint,
        )
        self.device = W.Dropdown(
            options=[(t("live.device_auto") if d == "auto" else d, d) for d in DEVICES],
            value=device,
            description=t("live.device"),
            layout=W.Layout(width="180px"),
            style={"description_width": "50px"},
        )
        self.load_button = W.Button(
            description=t("live.load"),
            layout=W.Layout(width="110px"),
            tooltip=t("live.load_tip"),
        )
        self.pair_info = W.HTML(f"<i>{html.escape(t('live.no_pair_loaded'))}</i>")
        self.pair_info.add_class("specviz-pair-info")
        self.prompt = W.Textarea(
            value=prompt, description=t("live.prompt"), style=lab, layout=W.Layout(width="640px", height="70px")
        )
        self.chat_checkbox = W.Checkbox(
            value=chat, description=t("live.chat"), indent=False, layout=W.Layout(width="220px")
        )
        self.show_prompt = W.ToggleButton(
            value=False, description=t("live.show_prompt"), tooltip=t("live.show_prompt_tip"), icon="eye"
        )
        self.show_prompt.layout.width = "240px"
        self.formatted_prompt = W.HTML("", layout=W.Layout(display="none", width="640px"))
        self.formatted_prompt.add_class("specviz-formatted")
        self.ignore_eos = W.Checkbox(
            value=not stop_at_eos, description=t("live.ignore_eos"), indent=False, layout=W.Layout(width="440px")
        )
        self.gamma = W.Dropdown(
            options=gamma_options(g), value=g, description=t("live.gamma"), style=lab, layout=W.Layout(width="230px")
        )
        self.temperature = W.FloatSlider(
            value=temperature,
            min=0.0,
            max=TEMPERATURE_MAX,
            step=0.05,
            description=t("live.temperature"),
            style=lab,
            continuous_update=False,
        )
        self.top_k = W.BoundedIntText(
            value=top_k,
            min=0,
            max=TOP_K_MAX,
            description=t("live.top_k"),
            style=lab,
            layout=W.Layout(width="230px"),
        )
        self.top_p = W.FloatSlider(
            value=top_p,
            min=TOP_P_MIN,
            max=1.0,
            step=0.01,
            description=t("live.top_p"),
            style=lab,
            continuous_update=False,
        )
        self.max_new_tokens = W.BoundedIntText(
            value=max_new_tokens,
            min=1,
            max=MAX_NEW_TOKENS,
            description=t("live.max_new_tokens"),
            style=lab,
            layout=W.Layout(width="230px"),
        )
        self.seed = W.IntText(value=seed, description=t("live.seed"), style=lab, layout=W.Layout(width="230px"))
        self.ar_checkbox = W.Checkbox(
            value=ar_baseline,
            description=t("live.ar_checkbox"),
            indent=False,
            layout=W.Layout(width="320px"),
        )
        self.generate_button = W.Button(
            description=t("live.generate"), button_style="primary", layout=W.Layout(width="110px")
        )
        self.stop_button = W.Button(
            description=t("live.stop"),
            button_style="danger",
            disabled=True,
            layout=W.Layout(width="80px"),
            tooltip=t("live.stop_tip"),
        )
        self.baseline_button = W.Button(
            description=t("live.baseline"),
            layout=W.Layout(width="120px"),
            tooltip=t("live.baseline_tip"),
        )
        self.sweep_button = W.Button(
            description=t("live.sweep"),
            layout=W.Layout(width="100px"),
            tooltip=t("live.sweep_tip"),
        )
        self.progress = W.IntProgress(value=0, min=0, max=1, layout=W.Layout(width="140px", display="none"))
        self.progress.add_class("specviz-live-progress")
        self.status = W.HTML("")
        self.status.add_class("specviz-status")

    def rows(self) -> list:
        """The controls laid out in rows, top to bottom."""
        row = W.Layout(flex_flow="row wrap", align_items="center")
        return [
            W.HBox([self.pair_choice, self.device, self.load_button], layout=row),
            W.HBox([W.VBox([self.target_text, self.draft_text]), self.models_hint], layout=row),
            self.pair_info,
            self.prompt,
            W.HBox([self.chat_checkbox, self.show_prompt, self.ignore_eos], layout=row),
            self.formatted_prompt,
            W.HBox([self.gamma, self.temperature, self.top_p], layout=row),
            W.HBox([self.top_k, self.max_new_tokens, self.seed, self.ar_checkbox], layout=row),
            W.HBox(
                [
                    self.generate_button,
                    self.stop_button,
                    self.baseline_button,
                    self.sweep_button,
                    self.progress,
                    self.status,
                ],
                layout=row,
            ),
        ]

    def set_running(self, running: bool) -> None:
        """Grey out everything that would start a job while one runs; Stop only then."""
        for b in (self.generate_button, self.load_button, self.baseline_button, self.sweep_button):
            b.disabled = running
        self.stop_button.disabled = not running

    def show_pair(self, pair) -> None:
        """Describe a newly loaded pair, cap max new tokens by its context, offer the chat template if it has one."""
        self.max_new_tokens.max = new_tokens_room(pair)  # clamps the value too
        self.pair_info.value = describe_pair_html(pair)
        self.chat_checkbox.disabled = not has_chat_template(pair)

    # ------------------------------------------------------------------ an instruct model

    def apply_model_defaults(self, pair) -> None:
        """An instruct model's sampling defaults and a chat prompt after it loads; what was set before for another pair."""
        defaults = sampling_defaults(pair)
        if defaults is not None:
            if self.saved is None:
                self.saved = dict(
                    temperature=self.temperature.value, top_k=self.top_k.value, top_p=self.top_p.value, prompt=None
                )
                if self.prompt.value == DEFAULT_PROMPT:
                    self.saved["prompt"] = DEFAULT_PROMPT
                    self.prompt.value = DEFAULT_CHAT_PROMPT
            self.set_sampling(**defaults)
        elif self.saved is not None:
            saved, self.saved = self.saved, None
            if saved.pop("prompt") is not None and self.prompt.value == DEFAULT_CHAT_PROMPT:
                self.prompt.value = DEFAULT_PROMPT
            self.set_sampling(**saved)

    def set_sampling(self, temperature: float, top_k: int, top_p: float) -> None:
        """Set the sampling controls (top-k 0 and top-p 1 mean off)."""
        self.temperature.value = float(temperature)
        self.top_k.value = int(top_k or 0)
        self.top_p.value = float(top_p if top_p is not None else 1.0)

    def show_progress(self, done: int | None, total: int = 1) -> None:
        """Show the progress bar at done/total, or hide it (done None)."""
        if done is None:
            self.progress.layout.display = "none"
            return
        self.progress.max, self.progress.value = max(1, int(total)), int(done)
        self.progress.layout.display = None

    def settings(self) -> dict:
        """The engines' keyword arguments from the widgets (ValueError for an invalid combination)."""
        return sampling_settings(
            self.temperature.value,
            self.top_k.value,
            self.top_p.value,
            self.max_new_tokens.value,
            self.seed.value,
            stop_at_eos=not self.ignore_eos.value,
        )

    def gamma_value(self):
        """The γ setting: "auto" or a whole number."""
        return gamma_setting(self.gamma.value)


__all__ = [
    "DEVICES",
    "GAMMA_CHOICES",
    "LABEL_STYLE",
    "LiveControls",
    "check_device",
    "check_text",
    "context_limit",
    "describe_pair_html",
    "describe_pair_text",
    "gamma_options",
    "model_size_text",
    "new_tokens_room",
]
