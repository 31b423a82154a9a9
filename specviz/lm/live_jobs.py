"""The background work of the live view: one job at a time in a thread, Stop, and the runs themselves.

`JobRunner` runs one job (load, generate, baseline, γ sweep) in a daemon thread so the
notebook stays responsive; `stop()` sets an event the jobs check after every verify step
or token; errors become a message through the `on_error` callback (a lecture must never
show a traceback). `LiveRun` is the state of the run being shown, shared with the drawing
thread. `gamma_sweep_run` is the γ sweep as a plain function with a progress callback.
γ is a whole number or "auto" (the engine picks each step's draft length), so nothing here
assumes a fixed γ: arrays follow the longest draft of the run (`LiveRun.longest`).

>>> from specviz.lm import NGramModel, Pair
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

from ..checks import brief, flag, integer, real
from ..i18n import t
from ..standardize import Sampling
from .adaptive import MAX_GAMMA
from .engine import GenerationResult, autoregressive_generate, speculative_generate
from .live_render import PieceDecoder
from .loading import format_prompt
from .stats import spec_stats

GAMMAS = tuple(range(1, 9))
"""The γ values of the live view's sweep."""

AUTO = "auto"
"""The γ setting that lets the engine choose each verify step's draft length."""

PLACEHOLDER_GAMMA = 4
"""How many draft positions the empty plots show before a γ-auto run has drafted anything."""


TEMPERATURE_MAX = 2.0
"""The highest temperature the live view offers (its slider's end)."""

TOP_P_MIN = 0.01
"""The smallest top-p the live view offers (its slider's start; 1 = off)."""

TOP_K_MAX = 10_000_000
"""The largest top-k the live view takes (0 = off)."""

MAX_NEW_TOKENS = 4096
"""The most new tokens one live run may ask for (a pair's context may allow fewer)."""

SEED_MAX = 2**63 - 1
"""The largest seed the engines take."""


def gamma_setting(value):
    """γ as the engine takes it: "auto" (any case) or a whole number in 0..MAX_GAMMA; errors name gamma and the range."""
    if isinstance(value, str) and value.strip().lower() == AUTO:
        return AUTO
    valid = f'"auto" or a whole number in 0..{MAX_GAMMA}'
    if isinstance(value, (str, bytes)):
        raise ValueError(f"gamma must be {valid}, got {value!r}")
    try:
        return integer(value, "gamma", lo=0, hi=MAX_GAMMA)
    except (TypeError, ValueError) as e:
        raise type(e)(f"{e} (gamma: {valid})") from None


def in_range(check, x, name: str, lo, hi, note: str = ""):
    """check(x, name, lo=lo, hi=hi) (`specviz.checks.real` or `integer`); its error also states the whole range."""
    try:
        return check(x, name, lo=lo, hi=hi)
    except (TypeError, ValueError) as e:
        raise type(e)(f"{e} (valid: {brief(lo)} to {brief(hi)}{note})") from None


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
    kw: dict  # sampling settings, max_new_tokens, seed, stop_at_eos (the engines' keyword arguments)
    gamma: int | str  # the setting: a whole number or "auto"
    steps: list = field(default_factory=list)
    t0: float = field(default_factory=time.perf_counter)
    result: GenerationResult | None = None
    drawn_tps: float = 0.0  # when tokens/s and the table were last redrawn

    def __post_init__(self):
        self.tokenizer = getattr(self.pair, "tokenizer", None)
        self.decoder = PieceDecoder(self.tokenizer, self.prompt_ids)

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


def prompt_ids_for(pair, text: str, chat: bool = True) -> list:
    """The prompt box's text as token ids: tokenized, or read as ids ("0 3 1") for a pair without tokenizer.

    With `chat` and a tokenizer that has a chat template (an instruct model), the text is one
    user turn inside that template (`specviz.lm.loading.format_prompt`), as the engine's
    chat="auto" encodes it; otherwise it is tokenized as typed.
    """
    tok = getattr(pair, "tokenizer", None)
    if tok is None:
        parts = text.replace(",", " ").split()
        if not parts:
            raise ValueError(t("live.prompt_empty_ids"))
        try:
            ids = [int(s) for s in parts]
        except ValueError:
            raise ValueError(t("live.prompt_not_ids", text=text[:40])) from None
    else:
        if not text:
            raise ValueError(t("live.prompt_empty"))
        if chat and getattr(tok, "chat_template", None):
            ids = format_prompt(tok, text, chat=True)
        else:
            ids = list(tok.encode(text, add_special_tokens=False))
        if not ids:
            raise ValueError(t("live.prompt_empty_tokens"))
    V = pair.target.vocab_size
    bad = [i for i in ids if not 0 <= i < V]
    if bad:
        raise ValueError(t("live.prompt_outside", token=bad[0], vocab=V))
    return ids


