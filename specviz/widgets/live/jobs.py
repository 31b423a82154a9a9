"""The background work of the live views: one job at a time in a thread, Stop, and the run being shown.

`JobRunner` runs one job (load, generate, baseline, γ sweep, polling a vLLM server) in a
daemon thread so the notebook stays responsive; `stop()` sets an event the jobs check after
every verify step or token; errors become a message through the `on_error` callback (a
lecture must never show a traceback). `LiveRun` is the state of the run being shown, shared
with the drawing thread. γ is a whole number or "auto" (the engine picks each step's draft
length), so nothing here assumes a fixed γ: arrays follow the longest draft of the run
(`LiveRun.longest`). The runs themselves are in `specviz.widgets.live.sweep`.

>>> errors = []
>>> jobs = JobRunner(on_error=errors.append)
>>> jobs.start("sum", lambda: 1 + 1, blocking=True), jobs.busy
(2, False)
>>> jobs.start("bad", lambda: int("x"), blocking=True), errors
(None, ["invalid literal for int() with base 10: 'x'"])
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from ...foundation.checks import AUTO
from ...foundation.i18n import t
from ...lm.engine.results import GenerationResult
from ...lm.engine.settings import GenerationSettings
from ...lm.stats.fates import PieceDecoder
from .settings import PLACEHOLDER_GAMMA

JOB_KEYS = {
    "load": "live.job_load",
    "generate": "live.job_generate",
    "baseline": "live.job_baseline",
    "sweep": "live.job_sweep",
    "polling": "live.job_polling",
}
"""The message naming each job in the "busy" error (other job names are shown as they are)."""


class JobRunner:
    """At most one background job at a time, with a stop event, `wait` and error reporting.

    Callbacks: `on_error(text)` for a failed job (ValueError: its message; anything else:
    "TypeName: message"), `on_busy(running)` when a job starts and ends (e.g. to grey out
    buttons). `start` refuses a second job while one runs, with an error message.
    """

    def __init__(self, on_error, on_busy=None, on_start=None):
        self.on_error = on_error
        self.on_busy = on_busy or (lambda running: None)
        self.on_start = on_start or (lambda: None)
        self.stop_event = threading.Event()
        self.thread: threading.Thread | None = None
        self.current: str | None = None

    @property
    def busy(self) -> bool:
        """True while a job runs."""
        return self.current is not None

    def keep_going(self, *_) -> bool:
        """False once stop was asked for (the engines' on_step / on_token callback)."""
        return not self.stop_event.is_set()

    def start(self, name: str, fn, blocking: bool):
        """Run fn() in a background thread (joined when blocking: then fn's value, else None)."""
        if self.current is not None:
            job = t(JOB_KEYS[self.current]) if self.current in JOB_KEYS else self.current
            self.on_error(t("live.busy", job=job))
            return None
        self.current = name
        self.stop_event.clear()
        self.on_start()
        self.on_busy(True)
        box = {}

        def target():
            try:
                box["value"] = fn()
            except ValueError as e:
                self.on_error(str(e))
            except Exception as e:  # noqa: BLE001 - a lecture must never show a traceback
                self.on_error(f"{type(e).__name__}: {e}")
            finally:
                self.current = None
                self.on_busy(False)

        thread = threading.Thread(target=target, name=f"specviz-live-{name}", daemon=True)
        self.thread = thread
        thread.start()
        if blocking:
            thread.join()
            return box.get("value")
        return None

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the running job; True when nothing is running any more."""
        thread = self.thread
        if thread is not None:
            thread.join(timeout)
        return not self.busy

    def stop(self) -> None:
        """Ask the running job to stop (the engines stop after the verify step in progress)."""
        self.stop_event.set()


@dataclass
class LiveRun:
    """The speculative run being shown: its inputs, the step records so far, and the result when done."""

    pair: object
    prompt_ids: list
    settings: GenerationSettings  # what the run was asked for: γ, sampling, max new tokens, seed, stop at the end
    steps: list = field(default_factory=list)
    t0: float = field(default_factory=time.perf_counter)
    result: GenerationResult | None = None
    drawn_tps: float = 0.0  # when tokens/s and the table were last redrawn

    def __post_init__(self):
        self.tokenizer = getattr(self.pair, "tokenizer", None)
        self.decoder = PieceDecoder(self.tokenizer, self.prompt_ids)

    @property
    def gamma(self) -> int | str:
        """The γ setting: a whole number or "auto"."""
        return self.settings.gamma

    @property
    def kw(self) -> dict:
        """The sampling settings, max_new_tokens, seed and stop_at_eos, as keyword arguments."""
        s = self.settings
        keys = ("temperature", "top_k", "top_p", "max_new_tokens", "seed", "stop_at_eos")
        return {k: getattr(s, k) for k in keys}

    @property
    def longest(self) -> int:
        """The longest draft so far (a fixed γ before the first step; sizes the per-position plots)."""
        drafted = [len(s.drafted) for s in list(self.steps)]
        if drafted:
            return max(drafted)
        return PLACEHOLDER_GAMMA if self.gamma == AUTO else int(self.gamma)

    def partial(self) -> GenerationResult:
        """The result so far (the steps recorded up to now), or the final result once there is one."""
        if self.result is not None:
            return self.result
        steps = list(self.steps)
        new = [t for s in steps for t in s.emitted]
        return GenerationResult(
            self.prompt_ids, new, steps=steps, seconds=time.perf_counter() - self.t0, gamma=self.gamma
        )


__all__ = [
    "JOB_KEYS",
    "JobRunner",
    "LiveRun",
]
