"""Load a draft/target pair: the bundled pair, a catalog model, a folder, a GGUF file, a hub id, or models you have.

>>> pair = load_pair(device="cpu", progress=False)            # the bundled pair, offline
>>> pair.describe()
'target bundled-target (2.77 M params), draft bundled-draft (0.26 M params), vocabulary 257, on cpu'
>>> pair = load_pair("smollm2-135m", draft="prompt-lookup")   # doctest: +SKIP
>>> pair = load_pair(target=my_model, draft=my_draft, tokenizer=my_tokenizer)   # doctest: +SKIP

Nothing here downloads a catalog model (run `specviz models fetch smollm2-135m` once
first), and a hub id that is neither in the local Hugging Face cache nor reachable
fails within seconds.
Device and dtype are checked, and every file is found, before any weights are read.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import socket
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlparse

import torch

from . import catalog, converted
from .models import HFModel, LanguageModel
from .pair import Pair
from .prompt_lookup import PromptLookupModel

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from transformers import PreTrainedTokenizerBase

BUNDLED_DIR = Path(__file__).resolve().parent / "bundled"
PROMPT_LOOKUP = "prompt-lookup"
HUB_PROBE_TIMEOUT_S = 3.0  # how long to wait for the hub's host before calling a hub id unreachable
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
DTYPES = {
    "float32": torch.float32,
    "fp32": torch.float32,
    "float": torch.float32,
    "float16": torch.float16,
    "fp16": torch.float16,
    "half": torch.float16,
    "bfloat16": torch.bfloat16,
    "bf16": torch.bfloat16,
}
DEVICE_TYPES = ("cpu", "cuda", "mps", "xpu")

log = logging.getLogger(__name__)


# ------------------------------------------------------------------------------ checks before loading


def pick_device(device: str | torch.device | None = "auto") -> str:
    """'auto' -> 'cuda' when torch sees a GPU, else 'cpu'; anything else is checked and returned."""
    if device is None or (isinstance(device, str) and device == "auto"):
        return "cuda" if torch.cuda.is_available() else "cpu"
    if not isinstance(device, (str, torch.device)):
        raise TypeError(
            f"device must be a string such as 'cpu' or 'cuda:0' (or a torch.device), got {type(device).__name__}"
        )
    try:
        dev = torch.device(device)
    except (RuntimeError, ValueError):
        raise ValueError(f"unknown device {str(device)!r}: use 'auto', 'cpu', 'cuda' or 'cuda:N'") from None
    if dev.type not in DEVICE_TYPES:
        raise ValueError(f"unknown device {str(device)!r}: use 'auto', 'cpu', 'cuda' or 'cuda:N'")
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"device {str(device)!r} requested but torch sees no CUDA GPU; use 'cpu' or 'auto'")
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise ValueError(f"device {str(device)!r} requested but torch sees {torch.cuda.device_count()} CUDA GPU(s)")
    if dev.type == "mps" and not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
        raise ValueError(f"device {str(device)!r} requested but torch has no MPS backend here; use 'cpu'")
    return str(dev)


def parse_dtype(dtype: str | torch.dtype | None) -> torch.dtype | str | None:
    """None, 'auto', a torch.dtype or a name ('float32', 'fp16', 'bf16', …) -> what from_pretrained takes."""
    if dtype is None or (isinstance(dtype, str) and dtype == "auto"):
        return dtype
    if isinstance(dtype, torch.dtype):
        if not dtype.is_floating_point:
            raise ValueError(f"dtype {dtype} is not a floating-point type: use float32, float16 or bfloat16")
        return dtype
    if isinstance(dtype, str) and dtype.lower().removeprefix("torch.") in DTYPES:
        return DTYPES[dtype.lower().removeprefix("torch.")]
    raise ValueError(
        f"unknown dtype {dtype!r}: use None, 'auto', 'float32', 'float16' or 'bfloat16' (or a torch dtype)"
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


def _env_true(name: str) -> bool:
    return os.environ.get(name, "").strip().upper() in ("1", "ON", "YES", "TRUE")


def hub_offline() -> bool:
    """True when HF_HUB_OFFLINE (or TRANSFORMERS_OFFLINE) says not to use the network."""
    if _env_true("HF_HUB_OFFLINE") or _env_true("TRANSFORMERS_OFFLINE"):
        return True
    try:
        from huggingface_hub import constants

        return bool(constants.HF_HUB_OFFLINE)
    except (ImportError, AttributeError):
        return False


def hub_cached(repo_id: str) -> bool:
    """True when the local Hugging Face cache holds `repo_id`'s config.json (no network)."""
    try:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(repo_id, "config.json")
    except Exception:  # a malformed id or an old huggingface_hub: treat as not cached
        return False
    return isinstance(found, (str, os.PathLike))


