"""The live view's pair and prompt: loading a pair in the background, the prompt as the model reads it.

`LiveLoading` is the half of `specviz.widgets.live.LiveApp` that holds the pair (a mixin: the
app gives it `controls`, `jobs`, `status`, `warmed` and the widgets); a pair is warmed up (run once,
untimed) as it loads, so a first Generate measures decoding, not first-call costs; `start_job` checks
the settings, then runs a job on the pair in the background (warming up a pair given directly first).
"""

from __future__ import annotations

import html

from ..i18n import t
from ..lm.loading import load_pair
from .live_models import check_fetched, formatted_prompt_html
from .live_pair_info import check_device
from .live_sweep import prompt_ids_for, warm_up


class LiveLoading:
    """Load a pair (`load`), show the formatted prompt, and start jobs on the pair (`start_job`)."""

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
            self.warm_up_loaded()
            return pair

        return self.jobs.start("load", job, blocking)

    def warm_up_loaded(self) -> None:
        """Run the new pair once on its prompt, untimed, and say so in the status line (not in any measured run)."""
        try:
            ids = self._prompt_ids()
        except ValueError:
            return  # an unusable prompt: the first job warms up on the prompt it is given
        self.status.value = f"<i>{html.escape(t('live.warming_up'))}</i>"
        seconds = warm_up(self.pair, ids, self.warmed)
        pair = " + ".join(self.controls.models.names())
        text = "" if seconds is None else t("live.warmed_up", pair=pair, seconds=seconds)
        self.status.value = f"<i>{html.escape(text)}</i>" if text else ""

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

    def start_job(self, name: str, job, blocking: bool):
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


__all__ = ["LiveLoading"]
