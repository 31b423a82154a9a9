"""The live view of a vLLM server: its speculative-decoding counters, polled, in specviz's acceptance plots.

`live_app(source="http://HOST:8000")` (or `vllm_live_app(...)`) returns a `VLLMLiveApp`: the
server's address, a polling interval, Start / Stop / Read once, a table of vLLM's figures and
ONE FigureWidget with the two acceptance panels of the real-model live view
(`specviz.figures.acceptance_panels_figure`), drawn from the counts
of the last interval (`specviz.lm.serve.vllm.SpecCounters.stats`). The first reading shows the
totals since the server started; every later one the difference from the previous reading.
A server that is down, a 404, a page without speculative counters or with counters no
server can show, several models and none chosen (the `model` box; the message lists them) or
a page that does not arrive within `timeout` seconds becomes a message in `app.message`; the
app stays usable.

Driving it without a browser (tests, scripts):

>>> app = vllm_live_app("http://127.0.0.1:9", timeout=0.5)   # nothing listens on port 9
>>> app.read() is None and "cannot reach the vLLM server" in app.message_text
True
"""

from __future__ import annotations

import html
import threading
import time

import ipywidgets as W
import plotly.graph_objects as go

from ...figures import acceptance_panels_figure, acceptance_patches, apply_acceptance_patches
from ...foundation.i18n import t
from ...lm.serve.vllm import (
    DEFAULT_TIMEOUT_S,
    MAX_INTERVAL_S,
    SpecCounters,
    check_timeout,
    metrics_url,
    read_vllm_metrics,
    watch_vllm,
)
from ..base import App
from .jobs import JobRunner
from .render import counters_table_html

MODEL_LABEL = "vllm.model"
MODEL_HINT = "vllm.model_hint"
INTERVAL_RANGE = (0.01, 3600.0)
"""The polling interval the `every (s)` box takes, in seconds."""
READ_ERRORS = (ValueError, TypeError, OSError)
"""What a reading raises for a bad address, page or connection (ConnectionError is an OSError)."""


