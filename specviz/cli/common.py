"""What every `specviz` command shares: the one-line error, the user's paths, and small argument types.

A command raises `CliError` for anything the user can fix; `specviz.cli.command.main` prints it as one
line, ``specviz COMMAND: error: ...``, with its exit status. Paths the user typed are read with
`user_path` and shown with `shown`, so a name that is not text never makes a traceback.

>>> shown(b"caf\\xc3\\xa9 \\xff"), file_kind(0o040755)
('café \\\\xff', 'a folder')
>>> whole_number("0"), positive_int("3"), port_number("8888")
(0, 3, 8888)
>>> positive_int("0")
Traceback (most recent call last):
...
argparse.ArgumentTypeError: must be >= 1: 0
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent
"""The ``specviz`` package folder."""
DASHBOARD_NOTEBOOK = "dashboard.ipynb"

EXIT_USAGE = 2
"""Exit status for a missing notebook or folder, and for refused options (as argparse)."""


class CliError(Exception):
    """A user-facing error: printed as ``specviz COMMAND: error: ...`` (one line), exit status `status`."""

    def __init__(self, message: str, status: int = EXIT_USAGE):
        super().__init__(message)
        self.status = status


def repo_root() -> Path:
    """The repository folder: the parent of the ``specviz`` package folder."""
    return PACKAGE.parent


def packaged_notebooks() -> Path:
    """The notebooks shipped inside the package (in a checkout, specviz/notebooks links to notebooks/)."""
    return PACKAGE / "notebooks"


def find_notebooks_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """The notebooks folder: ``override`` if given, else ``<repo>/notebooks``, else the ones
    shipped in the package (an installed wheel), else ``./notebooks``."""
    if override is not None:
        path = user_path(override, "--notebooks")
        try:
            return path.resolve()
        except (OSError, RuntimeError) as err:  # a link loop, an unreadable folder on the way
            raise CliError(f"--notebooks {shown(path)}: {getattr(err, 'strerror', None) or err}") from None
    candidates = [repo_root() / "notebooks", packaged_notebooks(), Path.cwd() / "notebooks"]
    for candidate in candidates:
        if candidate.is_dir():
            return candidate.resolve()
    return candidates[0]


def shown(path: str | os.PathLike[str]) -> str:
    """`path` as printable one-line text: bytes that are not UTF-8 as \\xNN, control characters quoted."""
    try:
        text = os.fsencode(path).decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a lone surrogate that no file name can hold
        text = os.fspath(path).encode("utf-8", "backslashreplace").decode("utf-8")
    return text if text.isprintable() else repr(text)


def user_path(text: str | os.PathLike[str], what: str) -> Path:
    """The path the user typed for `what`, with ~ expanded; CliError if it cannot be a path."""
    raw = os.fspath(text)
    if raw in ("", b""):
        raise CliError(f"{what}: the path is empty")
    if "\0" in str(raw):
        raise CliError(f"{what}: a path cannot contain a NUL character: {shown(raw)}")
    try:
        os.fsencode(raw)
    except UnicodeEncodeError:
        raise CliError(f"{what}: {shown(raw)} holds a lone surrogate, which no file name can") from None
    try:
        return Path(raw).expanduser()
    except RuntimeError as err:  # ~ with no home folder
        raise CliError(f"{what} {shown(raw)}: {err}") from None


def file_kind(mode: int) -> str:
    """What a stat mode is, in words: 'a file', 'a folder', 'a symbolic link', 'a device', ..."""
    import stat

    kinds = [
        (stat.S_ISREG, "a file"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISCHR, "a device"),
        (stat.S_ISBLK, "a device"),
        (stat.S_ISFIFO, "a named pipe"),
        (stat.S_ISSOCK, "a socket"),
    ]
    return next((name for test, name in kinds if test(mode)), "not a file")


def existing_folder(path: Path, what: str) -> Path:
    """`path` if it is a folder; CliError saying what is there instead."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        hint = "pass --notebooks PATH, or run from a specviz checkout"
        raise CliError(f"{what} not found: {shown(path)} ({hint})") from None
    except OSError as err:
        raise CliError(f"{what} {shown(path)}: {err.strerror}") from None
    if file_kind(mode) != "a folder":
        raise CliError(f"{what} {shown(path)} is {file_kind(mode)}, not a folder")
    return path


def require(module: str, what: str) -> None:
    """CliError naming the extra to install when `module` is missing (the light install has no apps)."""
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise CliError(f"{what} is not installed: pip install 'specviz[apps]'")


def missing_extra(err: ImportError) -> CliError:
    """The one line for a package of an extra that is not installed (never a traceback)."""
    name = (err.name or "").split(".")[0]
    if name == "prometheus_client":  # a dependency of the plain install, missing from a partial one
        return CliError(f"{name} is not installed: pip install {name}")
    extra = "apps" if name in ("jupyterlab", "notebook", "voila", "jupytext") else "lm"
    what = f"{name} is not installed" if name else str(err).splitlines()[0]
    return CliError(f"{what}: pip install 'specviz[{extra}]'")


def no_extra_arguments(extra: Sequence[str], command: str, where: str = "extra arguments") -> None:
    """CliError when a command that takes nothing after a lone ``--`` was given something there."""
    if extra:
        raise CliError(f"`{command}` takes no {where}, got {' '.join(extra)}")


# ----------------------------------------------------------------------------- argument types (argparse `type=`)


def port_number(text: str) -> int:
    """A TCP port, 1..65535."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 < port < 65536:
        raise argparse.ArgumentTypeError(f"port out of range 1-65535: {port}")
    return port


def whole_number(text: str, lo: int = 0) -> int:
    """A whole number >= `lo` (0 by default: a seed, a top-k where 0 is off), in ASCII digits as --tree and --gamma
    take them: int() alone would read '١٢' (Arabic-Indic digits), '1_000' or '１２' too; one rule for every number."""
    digits = text.strip()
    body = digits[1:] if digits[:1] in ("+", "-") else digits
    if not (digits.isascii() and body.isdigit()):
        raise argparse.ArgumentTypeError(f"not a whole number in the digits 0-9: {text!r}")
    try:
        v = int(digits)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if v < lo:
        raise argparse.ArgumentTypeError(f"must be >= {lo}: {v}")
    return v


def positive_int(text: str) -> int:
    """A whole number >= 1 (a count of tokens)."""
    return whole_number(text, lo=1)


def positive_number(kind: type):
    """An argument type: a finite `kind` (int or float) > 0 (a time in seconds, a count)."""

    def parse(text):
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a {kind.__name__}: {text!r}") from None
        if not (v > 0 and v < float("inf")):
            raise argparse.ArgumentTypeError(f"must be a finite number > 0: {text}")
        return v

    return parse
