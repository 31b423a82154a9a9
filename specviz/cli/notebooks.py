"""`specviz notebooks [DIR] [--force]`: copy the shipped tutorial notebooks into a folder of yours.

Files already there are kept (``--force`` replaces them); a link, a folder or a device where a
notebook would go is refused even with ``--force``. The writing itself is `specviz.cli.files`'.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

from .common import CliError, file_kind, no_extra_arguments, packaged_notebooks, shown, user_path
from .files import copy_plan, in_the_way, lock_folder, replace_file, write_new_file

NOTEBOOK_SUFFIXES = (".ipynb", ".md", ".toml")


def add_parser(sub) -> None:
    """The `specviz notebooks` sub-command on an argparse sub-parsers object."""
    nbs = sub.add_parser(
        "notebooks",
        help="copy the tutorial notebooks into a folder (default ./specviz-notebooks)",
        description="Copy the notebooks shipped with specviz into DIR; existing files are kept (--force replaces "
        "them). A link, a folder or a device where a notebook would go is refused, even with --force.",
    )
    nbs.add_argument("dir", nargs="?", default="specviz-notebooks", metavar="DIR")
    nbs.add_argument("--force", action="store_true", help="replace your files of the same names")
    nbs.set_defaults(func=cmd_notebooks)


def cmd_notebooks(args: argparse.Namespace, extra: Sequence[str]) -> int:
    """Copy the notebooks shipped with specviz into a folder of yours (a file of yours is replaced only with --force)."""
    no_extra_arguments(extra, "specviz notebooks")
    src = packaged_notebooks()
    if not src.is_dir():
        raise CliError(f"no notebooks shipped with this installation (looked in {shown(src)})", status=1)
    files = [f for f in sorted(src.iterdir()) if f.suffix in NOTEBOOK_SUFFIXES and f.is_file()]
    dest = notebooks_destination(args.dir)
    lock = lock_folder(dest)  # one copy into a folder at a time: what a killed one left can then be cleared
    try:
        new, mine, unfinished = copy_plan(files, dest, clear=lock is not None)
        for f in new:
            write_new_file(dest / f.name, f.read_bytes())
        for f in [*unfinished, *(mine if args.force else [])]:
            replace_file(dest / f.name, f.read_bytes())
    finally:
        if lock is not None:
            os.close(lock)
    done = f"copied {len(new)} files to {shown(dest.resolve())}"
    done += f"; finished {len(unfinished)} files an interrupted copy left half-written" if unfinished else ""
    if mine:
        done += f"; {'replaced' if args.force else 'kept'} your {len(mine)} existing files"
        done += "" if args.force else " (--force replaces them)"
    print(done)
    import shlex

    where = shlex.quote(str(dest)) if shown(dest) == str(dest) else "THAT_FOLDER"
    print(f"open them with: specviz lab --notebooks {where}")
    return 0


def notebooks_destination(text: str) -> Path:
    """The folder `specviz notebooks` copies into, created if missing; CliError saying what is in the way."""
    dest = user_path(text, "specviz notebooks DIR")
    try:
        mode = dest.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):  # missing, or a file on the way (said below)
        mode = None
    except OSError as err:
        raise CliError(f"cannot use {shown(dest)}: {err.strerror}", status=1) from None
    if mode is not None:
        if file_kind(mode) != "a folder":
            raise CliError(f"{shown(dest)} is {file_kind(mode)}, not a folder: give a folder to copy into")
        return dest
    if dest.is_symlink():
        raise CliError(
            f"{shown(dest)} is a symbolic link to {shown(os.readlink(dest))}, which does not exist: "
            "specviz does not create folders through links"
        )
    try:
        dest.mkdir(parents=True)
    except OSError as err:
        why = in_the_way(dest) or err.strerror
        raise CliError(f"cannot create the folder {shown(dest)}: {why}", status=1) from None
    return dest