class VLLMLiveApp(App):
    """A vLLM server's spec-decoding counters, read once or polled, in specviz's acceptance plots.

    Handles: `url` (Text), `model` (Text: the model_name to read; empty for the page's only one),
    `interval` (seconds between readings), `read_button`, `start_button`,
    `stop_button`, `status`, `stats_html`, `figure` (one FigureWidget: `acceptance_figure`).
    State: `last_reading` (SpecCounters totals), `shown` (the SpecCounters drawn: an interval after
    the first reading), `history` (every interval). Methods: `read()`, `start(blocking=False,
    count=None)`, `stop()`, `wait(timeout)`.
    """

    def __init__(
        self,
        source: str = "http://localhost:8000",
        interval_s: float = 5.0,
        gamma: int = 4,
        timeout: float = DEFAULT_TIMEOUT_S,
        model: str | None = None,
        allow_redirects: bool = False,
    ):
        super().__init__()
        _check_arguments(source, interval_s, gamma, model, allow_redirects)
        self.timeout = check_timeout(timeout)
        self.allow_redirects = allow_redirects
        self.last_reading: SpecCounters | None = None
        self.shown: SpecCounters | None = None
        self.history: list[SpecCounters] = []
        self.lock = threading.RLock()
        lab = {"description_width": "90px"}
        self.url = W.Text(value=str(source), description=t("vllm.server"), style=lab, layout=W.Layout(width="420px"))
        self.model = W.Text(
            value=model or "",
            placeholder=t(MODEL_HINT),
            description=t(MODEL_LABEL),
            style=lab,
            layout=W.Layout(width="300px"),
        )
        self.interval = W.BoundedFloatText(
            value=float(interval_s),
            min=INTERVAL_RANGE[0],
            max=INTERVAL_RANGE[1],
            step=1.0,
            description=t("vllm.every"),
            style=lab,
            layout=W.Layout(width="190px"),
        )
        self.read_button = W.Button(description=t("vllm.read_once"), icon="download")
        self.start_button = W.Button(description=t("vllm.start"), button_style="primary", icon="play")
        self.stop_button = W.Button(description=t("live.stop"), icon="stop", disabled=True)
        self.status = W.HTML("")
        self.stats_html = W.HTML(counters_table_html(None))
        self.figure = go.FigureWidget(acceptance_panels_figure(None, int(gamma)))
        self.figure.add_class("specviz-vllm-figure")
        self.jobs = JobRunner(on_error=self.show_error, on_busy=self._busy, on_start=self.clear_message)
        self.read_button.on_click(lambda _: self.read())
        self.start_button.on_click(lambda _: self.start(blocking=False))
        self.stop_button.on_click(lambda _: self.stop())
        self.url.observe(lambda _: self._forget(), names="value")
        self.model.observe(lambda _: self._forget(), names="value")
        self.children = [
            W.HTML(f"<h3 style='margin:4px 0'>{html.escape(t('vllm.heading'))}</h3>"),
            W.HBox([self.url, self.model, self.interval]),
            W.HBox([self.read_button, self.start_button, self.stop_button]),
            self.message,
            self.status,
            self.stats_html,
            self.figure,
        ]
        self.add_class("specviz-vllm-live")

    # ------------------------------------------------------------------ state

    def _busy(self, running: bool) -> None:
        self.start_button.disabled = self.read_button.disabled = running
        self.stop_button.disabled = not running

    def _forget(self) -> None:
        """A new address: the next reading starts from scratch."""
        with self.lock:
            self.last_reading, self.shown = None, None
            self.history.clear()

    @property
    def busy(self) -> bool:
        """True while polling."""
        return self.jobs.busy

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for polling to end; True when it has."""
        return self.jobs.wait(timeout)

    def stop(self) -> None:
        """Stop polling after the reading in progress."""
        self.jobs.stop()

    # ------------------------------------------------------------------ readings

    def chosen_model(self) -> str | None:
        """The model_name typed in the `model` box (None when empty: the page's only model)."""
        return self.model.value.strip() or None

    def _read(self) -> SpecCounters:
        return read_vllm_metrics(
            self.url.value, self.timeout, model=self.chosen_model(), allow_redirects=self.allow_redirects
        )

    def show(self, counters: SpecCounters) -> None:
        """Draw one reading (totals) or interval in the table and the figure."""
        with self.lock:
            self.shown = counters
            stats = counters.stats()
            with self.figure.batch_update():
                apply_acceptance_patches(self.figure, acceptance_patches(stats, max(stats.gamma, 1)))
            self.stats_html.value = counters_table_html(counters)
            stamp = time.strftime("%H:%M:%S")
            what = t("vllm.the_last_seconds", seconds=counters.seconds) if counters.seconds else t("vllm.totals")
            self.status.value = f"<i>{html.escape(t('vllm.status', url=counters.url, stamp=stamp, what=what))}</i>"

    def _take(self, reading: SpecCounters) -> SpecCounters:
        """Record a reading; return what to draw (the interval since the previous reading, if any)."""
        with self.lock:
            prev, self.last_reading = self.last_reading, reading
            if prev is None or (prev.url, prev.model) != (reading.url, reading.model):
                return reading
            interval = reading - prev
            self.history.append(interval)
            return interval

    def read(self) -> SpecCounters | None:
        """One reading now; draws it and returns what was drawn (None, with a message, on an error)."""
        try:
            metrics_url(self.url.value)
            shown = self._take(self._read())
        except READ_ERRORS as e:
            self.show_error(str(e))
            return None
        self.clear_message()
        self.show(shown)
        return shown

    def start(self, blocking: bool = False, count: int | None = None):
        """Poll every `interval` seconds in a background thread (`count` intervals, or until Stop)."""

        def job():
            self._forget()
            shown = None
            gen = watch_vllm(
                self.url.value,
                float(self.interval.value),
                count,
                self.timeout,
                sleep=self.jobs.stop_event.wait,
                keep_going=self.jobs.keep_going,
                model=self.chosen_model(),
                allow_redirects=self.allow_redirects,
            )
            try:
                for interval in gen:
                    with self.lock:
                        self.history.append(interval)
                    self.show(interval)
                    shown = interval
            except READ_ERRORS as e:  # shown like a ValueError: the message alone
                raise ValueError(str(e)) from None
            return shown

        return self.jobs.start("polling", job, blocking)


def _check_arguments(source, interval_s, gamma, model, allow_redirects) -> None:
    """TypeError or ValueError, naming the argument and its range, for a constructor argument out of range."""
    if not isinstance(source, str):
        raise TypeError(
            f"source must be the address of a vLLM server (a str such as 'http://HOST:8000'), got {source!r}"
        )
    lo, hi = INTERVAL_RANGE
    if check_timeout(interval_s, "interval_s", MAX_INTERVAL_S) < lo or interval_s > hi:
        raise ValueError(f"interval_s must be from {lo:g} to {hi:g} seconds, got {interval_s!r}")
    if isinstance(gamma, bool) or not isinstance(gamma, int) or not 1 <= gamma <= 64:
        raise ValueError(f"gamma (the draft positions shown before the first reading) must be 1..64, got {gamma!r}")
    if model is not None and not isinstance(model, str):
        raise TypeError(f"model must be a model_name (a str) or None, got {model!r}")
    if not isinstance(allow_redirects, bool):
        raise TypeError(f"allow_redirects must be True or False, got {allow_redirects!r}")


def vllm_live_app(source: str = "http://localhost:8000", **kwargs) -> VLLMLiveApp:
    """The live view of a vLLM server (see `VLLMLiveApp`); keywords: interval_s, gamma, timeout, model, allow_redirects."""
    return VLLMLiveApp(source, **kwargs)


__all__ = ["VLLMLiveApp", "vllm_live_app"]
