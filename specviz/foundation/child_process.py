"""Learner code in a forked child process, killed when its time is up, sending back plain data only.

What the child sends is read without running any code (`decode`): numbers, text, tuples and numeric arrays.

>>> decode(encode(("ok", (1, 2.5, "x"))))
('ok', (1, 2.5, 'x'))
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import multiprocessing
import os
import pickle
import signal
import sys
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

STARTUP_S = 10.0  # a child process may take this long to start (fork a large kernel) before the first call is timed
MAX_REPLY_BYTES = 64 * 2**20  # the most a child process may send back for one call (results are cut to size first)


def attempt(task: Callable, describe: Callable) -> tuple[str, Any]:
    """("ok", task()) or ("raised", the text of its error), that text made within the budget (a __str__ may loop)."""
    try:
        return "ok", task()
    except (Exception, SystemExit) as e:  # noqa: BLE001 - the learner's code may raise anything
        return "raised", describe(e)


def in_child(tasks: list, budget_s: float, describe: Callable) -> Iterator[tuple]:
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
            try:
                reply = attempt(task, describe)
            except KeyboardInterrupt as e:  # the code raised it (a Ctrl+C ends the parent too): named, not "died"
                reply = ("raised", describe(e))
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
