"""A time budget for the learner's code that `check` runs (a function that sleeps or loops must not hang the notebook).

`run_tasks` runs it where `MODE` says. "process" (the default on Linux): a forked child process, killed when
its time is up, so nothing the code does (catch every exception in a loop, ignore SIGALRM, spend minutes in
one C call, replace `np.allclose`) outlasts the limit or reaches the grade, computed here from the plain
numbers the child sends back. "inline" (the default elsewhere: forking is unsafe on macOS, missing on
Windows): this process, under `run_with_budget`, with what the code changed in `WATCHED` put back. That uses

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
specviz.exercises.budget.OverBudget: took longer than 0.05 s
"""

from __future__ import annotations

import builtins
import contextlib
import ctypes
import io
import multiprocessing
import operator
import os
import pickle
import signal
import sys
import threading
import types
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

import numpy as np

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

STARTUP_S = 10.0  # a child process may take this long to start (fork a large kernel) before the first call is timed
MAX_REPLY_BYTES = 64 * 2**20  # the most a child process may send back for one call (results are cut to size first)
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
    run = _in_child if mode_in_use(mode) == "process" else _inline
    return run(list(tasks), budget_s, describe)


def attempt(task: Callable, describe: Callable) -> tuple[str, Any]:
    """("ok", task()) or ("raised", the text of its error), that text made within the budget (a __str__ may loop)."""
    try:
        return "ok", task()
    except (Exception, SystemExit) as e:  # noqa: BLE001 - the learner's code may raise anything
        return "raised", describe(e)


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


def _in_child(tasks: list, budget_s: float, describe: Callable) -> Iterator[tuple]:
    """`run_tasks` in a forked child process, killed when a task runs past `budget_s` (or the caller stops early)."""
    context = multiprocessing.get_context("fork")
    reader, writer = context.Pipe(duplex=False)
    args = (tasks, writer, describe, os.getpid())
    child = context.Process(target=_child, args=args, name="specviz-check", daemon=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # Python 3.12+: fork() of a process that has threads
        child.start()
    writer.close()
    try:
        for i, waited in enumerate([STARTUP_S] + [budget_s] * len(tasks)):  # "ready" first, then one reply a task
            if not reader.poll(waited):
                yield "timeout", None, "process"
                return
            try:
                reply = decode(reader.recv_bytes(MAX_REPLY_BYTES))
                if (reply == ("ready",)) != (i == 0):
                    raise ValueError("a reply out of turn")
            except Exception:  # noqa: BLE001 - it died, or sent garbage: what it sends is never trusted
                child.kill()
                child.join(5)
                yield "died", child.exitcode, "process"
                return
            if i:
                yield (*reply, "process")
    finally:
        reader.close()
        child.kill()
        child.join(5)


def _child(tasks: list, writer, describe: Callable, parent: int) -> None:
    """A child process's work: send "ready", then each task's `attempt`, then exit at once (no clean-up runs)."""
    try:
        if sys.platform.startswith("linux"):  # killed with the kernel, even by kill -9 (PR_SET_PDEATHSIG is 1)
            ctypes.CDLL(None).prctl(1, signal.SIGKILL)
        if os.getppid() != parent:  # the kernel died before that
            os._exit(0)
        if "torch" in sys.modules:  # torch's OpenMP pool does not survive fork: one thread, or a parallel op hangs
            sys.modules["torch"].set_num_threads(1)
        writer.send_bytes(encode(("ready",)))
        for task in tasks:
            reply = attempt(task, describe)
            for stream in (sys.stdout, sys.stderr):  # what the code printed, before the parent may kill this
                with contextlib.suppress(Exception):
                    stream.flush()
            try:
                writer.send_bytes(encode(reply))
            except TypeError as e:
                writer.send_bytes(encode(("raised", describe(e))))
    except BaseException:  # noqa: BLE001, S110 - the parent reports a child that ends without a reply
        pass
    os._exit(0)


def encode(value, top: bool = True):
    """Plain data (None, bools, numbers, text, bytes, tuples, numeric arrays) as bytes, each array as [dtype, shape,
    bytes] (no other list is sent); a TypeError for anything else."""
    if type(value) is tuple:
        value = tuple(encode(v, False) for v in value)
    elif type(value) is np.ndarray and value.dtype.kind in "biuf":
        value = [value.dtype.str, list(value.shape), value.tobytes()]
    elif value is not None and type(value) not in (bool, int, float, str, bytes):
        raise TypeError(
            f"a {type(value).__name__} cannot be sent back from a child process (numbers, text and arrays can)"
        )
    return pickle.dumps(value, protocol=4) if top else value


class _PlainUnpickler(pickle.Unpickler):
    """Builds None, bools, numbers, text, bytes, tuples and lists only: no class, so no code runs."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"{module}.{name} is not plain data")


def decode(data, top: bool = True):
    """A reply tuple that `encode` made, read back without running any code; a ValueError for anything else."""
    v = _PlainUnpickler(io.BytesIO(data)).load() if top else data
    if type(v) is tuple:
        v = tuple(decode(x, False) for x in v)
    elif type(v) is list:
        spec, shape, raw = v
        dtype, shape = np.dtype(spec), tuple(int(s) for s in shape)
        if dtype.kind not in "biuf" or type(raw) is not bytes:
            raise ValueError(f"not a numeric array: {dtype}")
        v = np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
    kind = v[0] if top and type(v) is tuple and v and type(v[0]) is str else None
    if top and (kind not in ("ok", "raised", "ready") or len(v) != (1 if kind == "ready" else 2)):
        raise ValueError("not a reply")
    return v


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