def sampling_settings(temperature, top_k, top_p, max_new_tokens, seed, stop_at_eos: bool = True) -> dict:
    """The engines' keyword arguments from the controls (top-k 0 and top-p 1 mean off), checked.

    `stop_at_eos`: end the run at the end token (an instruct model's end of turn).
    """
    temperature, top_k, top_p, max_new_tokens, seed = checked_settings(temperature, top_k, top_p, max_new_tokens, seed)
    s = dict(
        temperature=temperature,
        top_k=top_k or None,
        top_p=top_p if top_p < 1 else None,
        max_new_tokens=max_new_tokens,
        seed=seed,
        stop_at_eos=flag(stop_at_eos, "stop_at_eos"),
    )
    Sampling(s["temperature"], s["top_k"], s["top_p"])  # ValueError with a clear message
    return s


def checked_settings(temperature, top_k, top_p, max_new_tokens, seed) -> tuple:
    """(temperature, top_k, top_p, max_new_tokens, seed) as plain numbers in the live view's ranges (None: off)."""
    return (
        in_range(real, temperature, "temperature", 0.0, TEMPERATURE_MAX, "; 0 = greedy"),
        0 if top_k is None else in_range(integer, top_k, "top_k", 0, TOP_K_MAX, "; 0 = off"),
        1.0 if top_p is None else in_range(real, top_p, "top_p", TOP_P_MIN, 1.0, "; 1 = off"),
        in_range(integer, max_new_tokens, "max_new_tokens", 1, MAX_NEW_TOKENS),
        in_range(integer, seed, "seed", 0, SEED_MAX),
    )


def warm_up(pair, ids, warmed: set) -> None:
    """One tiny run per pair before anything is timed (first calls allocate and compile); ids in `warmed`."""
    if id(pair) in warmed:
        return
    short = ids[-8:]
    room = min(m.max_positions or 10**9 for m in (pair.target, pair.draft))
    if len(short) + 4 < room:
        speculative_generate(pair, short, 2, 1, seed=0)
        autoregressive_generate(pair, short, 2, seed=0)
    warmed.add(id(pair))


def gamma_sweep_run(pair, ids, kw, gammas=GAMMAS, keep_going=lambda *_: True, on_progress=None) -> dict:
    """Speculative decoding at each γ against one autoregressive baseline: measured speedup vs theory.

    `gammas` are whole numbers and may include "auto" (the engine picks each step's draft
    length): its run is kept apart, in data["auto"] = dict(measured, alpha, mean_gamma,
    longest, result), since it has no single γ to plot against. `on_progress(done, total,
    what, data)` is called before each run (what: "baseline" or the γ) and once at the end
    (what None); `data` holds the points so far. Returns dict(gammas, measured, bound,
    predicted, alpha, results, auto, ar, stopped).
    """
    gammas = [gamma_setting(g) for g in gammas]
    total = len(gammas) + 1
    progress = on_progress or (lambda *a: None)
    data = dict(gammas=[], measured=[], bound=[], predicted=[], alpha=[], results=[], auto=None, ar=None, stopped=False)
    progress(0, total, "baseline", data)
    ar = autoregressive_generate(pair, ids, on_token=keep_going, **kw)
    if not ar.new_ids or ar.seconds <= 0:
        raise ValueError(t("live.baseline_empty"))
    data["ar"] = ar
    t_t = ar.seconds / len(ar.new_ids)
    for k, g in enumerate(gammas, start=1):
        if not keep_going():
            break
        progress(k, total, g, data)
        r = speculative_generate(pair, ids, gamma=g, on_step=keep_going, **kw)
        st = spec_stats(r)
        if g == AUTO:
            drafted = [len(s.drafted) for s in r.steps]
            data["auto"] = dict(
                measured=st.tokens_per_second / ar.tokens_per_second,
                alpha=st.alpha,
                mean_gamma=sum(drafted) / len(drafted) if drafted else float("nan"),
                longest=max(drafted, default=0),
                result=r,
            )
            continue
        data["gammas"].append(g)
        data["measured"].append(st.tokens_per_second / ar.tokens_per_second)
        data["bound"].append(st.bound(st.draft_token_s / t_t))
        data["predicted"].append(st.predicted_speedup(t_t))
        data["alpha"].append(st.alpha)
        data["results"].append(r)
    data["stopped"] = not keep_going()
    progress(len(data["gammas"]) + (data["auto"] is not None) + 1, total, None, data)
    return data


__all__ = [
    "AUTO",
    "GAMMAS",
    "MAX_NEW_TOKENS",
    "SEED_MAX",
    "TEMPERATURE_MAX",
    "TOP_K_MAX",
    "TOP_P_MIN",
    "PLACEHOLDER_GAMMA",
    "JOB_KEYS",
    "JobRunner",
    "LiveRun",
    "checked_settings",
    "gamma_setting",
    "gamma_sweep_run",
    "in_range",
    "prompt_ids_for",
    "sampling_settings",
    "warm_up",
]
