"""A Hugging Face causal LM whose sessions write into a preallocated `StaticCache`, optionally compiled.

`HFModel` grows a `DynamicCache` by concatenation and crops it by slicing: fine on a CPU, but
every step has new tensor shapes, so neither `torch.compile` nor CUDA graphs can capture it.
`StaticHFModel` gives each session a `transformers.StaticCache` of `max_length` slots:

- a feed of k tokens writes their keys and values into slots [length, length + k) at explicit
  positions, and the causal mask, built from the write position, hides every slot after them,
  so entries left behind by a rollback are never read, and the next feed overwrites them;
- `truncate` is O(1): it only moves the write position back (nothing is copied or freed);
- with `compile=True` the single-token step runs through `torch.compile` (CUDA graphs, mode
  "reduce-overhead", on a GPU), and so do chunks of up to `verify_bucket` tokens, padded to the
  bucket (several buckets: to the smallest that holds the chunk). Other lengths, and every
  prompt, run eagerly, so the compiled code sees a fixed set of shapes and never recompiles.

How a rollback reaches the cache depends on the installed transformers, decided once from the
model's forward signature and the StaticCache class (see transformers/cache_utils.py,
`StaticCache` and `StaticLayer`, of that version): up to 4.5x the forward takes
`cache_position` and the cache writes where it says; from 5.0 the cache counts its own length,
which the mask reads, and a rollback moves that count back (`crop(-n)` from 5.2x).
Checked on transformers 4.52.1, 4.53.3, 4.57.1, 5.17.0 and 5.24.0.

>>> from specviz.lm import load_pair
>>> pair = load_pair(device="cpu", progress=False)
>>> fast = StaticHFModel(pair.draft.model, "draft-static")
>>> s = fast.session([72, 101]); s.feed([108, 108]).shape
torch.Size([2, 257])
"""

from __future__ import annotations

import inspect
import time
import weakref

import torch

from .features import reading
from .models import LanguageModel, Session, cache_keyword, skip_padding_check, transformers_version, uncached_logits

DEFAULT_MAX_LENGTH = 1024  # cache slots when max_length is not given (or the model's context, if shorter)


def _reserve_compiled_graphs(n: int) -> None:
    """Raise dynamo's per-function recompile limit to cover `n` more graphs, if needed.

    Every transformers model's forward runs through one shared decorator (its `wrapper`), so
    dynamo counts the graphs of all compiled models against one limit (8 by default): two
    models with three shapes each nearly fill it, and with fullgraph=True the next one fails.
    """
    global _COMPILED_GRAPHS
    _COMPILED_GRAPHS += n
    cfg = torch._dynamo.config
    name = "recompile_limit" if hasattr(cfg, "recompile_limit") else "cache_size_limit"
    if getattr(cfg, name) < _COMPILED_GRAPHS:
        setattr(cfg, name, _COMPILED_GRAPHS)


_COMPILED_GRAPHS = 0  # graphs that the StaticHFModels made so far in this process may compile


def _new_static_cache(config, max_length: int, device, dtype):
    """A StaticCache for batch 1 and `max_length` tokens, built with the installed transformers' signature."""
    try:
        from transformers import StaticCache
    except ImportError as e:  # pragma: no cover - every supported version has it
        raise RuntimeError(
            f"transformers {transformers_version()} has no StaticCache; "
            "StaticHFModel needs a version that does (use HFModel instead)"
        ) from e
    params = inspect.signature(StaticCache.__init__).parameters
    if "max_batch_size" in params:  # 4.38 .. 4.5x: (config, max_batch_size, max_cache_len, device, dtype)
        return StaticCache(config=config, max_batch_size=1, max_cache_len=max_length, device=device, dtype=dtype)
    if "batch_size" in params:  # a transitional spelling of the same
        return StaticCache(config=config, batch_size=1, max_cache_len=max_length, device=device, dtype=dtype)
    if "max_cache_len" in params:  # 5.x: (config, max_cache_len), tensors allocated lazily on first update
        return StaticCache(config=config, max_cache_len=max_length)
    raise RuntimeError(
        f"transformers {transformers_version()}: StaticCache{inspect.signature(StaticCache.__init__)} "
        "is a signature StaticHFModel does not know; use HFModel instead"
    )