def probe_hub(timeout: float = HUB_PROBE_TIMEOUT_S) -> str | None:
    """None if the hub's host accepts a TCP connection within `timeout` seconds, else why not.

    The connection (name lookup included) runs in a daemon thread, so a stalled DNS
    lookup cannot hold the caller longer than `timeout`.
    """
    try:
        from huggingface_hub import constants

        endpoint = constants.ENDPOINT
    except (ImportError, AttributeError):
        endpoint = "https://huggingface.co"
    url = urlparse(endpoint)
    host, port = url.hostname or "huggingface.co", url.port or (80 if url.scheme == "http" else 443)
    outcome = {}

    def connect():
        try:
            socket.create_connection((host, port), timeout=timeout).close()
            outcome["ok"] = True
        except BaseException as e:  # noqa: BLE001 - any failure means "unreachable"
            outcome["error"] = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__

    worker = threading.Thread(target=connect, daemon=True, name="specviz-hub-probe")
    worker.start()
    worker.join(timeout + 0.5)
    if outcome.get("ok"):
        return None
    return f"{host}:{port} unreachable ({outcome.get('error', f'no answer in {timeout:g} s')})"


# ------------------------------------------------------------------------------ progress


@contextlib.contextmanager
def hf_progress_bars(enabled: bool) -> Iterator[None]:
    """Show or hide transformers' and huggingface_hub's progress bars inside the block; restore them after."""
    try:
        from huggingface_hub import utils as hub_utils
        from transformers.utils import logging as hf_logging
    except ImportError:  # pragma: no cover - transformers is a dependency
        yield
        return
    was_tf = hf_logging.is_progress_bar_enabled()
    was_hub_off = hub_utils.are_progress_bars_disabled()
    (hf_logging.enable_progress_bar if enabled else hf_logging.disable_progress_bar)()
    # transformers' GGUF loader (modeling_gguf_pytorch_utils, 4.4x-5.x) uses tqdm directly, outside that switch
    gguf_utils = sys.modules.get("transformers.modeling_gguf_pytorch_utils")
    if gguf_utils is None and not enabled:
        try:
            import transformers.modeling_gguf_pytorch_utils as gguf_utils
        except ImportError:
            gguf_utils = None
    gguf_tqdm = getattr(gguf_utils, "tqdm", None)
    if gguf_tqdm is not None and not enabled:
        gguf_utils.tqdm = functools.partial(gguf_tqdm, disable=True)
    try:
        yield
    finally:
        if gguf_tqdm is not None:
            gguf_utils.tqdm = gguf_tqdm
        (hf_logging.enable_progress_bar if was_tf else hf_logging.disable_progress_bar)()
        (hub_utils.disable_progress_bars if was_hub_off else hub_utils.enable_progress_bars)()


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


# ------------------------------------------------------------------------------ resolving and loading


@dataclass
class _Spec:
    """Where one model comes from, found before anything is loaded."""

    role: str  # "target" or "draft"
    kind: str  # "bundled", "folder", "gguf", "hub", "prompt-lookup" or "object"
    where: str = ""  # folder, .gguf path or hub id
    name: str = ""
    obj: object = None  # an already-loaded model (kind "object")
    hub_local: bool = False  # a hub id to load from the local cache only
    convert: bool = False  # a catalogue GGUF: save a converted copy once loaded (specviz.lm.converted)


def _resolve(spec, role: str) -> _Spec:
    """A model spec -> where it comes from. Raises ValueError (naming `role`) when it cannot be found."""
    if isinstance(spec, LanguageModel) or isinstance(spec, torch.nn.Module):
        if isinstance(spec, torch.nn.Module) and not hasattr(spec, "config"):
            raise TypeError(
                f"{role} model: a {type(spec).__name__} is not a Hugging Face causal LM (it has no "
                ".config); pass a transformers model or a specviz LanguageModel"
            )
        return _Spec(role, "object", obj=spec, name=getattr(spec, "name", None) or _hf_name(spec))
    if spec is None or spec == "bundled":
        folder = BUNDLED_DIR / role
        if not (folder / "config.json").exists():
            raise ValueError(
                f"the bundled {role} model is missing from {folder}: reinstall specviz "
                "or run `python scripts/train_pair.py`"
            )
        return _Spec(role, "bundled", str(folder), f"bundled-{role}")
    if not isinstance(spec, (str, os.PathLike)):
        raise TypeError(f"{role} model: expected a name, a path, a hub id or a loaded model, got {type(spec).__name__}")
    spec = os.fspath(spec)
    if spec == PROMPT_LOOKUP:
        if role != "draft":
            raise ValueError("prompt-lookup is a draft (it proposes tokens from the context), not a target")
        return _Spec(role, "prompt-lookup", name=PROMPT_LOOKUP)
    if spec in catalog.MODELS:  # CacheError (a ValueError) when not fetched, corrupted or unreadable
        gguf = catalog.verified_path(spec, role=f"{role} model")
        folder = converted.usable(gguf)  # converted by an earlier load: 0.5 s instead of 25 s
        if folder is not None:
            return _Spec(role, "folder", str(folder), spec)
        return _Spec(role, "gguf", str(gguf), spec, convert=True)
    path = Path(os.path.expanduser(spec))
    if path.suffix == ".gguf":
        if not path.is_file():
            raise ValueError(f"{role} model: GGUF file {spec!r} does not exist")
        return _Spec(role, "gguf", str(path), spec)
    if path.exists():
        if not (path / "config.json").exists():
            raise ValueError(
                f"{role} model: folder {spec!r} has no config.json, so it is not a Hugging Face checkpoint"
            )
        return _Spec(role, "folder", str(path), spec)
    looks_local = spec.startswith((".", "/", "~")) or os.sep in spec.strip("/").split("/", 1)[-1] or spec.count("/") > 1
    if looks_local:
        raise ValueError(f"{role} model: no such file or folder {spec!r}")
    return _Spec(role, "hub", spec, spec)


