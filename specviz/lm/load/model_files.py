"""One model's files: a checkpoint folder checked, then the model and its tokenizer read with transformers.

`ModelSource` says where a model comes from (`specviz.lm.load.loading` finds it); `check_folder`
reads what can be read before the weights (safetensors headers, tokenizer files);
`load_model` and `load_tokenizer` read a checkpoint folder, a GGUF file or a hub id onto a
device, a device map or a dtype, saying each stage through `say`; `compare_tokenizers`
refuses a target and draft whose tokenizers differ on the ids they share.

>>> ModelSource("draft", "gguf", "/models/smollm2.gguf", "smollm2-135m").kind
'gguf'
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import torch

from .devices import describe_device_map


@dataclass
class ModelSource:
    """Where one model comes from, found before anything is loaded."""

    role: str  # "target" or "draft"
    kind: str  # "bundled", "folder", "gguf", "hub", "built" (a draft built from the target) or "object"
    where: str = ""  # folder, .gguf path or hub id
    name: str = ""
    obj: object = None  # an already-loaded model (kind "object")
    hub_local: bool = False  # a hub id to load from the local cache only
    convert: bool = False  # a catalogue GGUF: save a converted copy once loaded (specviz.lm.load.converted)


# at least one of these must be in a checkpoint folder for it to carry a tokenizer
TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer.model",
    "vocab.json",
    "spiece.model",
    "vocab.txt",
    "sentencepiece.bpe.model",
    "tokenizer.tiktoken",
    "tiktoken.model",
)


def _check_safetensors(folder: Path, role: str) -> None:
    """Read the header of every .safetensors file in `folder`; a bad one -> ValueError naming it."""
    from safetensors import safe_open

    for f in sorted(folder.glob("*.safetensors")):
        try:
            with safe_open(str(f), framework="pt") as handle:
                handle.keys()
        except Exception as e:  # SafetensorError is not importable by a stable name in every version
            raise ValueError(
                f"{role} model: {f} is not a valid safetensors file ({e}); download or save it again"
            ) from None


def _check_tokenizer_files(folder: Path, role: str) -> None:
    if not any((folder / name).is_file() for name in TOKENIZER_FILES):
        raise ValueError(
            f"{role} model: no tokenizer files in {folder} (looked for {', '.join(TOKENIZER_FILES[:4])}, …): "
            "save the tokenizer next to the weights (tokenizer.save_pretrained(folder)) or pass tokenizer=..."
        )


def check_folder(folder: Path, role: str, need_tokenizer: bool) -> None:
    """A checkpoint folder checked before its weights are read: safetensors headers, tokenizer files if needed."""
    _check_safetensors(folder, role)
    if need_tokenizer:
        _check_tokenizer_files(folder, role)


def _dtype_keyword() -> str:
    """from_pretrained's dtype keyword: 'dtype' from transformers 4.56, 'torch_dtype' before."""
    import transformers
    from packaging.version import Version

    return "dtype" if Version(transformers.__version__).release >= (4, 56) else "torch_dtype"


