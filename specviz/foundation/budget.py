"""A time budget for a learner's code that `exercises.check` and `audit` run (code that loops must not hang a notebook).

`run_tasks` runs it where `MODE` says; `call_within` runs one call and raises its error again. "process" (the
default on Linux): a forked child process (`child_process`), killed when its time is up, so nothing the code does
(catch every exception in a loop, ignore SIGALRM, spend minutes in one C call, replace `np.allclose`) outlasts
the limit or reaches the grade, computed here from the plain numbers the child sends back. "inline" (the default
elsewhere: forking is unsafe on macOS, missing on Windows): this process, under `run_with_budget`, with what the
code changed in `WATCHED` put back. That uses

* in the main thread with `signal.setitimer` and no real-time timer armed (a notebook's kernel), an
  ITIMER_REAL alarm that raises `OverBudget` (a BaseException, which `except Exception:` does not catch),
  again every `REFIRE_S` seconds in case it is caught; the previous SIGALRM handler is restored; or
* anywhere else (another thread, Windows, a timer already armed, e.g. pytest-timeout's), a daemon worker
  thread, waited for `join(budget)`: on timeout the caller gets `OverBudget` at once and the worker is asked
  (PyThreadState_SetAsyncExc) to stop at its next bytecode; a thread cannot be killed.

>>> run_with_budget(lambda: 6 * 7, 1.0)
42
>>> import time
>>> run_with_budget(lambda: time.sleep(5), 0.05)
Traceback (most recent call last):
...
specviz.foundation.budget.OverBudget: took longer than 0.05 s
"""

from __future__ import annotations

import builtins
import contextlib
import ctypes
import multiprocessing
import operator
import os
import signal
import sys
import threading
import traceback
import types
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

from .child_process import attempt, in_child

T = TypeVar("T")

REFIRE_S = 0.05
"""After the budget is spent, the alarm fires again this often until the learner's code has stopped."""


class OverBudget(BaseException):  # noqa: N818 - reads as the condition it reports
    """The learner's code ran past its time budget (a BaseException, so `except Exception:` cannot swallow it)."""

    def __init__(self, budget_s: float | None = None):
        super().__init__("took longer than its time budget" if budget_s is None else f"took longer than {budget_s:g} s")
        self.budget_s = budget_s


def run_with_budget(fn: Callable[[], T], budget_s: float) -> T:
    """`fn()` within `budget_s` seconds: its result or its own exception, or `OverBudget` when time runs out."""
    if _alarm_usable():
        return _with_alarm(fn, budget_s)
    return _with_thread(fn, budget_s)


def _alarm_usable() -> bool:
    """Whether a SIGALRM timer may be used here: main thread, setitimer exists, and no real-time timer is armed."""
    main = threading.current_thread() is threading.main_thread()
    return hasattr(signal, "setitimer") and main and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def _with_alarm(fn: Callable[[], T], budget_s: float) -> T:
    """`fn()` under an ITIMER_REAL alarm that raises `OverBudget` in it; the previous handler is restored."""
    inside = [True]  # the handler raises only while fn runs, never in the clean-up below

    def on_alarm(signum, frame):
        if inside[0]:
            raise OverBudget(budget_s)

    previous = signal.signal(signal.SIGALRM, on_alarm)
    try:
        signal.setitimer(signal.ITIMER_REAL, budget_s, REFIRE_S)
        return fn()
    finally:
        inside[0] = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous if previous is not None else signal.SIG_DFL)


def _with_thread(fn: Callable[[], T], budget_s: float) -> T:
    """`fn()` in a daemon worker thread that the caller waits for at most `budget_s` seconds."""
    box: dict = {}

    def work():
        try:
            box["result"] = fn()
        except BaseException as e:  # noqa: BLE001 - handed back to the caller as it is
            box["error"] = e

    worker = threading.Thread(target=work, name="specviz-exercise-check", daemon=True)
    worker.start()
    worker.join(budget_s)
    if worker.is_alive():
        _ask_to_stop(worker)
        raise OverBudget(budget_s)
    if "error" in box:
        raise box["error"]
    return box["result"]


def _ask_to_stop(worker: threading.Thread) -> None:
    """Best effort: raise `OverBudget` in `worker` at its next bytecode (CPython only; ignored elsewhere)."""
    try:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(worker.ident), ctypes.py_object(OverBudget))
    except (AttributeError, TypeError, ValueError):
        pass


MODES = ("auto", "process", "inline")
MODE = "auto"
"""Where `check` runs the learner's code, read at check time: "process", "inline" or "auto" (see above)."""

WATCHED = ("math", "operator", "numbers", "fractions", "decimal", "signal", "numpy", "scipy", "specviz")
"""Inline, what these modules and their submodules (and builtins, specviz's classes) hold is put back afterwards."""


def mode_in_use(mode: str | None = None) -> str:
    """`mode` (None: `MODE`) as "process" or "inline", "auto" resolved; a ValueError naming the accepted values."""
    mode = MODE if mode is None else mode
    if not isinstance(mode, str) or mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(map(repr, MODES))}, got {mode!r:.80}")
    if mode == "auto":
        return "process" if sys.platform.startswith("linux") else "inline"
    if mode == "process" and "fork" not in multiprocessing.get_all_start_methods():
        raise ValueError("mode='process' needs the fork start method, which this platform lacks: use mode='inline'")
    return mode


def run_tasks(tasks: Sequence[Callable], budget_s: float, mode: str | None, describe: Callable) -> Iterator[tuple]:
    """(kind, value, how) of each task in turn, each within `budget_s`, where `mode` says: kind "ok" (value: what it
    returned: None, bools, numbers, text, tuples and numeric arrays only), "raised" (`describe(error)`), "timeout",
    "died" (the child's exit code) or "changed" (the names it replaced); how "process", "alarm" or "thread"."""
    run = in_child if mode_in_use(mode) == "process" else _inline
    return run(list(tasks), budget_s, describe)