def _hf_name(model) -> str:
    path = getattr(getattr(model, "config", None), "_name_or_path", "") or getattr(model, "name_or_path", "")
    return str(path) or type(model).__name__


def _check_files(s: _Spec, need_tokenizer: bool, state: dict) -> None:
    """Everything that can be checked before weights load: file validity, tokenizers, hub reachability."""
    if s.kind in ("bundled", "folder"):
        _check_safetensors(Path(s.where), s.role)
        if need_tokenizer:
            _check_tokenizer_files(Path(s.where), s.role)
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


def _dtype_keyword() -> str:
    """from_pretrained's dtype keyword: 'dtype' from transformers 4.56, 'torch_dtype' before."""
    import transformers
    from packaging.version import Version

    return "dtype" if Version(transformers.__version__).release >= (4, 56) else "torch_dtype"


def _load_model(s: _Spec, device: str, dtype, say, device_map=None):
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


DEVICE_MAP_STRATEGIES = ("auto", "balanced", "balanced_low_0", "sequential")


def check_device_map(device_map: object, name: str = "device_map") -> str | dict | None:
    """None, an accelerate strategy ('auto', 'balanced', …) or a {module name: device} dict, checked.

    Devices in a dict are GPU indices, 'cpu' or device strings ('cuda:1'); each is checked like
    `pick_device`. 'disk' offload needs an offload folder that `load_pair` does not take.

    >>> check_device_map({"": "cpu"})
    {'': 'cpu'}
    >>> check_device_map("everywhere")
    Traceback (most recent call last):
    ...
    ValueError: unknown device_map 'everywhere': use 'auto', 'balanced', 'balanced_low_0', 'sequential' or a {module name: device} dict
    """
    if device_map is None:
        return None
    if isinstance(device_map, str):
        if device_map not in DEVICE_MAP_STRATEGIES:
            raise ValueError(
                f"unknown {name} {device_map!r}: use {', '.join(map(repr, DEVICE_MAP_STRATEGIES[:-1]))}, "
                f"{DEVICE_MAP_STRATEGIES[-1]!r} or a {{module name: device}} dict"
            )
        return device_map
    if not isinstance(device_map, dict) or not device_map:
        raise TypeError(f"{name} must be a strategy such as 'auto' or a non-empty {{module name: device}} dict")
    out = {}
    for module, dev in device_map.items():
        if not isinstance(module, str):
            raise TypeError(f"{name} keys must be module names (str), got {module!r}")
        if isinstance(dev, bool) or not isinstance(dev, (int, str, torch.device)):
            raise TypeError(f"{name}[{module!r}] must be a GPU index, 'cpu' or a device string, got {dev!r}")
        if isinstance(dev, int):
            if dev < 0:
                raise ValueError(f"{name}[{module!r}] = {dev}: a GPU index is >= 0")
            pick_device(f"cuda:{dev}")
        elif str(dev) in ("disk", "meta"):
            raise ValueError(
                f"{name}[{module!r}] = {str(dev)!r}: offloading to {str(dev)} is not supported here; map modules "
                "to GPUs or 'cpu' (accelerate then keeps them in CPU memory and runs them on the main GPU)"
            )
        else:
            pick_device(dev)
        out[module] = dev
    return out


def describe_device_map(model) -> str:
    """'device map: cuda:0 (12 modules), cuda:1 (11 modules)' for a split model, else its one device."""
    from .models import main_device, split_device_map

    dm = split_device_map(model)
    if not dm:
        return str(main_device(model))
    counts: dict = {}
    for dev in dm.values():
        key = f"cuda:{dev}" if isinstance(dev, int) else str(dev)
        counts[key] = counts.get(key, 0) + 1
    return "device map: " + ", ".join(f"{d} ({n} module{'s' if n > 1 else ''})" for d, n in counts.items())


