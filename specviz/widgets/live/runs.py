"""What the live view's buttons run: speculative decoding streamed into the view, the baseline, the γ sweep.

`LiveRuns` is the part of `specviz.widgets.live.app.LiveApp` that runs jobs and keeps what they
left (`result`, `stats`, `ar_result`, `speed`, `sweep_data`). Each job gets the click's one
`GenerationSettings` (`PairLoader.start_job`) and hands it to the engine whole. Generation runs
in a background thread; a second thread redraws the view at most every `refresh_s` seconds, so
the measured tokens/s are not slowed by drawing. Any generated token can then be looked at up
close (`select_token`).
"""

from __future__ import annotations

import html
import threading
import time

from ...foundation.checks import AUTO, gamma_setting, integer
from ...foundation.i18n import t
from ...lm.engine.loop import autoregressive_generate, speculative_generate
from ...lm.stats.stats import spec_stats
from .jobs import LiveRun
from .render import status_html, throughput_panel_patch
from .settings import GAMMAS
from .sweep import MAX_ROUNDS, NO_ROUNDS, gamma_sweep_run, speed_rounds


class LiveRuns:
    """The jobs of the live view and their state: `generate`, `run_baseline`, `gamma_sweep`, `select_token`.

    Works on the app's `controls`, `view` (`LiveView`), `jobs` and `loader` (`PairLoader`, which
    starts each job); errors go to `show_error`. Functions in `step_listeners` are called with
    each StepRecord from the decoding thread (a test hook).
    """

    def __init__(self, controls, view, jobs, loader, show_error, refresh_s: float):
        self.controls, self.view, self.jobs, self.loader = controls, view, jobs, loader
        self.show_error, self.refresh_s = show_error, refresh_s
        self.result = None  # GenerationResult of the last speculative run
        self.stats = None  # its SpecStats
        self.ar_result = None  # the autoregressive baseline's GenerationResult
        self.speed = None  # SpeedRounds: speculative vs plain decoding pooled over timing rounds
        self.sweep_data: dict | None = None
        self.step_listeners: list = []

    def stop(self) -> None:
        """Ask the running job to stop (after the verify step in progress)."""
        self.jobs.stop()
        if self.jobs.busy:
            self.controls.status.value = f"<i>{html.escape(t('live.stopping'))}</i>"

    # ------------------------------------------------------------------ generation

    def generate(self, blocking: bool = False):
        """Speculative decoding of the prompt with the current settings, streamed into the view.

        With `ar_checkbox` set, an autoregressive run with the same settings follows (for
        tokens/s). Returns the GenerationResult when `blocking`, else None (the job runs in a
        background thread; see `wait()`).
        """
        with_ar = bool(self.controls.ar_checkbox.value)

        def job(pair, ids, settings):
            run = LiveRun(pair, list(ids), settings)
            self.result, self.stats, self.speed = None, None, None
            self.view.begin(run, self.ar_result)
            done = threading.Event()

            def on_step(rec):
                run.steps.append(rec)
                for fn in list(self.step_listeners):
                    fn(rec)
                return self.jobs.keep_going()

            drawer = threading.Thread(target=self.draw_loop, args=(done, run), daemon=True)
            drawer.start()
            run.t0 = time.perf_counter()
            try:
                result = speculative_generate(pair, ids, settings=settings, on_step=on_step)
            finally:
                done.set()
                drawer.join()
            run.result = self.result = result
            self.stats = spec_stats(result)
            self.ar_result = None
            self.view.render(final=True, stats=self.stats, ar_result=self.ar_result)
            self.set_status()
            self.select_default()
            if with_ar and not result.stopped and self.jobs.keep_going():
                self.baseline(pair, ids, settings)
                self.more_rounds(pair, ids, settings)
            return result

        return self.loader.start_job("generate", job, blocking)

    def run_baseline(self, blocking: bool = False):
        """Autoregressive sampling from the target with the same settings (tokens/s for the comparison)."""
        return self.loader.start_job("baseline", self.baseline, blocking)

    def baseline(self, pair, ids, settings):
        """The autoregressive run (in the job's thread), then the speeds it gives."""
        self.controls.status.value = f"<i>{html.escape(t('live.baseline_running'))}</i>"
        self.ar_result = autoregressive_generate(pair, ids, settings=settings, on_token=self.jobs.keep_going)
        self.show_speed(None if self.result is None else NO_ROUNDS.plus(self.result, self.ar_result))
        return self.ar_result

    def more_rounds(self, pair, ids, settings) -> None:
        """Time more speculative and plain rounds (other seeds), so the speed-up shown is not one noisy round's."""
        if self.speed is None or not self.jobs.keep_going():
            return

        def on_round(rounds):
            self.controls.status.value = (
                f"<i>{html.escape(t('live.measuring', n=rounds.rounds + 1, most=MAX_ROUNDS))}</i>"
            )

        self.show_speed(speed_rounds(pair, ids, settings, self.speed, self.jobs.keep_going, on_round))

    def show_speed(self, speed) -> None:
        """Show pooled speeds (SpeedRounds, or None for none yet) in the plot, the table and the status line."""
        self.speed = self.view.speed = speed
        self.view.patch(throughput_panel_patch(self.stats, self.ar_result, speed))
        self.view.show_numbers(self.stats, self.ar_result)
        self.set_status()

    def draw_loop(self, done: threading.Event, run: LiveRun) -> None:
        """Redraw the view every `refresh_s` seconds until `done` (the drawing thread)."""
        while not done.wait(self.refresh_s):
            try:
                self.view.render(final=False, ar_result=self.ar_result)
                self.controls.status.value = status_html(run.partial(), False, run.settings.max_new_tokens)
            except Exception as e:  # noqa: BLE001
                self.show_error(t("live.drawing_failed", error=f"{type(e).__name__}: {e}"))

    def set_status(self) -> None:
        """The status line of the run shown, done or stopped."""
        run = self.view.run
        result = run.result if run else None
        self.controls.status.value = status_html(result, True, ar_result=self.ar_result, speed=self.speed)

    # ------------------------------------------------------------------ one token up close

    def select_default(self) -> None:
        """Select the token worth showing first after a run (`LiveView.default_token`)."""
        i = self.view.default_token()
        if i is None:
            return
        if self.view.token_selector.value != i:
            self.view.token_selector.value = i  # the observer selects it
        else:
            self.select_token(i)

    def token_picked(self, change) -> None:
        """The token slider moved: show that token (not while a new run has it disabled)."""
        if not self.view.token_selector.disabled:
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
        gammas = [gamma_setting(g, auto=True) for g in gammas]  # a bad γ is the caller's error, raised here
        if not gammas:
            raise ValueError("gammas must hold at least one γ (a whole number or 'auto')")

        def progress(done, total, what, data):
            self.sweep_data = data
            self.controls.show_progress(done, total)
            if data["gammas"] or data["auto"]:
                self.view.show_sweep(data)
            if what == "baseline":
                self.controls.status.value = f"<i>{t('live.sweep_baseline', total=total - 1)}</i>"
            elif what is not None:
                g = t("live.gamma_auto") if what == AUTO else what
                self.controls.status.value = f"<i>{t('live.sweep_gamma', gamma=g, done=done, total=total - 1)}</i>"

        def job(pair, ids, settings):
            sweep = gammas + [AUTO] if settings.gamma == AUTO and AUTO not in gammas else gammas
            try:
                data = gamma_sweep_run(pair, ids, settings, sweep, self.jobs.keep_going, progress)
            finally:
                self.controls.show_progress(None)
            self.sweep_data = data
            ar = data["ar"]
            head = t("live.sweep_stopped") if data["stopped"] else t("live.sweep_done")
            pts = list(zip(data["gammas"], data["measured"]))
            if data["auto"] is not None:
                pts.append((t("live.gamma_auto"), data["auto"]["measured"]))
            points = t("live.list_sep").join(f"γ={g}: {m:.2f}×" for g, m in pts)
            self.controls.status.value = f"<b>{head}</b> " + t(
                "live.sweep_summary", tps=ar.tokens_per_second, points=points
            )
            return data

        return self.loader.start_job("sweep", job, blocking)


__all__ = ["LiveRuns"]