class StaticSession(Session):
    """One sequence read through a StaticCache: fixed-size buffers, O(1) rollback, ids kept on the device.

    Ids fed as a device tensor are not copied to the host until `tokens` is read (or a rollback
    needs them), so a draft loop that samples on the GPU does not synchronise per token.
    """

    def __init__(self, model: StaticHFModel, prompt_ids, cache, read_features: bool = False):
        self.model = model
        self.cache = cache
        self.next_logits = None
        self.read_features = read_features  # True: the prompt's read too (`Session.read_features`)
        self.tokens = []  # the base class keeps device ids on the device until .tokens is read
        x, host_ids = self._as_input(prompt_ids)
        if x.shape[1] == 0:
            raise ValueError("the prompt is empty: give at least one token")
        if host_ids is None:  # a tensor prompt: check its range once (feeds of tensors are not checked)
            low, high = int(x.min()), int(x.max())
            if low < 0 or high >= model.n_embeddings:
                bad = low if low < 0 else high
                raise ValueError(
                    f"token id {bad} is outside {model.name}'s embedding table of {model.n_embeddings} rows"
                )
        try:
            self._read(x, host_ids, prefill=True)
        except (TypeError, AttributeError, IndexError) as e:
            raise RuntimeError(
                f"transformers {transformers_version()}: {type(model.model).__name__} could not "
                f"run with a StaticCache ({e}); use HFModel instead"
            ) from e
        # the cache must have grown by the prompt: a model that ignores it (an older model class, an unknown
        # keyword) leaves it empty. 4.x counts occupied slots, which may include padding beyond the position.
        seen = int(cache.get_seq_length())
        if seen < self.length or (seen != self.length and model.rollback_by != "cache_position"):
            raise RuntimeError(
                f"transformers {transformers_version()}: after reading {self.length} prompt tokens the StaticCache "
                f"of {type(model.model).__name__} holds {seen}, so the model did not use it; use HFModel instead"
            )

    def _as_input(self, ids) -> tuple:
        """ids (a list or a 1-D integer tensor) -> ((1, k) int64 tensor on the device, the ids as a list or None)."""
        m = self.model
        if isinstance(ids, torch.Tensor):
            if ids.ndim != 1 or ids.dtype.is_floating_point or ids.dtype.is_complex or ids.dtype == torch.bool:
                raise TypeError(
                    f"feed takes a 1-D integer tensor of token ids, got {ids.dtype} of shape {tuple(ids.shape)}"
                )
            with torch.inference_mode():  # a fresh inference tensor: compiled code guards on the kind of tensor
                return ids.to(device=m.device, dtype=torch.long).reshape(1, -1).clone(), None
        out = []
        for t in ids:
            if isinstance(t, torch.Tensor):
                t = t.item()
            if isinstance(t, bool) or int(t) != t:
                raise TypeError(f"token id {t!r} is not an integer")
            t = int(t)
            if not 0 <= t < m.n_embeddings:
                raise ValueError(f"token id {t} is outside {m.name}'s embedding table of {m.n_embeddings} rows")
            out.append(t)
        with torch.inference_mode():
            return torch.tensor([out], dtype=torch.long, device=m.device), out

    def feed(self, ids) -> torch.Tensor:
        """Read `ids` (list or 1-D int tensor); return (len(ids), V) logits, row i predicting the token after ids[i].

        A list is range-checked; a tensor is not (that would synchronise with the device).
        """
        return self._read(*self._as_input(ids))

    @torch.inference_mode()
    def _read(self, x: torch.Tensor, host_ids, prefill: bool = False) -> torch.Tensor:
        k = x.shape[1]
        m = self.model
        if k == 0:
            return torch.zeros((0, m.vocab_size), device=m.device)
        n = self.length
        if n + k > m.max_length:
            raise ValueError(
                f"{m.name}: reading {k} more tokens after {n} overflows its static cache of "
                f"{m.max_length} tokens (max_length)"
            )
        with reading(m.model, self):  # its last layer's output too, when a draft reads it
            rows = m.forward_at(self.cache, x, n, eager=prefill)
        self._record(x[0] if host_ids is None else host_ids)
        self.next_logits = rows[-1]
        return rows

    def _crop(self, n_drop: int) -> None:
        """Roll back: O(1), only the write position moves back (the base class's truncate calls this)."""
        self.model.rewind(self.cache, n_drop)

    def _forward_tree(self, ids, parents):
        raise ValueError(
            f"{self.model.name}: a static KV cache cannot read a draft tree; tree verification needs HFModel's "
            "dynamic cache"
        )


