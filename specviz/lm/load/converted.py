"""A catalogue GGUF model converted once into a Hugging Face folder, so that later loads skip the GGUF parse.

transformers reads a GGUF file three times (configuration, tokenizer, weights) and dequantises
every tensor in Python: SmolLM2-135M takes about 25 s to load on this project's 2-core machine.
The same weights as safetensors beside a saved configuration and tokenizer load in about 0.5 s.
The first `load_pair("smollm2-135m", ...)` therefore saves what it loaded into
`<model folder>/hf-transformers-<version>/` (one folder per transformers version, which wrote
the configuration), and later loads read that folder instead.

The folder is a cache of the GGUF, never trusted blindly: its marker records the GGUF's stamp
(size, modification and change times) and every file's size and times as written. A folder
whose GGUF or files changed since, or that lacks its marker (a write cut short), is not used:
the GGUF is loaded and converted again. The folder is written under a temporary name and
renamed into place, so two processes converting at once never mix their files. The writer holds
a lock on its temporary folder: one whose lock is free was left by a writer that died (killed
mid-write), and the next load, conversion or `specviz models fetch` deletes it; a live writer's
folder is never touched.

>>> import tempfile
>>> folder = Path(tempfile.mkdtemp())
>>> gguf = folder / "model.gguf"
>>> _ = gguf.write_bytes(b"GGUF")
>>> usable(gguf) is None        # nothing converted yet: load the GGUF
True
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

MARKER = "specviz-converted.json"
PREFIX = "hf-transformers-"


def folder_for(gguf: Path) -> Path:
    """Where the converted copy of `gguf` lives for the installed transformers."""
    import transformers

    return Path(gguf).parent / f"{PREFIX}{transformers.__version__}"


def _stamp(path: Path) -> list:
    st = os.stat(path)
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _stamps(folder: Path) -> dict:
    return {p.name: _stamp(p) for p in sorted(folder.iterdir()) if p.is_file() and p.name != MARKER}


def _lock(folder: Path) -> int | None:
    """An fd holding an exclusive lock on `folder` (None where locks do not work); OSError if someone holds it."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return None
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        os.close(fd)
        if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            raise
        return None  # a file system without locks (some NFS): nothing is ever taken for a dead writer's
    return fd


def _dead_writer(tmp: Path, remove: bool = False) -> bool:
    """True when the writer of temporary folder `tmp` is gone (its lock is free); `remove` deletes it, locked."""
    try:
        fd = _lock(tmp)
    except OSError:  # locked by a live writer, or gone
        return False
    try:
        if fd is None and time.time() - tmp.lstat().st_mtime < 86400:  # no locks here: only a day-old folder
            return False
        if remove:
            shutil.rmtree(tmp, ignore_errors=True)
        return not remove or not tmp.exists()
    except OSError:
        return False
    finally:
        if fd is not None:
            os.close(fd)


def stray(model_folder: Path) -> list[Path]:
    """The temporary folders in `model_folder` that conversions killed mid-write left behind."""
    try:
        names = sorted(os.listdir(model_folder))
    except OSError:
        return []
    found = [Path(model_folder) / n for n in names if n.startswith(f".{PREFIX}")]
    return [p for p in found if p.is_dir() and not p.is_symlink() and _dead_writer(p)]


def discard(tmp: Path) -> bool:
    """Delete `tmp`, a conversion's temporary folder, if its writer is gone (never a live writer's); True if done."""
    return _dead_writer(tmp, remove=True)


def usable(gguf: Path) -> Path | None:
    """The converted folder of `gguf` if complete and unchanged since written (what dead writers left is deleted)."""
    for tmp in stray(Path(gguf).parent):
        discard(tmp)
    folder = folder_for(gguf)
    try:
        marker = json.loads((folder / MARKER).read_text(encoding="utf-8"))
        ok = marker["gguf"] == _stamp(gguf) and marker["files"] == _stamps(folder)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return folder if ok and "model.safetensors" in marker["files"] else None


@contextlib.contextmanager
def _quiet_progress():
    """transformers' own progress bars off (saving prints "Writing model shards" otherwise)."""
    from transformers.utils import logging as hf_logging

    was = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was:
            hf_logging.enable_progress_bar()


def save(model, tokenizer, gguf: Path, say=lambda msg: None) -> Path | None:
    """Write `model` (loaded from `gguf`, dequantised, float32) and `tokenizer` as the converted folder.

    Returns the folder, or None when it could not be written (a read-only cache: later loads
    read the GGUF again, as before). The model object is left as it was.
    """
    folder = folder_for(gguf)
    tmp = lock = None
    quantizer, qconfig = getattr(model, "hf_quantizer", None), getattr(model.config, "quantization_config", None)
    try:
        for old in stray(folder.parent):
            discard(old)
        tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}."))
        lock = _lock(tmp)  # held until the end: a folder whose lock is free is a dead writer's
        # transformers refuses to save a model "quantized with gguf"; its weights are plain tensors
        # once loaded, so it is saved as the unquantised model it is.
        model.hf_quantizer = None
        if qconfig is not None:
            del model.config.quantization_config
        with _quiet_progress():
            model.save_pretrained(tmp)
            tokenizer.save_pretrained(tmp)
        for p in tmp.iterdir():
            os.chmod(p, 0o644)
        os.chmod(tmp, 0o755)  # mkdtemp makes it 0700: others sharing the cache read it too
        marker = {"gguf": _stamp(gguf), "files": _stamps(tmp), "source": gguf.name}
        (tmp / MARKER).write_text(json.dumps(marker, indent=1), encoding="utf-8")
        if usable(gguf) is None:  # not already converted by another process meanwhile
            shutil.rmtree(folder, ignore_errors=True)  # a stale copy (its marker no longer matched)
            try:
                os.rename(tmp, folder)
            except OSError:  # another process renamed its copy into place first: keep that one
                if usable(gguf) is None:
                    raise
            else:
                tmp = None
    except (OSError, ValueError, RuntimeError) as e:
        say(f"could not save a converted copy of {gguf.name} beside it ({e}); later loads read the GGUF again")
        return None
    finally:
        model.hf_quantizer = quantizer
        if qconfig is not None:
            model.config.quantization_config = qconfig
        if tmp is not None:
            with contextlib.suppress(OSError):
                shutil.rmtree(tmp)
        if lock is not None:
            os.close(lock)
    say(f"saved a converted copy in {folder} (later loads read it instead of the GGUF)")
    return folder