def load_model(s: ModelSource, device: str, dtype, say, device_map=None):
    """The causal LM at `s`, on `device` (or spread by `device_map`) in `dtype`; ValueError naming what failed."""
    from transformers import AutoModelForCausalLM

    kw = {_dtype_keyword(): dtype} if dtype is not None else {}
    if device_map is not None:
        kw["device_map"] = device_map
    t0 = time.perf_counter()
    try:
        if s.kind == "gguf":
            say(f"{s.role}: loading {s.name} from {s.where} (GGUF: dequantising the weights)")
            p = Path(s.where)
            model = AutoModelForCausalLM.from_pretrained(str(p.parent), gguf_file=p.name, local_files_only=True, **kw)
        else:
            say(f"{s.role}: loading {s.name}" + ("" if s.where == s.name else f" from {s.where}"))
            local = s.kind != "hub" or s.hub_local
            model = AutoModelForCausalLM.from_pretrained(s.where, local_files_only=local, **kw)
    except ImportError as e:
        need = " (GGUF files need the `gguf` package: pip install gguf)" if s.kind == "gguf" else ""
        if device_map is not None and "accelerate" in str(e).lower():
            need = " (device_map needs the `accelerate` package: pip install accelerate)"
        raise ValueError(f"could not load the {s.role} model {s.name!r}{need}: {e}") from None
    except (OSError, ValueError, RuntimeError) as e:
        hint = " (hub ids need network or a copy in the local Hugging Face cache)" if s.kind == "hub" else ""
        raise ValueError(f"could not load the {s.role} model {s.name!r} from {s.where}{hint}: {e}") from None
    if device_map is None:
        if dtype is None and model.dtype == torch.float16 and torch.device(device).type == "cpu":
            model = model.float()  # fp16 matmuls are slow and less exact on CPU; checkpoints are stored in fp16
        model = model.to(device)  # a dispatched model stays where accelerate put it (moving it would undo the map)
    n = sum(p.numel() for p in model.parameters())
    where = device if device_map is None else describe_device_map(model)
    say(
        f"{s.role}: {s.name} loaded in {time.perf_counter() - t0:.1f} s ({n / 1e6:.1f} M params, {model.dtype}, "
        f"{where})"
    )
    return model


def load_tokenizer(s: ModelSource, say):
    """The tokenizer at `s`; ValueError when it cannot be read or holds fewer than two tokens."""
    from transformers import AutoTokenizer

    t0 = time.perf_counter()
    say(f"tokenizer: loading from {s.where}")
    try:
        if s.kind == "gguf":
            p = Path(s.where)
            tok = AutoTokenizer.from_pretrained(str(p.parent), gguf_file=p.name, local_files_only=True)
        else:
            local = s.kind != "hub" or s.hub_local
            tok = AutoTokenizer.from_pretrained(s.where, local_files_only=local)
    except (OSError, ValueError, ImportError, TypeError) as e:
        raise ValueError(f"{s.role} model: could not load a tokenizer from {s.where}: {e}") from None
    if len(tok) < 2:
        raise ValueError(
            f"{s.role} model: the tokenizer in {s.where} has {len(tok)} token(s): its tokenizer "
            "files are missing or empty"
        )
    say(
        f"tokenizer: {len(tok)} tokens, {'a' if getattr(tok, 'chat_template', None) else 'no'} chat template "
        f"({time.perf_counter() - t0:.1f} s)"
    )
    return tok


def align_gguf_eos(tok, model, say) -> None:
    """Give a tokenizer read from a GGUF file the end-of-sequence token the model's generation config names.

    transformers 4.52's GGUF conversion gives SmolLM2's tokenizer eos '<|im_start|>' (the
    file's BOS) while generation stops at '<|im_end|>'; 5.x reads '<|im_end|>' for both.
    """
    eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    if isinstance(eos, (list, tuple)):
        eos = eos[0] if len(eos) == 1 else None
    if not isinstance(eos, int) or eos == tok.eos_token_id or not 0 <= eos < len(tok):
        return
    name = tok.convert_ids_to_tokens(eos)
    say(f"tokenizer: end-of-sequence token {tok.eos_token!r} -> {name!r}, as the model's generation config says")
    tok.eos_token = name


def compare_tokenizers(t_tok, d_tok, shared: int, t_name: str, d_name: str) -> None:
    """ValueError when target and draft tokenizers map the first `shared` ids to different tokens."""
    tv, dv = t_tok.get_vocab(), d_tok.get_vocab()
    t_ids = {i: w for w, i in tv.items() if i < shared}
    d_ids = {i: w for w, i in dv.items() if i < shared}
    if t_ids != d_ids:
        diff = sorted(set(t_ids.items()) ^ set(d_ids.items()))[:3]
        raise ValueError(
            f"target {t_name!r} (vocabulary {len(tv)}) and draft {d_name!r} (vocabulary {len(dv)}) use "
            f"different tokenizers, so p and q are over different tokens; e.g. {diff}. "
            "Speculative decoding needs one shared vocabulary."
        )


__all__ = [
    "TOKENIZER_FILES",
    "ModelSource",
    "align_gguf_eos",
    "check_folder",
    "compare_tokenizers",
    "load_model",
    "load_tokenizer",
]
