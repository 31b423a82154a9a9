"""Load a draft/target pair: the bundled offline pair, a local folder, a GGUF file or a hub id.

>>> pair = load_pair()                      # doctest: +SKIP
>>> pair.describe()                         # doctest: +SKIP
'target bundled-target (…), draft bundled-draft (…) on cpu'
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import torch

from .models import HFModel, LanguageModel

BUNDLED_DIR = Path(__file__).resolve().parent / "bundled"


@dataclass
class Pair:
    """A target model p and a draft model q sharing one vocabulary (and optionally a tokenizer)."""

    target: LanguageModel
    draft: LanguageModel
    tokenizer: object = None
    device: str = "cpu"

    def __post_init__(self):
        if self.target.vocab_size != self.draft.vocab_size:
            raise ValueError(f"target ({self.target.name}) has {self.target.vocab_size} tokens but draft "
                             f"({self.draft.name}) has {self.draft.vocab_size}: they must share a vocabulary")

    def describe(self) -> str:
        def size(m):
            mod = getattr(m, "model", None)
            if mod is None:
                return m.name
            n = sum(p.numel() for p in mod.parameters())
            return f"{m.name} ({n / 1e6:.2f} M params)"
        return f"target {size(self.target)}, draft {size(self.draft)}, vocabulary {self.target.vocab_size}, on {self.device}"


def pick_device(device="auto") -> str:
    """'auto' -> 'cuda' when torch sees a GPU, else 'cpu'; anything else is checked and returned."""
    if device in (None, "auto"):
        return "cuda" if torch.cuda.is_available() else "cpu"
    if str(device).startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} requested but torch sees no CUDA GPU; use 'cpu' or 'auto'")
    return str(device)


def _resolve(spec: str, role: str):
    """A model spec -> (kind, location, is_local). kind: 'bundled', 'folder', 'gguf' or 'hub'."""
    if spec in (None, "bundled"):
        folder = BUNDLED_DIR / role
        if not (folder / "config.json").exists():
            raise ValueError(f"the bundled {role} model is missing from {folder}: reinstall specviz "
                             "or run `python scripts/train_pair.py`")
        return "folder", str(folder), True
    spec = str(spec)
    path = Path(os.path.expanduser(spec))
    if path.suffix == ".gguf":
        if not path.is_file():
            raise ValueError(f"{role} model: GGUF file {spec!r} does not exist")
        return "gguf", str(path), True
    if path.exists():
        if not (path / "config.json").exists():
            raise ValueError(f"{role} model: folder {spec!r} has no config.json, so it is not a "
                             "Hugging Face checkpoint")
        return "folder", str(path), True
    looks_local = spec.startswith((".", "/", "~")) or os.sep in spec.strip("/").split("/", 1)[-1] or spec.count("/") > 1
    if looks_local:
        raise ValueError(f"{role} model: no such file or folder {spec!r}")
    return "hub", spec, False


def _load_model(spec, role, device, dtype):
    from transformers import AutoModelForCausalLM
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()

    kind, where, local = _resolve(spec, role)
    kw = {"dtype": dtype} if dtype is not None else {}
    try:
        if kind == "gguf":
            model = AutoModelForCausalLM.from_pretrained(str(Path(where).parent), gguf_file=Path(where).name, **kw)
        else:
            model = AutoModelForCausalLM.from_pretrained(where, local_files_only=local, **kw)
    except (OSError, ValueError, ImportError) as e:
        hint = " (no network here? hub ids need a download or a local copy)" if kind == "hub" else ""
        raise ValueError(f"could not load the {role} model {spec!r}{hint}: {e}") from None
    if dtype is None and model.dtype == torch.float16 and device == "cpu":
        model = model.float()  # fp16 matmuls are slow and less exact on CPU; checkpoints are stored in fp16
    name = f"bundled-{role}" if spec in (None, "bundled") else str(spec)
    return model.to(device), where, name


def _load_tokenizer(where):
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(where, local_files_only=Path(where).exists())
    except (OSError, ValueError) as e:
        raise ValueError(f"could not load a tokenizer from {where!r}: {e}") from None


def load_pair(target="bundled", draft="bundled", device="auto", dtype=None, check_tokenizers=True) -> Pair:
    """Load target and draft causal LMs that share a tokenizer.

    Each of `target`, `draft` is "bundled" (the small offline Shakespeare pair shipped
    with specviz), a local checkpoint folder, a local .gguf file or a Hugging Face hub
    id. Local paths and the bundled pair never touch the network. If the embedding
    tables are padded to different sizes, only the shared vocabulary is compared.
    """
    dev = pick_device(device)
    t_model, t_where, t_name = _load_model(target, "target", dev, dtype)
    d_model, d_where, d_name = _load_model(draft, "draft", dev, dtype)
    t_tok = _load_tokenizer(t_where if not t_where.endswith(".gguf") else str(Path(t_where).parent))
    d_tok = _load_tokenizer(d_where if not d_where.endswith(".gguf") else str(Path(d_where).parent))
    shared = min(t_model.config.vocab_size, d_model.config.vocab_size, len(t_tok))
    if check_tokenizers:
        tv, dv = t_tok.get_vocab(), d_tok.get_vocab()
        t_ids = {i: w for w, i in tv.items() if i < shared}
        d_ids = {i: w for w, i in dv.items() if i < shared}
        if t_ids != d_ids:
            diff = sorted(set(t_ids.items()) ^ set(d_ids.items()))[:3]
            raise ValueError(
                f"target {t_name!r} (vocabulary {len(tv)}) and draft {d_name!r} (vocabulary {len(dv)}) use "
                f"different tokenizers, so p and q are over different tokens; e.g. {diff}. "
                "Speculative decoding needs one shared vocabulary.")
    pair = Pair(HFModel(t_model, t_name, vocab_size=shared), HFModel(d_model, d_name, vocab_size=shared), t_tok, dev)
    return pair