class StaticHFModel(LanguageModel):
    """A Hugging Face causal LM behind the session interface, on a preallocated StaticCache (optionally compiled).

    `max_length` (default: the model's context, at most DEFAULT_MAX_LENGTH) sizes every session's
    cache; it is also this model's `max_positions`, so the engine refuses generations that would
    overflow it. Every step attends over all max_length slots (masked), so a cache much longer
    than the generation costs time.

    `compile=True` runs single-token steps, and chunks of up to `verify_bucket` tokens (an int or
    a tuple of sizes; each chunk is padded to the smallest that holds it), through torch.compile.
    `compile_mode` defaults to "reduce-overhead" (CUDA graphs) on CUDA and "default" elsewhere.
    The first compiled calls are slow: call `warmup()`, with the thread count you will generate
    with, before timing.
    Compiling raises torch._dynamo's recompile limit where needed (see `_reserve_compiled_graphs`).
    """

    def __init__(
        self,
        model,
        name: str,
        vocab_size: int | None = None,
        max_length: int | None = None,
        compile: bool = False,
        verify_bucket=None,
        compile_mode: str | None = None,
    ):
        self.model = model.eval()
        self.name = name
        self.device = next(model.parameters()).device
        self.dtype = next(model.parameters()).dtype
        cfg = model.config
        self.vocab_size = int(vocab_size or cfg.vocab_size)
        self.n_embeddings = int(model.get_input_embeddings().num_embeddings)
        context = getattr(cfg, "n_positions", None) or getattr(cfg, "max_position_embeddings", None)
        if max_length is None:  # every decode step attends over all max_length slots: keep it modest
            if context is None:
                raise ValueError(f"{name}: the config states no context length; pass max_length")
            max_length = min(context, DEFAULT_MAX_LENGTH)
        if int(max_length) != max_length or max_length < 1:
            raise ValueError(f"max_length must be a positive integer, got {max_length!r}")
        if context is not None and max_length > context:
            raise ValueError(f"max_length {max_length} exceeds {name}'s context of {context} positions")
        self.max_length = int(max_length)
        self.max_positions = self.max_length
        sizes = (
            ()
            if verify_bucket is None
            else (tuple(verify_bucket) if isinstance(verify_bucket, (tuple, list)) else (verify_bucket,))
        )
        if not all(isinstance(b, int) and not isinstance(b, bool) and 2 <= b <= max_length for b in sizes) or (
            verify_bucket is not None and not sizes
        ):
            raise ValueError(
                f"verify_bucket must be an integer in [2, max_length] or a tuple of them, got {verify_bucket!r}"
            )
        self.buckets = tuple(sorted(set(sizes)))  # chunk lengths > 1 that run compiled, padded up to one of these
        self.verify_bucket = verify_bucket

        params = inspect.signature(model.forward).parameters
        if "cache" not in params and "past_key_values" not in params:
            raise RuntimeError(
                f"transformers {transformers_version()}: {type(model).__name__}.forward takes neither "
                "`cache` nor `past_key_values`; StaticHFModel cannot pass it a cache"
            )
        self._cache_kw = cache_keyword(model)
        skip_padding_check(model)  # no per-forward read of the ids back to the host
        # How a rollback reaches the cache (decided from the installed transformers, see the module docstring):
        # "cache_position" (4.x): the forward takes it, the cache writes there and the mask is built from it;
        # "crop" (5.2x): the cache counts its own length, which the mask reads; `crop(-n)` moves it back in place;
        # "cumulative_length" (5.0 .. 5.1x): the same count, but static layers have no crop: move it back directly.
        self._pass_cache_position = "cache_position" in params
        probe = _new_static_cache(cfg, 1, self.device, self.dtype)
        layers = getattr(probe, "layers", None) or []
        if self._pass_cache_position:
            self.rollback_by = "cache_position"
        elif layers and all(hasattr(layer, "crop") for layer in layers):
            self.rollback_by = "crop"
        elif layers and all(isinstance(getattr(layer, "cumulative_length", None), torch.Tensor) for layer in layers):
            self.rollback_by = "cumulative_length"
        else:
            raise RuntimeError(
                f"transformers {transformers_version()}: the forward takes no cache_position and the "
                "StaticCache cannot be moved back, so a session cannot roll back; use HFModel instead"
            )
        if any(getattr(probe, "is_sliding", None) or []):
            raise ValueError(
                f"{name} has sliding-window layers, whose static cache cannot roll back past the window; "
                "use HFModel instead"
            )
        self._free_caches: list = []  # caches of finished sessions, reused (keeps CUDA-graph addresses stable)

        self.compile_mode = None
        self._compiled = None
        if compile:
            self.compile_mode = compile_mode or ("reduce-overhead" if self.device.type == "cuda" else "default")
            self._compiled = torch.compile(model.forward, mode=self.compile_mode, fullgraph=True, dynamic=False)
            _reserve_compiled_graphs(2 * (1 + len(self.buckets)))  # room for two thread counts
        elif verify_bucket is not None:
            raise ValueError("verify_bucket only applies with compile=True")
        self._uses_cudagraphs = (
            self._compiled is not None
            and self.device.type == "cuda"
            and self.compile_mode in ("reduce-overhead", "max-autotune")
        )

    @property
    def compiled(self) -> bool:
        """Whether single-token steps run through torch.compile."""
        return self._compiled is not None

    def session(self, prompt_ids, read_features: bool = False) -> StaticSession:
        """A session that has read `prompt_ids`, on a pooled cache (back to the pool when the session is dropped);
        `read_features`: keeping its last layer's features from the prompt on (`Session.read_features`)."""
        cache = self._free_caches.pop() if self._free_caches else None
        with torch.inference_mode():  # all cache tensors are inference tensors, whoever calls (compiled code guards
            if cache is None:  # on the kind of tensor, and in-place updates need one kind)
                cache = _new_static_cache(self.model.config, self.max_length, self.device, self.dtype)
            else:
                cache.reset()
        try:
            s = StaticSession(self, prompt_ids, cache, read_features)
        except BaseException:
            self._free_caches.append(cache)
            raise
        weakref.finalize(s, self._free_caches.append, cache)  # back to the pool when the session is dropped
        return s

    def forward_at(self, cache, x: torch.Tensor, position: int, eager: bool = False) -> torch.Tensor:
        """Run (1, k) ids at positions [position, position + k) through `cache`; return (k, V) float logits.

        `eager` skips the compiled code: a session's prompt, which also allocates a fresh cache's
        buffers (marked as static addresses for CUDA graphs only outside compiled code).
        """
        k = x.shape[1]
        fn, n_run = self.model, k
        if self._compiled is not None and not eager:
            if k == 1:
                fn = self._compiled
            else:
                fits = [b for b in self.buckets if k <= b and position + b <= self.max_length]
                if fits:
                    fn, n_run = self._compiled, fits[0]
                    # padding after the real tokens: causal attention keeps it out of their rows, and its cache
                    # slots are rolled back below
                    x = torch.cat([x, x.new_zeros((1, n_run - k))], dim=1)
        pos = torch.arange(position, position + n_run, device=self.device)
        kwargs = {self._cache_kw: cache, "use_cache": True, "position_ids": pos[None]}
        if self._pass_cache_position:
            kwargs["cache_position"] = pos
        if fn is not self.model and self._uses_cudagraphs and hasattr(torch.compiler, "cudagraph_mark_step_begin"):
            torch.compiler.cudagraph_mark_step_begin()  # a new step: earlier outputs may be overwritten
        logits = fn(input_ids=x, **kwargs).logits
        rows = logits[0, :k, : self.vocab_size].float()
        if fn is not self.model and self._uses_cudagraphs:
            rows = rows.clone()  # CUDA-graph outputs live in buffers that the next replay overwrites
        if n_run > k:
            self.rewind(cache, n_run - k)
        return rows

    def rewind(self, cache, n_drop: int) -> None:
        """Move a cache's write position back by `n_drop` tokens (stale slots are masked, then overwritten)."""
        if self.rollback_by == "cache_position":
            return  # the next feed's cache_position says where to write
        with torch.inference_mode():
            if self.rollback_by == "crop":
                cache.crop(-int(n_drop))
            else:
                for layer in cache.layers:
                    layer.cumulative_length.sub_(int(n_drop))

    def warmup(self, threads: int | None = 1) -> float:
        """Compile every shape a generation uses (and record its CUDA graphs) on a throwaway session; return seconds.

        Compiled code is specialised on torch's CPU thread count: pass the `threads` you will
        generate with (the engine's default is 1; None keeps the current count).
        """
        t0 = time.perf_counter()
        old = torch.get_num_threads()
        if threads is not None:
            torch.set_num_threads(int(threads))
        try:
            s = self.session([0])
            for _ in range(3):  # CUDA graph trees run a shape once to warm up, then record it
                s.feed([0])
                for b in self.buckets:
                    s.feed([0] * b)
                s.truncate(1, s.next_logits)
            if self.device.type == "cuda":
                torch.cuda.synchronize(self.device)
            del s
        finally:
            torch.set_num_threads(old)
        return time.perf_counter() - t0

    def full_logits(self, ids) -> torch.Tensor:
        """(len(ids), V) logits of one uncached forward pass (for tests and exact enumeration)."""
        return uncached_logits(self.model, ids, self.vocab_size, self.device)
