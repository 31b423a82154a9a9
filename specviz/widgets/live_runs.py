"""What the live view's buttons run: speculative decoding streamed into the view, the baseline, the γ sweep.

`LiveRuns` is the half of `specviz.widgets.live.LiveApp` that runs jobs (a mixin: the app
gives it `controls`, `view`, `jobs`, `start_job` and the widgets). Generation runs in a
background thread; a second thread redraws the view at most every `refresh_s` seconds, so
the measured tokens/s are not slowed by drawing. Any generated token can then be looked at
up close (`select_token`).
"""

from __future__ import annotations

import html
import threading
import time

from ..checks import integer
from ..i18n import t
from ..lm.engine import autoregressive_generate, speculative_generate
from ..lm.stats import spec_stats
from .live_jobs import LiveRun
from .live_patches import throughput_panel_patch
from .live_render import status_html
from .live_settings import AUTO, GAMMAS, gamma_setting
from .live_sweep import MAX_ROUNDS, NO_ROUNDS, gamma_sweep_run, speed_rounds


class LiveRuns:
    """The jobs of the live view and their state: `generate`, `run_baseline`, `gamma_sweep`, `select_token`."""

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
            self.result, self.stats, self.speed = None, None, None
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
                self._more_rounds(pair, ids, kw, gamma)
            return result

        return self.start_job("generate", job, blocking)

    def run_baseline(self, blocking: bool = False):
        """Autoregressive sampling from the target with the same settings (tokens/s for the comparison)."""
        return self.start_job("baseline", self._baseline, blocking)

    def _baseline(self, pair, ids, kw):
        self.status.value = f"<i>{html.escape(t('live.baseline_running'))}</i>"
        self.ar_result = autoregressive_generate(pair, ids, on_token=self.jobs.keep_going, **kw)
        self._show_speed(None if self.result is None else NO_ROUNDS.plus(self.result, self.ar_result))
        return self.ar_result

    def _more_rounds(self, pair, ids, kw, gamma) -> None:
        """Time more speculative and plain rounds (other seeds), so the speed-up shown is not one noisy round's."""
        if self.speed is None or not self.jobs.keep_going():
            return

        def on_round(rounds):
            self.status.value = f"<i>{html.escape(t('live.measuring', n=rounds.rounds + 1, most=MAX_ROUNDS))}</i>"

        self._show_speed(speed_rounds(pair, ids, kw, gamma, self.speed, self.jobs.keep_going, on_round))

    def _show_speed(self, speed) -> None:
        self.speed = self.view.speed = speed
        self.view.patch(throughput_panel_patch(self.stats, self.ar_result, speed))
        self.view.show_numbers(self.stats, self.ar_result)
        self._set_status()

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
        self.status.value = status_html(run.result if run else None, True, ar_result=self.ar_result, speed=self.speed)

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

    def token_picked(self, change) -> None:
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

        return self.start_job("sweep", job, blocking)


__all__ = ["LiveRuns"]
