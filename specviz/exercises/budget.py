"""A time budget for the learner's code that `check` runs (a function that sleeps or loops must not hang the notebook).

Two mechanisms, chosen per call:

* In the main thread on a system with `signal.setitimer` (Linux, macOS) and no real-time timer
  already armed, an ITIMER_REAL alarm raises `OverBudget` inside the learner's code when the
  budget is spent. The alarm then fires again every `REFIRE_S` seconds, so code that catches the
  exception (a bare `except:` in a loop) is interrupted again; `OverBudget` derives from
  BaseException, so `except Exception:` does not catch it at all. The previous SIGALRM handler is
  restored afterwards. This is the notebook case: a kernel runs cells in its main thread.
* Anywhere else (another thread, Windows, or a timer someone else armed, e.g. pytest-timeout), the
  code runs in a daemon worker thread and the caller waits `join(budget)`. A thread cannot be
  killed: on timeout the caller gets `OverBudget` at once, and the worker is asked (best effort,
  CPython's PyThreadState_SetAsyncExc) to stop at its next bytecode; a worker blocked in C code
  (e.g. `time.sleep`) finishes that call in the background first.

>>> run_with_budget(lambda: 6 * 7, 1.0)
42
>>> import time
>>> run_with_budget(lambda: time.sleep(5), 0.05)
Traceback (most recent call last):
...
specviz.exercises.budget.OverBudget: took longer than 0.05 s
"""

from __future__ import annotations

import ctypes
import signal
import threading
from collections.abc import Callable
from typing import TypeVar

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
    return (
        hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
        and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    )


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
