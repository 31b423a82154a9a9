"""The input half of the live view: which pair, the prompt, the settings, the buttons, the status.

`LiveControls` builds the widgets and reads them: `settings()` is the one
`specviz.lm.engine.settings.GenerationSettings` a click runs with. What the buttons do is wired by
`specviz.widgets.live.app.LiveApp`. The model choice (`pair_choice`) fills the target and
draft boxes, which take any name, folder, .gguf file or hub id as free text
(`specviz.widgets.live.models`). `describe_pair_html` is the line under the pair selector.

>>> from specviz.widgets.live.settings import live_settings
>>> c = LiveControls("0 1", live_settings("auto", 1.0, 0, 1.0, 200, 0))
>>> s = c.settings()
>>> s.gamma, s.temperature, s.top_k, s.top_p, s.max_new_tokens, s.seed, s.stop_at_eos, c.gamma_value()
('auto', 1.0, None, None, 200, 0, True, 'auto')
>>> c.pair_choice.value = ("smollm2-135m", "prompt-lookup")
>>> c.target_text.value, c.draft_text.value
('smollm2-135m', 'prompt-lookup')
"""

from __future__ import annotations

import html

import ipywidgets as W

from ...foundation.checks import flag
from ...foundation.i18n import t
from ...lm.engine.settings import GenerationSettings
from .models import CHAT_PROMPTS, DEFAULT_PROMPT, ModelChoice, chat_prompt_for, has_chat_template, sampling_defaults
from .pair_info import DEVICES, check_device, check_text, describe_pair_html, new_tokens_room
from .settings import live_settings, sampling_widgets, tree_widget, tree_words

LABEL_STYLE = {"description_width": "110px"}
"""Label width shared by the live view's controls."""


class LiveControls:
    """The live view's input widgets.

    `pair_choice` (Dropdown of `models.pair_choices()`), `target_text`, `draft_text`
    (Comboboxes that take free text), `models_hint`, `device`, `load_button`, `pair_info`,
    `prompt`, `chat_checkbox` (read the prompt through the chat template), `show_prompt`
    (ToggleButton) and `formatted_prompt` (what the model reads), `gamma` (Dropdown: "auto",
    0..8), `tree` (Combobox: off, k or drafts per depth "3, 2, 1", typed or picked), `temperature`, `top_k` (0 = off), `top_p` (1 = off), `max_new_tokens`, `seed`,
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
        "tree",
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
        prompt: str,
        start: GenerationSettings,
        target: str = "bundled",
        draft: str = "bundled",
        device: str = "auto",
        ar_baseline: bool = True,
        chat: bool = True,
    ):
        """`start`: the settings the controls open with (checked in the view's ranges: `live_settings`)."""
        device = check_device(device)
        prompt, target, draft = (
            check_text(v, n) for v, n in ((prompt, "prompt"), (target, "target"), (draft, "draft"))
        )
        ar_baseline, chat = (flag(v, n) for v, n in ((ar_baseline, "ar_baseline"), (chat, "chat")))
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
            value=not start.stop_at_eos, description=t("live.ignore_eos"), indent=False, layout=W.Layout(width="440px")
        )
        self.gamma, self.temperature, self.top_k, self.top_p, self.max_new_tokens, self.seed, self.ar_checkbox = (
            sampling_widgets(start, ar_baseline, lab)
        )
        self.tree = tree_widget(start, lab)
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
            W.HBox([self.gamma, self.tree, self.temperature, self.top_p], layout=row),
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
                    self.prompt.value = chat_prompt_for(pair)
            elif self.prompt.value in CHAT_PROMPTS:  # another instruct pair: its own starting prompt
                self.prompt.value = chat_prompt_for(pair)
            self.set_sampling(**defaults)
        elif self.saved is not None:
            saved, self.saved = self.saved, None
            if saved.pop("prompt") is not None and self.prompt.value in CHAT_PROMPTS:
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

    def settings(self) -> GenerationSettings:
        """The run's settings from the widgets, checked once (ValueError for an invalid combination)."""
        return live_settings(
            self.gamma.value,
            self.temperature.value,
            self.top_k.value,
            self.top_p.value,
            self.max_new_tokens.value,
            self.seed.value,
            stop_at_eos=not self.ignore_eos.value,
            tree=tree_words(self.tree.value),  # the typed shape, read once by GenerationSettings
        )

    def gamma_value(self):
        """The γ setting: "auto" or a whole number (a value the γ control offers: checked when it was built)."""
        return self.gamma.value


def run_buttons() -> tuple:
    """The buttons that start and stop jobs: (generate, stop, baseline, sweep); Stop is enabled only while one runs."""
    generate_button = W.Button(description=t("live.generate"), button_style="primary", layout=W.Layout(width="110px"))
    stop_button = W.Button(
        description=t("live.stop"),
        button_style="danger",
        disabled=True,
        layout=W.Layout(width="80px"),
        tooltip=t("live.stop_tip"),
    )
    baseline_button = W.Button(
        description=t("live.baseline"), layout=W.Layout(width="120px"), tooltip=t("live.baseline_tip")
    )
    sweep_button = W.Button(description=t("live.sweep"), layout=W.Layout(width="100px"), tooltip=t("live.sweep_tip"))
    return generate_button, stop_button, baseline_button, sweep_button


__all__ = ["LABEL_STYLE", "LiveControls", "run_buttons"]
