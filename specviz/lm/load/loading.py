"""Load a draft/target pair: the bundled pair, a catalog model, a folder, a GGUF file, a hub id, or models you have.

>>> pair = load_pair(device="cpu", progress=False)            # the bundled pair, offline
>>> pair.describe()
'target bundled-target (2.77 M params), draft bundled-draft (0.26 M params), vocabulary 257, on cpu'
>>> pair = load_pair("smollm2-135m", draft="prompt-lookup")   # doctest: +SKIP
>>> pair = load_pair(target=my_model, draft=my_draft, tokenizer=my_tokenizer)   # doctest: +SKIP

Nothing here downloads a catalog model (run `specviz models fetch smollm2-135m` once
first), and a hub id that is neither in the local Hugging Face cache nor reachable
fails within seconds.
Device and dtype are checked (`specviz.lm.load.devices`), a hub id asked after (`specviz.lm.load.hub`) and every
file found and checked (`specviz.lm.load.model_files`) before any weights are read.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import stat
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from ..drafts import BUILT
from ..drafts.prompt_lookup import PromptLookupModel
from ..engine.models import HFModel, LanguageModel
from ..engine.pair import Pair
from . import catalog, converted
from .devices import check_device_map, parse_dtype, pick_device
from .hub import hf_progress_bars, hub_cached, hub_offline, probe_hub
from .model_files import ModelSource, align_gguf_eos, check_folder, compare_tokenizers, load_model, load_tokenizer

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from transformers import PreTrainedTokenizerBase

BUNDLED_DIR = Path(__file__).resolve().parent.parent / "bundled"
PROMPT_LOOKUP = "prompt-lookup"

log = logging.getLogger(__name__)


# ------------------------------------------------------------------------------ progress


def _reporter(progress):
    """progress -> a function taking one message: None logs it, True prints it, a callable gets it."""
    if progress is None:
        return lambda message: log.info(message)
    if progress is False:
        return lambda message: None
    if progress is True:
        return lambda message: print(f"specviz: {message}", file=sys.stderr, flush=True)
    if callable(progress):
        return progress
    raise TypeError(f"progress must be None, True, False or a callable taking a message, got {progress!r}")


# ------------------------------------------------------------------------------ resolving: where each model comes from


def _resolve(spec, role: str) -> ModelSource:
    """A model spec -> where it comes from. Raises ValueError (naming `role`) when it cannot be found."""
    if isinstance(spec, LanguageModel) or isinstance(spec, torch.nn.Module):
        if isinstance(spec, torch.nn.Module) and not hasattr(spec, "config"):
            raise TypeError(
                f"{role} model: a {type(spec).__name__} is not a Hugging Face causal LM (it has no "
                ".config); pass a transformers model or a specviz LanguageModel"
            )
        return ModelSource(role, "object", obj=spec, name=getattr(spec, "name", None) or _hf_name(spec))
    if spec is None or spec == "bundled":
        folder = BUNDLED_DIR / role
        if not (folder / "config.json").exists():
            raise ValueError(
                f"the bundled {role} model is missing from {folder}: reinstall specviz "
                "or run `python scripts/train_pair.py`"
            )
        return ModelSource(role, "bundled", str(folder), f"bundled-{role}")
    if not isinstance(spec, (str, os.PathLike)):
        raise TypeError(f"{role} model: expected a name, a path, a hub id or a loaded model, got {type(spec).__name__}")
    spec = os.fspath(spec)
    if not spec.strip():
        raise ValueError(
            f"{role} model: the name is empty ({spec!r}): give a model name, a folder, a .gguf file or a hub id"
        )
    if spec in BUILT:  # a draft built from the target (`specviz.lm.drafts.BUILT`: prompt lookup, ...)
        if role != "draft":
            raise ValueError(f"{spec} is a draft built from the target (it proposes tokens for it), not a target")
        return ModelSource(role, "built", name=spec)
    if spec in catalog.MODELS:  # CacheError (a ValueError) when not fetched, corrupted or unreadable
        gguf = catalog.verified_path(spec, role=f"{role} model")
        folder = converted.usable(gguf)  # converted by an earlier load: 0.5 s instead of 25 s
        if folder is not None:
            return ModelSource(role, "folder", str(folder), spec)
        return ModelSource(role, "gguf", str(gguf), spec, convert=True)
    path = Path(os.path.expanduser(spec))
    try:
        st = os.stat(path)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise ValueError(f"{role} model: {spec!r} is a loop of links (each link leads back to another)") from None
        st = None
    if path.suffix == ".gguf":
        if not path.is_file():
            raise ValueError(f"{role} model: GGUF file {spec!r} does not exist")
        return ModelSource(role, "gguf", str(path), spec)
    if st is not None:
        if not stat.S_ISDIR(st.st_mode):
            raise ValueError(
                f"{role} model: {spec!r} is {catalog.kind_in_words(st.st_mode)}, not a checkpoint folder (one with "
                "config.json) or a .gguf file"
            )
        if not (path / "config.json").exists():
            raise ValueError(
                f"{role} model: folder {spec!r} has no config.json, so it is not a Hugging Face checkpoint"
            )
        return ModelSource(role, "folder", str(path), spec)
    looks_local = spec.startswith((".", "/", "~")) or os.sep in spec.strip("/").split("/", 1)[-1] or spec.count("/") > 1
    if looks_local:
        raise ValueError(f"{role} model: no such file or folder {spec!r}")
    return ModelSource(role, "hub", spec, spec)


def _hf_name(model) -> str:
    path = getattr(getattr(model, "config", None), "_name_or_path", "") or getattr(model, "name_or_path", "")
    return str(path) or type(model).__name__


def _check_files(s: ModelSource, need_tokenizer: bool, state: dict) -> None:
    """Everything that can be checked before weights load: file validity, tokenizers, hub reachability."""
    if s.kind in ("bundled", "folder"):
        check_folder(Path(s.where), s.role, need_tokenizer)
    elif s.kind == "hub":
        cached = hub_cached(s.where)
        if hub_offline():
            if cached:
                s.hub_local = True
                return
            raise ValueError(
                f"{s.role} model {s.where!r} is not in the local Hugging Face cache and HF_HUB_OFFLINE "
                "is set: download it where there is network, or pass a local folder, a .gguf file "
                f"or a catalog model ({', '.join(sorted(catalog.MODELS))})"
            )
        if "probe" not in state:
            state["probe"] = probe_hub()
        if state["probe"] is None:
            return  # the hub answers: from_pretrained as usual (cache first, then download)
        if cached:
            s.hub_local = True  # no network, but a cached copy: use it without retries
        else:
            raise ValueError(
                f"{s.role} model {s.where!r} is not in the local Hugging Face cache and the hub cannot be "
                f"reached: {state['probe']}. Download it where there is network (`hf download {s.where}`) and "
                f"pass its folder, or use a local folder, a .gguf file or a catalog model "
                f"({', '.join(sorted(catalog.MODELS))}, see `specviz models list`)"
            )


# ------------------------------------------------------------------------------ loading the pair


def _wrap(model, name: str, device, explicit_device: bool) -> LanguageModel:
    if isinstance(model, LanguageModel):
        return model
    if explicit_device:
        model = model.to(device)
    return HFModel(model, name)


def load_pair(
    target: str | os.PathLike[str] | LanguageModel | torch.nn.Module | None = "bundled",
    draft: str | os.PathLike[str] | LanguageModel | torch.nn.Module | None = "bundled",
    device: str | torch.device | None = "auto",
    dtype: str | torch.dtype | None = None,
    check_tokenizers: bool = True,
    *,
    tokenizer: PreTrainedTokenizerBase | None = None,
    progress: bool | Callable[[str], object] | None = None,
    hf_progress: bool | None = None,
    static_cache: bool = False,
    compile: bool = False,
    verify_bucket: int | Sequence[int] = (2, 5),
    device_map: str | dict | None = None,
    draft_device_map: str | dict | None = None,
) -> Pair:
    """Load target and draft causal LMs that share a vocabulary.

    Each of `target`, `draft` is one of:
      * "bundled" (the small offline Shakespeare pair shipped with specviz);
      * a catalog name such as "smollm2-135m" (fetched once with `specviz models fetch`);
      * a local checkpoint folder, a local .gguf file, or a Hugging Face hub id;
      * a model already loaded: a transformers causal LM or a specviz `LanguageModel`;
      * for the draft only, "prompt-lookup": a weightless n-gram draft over the target's
        vocabulary (see `specviz.lm.drafts.prompt_lookup`).

    `tokenizer` is used as is when given; otherwise it comes from the target's files
    (a pair of loaded models without one works on token ids only). `device` and `dtype`
    are checked before anything loads; "auto" keeps already-loaded models where they
    are. `progress`: None logs one line per stage to the `specviz.lm.load.loading` logger,
    True prints them to stderr, False drops them, a callable receives them.
    `hf_progress`: None leaves Hugging Face's own progress bars as they are; True/False
    shows/hides them during this call only. `static_cache=True` gives each Hugging Face model
    a preallocated StaticCache (`specviz.lm.engine.static_cache`); `compile=True` also compiles its
    decode and verify steps (CUDA graphs on a GPU; tens of seconds of warm-up on a CPU), verify
    chunks padded up to a `verify_bucket` length ((2, 5) covers the draft's 2-token feeds and γ = 4). If the embedding tables are padded to
    different sizes, only the shared vocabulary is compared.

    `device_map` ("auto", "balanced", "sequential", or a {module name: device} dict) loads the
    models through accelerate, split layer by layer over the GPUs of this machine (a model too
    large for one GPU); `device` must then stay "auto". It applies to the draft too, unless
    `draft_device_map` gives the draft its own (a dict names one model's modules). Each model
    takes its ids on its main device and its logits are brought back there, so the engine
    works on one device per model (`specviz.lm.engine.models.main_device`).
    """
    say = _reporter(progress)
    explicit_device = not (device is None or (isinstance(device, str) and device == "auto"))
    dev = pick_device(device)
    device_map = check_device_map(device_map)
    draft_device_map = check_device_map(draft_device_map, "draft_device_map") or device_map
    if device_map is not None and explicit_device:
        raise ValueError(
            f"give device={str(device)!r} or device_map={device_map!r}, not both: a device map places the models itself"
        )
    if device_map is not None and (static_cache or compile):
        raise ValueError("static_cache and compile need each model on one device; they do not combine with device_map")
    dtype = parse_dtype(dtype)
    t_spec, d_spec = _resolve(target, "target"), _resolve(draft, "draft")
    state: dict = {}
    _check_files(t_spec, tokenizer is None, state)
    if d_spec.kind not in ("built", "object"):
        _check_files(d_spec, tokenizer is None and check_tokenizers, state)
    bars = contextlib.nullcontext() if hf_progress is None else hf_progress_bars(bool(hf_progress))
    with bars:
        # --- target
        if t_spec.kind == "object":
            t_lm = _wrap(t_spec.obj, t_spec.name, dev, explicit_device)
            if not explicit_device:
                dev = str(t_lm.device)
        else:
            t_lm = HFModel(load_model(t_spec, dev, dtype, say, device_map), t_spec.name)
            if device_map is not None:
                dev = str(t_lm.device)
        t_tok = tokenizer
        if t_tok is None and t_spec.kind != "object":
            t_tok = load_tokenizer(t_spec, say)
            if t_spec.kind == "gguf":
                align_gguf_eos(t_tok, t_lm.model, say)
            if t_spec.convert and dtype is None and device_map is None:
                converted.save(t_lm.model, t_tok, Path(t_spec.where), say)
        # --- draft
        d_tok = None
        if d_spec.kind == "built":
            d_lm = None  # built from the target below, over the vocabulary they share
        elif d_spec.kind == "object":
            d_lm = _wrap(d_spec.obj, d_spec.name, dev, explicit_device)
        else:
            d_lm = HFModel(load_model(d_spec, dev, dtype, say, draft_device_map), d_spec.name)
            if check_tokenizers and tokenizer is None:
                d_tok = load_tokenizer(d_spec, say)
                if d_spec.kind == "gguf":
                    align_gguf_eos(d_tok, d_lm.model, say)
                if d_spec.convert and dtype is None and draft_device_map is None:
                    converted.save(d_lm.model, d_tok, Path(d_spec.where), say)
    sizes = [t_lm.vocab_size] + ([d_lm.vocab_size] if d_lm is not None else [])
    if t_tok is not None:
        sizes.append(len(t_tok))
    shared = min(sizes)
    if d_tok is not None and t_tok is not None:
        compare_tokenizers(t_tok, d_tok, shared, t_spec.name, d_spec.name)
    if d_lm is None:
        built = BUILT[d_spec.name]
        d_lm = built.build(t_lm, shared)
        say(f"draft: {built.describe(d_lm)}")
    t_lm, d_lm = _shrink(t_lm, shared), _shrink(d_lm, shared)
    if static_cache or compile:
        t_lm, d_lm = (_static(lm, compile, verify_bucket, say) for lm in (t_lm, d_lm))
    return Pair(t_lm, d_lm, t_tok, dev)


def _static(lm: LanguageModel, compile: bool, verify_bucket, say) -> LanguageModel:
    """An HFModel moved onto a preallocated StaticCache (compiled with compile=True); other models as they are."""
    if not isinstance(lm, HFModel):
        return lm
    from ..engine.static_cache import StaticHFModel

    fast = StaticHFModel(
        lm.model, lm.name, vocab_size=lm.vocab_size, compile=compile, verify_bucket=verify_bucket if compile else None
    )
    if compile:
        say(f"{lm.name}: compiling the static-cache step (a long warm-up on a CPU)")
        say(f"{lm.name}: compiled in {fast.warmup():.1f} s")
    return fast


def _shrink(lm: LanguageModel, vocab_size: int) -> LanguageModel:
    """Limit a model to the shared vocabulary (padded embedding tables; only HFModel can be cut)."""
    if lm.vocab_size == vocab_size:
        return lm
    if isinstance(lm, HFModel):
        return HFModel(lm.model, lm.name, vocab_size=vocab_size)
    if isinstance(lm, PromptLookupModel):
        return PromptLookupModel(vocab_size, lm.max_ngram, lm.min_ngram, lm.name, lm.device)
    raise ValueError(
        f"{lm.name} has {lm.vocab_size} tokens but the pair shares {vocab_size}: give models with one vocabulary size"
    )
