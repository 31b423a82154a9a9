"""The live view's pair and prompt: loading a pair in the background, the prompt as the model reads it.

`PairLoader` is the part of `specviz.widgets.live.app.LiveApp` that holds the pair. A pair is
warmed up (run once, untimed) as it loads, so a first Generate measures decoding, not
first-call costs. `start_job` reads the controls once (the pair, the prompt ids, the one
`GenerationSettings` of the click), then runs a job on them in the background (warming up a
pair given directly first); a setting that does not fit becomes a message.
"""

from __future__ import annotations

import html

from ...foundation.i18n import t
from ...lm.load.loading import load_pair
from .models import check_fetched, formatted_prompt_html
from .pair_info import check_device
from .sweep import prompt_ids_for, warm_up


class PairLoader:
    """Load a pair (`load`), show the formatted prompt, and start jobs on the pair (`start_job`).

    Works on the app's `controls` (`LiveControls`) and `jobs` (`JobRunner`); errors go to
    `show_error`. State: `pair` (None before one loads), `warmed` (the pairs run once),
    `model_defaults` (an instruct model sets its sampling defaults as it loads).
    """

    def __init__(self, controls, jobs, show_error, model_defaults: bool = True):
        self.controls, self.jobs, self.show_error = controls, jobs, show_error
        self.model_defaults = model_defaults
        self.pair = None
        self.warmed: set = set()

    def load(
        self, target: str | None = None, draft: str | None = None, device: str | None = None, blocking: bool = True
    ):
        """Load a target/draft pair (`specviz.lm.load_pair`); errors go to `message`."""
        c = self.controls
        if target is not None:
            c.target_text.value = str(target)
        if draft is not None:
            c.draft_text.value = str(draft)
        if device is not None:
            c.device.value = check_device(device)
        c.models.refresh()
        tgt, drf = c.models.names()
        dev = c.device.value

        def job():
            check_fetched(tgt, drf)  # a clear message, before anything loads
            head = html.escape(t("live.loading", target=tgt, draft=drf))
            c.status.value = f"<i>{head}…</i>"

            def stage(line):  # one line per loading stage, in the status line (no HF bars in the page)
                c.status.value = f"<i>{head}: {html.escape(str(line))}…</i>"

            try:
                pair = load_pair(tgt, drf, device=dev, progress=stage, hf_progress=False)
            finally:
                c.status.value = ""
            self.set_pair(pair)
            self.warm_up_loaded()
            return pair

        return self.jobs.start("load", job, blocking)

    def warm_up_loaded(self) -> None:
        """Run the new pair once on its prompt, untimed, and say so in the status line (not in any measured run)."""
        try:
            ids = self.prompt_ids()
        except ValueError:
            return  # an unusable prompt: the first job warms up on the prompt it is given
        status = self.controls.status
        status.value = f"<i>{html.escape(t('live.warming_up'))}</i>"
        seconds = warm_up(self.pair, ids, self.warmed)
        pair = " + ".join(self.controls.models.names())
        text = "" if seconds is None else t("live.warmed_up", pair=pair, seconds=seconds)
        status.value = f"<i>{html.escape(text)}</i>" if text else ""

    def set_pair(self, pair) -> None:
        """Show a newly loaded pair (and an instruct model's defaults, with `model_defaults`)."""
        self.pair = pair
        self.controls.show_pair(pair)
        if self.model_defaults:
            self.controls.apply_model_defaults(pair)
        self.show_formatted_prompt()

    def prompt_ids(self) -> list:
        """The prompt box's text as the pair's token ids (ValueError when no pair is loaded or it does not fit)."""
        if self.pair is None:
            raise ValueError(t("live.no_pair"))
        return prompt_ids_for(self.pair, self.controls.prompt.value, chat=self.controls.chat_checkbox.value)

    def show_formatted_prompt(self) -> None:
        """Show what the model reads (the prompt in its chat template) while `show_prompt` is on."""
        c = self.controls
        box = c.formatted_prompt
        if not c.show_prompt.value:
            box.layout.display, box.value = "none", ""
            return
        box.layout.display = None
        try:
            ids = self.prompt_ids()
        except ValueError as e:
            box.value = f"<i>{html.escape(str(e))}</i>"
            return
        box.value = formatted_prompt_html(self.pair, ids, c.chat_checkbox.value)

    def start_job(self, name: str, job, blocking: bool):
        """Read the click's pair, prompt ids and settings, then run job(pair, ids, settings) in the background."""
        try:
            pair, ids, settings = self.pair, self.prompt_ids(), self.controls.settings()
        except ValueError as e:
            self.show_error(str(e))
            return None

        def run():
            warm_up(pair, ids, self.warmed)
            return job(pair, ids, settings)

        return self.jobs.start(name, run, blocking)


__all__ = ["PairLoader"]
