"""The `specviz` command itself: its parser, `main`, and how a run ends (one line, never a traceback).

Each sub-command's module adds its own sub-parser (``add_parser``) and its ``cmd_*``; `build_parser`
calls them. `main` returns the exit status: a `CliError` is one line (``specviz COMMAND: error:
...``), Ctrl+C is 130, a closed pipe on standard output a quiet 141, a full disk one line and 1.

>>> command_prog(build_parser().parse_args(["models", "list"]))
'specviz models list'
"""

from __future__ import annotations

import argparse
import errno
import os
import sys
from collections.abc import Sequence

import specviz  # its __version__ (a dunder, so not imported by name)

from .. import startup
from . import models, notebooks, run, servers, vllm_stats
from .common import EXIT_USAGE, CliError

OUTPUT_COMMANDS = ("run", "models", "vllm-stats")
"""The commands whose printed text is their result: refused when standard output is closed."""


def build_parser() -> argparse.ArgumentParser:
    """The `specviz` parser with every sub-command."""
    parser = argparse.ArgumentParser(
        prog="specviz",
        description="specviz: see, and prove by running, why speculative decoding is lossless.",
        epilog="Arguments after a lone `--` are passed on to jupyter lab / voila.",
    )
    parser.add_argument("--version", action="version", version=f"specviz {specviz.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    servers.add_parsers(sub)  # lab, dashboard
    models.add_parser(sub)
    notebooks.add_parser(sub)
    run.add_parser(sub)
    vllm_stats.add_parser(sub)
    return parser


def one_line_errors(parser: argparse.ArgumentParser) -> None:
    """`parser` and its sub-commands report a bad argument in one line (no usage block), exit status 2."""
    parser.error = lambda message: parser.exit(EXIT_USAGE, f"{parser.prog}: error: {message}\n")  # type: ignore[method-assign]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                one_line_errors(sub)


def command_prog(args: argparse.Namespace) -> str:
    """The name errors are reported under: 'specviz', 'specviz lab', 'specviz models fetch', ..."""
    words = ["specviz", getattr(args, "command", None), getattr(args, "models_command", None)]
    return " ".join(w for w in words if w)


def main(argv: Sequence[str] | None = None) -> int:
    """`specviz ARGV`'s exit status: quiet 141 on a closed pipe, one line on a full disk (1) or Ctrl+C (130)."""
    prog, stdout = ["specviz"], sys.stdout
    sys.stdout = Output(stdout) if stdout is not None else None
    try:
        try:
            startup.release()  # from here a Ctrl+C is a KeyboardInterrupt, ended below (before: `startup.interrupted`)
            return run_command(list(sys.argv[1:] if argv is None else argv), prog)
        finally:
            out, sys.stdout = sys.stdout, stdout
            if isinstance(out, Output):
                out.flush()  # a closed pipe or a full disk shows here, not as a traceback at exit
                if out.failed:  # a write whose error was swallowed (argparse's help does)
                    raise out.failed
    except KeyboardInterrupt:
        return stop(prog[0], "interrupted (Ctrl+C)", 130)
    except OSError as err:
        if not getattr(err, "on_stdout", False):
            raise
        if stdout is sys.__stdout__:  # the flush at exit then writes what is left to /dev/null, not a traceback
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, stdout.fileno())
            os.close(null)
        return 141 if err.errno == errno.EPIPE else stop(prog[0], f"error: cannot write the output: {err.strerror}", 1)


class Output:
    """sys.stdout while a command runs: the same stream, whose write errors say they are the output's."""

    def __init__(self, stream):
        self.stream, self.failed = stream, None

    def __getattr__(self, name):
        return getattr(self.stream, name)

    def write(self, text):
        return self.marked(self.stream.write, text)

    def flush(self):
        return self.marked(self.stream.flush)

    def marked(self, call, *args):
        try:
            return call(*args)
        except OSError as err:
            err.on_stdout, self.failed = True, err  # type: ignore[attr-defined]
            raise


def stop(prog: str, message: str, status: int) -> int:
    """Say `message` on stderr as `prog` (if stderr can still be written) and return `status`."""
    try:
        print(f"{prog}: {message}", file=sys.stderr, flush=True)
    except (OSError, ValueError, AttributeError):
        pass
    return status


def run_command(argv: list[str], prog: list[str]) -> int:
    """Parse `argv` and run its command (prog[0] becomes the name errors are reported under)."""
    extra: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1 :]
    parser = build_parser()
    one_line_errors(parser)
    args, unknown = parser.parse_known_args(argv)
    prog[0] = command_prog(args)
    if unknown:  # named by the sub-command they were given to
        hint = " (arguments for the server go after a lone --)" if args.command in ("lab", "dashboard") else ""
        parser.exit(EXIT_USAGE, f"{prog[0]}: error: unrecognized arguments: {' '.join(unknown)}{hint}\n")
    if getattr(args, "func", None) is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        if sys.stdout is None and args.command in OUTPUT_COMMANDS:  # print() would drop the result without a word
            raise CliError("standard output is closed, so the result would be lost: redirect it instead", status=1)
        return args.func(args, extra)
    except CliError as err:
        message = " ".join(line.strip() for line in str(err).splitlines())
        parser.exit(err.status, f"{prog[0]}: error: {message}\n")
    return 0  # unreachable; keeps type checkers quiet
