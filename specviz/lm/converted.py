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
renamed into place, so two processes converting at once never mix their files.

>>> import tempfile
>>> folder = Path(tempfile.mkdtemp())
>>> gguf = folder / "model.gguf"
>>> _ = gguf.write_bytes(b"GGUF")
>>> usable(gguf) is None        # nothing converted yet: load the GGUF
True
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
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


def usable(gguf: Path) -> Path | None:
    """The converted folder of `gguf` if it is complete and nothing in it (or the GGUF) changed since written."""
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
    tmp = None
    quantizer, qconfig = getattr(model, "hf_quantizer", None), getattr(model.config, "quantization_config", None)
    try:
        tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}."))
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
    say(f"saved a converted copy in {folder} (later loads read it instead of the GGUF)")
    return folder
