"""Files written for a user, tried as a hostile user would (issue 35): never lose one, never leave half of one.

Two writers put files where a user keeps their own: `specviz notebooks DIR` (a copy of the notebooks)
and `tools/book.py --out DIR` (the book). Each case ends in one of OK (it did what was asked, and every
file is whole), GOOD_ERROR (a one-line error naming the problem, and nothing of the user's touched),
LOST (a user's file deleted or changed), HALF (a half-written file where a reader sees it, or taken for
the user's own on the next run) or OBSCURE (a traceback, or an error that names nothing). The kill -9
cases run the writer in a child process held in the middle of a write (its write is replaced by one
that writes half the bytes and waits), kill it, and look at what is on disk.
"""

from __future__ import annotations

import fcntl
import importlib.util
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from test_cli import call  # specviz ARGV in this process: (exit status, stdout, stderr)

from specviz.cli import common, files, notebooks

REPO = Path(__file__).resolve().parent.parent
SHIPPED = {
    f.name: f.read_bytes() for f in common.packaged_notebooks().iterdir() if f.suffix in notebooks.NOTEBOOK_SUFFIXES
}


def _load_book():
    spec = importlib.util.spec_from_file_location("_specviz_book_out", REPO / "tools" / "book.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


book = _load_book()


def one_line_error(code: int, err: str, prog: str) -> bool:
    """A refusal as the command line gives it: status != 0, one line `PROG: error: ...`, no traceback."""
    return code != 0 and "Traceback" not in err and err.count("\n") == 1 and err.startswith(f"{prog}: error: ")


def held_child(script: str, ready: Path, *args: str) -> subprocess.Popen:
    """Start `script` (python) in a child; return once it wrote `ready` (it is then held mid-write)."""
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(script), str(ready), *args], cwd=REPO)
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert child.poll() is None, f"the child ended before its held write (status {child.returncode})"
        assert time.monotonic() < deadline, "the child never reached its held write"
        time.sleep(0.02)
    return child


def kill(child: subprocess.Popen) -> None:
    """kill -9, and reap it."""
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)


# ------------------------------------------------------------------------------ specviz notebooks DIR

HOLD_NOTEBOOK_WRITE = """
    import os, sys, time
    from pathlib import Path
    from specviz import cli

    ready, real_fdopen = Path(sys.argv[1]), os.fdopen

    class Held:  # the first file written gets half its bytes, then the writer waits to be killed
        def __init__(self, fd, mode="r", *a, **k):
            self.file = real_fdopen(fd, mode, *a, **k)
        def __enter__(self):
            return self
        def __exit__(self, *exc):
            self.file.close()
        def __getattr__(self, name):
            return getattr(self.file, name)
        def write(self, data):
            self.file.write(data[: len(data) // 2])
            self.file.flush()
            ready.write_text("held")
            time.sleep(600)

    os.fdopen = Held
    sys.exit(cli.main(sys.argv[2:]))
"""


def whole_or_mine(dest: Path, mine: dict[str, bytes]) -> list[str]:
    """The files in `dest` named like a notebook that are neither the shipped bytes nor the user's own."""
    bad = []
    for name, data in SHIPPED.items():
        path = dest / name
        if path.exists() and path.read_bytes() not in (data, mine.get(name)):
            bad.append(f"{name}: {path.stat().st_size} of {len(data)} bytes")
    return bad


def temporaries(dest: Path) -> list[str]:
    """Files in `dest` that are not notebooks of the copy (what a writer left)."""
    return sorted(p.name for p in dest.iterdir() if p.name not in SHIPPED)


@pytest.mark.slow
def test_a_copy_killed_mid_write_leaves_no_half_file_and_the_rerun_finishes_it(tmp_path, capsys):
    dest = tmp_path / "nb"
    child = held_child(HOLD_NOTEBOOK_WRITE, tmp_path / "ready", "notebooks", str(dest))
    kill(child)
    assert whole_or_mine(dest, {}) == []  # HALF: a reader of DIR sees half a notebook
    code, out, err = call(["notebooks", str(dest)], capsys)
    assert code == 0, err
    assert "existing" not in out  # HALF: the rerun took a half-written file for the user's own
    assert all((dest / name).read_bytes() == data for name, data in SHIPPED.items())
    assert temporaries(dest) == []  # what the killed copy left is gone