def _load_tokenizer(s: _Spec, say):
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


def _align_gguf_eos(tok, model, say) -> None:
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
        vocabulary (see `specviz.lm.prompt_lookup`).

    `tokenizer` is used as is when given; otherwise it comes from the target's files
    (a pair of loaded models without one works on token ids only). `device` and `dtype`
    are checked before anything loads; "auto" keeps already-loaded models where they
    are. `progress`: None logs one line per stage to the `specviz.lm.loading` logger,
    True prints them to stderr, False drops them, a callable receives them.
    `hf_progress`: None leaves Hugging Face's own progress bars as they are; True/False
    shows/hides them during this call only. `static_cache=True` gives each Hugging Face model
    a preallocated StaticCache (`specviz.lm.static_cache`); `compile=True` also compiles its
    decode and verify steps (CUDA graphs on a GPU; tens of seconds of warm-up on a CPU), verify
    chunks padded up to a `verify_bucket` length ((2, 5) covers the draft's 2-token feeds and γ = 4). If the embedding tables are padded to
    different sizes, only the shared vocabulary is compared.

    `device_map` ("auto", "balanced", "sequential", or a {module name: device} dict) loads the
    models through accelerate, split layer by layer over the GPUs of this machine (a model too
    large for one GPU); `device` must then stay "auto". It applies to the draft too, unless
    `draft_device_map` gives the draft its own (a dict names one model's modules). Each model
    takes its ids on its main device and its logits are brought back there, so the engine
    works on one device per model (`specviz.lm.models.main_device`).
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
    if d_spec.kind not in ("prompt-lookup", "object"):
        _check_files(d_spec, tokenizer is None and check_tokenizers, state)
    bars = contextlib.nullcontext() if hf_progress is None else hf_progress_bars(bool(hf_progress))
    with bars:
        # --- target
        if t_spec.kind == "object":
            t_lm = _wrap(t_spec.obj, t_spec.name, dev, explicit_device)
            if not explicit_device:
                dev = str(t_lm.device)
        else:
            t_lm = HFModel(_load_model(t_spec, dev, dtype, say, device_map), t_spec.name)
            if device_map is not None:
                dev = str(t_lm.device)
        t_tok = tokenizer
        if t_tok is None and t_spec.kind != "object":
            t_tok = _load_tokenizer(t_spec, say)
            if t_spec.kind == "gguf":
                _align_gguf_eos(t_tok, t_lm.model, say)
            if t_spec.convert and dtype is None and device_map is None:
                converted.save(t_lm.model, t_tok, Path(t_spec.where), say)
        # --- draft
        d_tok = None
        if d_spec.kind == "prompt-lookup":
            d_lm = None
        elif d_spec.kind == "object":
            d_lm = _wrap(d_spec.obj, d_spec.name, dev, explicit_device)
        else:
            d_lm = HFModel(_load_model(d_spec, dev, dtype, say, draft_device_map), d_spec.name)
            if check_tokenizers and tokenizer is None:
                d_tok = _load_tokenizer(d_spec, say)
                if d_spec.kind == "gguf":
                    _align_gguf_eos(d_tok, d_lm.model, say)
                if d_spec.convert and dtype is None and draft_device_map is None:
                    converted.save(d_lm.model, d_tok, Path(d_spec.where), say)
    sizes = [t_lm.vocab_size] + ([d_lm.vocab_size] if d_lm is not None else [])
    if t_tok is not None:
        sizes.append(len(t_tok))
    shared = min(sizes)
    if d_tok is not None and t_tok is not None:
        _compare_tokenizers(t_tok, d_tok, shared, t_spec.name, d_spec.name)
    if d_lm is None:
        d_lm = PromptLookupModel(shared, device=t_lm.device)
        say(
            f"draft: prompt lookup over the target's {shared} tokens (suffixes of {d_lm.max_ngram} to "
            f"{d_lm.min_ngram} tokens)"
        )
    t_lm, d_lm = _shrink(t_lm, shared), _shrink(d_lm, shared)
    if static_cache or compile:
        t_lm, d_lm = (_static(lm, compile, verify_bucket, say) for lm in (t_lm, d_lm))
    return Pair(t_lm, d_lm, t_tok, dev)


def _static(lm: LanguageModel, compile: bool, verify_bucket, say) -> LanguageModel:
    """An HFModel moved onto a preallocated StaticCache (compiled with compile=True); other models as they are."""
    if not isinstance(lm, HFModel):
        return lm
    from .static_cache import StaticHFModel

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


def _compare_tokenizers(t_tok, d_tok, shared: int, t_name: str, d_name: str) -> None:
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
