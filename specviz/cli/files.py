"""Safe file writing for `specviz notebooks`: no half-written file, nothing of yours overwritten unasked.

A file is written under a temporary name beside it (``.NAME.xxxxxxxx.specviz``), flushed to disk,
then linked into place, so nobody ever sees half of it and nothing that appeared meanwhile is
overwritten. `copy_plan` sorts what is already in the folder (new, yours, half-written by a copy
that was killed); `lock_folder` lets one copy at a time into a folder.

>>> import tempfile
>>> with tempfile.TemporaryDirectory() as folder:
...     write_new_file(Path(folder) / "a.txt", b"hello")
...     sorted(p.name for p in Path(folder).iterdir())
['a.txt']
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from .common import CliError, file_kind, shown


def in_the_way(path: Path) -> str | None:
    """What stops a folder being made at `path`: the first thing on the way that is not a folder (None: nothing)."""
    for parent in [path, *path.parents]:
        try:
            mode = parent.lstat().st_mode
        except OSError:
            continue
        kind = file_kind(mode)
        if kind == "a symbolic link" and parent.is_dir():
            return None
        return None if kind == "a folder" else f"{shown(parent)} is {kind}"
    return None


def copy_plan(files: Sequence[Path], dest: Path, clear: bool = False) -> tuple[list[Path], list[Path], list[Path]]:
    """(new, yours, half-written by an older specviz) files in `dest`; `clear` first deletes a killed copy's temp files."""
    import stat

    names = "|".join(re.escape(f.name) for f in files)
    try:
        for e in list(os.scandir(dest)) if clear else []:
            if re.fullmatch(rf"\.({names})\.[a-z0-9_]{{8}}\.specviz", e.name) and e.is_file(follow_symlinks=False):
                os.unlink(e.path)
    except OSError:
        pass  # not ours to clear after all: writing says what is wrong
    new, mine, unfinished, blocked = [], [], [], []
    for f in files:
        target = dest / f.name
        try:
            st = target.lstat()
        except FileNotFoundError:
            new.append(f)
            continue
        except OSError as err:
            raise CliError(f"cannot look at {shown(target)}: {err.strerror}", status=1) from None
        if stat.S_ISREG(st.st_mode):  # a strict beginning of the shipped file holds nothing of yours
            try:
                half = st.st_size < len(ours := f.read_bytes()) and target.read_bytes() == ours[: st.st_size]
            except OSError:
                half = False
            (unfinished if half else mine).append(f)
        elif stat.S_ISLNK(st.st_mode):
            blocked.append(f"{shown(target)} is a symbolic link (to {shown(os.readlink(target))})")
        else:
            blocked.append(f"{shown(target)} is {file_kind(st.st_mode)}")
    if blocked:
        more = f" (and {len(blocked) - 1} more)" if len(blocked) > 1 else ""
        raise CliError(
            f"{blocked[0]}{more}: specviz does not write through links or over anything but a file, even with "
            "--force; move it away or copy into another folder. Nothing was copied."
        )
    return new, mine, unfinished


def lock_folder(dest: Path) -> int | None:
    """An fd holding `dest`'s lock (None where it cannot be locked); CliError if another copy into it runs now."""
    try:
        import fcntl

        fd = os.open(dest, os.O_RDONLY)
    except (ImportError, OSError):  # Windows, or a folder you may write but not read
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return fd
    except OSError as err:
        os.close(fd)
        if isinstance(err, BlockingIOError):
            raise CliError(f"another `specviz notebooks` is copying into {shown(dest)}: run it again later") from None
        return None  # a file system without locks


def write_new_file(target: Path, data: bytes, replace: bool = False) -> None:
    """Write `target` (over a file with `replace`) via a temporary name, so no one ever sees half of it."""
    import secrets

    what, tmp = "replace" if replace else "write", target.with_name(f".{target.name}.{secrets.token_hex(4)}.specviz")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        mode = target.lstat().st_mode & 0o7777 if replace else None
        fd = os.open(tmp, flags, 0o644)
    except OSError as err:
        raise CliError(f"cannot {what} {shown(target)}: {err.strerror}", status=1) from None
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        if replace:
            os.chmod(tmp, mode)
            os.replace(tmp, target)  # a link there is replaced, not followed
        else:  # a hard link fails if anything is there now: nothing is overwritten
            try:
                os.link(tmp, target)
            except OSError as err:  # no hard links here (vfat, some network shares): look, then rename
                if isinstance(err, FileExistsError) or os.path.lexists(target):
                    raise FileExistsError from None
                os.rename(tmp, target)
    except FileExistsError:
        raise CliError(f"{shown(target)} appeared while copying; run again to see what it is", status=1) from None
    except OSError as err:
        raise CliError(f"cannot {what} {shown(target)}: {err.strerror}", status=1) from None
    finally:
        Path(tmp).unlink(missing_ok=True)  # after a link or a failure; gone after a rename


def replace_file(target: Path, data: bytes) -> None:
    """Replace the file `target` with `data`, whole (a new file renamed over it: a link there is replaced)."""
    write_new_file(target, data, replace=True)