@pytest.mark.slow
def test_a_forced_copy_killed_mid_write_keeps_each_file_whole(tmp_path, capsys):
    dest = tmp_path / "nb"
    assert call(["notebooks", str(dest)], capsys)[0] == 0
    mine = {name: f"my edits of {name}".encode() for name in SHIPPED}
    for name, data in mine.items():
        (dest / name).write_bytes(data)
    child = held_child(HOLD_NOTEBOOK_WRITE, tmp_path / "ready", "notebooks", str(dest), "--force")
    kill(child)
    assert whole_or_mine(dest, mine) == []  # each file is the user's or the new one, never a truncated one
    assert all((dest / name).exists() for name in SHIPPED)
    code, out, _ = call(["notebooks", str(dest)], capsys)  # without --force: the user's files are kept
    assert code == 0 and f"kept your {len(SHIPPED)} existing files" in out
    assert all((dest / name).read_bytes() == data for name, data in mine.items())
    assert temporaries(dest) == []
    code, out, _ = call(["notebooks", str(dest), "--force"], capsys)
    assert code == 0 and all((dest / name).read_bytes() == data for name, data in SHIPPED.items())


def test_a_half_written_copy_of_an_older_specviz_is_finished_not_kept(tmp_path, capsys):
    """An older specviz wrote in place: a kill left an empty or cut-off file. It holds nothing of the user's."""
    dest = tmp_path / "nb"
    dest.mkdir()
    names = sorted(SHIPPED)
    empty, cut, edited, longer = names[:4]
    (dest / empty).write_bytes(b"")
    (dest / cut).write_bytes(SHIPPED[cut][:100])
    (dest / edited).write_bytes(SHIPPED[edited][:100] + b"my words")
    (dest / longer).write_bytes(SHIPPED[longer] + b"\nmy notes")
    code, out, err = call(["notebooks", str(dest)], capsys)
    assert code == 0, err
    assert "finished 2 files an interrupted copy left half-written; kept your 2 existing files" in out
    assert (dest / empty).read_bytes() == SHIPPED[empty] and (dest / cut).read_bytes() == SHIPPED[cut]
    assert (dest / edited).read_bytes() == SHIPPED[edited][:100] + b"my words"  # LOST otherwise
    assert (dest / longer).read_bytes() == SHIPPED[longer] + b"\nmy notes"


def test_only_the_copys_own_temporary_names_are_cleared(tmp_path, capsys):
    dest = tmp_path / "nb"
    dest.mkdir()
    name = sorted(SHIPPED)[0]
    outside = tmp_path / "outside.txt"
    outside.write_text("mine")
    keep = {
        f".{name}.notes": b"a user's hidden file",
        f".{name}.abcdefghij.specviz": b"not the copy's pattern",
        "thesis.specviz": b"mine",
    }
    for n, data in keep.items():
        (dest / n).write_bytes(data)
    (dest / f".{name}.abcd1234.specviz").symlink_to(outside)  # a link with the copy's name: not a file of ours
    (dest / f".{name}.k3_9xq0a.specviz").write_bytes(b"half")  # a killed copy's temporary file
    code, _, err = call(["notebooks", str(dest)], capsys)
    assert code == 0, err
    assert all((dest / n).read_bytes() == data for n, data in keep.items())
    assert (dest / f".{name}.abcd1234.specviz").is_symlink() and outside.read_text() == "mine"
    assert not (dest / f".{name}.k3_9xq0a.specviz").exists()


