"""The input half of the live view: which pair, the prompt, the sampling settings, the buttons, the status.

`LiveControls` builds the widgets and reads them (`settings`, `gamma_value`); what the
buttons do is wired by `specviz.widgets.live.LiveApp`. The model choice (`pair_choice`) fills the
target and draft boxes, which take any name, folder, .gguf file or hub id as free text
(`specviz.widgets.live_models`). `describe_pair_html` is the line under the pair selector.

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
from .live_models import DEFAULT_CHAT_PROMPT, DEFAULT_PROMPT, ModelChoice, has_chat_template, sampling_defaults
from .live_pair_info import DEVICES, check_device, check_text, describe_pair_html, new_tokens_room
from .live_sampling import gamma_options, run_buttons, sampling_widgets  # noqa: F401  (gamma_options: re-exported)
from .live_settings import (
    checked_settings,
    gamma_setting,
    sampling_settings,
)

LABEL_STYLE = {"description_width": "110px"}
"""Label width shared by the live view's controls."""


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
        gamma: int | str = "auto",
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
        self.gamma, self.temperature, self.top_k, self.top_p, self.max_new_tokens, self.seed, self.ar_checkbox = (
            sampling_widgets(g, temperature, top_k, top_p, max_new_tokens, seed, ar_baseline, lab)
        )
        self.generate_button, self.stop_button, self.baseline_button, self.sweep_button = run_buttons()
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


__all__ = ["LABEL_STYLE", "LiveControls"]
