"""Ctrl+C while the `specviz` command is still importing: one line and status 130, never a traceback.

The package imports this module first, so it runs before numpy and the rest load (~0.2 s). In the `specviz`
command (its console script, or ``python -m specviz``) it sets a SIGINT handler that says one line and ends
the process with status 130; `cli.command.main` puts Python's own handler back (`release`) once it can end a
Ctrl+C itself. Anywhere else (a notebook, a script that imports specviz) it changes nothing.

>>> is_the_command(["python", "-m", "specviz", "models", "list"], "-m")
True
>>> is_the_command(["/venv/bin/python", "/venv/bin/specviz", "run"], "/venv/bin/specviz")
True
>>> is_the_command(["python", "-m", "ipykernel_launcher", "-f", "k.json"], "-m")
False
"""

from __future__ import annotations

import os
import signal
import sys
import threading

SCRIPT_NAMES = ("specviz", "specviz.exe", "specviz-script.py")
"""What the `specviz` console script is called, by the installers that write it."""
INTERRUPTED = b"specviz: interrupted (Ctrl+C)\n"


def is_the_command(orig_argv: list[str], argv0: str) -> bool:
    """Whether a process started as `orig_argv`, whose sys.argv[0] is `argv0`, is the `specviz` command."""
    as_module = any(a == "-mspecviz" or (a, b) == ("-m", "specviz") for a, b in zip(orig_argv, orig_argv[1:]))
    return as_module or os.path.basename(argv0) in SCRIPT_NAMES


def interrupted(signum, frame) -> None:
    """The SIGINT handler while the command starts: one line on stderr, then exit status 130 at once."""
    try:
        os.write(2, INTERRUPTED)
    finally:
        os._exit(130)


def guard() -> bool:
    """In the `specviz` command, end a Ctrl+C by `interrupted` until `release`; whether it did (Python's handler
    must be the one in place: an ignored SIGINT, nohup's, stays ignored)."""
    argv0 = sys.argv[0] if sys.argv else ""
    if not is_the_command(list(getattr(sys, "orig_argv", [])), argv0):
        return False
    if threading.current_thread() is not threading.main_thread():
        return False
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return False
    signal.signal(signal.SIGINT, interrupted)
    return True


def release() -> None:
    """Put Python's SIGINT handler back where `guard` set `interrupted` (the command then ends a Ctrl+C itself)."""
    if signal.getsignal(signal.SIGINT) is interrupted:
        signal.signal(signal.SIGINT, signal.default_int_handler)


guard()