def test_a_second_copy_into_the_same_folder_is_refused_not_mixed(tmp_path, capsys):
    dest = tmp_path / "nb"
    dest.mkdir()
    fd = os.open(dest, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # as a copy into it that is running now
        code, _, err = call(["notebooks", str(dest)], capsys)
    finally:
        os.close(fd)
    assert one_line_error(code, err, "specviz notebooks"), err
    assert "another `specviz notebooks` is copying into" in err and not any(dest.iterdir())


@pytest.mark.parametrize("force", [False, True])
def test_a_full_disk_mid_write_leaves_the_old_file_or_none(tmp_path, monkeypatch, capsys, force):
    """ENOSPC after a few bytes: a new file is not created, a replaced one keeps the user's bytes."""
    import errno

    dest = tmp_path / "nb"
    dest.mkdir()
    name = sorted(SHIPPED)[0]
    if force:
        (dest / name).write_bytes(b"my edits")
    real_fdopen = os.fdopen

    class Full:
        def __init__(self, fd, mode):
            self.file = real_fdopen(fd, mode)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.file.close()

        def write(self, data):
            self.file.write(data[:10])
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(files.os, "fdopen", Full)
    code, _, err = call(["notebooks", str(dest), *(["--force"] if force else [])], capsys)
    monkeypatch.undo()
    assert one_line_error(code, err, "specviz notebooks") and "No space left on device" in err, err
    assert sorted(p.name for p in dest.iterdir()) == ([name] if force else [])
    if force:
        assert (dest / name).read_bytes() == b"my edits"


def test_a_file_system_without_hard_links_still_gets_whole_files(tmp_path, monkeypatch, capsys):
    def no_links(src, dst, *a, **k):
        raise OSError(1, "Operation not permitted")

    monkeypatch.setattr(files.os, "link", no_links)
    dest = tmp_path / "nb"
    code, _, err = call(["notebooks", str(dest)], capsys)
    assert code == 0, err
    assert all((dest / name).read_bytes() == data for name, data in SHIPPED.items()) and temporaries(dest) == []


# ------------------------------------------------------------------------------ tools/book.py --out DIR


@pytest.fixture
def no_execution(monkeypatch):
    """The book's notebook execution replaced by a failure: a refusal must come before it."""

    def refuse(*a, **k):
        raise AssertionError("the book executed notebooks before checking --out")

    monkeypatch.setattr(book, "execute_all", refuse)


def a_user_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "papers"
    folder.mkdir()
    (folder / "thesis.txt").write_text("three years of work")
    return folder


def book_cases(tmp_path: Path) -> list[tuple[str, Path, str]]:
    """(name, --out, what must survive it)."""
    papers = a_user_folder(tmp_path)
    afile = tmp_path / "notes.txt"
    afile.write_text("mine")
    link = tmp_path / "link"
    link.symlink_to(papers)
    only_hidden = tmp_path / "hidden"
    only_hidden.mkdir()
    (only_hidden / ".git").mkdir()
    old_shape = tmp_path / "almost-a-book"  # the shape of an old book, but one file of the user's
    for sub in ("en", "zh", "_static"):
        (old_shape / sub).mkdir(parents=True)
    (old_shape / "_static" / "pages.json").write_text("[]")
    (old_shape / "thesis.txt").write_text("mine")
    return [
        ("a folder of the user's", papers, "thesis.txt"),
        ("a file", afile, ""),
        ("a device", Path("/dev/null"), "a device or a pipe"),
        ("a link to the user's folder", link, "symbolic link"),
        ("a folder with only hidden files", only_hidden, ".git"),
        ("an old book's shape with a user's file", old_shape, "thesis.txt"),
        ("the repository itself", REPO, "no .specviz-book in it"),
    ]


def test_book_out_never_replaces_a_folder_it_did_not_make(tmp_path, no_execution, capsys):
    for name, out, keep in book_cases(tmp_path):
        before = sorted(os.listdir(out)) if out.is_dir() else out.read_bytes()
        code = book.main(["--out", str(out)])
        err = capsys.readouterr().err
        assert code == 2 and err.startswith("book: error: --out ") and err.count("\n") == 1, (name, err)
        assert str(out) in err and (keep in err or not keep), (name, err)
        after = sorted(os.listdir(out)) if out.is_dir() else out.read_bytes()
        assert after == before, name  # LOST otherwise
        assert not list(tmp_path.glob(".*.new-*")), name


def test_book_out_replaces_its_own_book_an_empty_folder_or_an_old_book(tmp_path):
    out = tmp_path / "site"
    with book.staged(out) as stage:
        (stage / "index.html").write_text("first")
    assert (out / book.OUT_MARKER).is_file() and (out / "index.html").read_text() == "first"
    with book.staged(out) as stage:
        (stage / "index.html").write_text("second")
    assert sorted(os.listdir(out)) == [book.OUT_MARKER, "index.html"] and (out / "index.html").read_text() == "second"
    assert sorted(os.listdir(tmp_path)) == ["site"]  # nothing beside it, nothing of the old one inside it
    empty = tmp_path / "empty"
    empty.mkdir()
    with book.staged(empty) as stage:
        (stage / "index.html").write_text("x")
    old = tmp_path / "old"  # a book built before the marker: index.html, _static/pages.json, en/, zh/
    for sub in ("en", "zh", "_static"):
        (old / sub).mkdir(parents=True)
    (old / "_static" / "pages.json").write_text("[]")
    (old / "index.html").write_text("old")
    with book.staged(old) as stage:
        (stage / "index.html").write_text("new")
    assert (old / "index.html").read_text() == "new" and not (old / "en").exists()


def test_a_failed_build_leaves_the_old_book_and_nothing_beside_it(tmp_path):
    out = tmp_path / "site"
    with book.staged(out) as stage:
        (stage / "index.html").write_text("good")
    with pytest.raises(RuntimeError), book.staged(out) as stage:
        (stage / "index.html").write_text("half")
        raise RuntimeError("sphinx-build failed")
    assert (out / "index.html").read_text() == "good" and sorted(os.listdir(tmp_path)) == ["site"]


def test_a_folder_that_became_a_users_during_the_build_is_not_replaced(tmp_path):
    out = tmp_path / "site"
    with pytest.raises(book.OutError, match="thesis.txt"), book.staged(out) as stage:
        (stage / "index.html").write_text("x")
        a_user_folder(tmp_path).rename(out)  # the user made a folder there meanwhile
    assert (out / "thesis.txt").read_text() == "three years of work" and sorted(os.listdir(tmp_path)) == ["site"]


HOLD_BOOK_BUILD = """
    import importlib.util, sys, time
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("book", "tools/book.py")
    book = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(book)
    ready, out = Path(sys.argv[1]), Path(sys.argv[2])
    with book.staged(out) as stage:
        (stage / "index.html").write_text("half a book")
        ready.write_text("held")
        time.sleep(600)
"""


@pytest.mark.slow
def test_a_build_killed_mid_write_leaves_the_old_book_and_the_next_clears_its_folder(tmp_path):
    out = tmp_path / "site"
    with book.staged(out) as stage:
        (stage / "index.html").write_text("good")
    live = held_child(HOLD_BOOK_BUILD, tmp_path / "ready-live", str(out))
    dead = held_child(HOLD_BOOK_BUILD, tmp_path / "ready-dead", str(out))
    try:
        kill(dead)
        assert (out / "index.html").read_text() == "good"  # the old book, whole
        assert len(list(tmp_path.glob(".site.new-*"))) == 2
        with book.staged(out) as stage:  # the next build: the dead build's folder goes, the live one's stays
            (stage / "index.html").write_text("next")
        assert len(list(tmp_path.glob(".site.new-*"))) == 1 and (out / "index.html").read_text() == "next"
    finally:
        kill(live)
    with book.staged(out) as stage:
        (stage / "index.html").write_text("last")
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".site")) == []


def test_the_live_view_still_offers_the_bundled_pair_when_the_cache_variable_names_no_folder(monkeypatch):
    """A bad $SPECVIZ_CACHE is refused where the cache is used, not by the model picker of the live view."""
    from specviz.widgets.live.models import BUNDLED_PAIR, pair_choices

    monkeypatch.setenv("SPECVIZ_CACHE", " ")
    choices = pair_choices()
    assert choices[0][1] == BUNDLED_PAIR and len(choices) >= 3, choices