WHERE = {
    "process": "in a child process, ended at the limit",
    "alarm": "in this process, under an alarm (code that catches BaseException or ignores SIGALRM outlasts it: "
    "mode='process' ends it for sure)",
    "thread": "in a worker thread of this process, where it may still be running (a thread cannot be ended)",
}
"""`call_within`'s words for where the code ran, by the `how` of a `run_tasks` outcome."""


def call_within(fn: Callable[[], T], budget_s: float, mode: str | None = None, what: str = "the code", lift="") -> T:
    """`fn()` within `budget_s` seconds where `mode` says (None: `MODE`): its value, or its error raised here (in a
    child process: a built-in exception as its own type, any other as a RuntimeError naming it); a TimeoutError, or
    a RuntimeError for a child that died or code that replaced what specviz uses, saying where `what` ran (and, on a
    timeout, `lift`: how to give it more time)."""
    inline = mode_in_use(mode) == "inline"
    with contextlib.closing(run_tasks([fn], budget_s, mode, (lambda e: e) if inline else error_parts)) as runs:
        kind, value, how = next(runs)
    where = WHERE.get(how, "in this process")
    if kind == "ok":
        return value
    if kind == "timeout":
        raise TimeoutError(f"{what} took longer than {budget_s:g} s; it ran {where}" + (f" ({lift})" if lift else ""))
    if kind == "died":
        why = f"exit code {value}: does it call os._exit, or run out of memory?"
        raise RuntimeError(f"{what} ended the child process it ran in without an answer ({why})")
    if kind == "changed":
        names = ", ".join(value)[:300]
        raise RuntimeError(f"{what} replaced {names}, which specviz uses: put back; its result is not used")
    if inline:
        raise value
    raise rebuilt(*value, what=what) from None


def error_parts(e: BaseException) -> tuple[str, str, str]:
    """(type name, message, where it was raised: 'file:line' outside specviz, else '') of an error, as plain text."""
    try:
        said = str(e)[:2000]
    except Exception:  # noqa: BLE001 - a learner's exception may fail to print itself
        said = ""
    frames = traceback.extract_tb(e.__traceback__)
    last = frames[-1] if frames else None
    inside = last is None or f"{os.sep}specviz{os.sep}" in last.filename
    return type(e).__name__, said, "" if inside else f"{os.path.basename(last.filename)}:{last.lineno}"


def rebuilt(name: str, message: str, where: str, what: str = "the code") -> Exception:
    """The error `error_parts` described, as its built-in type when it is one (else a RuntimeError that names it)."""
    at = f" ({what} raised it at {where}, in a child process)" if where else ""
    kind = getattr(builtins, name, None)
    if (
        isinstance(kind, type)
        and issubclass(kind, Exception)
        and not issubclass(kind, OSError | UnicodeError | KeyError | StopIteration | StopAsyncIteration)
    ):
        with contextlib.suppress(Exception):
            return kind(message + at)
    return RuntimeError(f"{what} raised {name}: {message}{at}")


def _inline(tasks: list, budget_s: float, describe: Callable) -> Iterator[tuple]:
    """`run_tasks` in this process; it stops after a task that timed out or changed what the check uses."""
    before, undo = snapshot(), restore  # `restore` as it was before the code ran (it may replace budget.restore)
    for task in tasks:
        how = "alarm" if _alarm_usable() else "thread"
        try:
            kind, value = run_with_budget(lambda task=task: attempt(task, describe), budget_s)
        except OverBudget:
            kind, value = "timeout", None
        changed = undo(before)
        yield ("changed", changed, how) if changed else (kind, value, how)
        if changed or kind == "timeout":
            return


def snapshot() -> list[tuple[str, object, dict]]:
    """(name, owner, a copy of what it holds) of each loaded module under `WATCHED` and each class of specviz."""
    found = [("builtins", builtins, dict(vars(builtins)))]  # first: `restore` puts it back before it calls any
    for name, module in list(sys.modules.items()):
        if name.partition(".")[0] in WATCHED and isinstance(module, types.ModuleType):
            found.append((name, module, dict(vars(module))))
            for key, c in list(vars(module).items()) if name.startswith("specviz") else ():
                if isinstance(c, type) and c.__dict__.get("__module__") == name:
                    found.append((f"{name}.{key}", c, dict(vars(c))))
    return found


def restore(saved: list[tuple[str, object, dict]]) -> list[str]:
    """Put back what changed since `snapshot` (np.allclose replaced, say); the names of what was replaced or deleted.

    A new entry is removed unless it is a module (an import), and not reported; nor is a cache that was None."""
    now, old = builtins.__dict__, saved[0][2]  # by dict methods alone: `all` or `setattr` may be replaced
    changed = [f"builtins.{k}" for k, v in old.items() if now.get(k, _MISSING) is not v]
    now.update(old)
    for name, owner, old in saved[1:]:
        now = vars(owner)
        same_keys = len(now) == len(old) and all(map(operator.is_, old, now))
        if same_keys and all(map(operator.is_, old.values(), now.values())):
            continue  # the common case, at C speed: nothing changed
        for key, value in old.items():
            if now.get(key, _MISSING) is not value:
                setattr(owner, key, value)
                if value is not None and not isinstance(value, types.ModuleType) and key != "__warningregistry__":
                    changed.append(f"{name}.{key}")
        for key in [k for k in now if k not in old and not isinstance(now[k], types.ModuleType)]:
            delattr(owner, key)
    return changed


_MISSING = object()
