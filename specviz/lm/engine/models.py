"""The small model interface the engine drives, with a toy n-gram model and a Hugging Face adapter.

A `Session` is one model reading one growing token sequence with a cache:

    s = model.session(prompt_ids)        # reads the prompt
    s.next_logits                        # (V,) logits for the token after everything read
    rows = s.feed([t1, t2, t3])          # (3, V): logits after t1, after t2, after t3
    s.truncate(len(prompt_ids) + 1)      # roll the cache back: keep prompt + t1 only
    s.feed_tree([5, 6, 7], [-1, -1, 0])  # draft-tree nodes: two children of the last token, one grandchild
    s.keep_path([0, 2])                  # commit the path 5, 7; drop the other node (tree_attention.py)

>>> lm = NGramModel.random(vocab_size=4, order=2, seed=0)
>>> s = lm.session([1])
>>> tuple(s.feed([2, 3]).shape)
(2, 4)
>>> s.truncate(2); s.length
2
"""

from __future__ import annotations

import inspect

import numpy as np
import torch

from ...foundation.checks import integer, real
from ...samplers.sampling import make_rng
from ..trees.attention import TreeSession, forward_tree, keep_cache_path, tree_paths
from .features import reading, toy_features
from .lm_head import rows_as_columns


class Session(TreeSession):
    """One model reading one sequence (base class: subclasses implement _forward and _crop; draft trees: TreeSession)."""

    read_features = False  # True: each read keeps its last decoder layer's output (before the final norm)
    features = None  # then (k, H): the features of the k positions the last feed or feed_tree read

    def __init__(self, model, prompt_ids, read_features: bool = False):
        self.model = model
        self.tokens = []
        self.next_logits = None  # (V,) torch float tensor
        self.read_features = read_features  # True: the prompt's read too, `features` one row per prompt position
        ids = list(prompt_ids)
        if not ids:
            raise ValueError("the prompt is empty: give at least one token")
        self.feed(ids)

    @property
    def tokens(self) -> list:
        """The ids read so far; ids fed as a device tensor are copied to the host on first access."""
        if self._pending:
            dev = next(t.device for t in self._pending if isinstance(t, torch.Tensor))
            parts = [
                t if isinstance(t, torch.Tensor) else torch.tensor(t, dtype=torch.long, device=dev)
                for t in self._pending
            ]
            self._tokens.extend(torch.cat(parts).tolist())
            self._pending.clear()
            self._n_pending = 0
        return self._tokens

    @tokens.setter
    def tokens(self, ids) -> None:
        self._tokens = list(ids)
        self._pending = []  # 1-D device tensors of ids not yet copied to the host
        self._n_pending = 0

    @property
    def length(self) -> int:
        """Number of tokens read so far (no host synchronisation)."""
        return len(self._tokens) + self._n_pending

    def feed(self, ids) -> torch.Tensor:
        """Read `ids` (a list of ints or a 1-D integer tensor); return (len(ids), V) logits, row i after ids[i]."""
        if self.tree_parents:
            raise ValueError("feed while draft-tree nodes are in the cache: call keep_path first")
        if isinstance(ids, torch.Tensor):
            if ids.ndim != 1 or ids.dtype.is_floating_point or ids.dtype.is_complex or ids.dtype == torch.bool:
                raise TypeError(
                    f"feed takes a 1-D integer tensor of token ids, got {ids.dtype} of shape {tuple(ids.shape)}"
                )
        else:
            ids = [int(t) for t in ids]
        if len(ids) == 0:
            return self.next_logits.new_zeros((0, self.next_logits.shape[-1]))
        rows = self._forward(ids)  # (k, V)
        self._record(ids)
        self.next_logits = rows[-1]
        return rows

    def _record(self, ids) -> None:
        """Remember ids just read: a device tensor waits until .tokens is read (no sync here)."""
        if isinstance(ids, torch.Tensor) or self._pending:
            self._pending.append(ids)
            self._n_pending += len(ids)
        else:
            self._tokens.extend(ids)

    def _drop_tail(self, n: int) -> None:
        """Forget the last n ids (slicing ids still on the device, without reading them)."""
        while n and self._pending:
            last = self._pending[-1]
            if len(last) <= n:
                self._pending.pop()
                n -= len(last)
                self._n_pending -= len(last)
            else:
                self._pending[-1] = last[: len(last) - n]
                self._n_pending -= n
                n = 0
        if n:
            del self._tokens[len(self._tokens) - n :]

    def truncate(self, length: int, next_logits=None) -> None:
        """Forget everything after the first `length` tokens (cache rollback, no recompute).

        `next_logits` are the logits after token length-1, which the caller usually has
        (the rows returned by `feed`); without them the last kept token is re-read.
        """
        if self.tree_parents:  # draft-tree nodes go first
            self.keep_path(())
        if not 0 < length <= self.length:
            raise ValueError(f"cannot truncate a session of {self.length} tokens to {length}")
        drop = self.length - length
        if drop == 0:
            if next_logits is not None:
                self.next_logits = next_logits
            return
        if next_logits is None:  # re-read the last kept token to get its logits
            last = self.tokens[length - 1]
            self._crop(drop + 1)
            self._drop_tail(drop + 1)
            self.feed([last])
            return
        self._crop(drop)
        self._drop_tail(drop)
        self.next_logits = next_logits

    def _forward(self, ids):  # pragma: no cover - interface
        """(k, V) logits for `ids` (a list of ints or a 1-D tensor) read after self.tokens."""
        raise NotImplementedError

    def _crop(self, n_drop: int):  # pragma: no cover - interface
        raise NotImplementedError


class LanguageModel:
    """What the engine needs from a model: a vocabulary size, a context limit, sessions."""

    vocab_size: int
    max_positions: int | None = None
    name: str = "model"
    device: torch.device = torch.device("cpu")  # where its logits live

    def session(self, prompt_ids, read_features: bool = False) -> Session:
        """A `Session` that has read `prompt_ids` (`read_features`: keeping its features from the prompt on)."""
        raise NotImplementedError


# ------------------------------------------------------------------------------ toy n-gram


class _NGramSession(Session):
    def _forward(self, ids):
        ids = ids.tolist() if isinstance(ids, torch.Tensor) else ids
        self.features = toy_features(ids, self.model.vocab_size) if self.read_features else None
        hist = self.tokens + ids
        start = len(self.tokens)
        rows = [self.model.logits_for(hist[: start + i + 1]) for i in range(len(ids))]
        return torch.stack(rows)

    def _forward_tree(self, ids, parents):
        self.features = toy_features(ids, self.model.vocab_size) if self.read_features else None
        paths = tree_paths((*self._tree_ids, ids), parents, len(ids))
        return torch.stack([self.model.logits_for(self.tokens + path) for path in paths])

    def _keep_path(self, path):
        """The history is the cache: the kept ids are recorded, nothing else moves."""

    def truncate(self, length, next_logits=None):
        # an n-gram "cache" is just the history: rollback is exact and free
        if self.tree_parents:
            self.keep_path(())
        if not 0 < length <= self.length:
            raise ValueError(f"cannot truncate a session of {self.length} tokens to {length}")
        del self.tokens[length:]
        self.next_logits = self.model.logits_for(self.tokens)


MAX_NGRAM_ORDER = 8
"""The longest context (order - 1 tokens) plus one that `NGramModel.random` builds a table for."""

MAX_NGRAM_CELLS = 1 << 24
"""The most cells (vocab_size ** order, 128 MiB of float64) a random n-gram table may have."""


class NGramModel(LanguageModel):
    """A toy autoregressive model with known probabilities: next token depends on the last order-1 tokens.

    `table` has shape (V,)*(order-1) + (V,): table[c1, ..., c_{order-1}] is the next-token
    distribution. Contexts shorter than order-1 are left-padded with token 0.
    """

    def __init__(self, table: np.ndarray, name: str = "ngram", max_positions: int | None = None):
        table = np.asarray(table, dtype=np.float64)
        if table.ndim == 0 or table.shape[-1] == 0:
            raise ValueError(f"n-gram table must have shape (V,)*order with V >= 1 tokens, got {table.shape}")
        V = table.shape[-1]
        if any(d != V for d in table.shape):
            raise ValueError(f"n-gram table must have shape (V,)*order, got {table.shape}")
        if not np.isfinite(table).all() or (table < 0).any() or not np.allclose(table.sum(-1), 1):
            raise ValueError("every n-gram table row must be a probability distribution")
        self.table = table
        self.order = table.ndim
        self.vocab_size = V
        self.device = torch.device("cpu")
        self.name = name
        self.max_positions = max_positions
        with np.errstate(divide="ignore"):
            self._logits = torch.from_numpy(np.log(table))  # -inf where p = 0

    @classmethod
    def random(cls, vocab_size: int, order: int = 2, seed=None, concentration: float = 1.0, name="ngram"):
        """A table of Dirichlet(concentration) rows: vocab_size >= 1 tokens, order >= 1, at most MAX_NGRAM_CELLS."""
        V = integer(vocab_size, "vocab_size", lo=1, hi=MAX_NGRAM_CELLS)
        order = integer(order, "order", lo=1, hi=MAX_NGRAM_ORDER)
        if V**order > MAX_NGRAM_CELLS:
            raise ValueError(
                f"an n-gram table with vocab_size={V} and order={order} has {V}^{order} cells; at most {MAX_NGRAM_CELLS}"
            )
        alpha = real(concentration, "concentration", lo=0, lo_open=True)
        rng = make_rng(seed)
        table = rng.dirichlet(np.full(V, alpha), size=(V,) * (order - 1))
        return cls(table, name=name)

    def context(self, tokens) -> tuple:
        k = self.order - 1
        ctx = [0] * max(0, k - len(tokens)) + list(tokens[-k:] if k else [])
        return tuple(ctx)

    def probs_for(self, tokens) -> np.ndarray:
        """(V,) exact next-token distribution after `tokens`."""
        return self.table[self.context(tokens)]

    def logits_for(self, tokens) -> torch.Tensor:
        return self._logits[self.context(tokens)]

    def session(self, prompt_ids, read_features: bool = False):
        return _NGramSession(self, prompt_ids, read_features)


# ------------------------------------------------------------------------------ Hugging Face
# The KV-cache API moved between transformers releases: 5.24 takes the cache as `cache=` (and still
# accepts `past_key_values=`, with a deprecation notice, until 5.40); earlier releases take only
# `past_key_values=` and silently ignore `cache=`. DynamicCache takes `config=` in 4.56 but not in
# 4.53. GPT-2 reads a DynamicCache from 4.52 on (4.51 expects legacy tuples), hence the floor in
# pyproject.toml. `crop(-n)` drops the last n tokens in 4.x and 5.x alike.

TRANSFORMERS_FLOOR = "4.52.1"  # the lowest transformers tested (`make test-floor`), declared in pyproject.toml


def transformers_version() -> str:
    """The installed transformers version string."""
    import transformers

    return transformers.__version__


def cache_keyword(model) -> str:
    """The keyword `model.forward` takes its KV cache by: 'cache' (transformers >= 5.24) or 'past_key_values'."""
    params = inspect.signature(model.forward).parameters
    for name in ("cache", "past_key_values"):
        if name in params:
            return name
    from packaging.version import Version

    return "cache" if Version(transformers_version()).release >= (5, 24) else "past_key_values"


def new_dynamic_cache(config):
    """An empty DynamicCache for a model with `config` (passed where the installed transformers takes it)."""
    from transformers import DynamicCache

    if "config" in inspect.signature(DynamicCache.__init__).parameters:
        return DynamicCache(config=config)
    return DynamicCache()


def _no_padding_check(*args, **kwargs) -> None:
    """Sessions never pad: nothing to warn about."""


def skip_padding_check(model) -> None:
    """Switch off transformers' padding warning on `model`'s submodules (sessions never pad their ids).

    Without an attention mask, models whose config names a pad token look for it in every
    forward's ids (`PreTrainedModel.warn_if_padding_and_no_attention_mask`), which reads the
    ids back to the host: a GPU synchronisation per forward. (An all-ones attention mask is no
    way out: transformers' mask code then reads the mask back to test it for padding.)
    """
    for mod in model.modules():
        if hasattr(mod, "warn_if_padding_and_no_attention_mask"):
            mod.warn_if_padding_and_no_attention_mask = _no_padding_check


class _HFSession(Session):
    def __init__(self, model, prompt_ids, read_features: bool = False):
        self.cache = new_dynamic_cache(model.model.config)
        super().__init__(model, prompt_ids, read_features)

    @torch.inference_mode()
    def _forward(self, ids):
        m = self.model
        if isinstance(ids, torch.Tensor):
            x = ids.to(device=m.device, dtype=torch.long).reshape(1, -1)
        else:
            x = torch.tensor([ids], dtype=torch.long, device=m.device)  # (1, k)
        before = self.cache.get_seq_length()
        where = f"transformers {transformers_version()}: {type(m.model).__name__}"
        try:
            with reading(m.model, self):  # its last layer's output too, when a draft reads it
                out = m.model(input_ids=x, use_cache=True, **{m.cache_keyword: self.cache})
        except KeyError as e:  # what GPT-2 in releases before the floor raises on a DynamicCache
            raise RuntimeError(
                f"{where} cannot read a DynamicCache ({e!r}); specviz needs transformers>={TRANSFORMERS_FLOOR}"
            ) from e
        after = self.cache.get_seq_length()
        if after != before + x.shape[1]:
            raise RuntimeError(
                f"{where} ignored the KV cache passed as {m.cache_keyword}= (its length went {before} -> {after} "
                f"after reading {x.shape[1]} tokens), so decoding would forget its context; specviz supports "
                f"transformers>={TRANSFORMERS_FLOOR}"
            )
        # (k, V) only the shared vocabulary; a model split over devices may return its logits on the device
        # of its last layer: move them to the model's one device (a no-op when they are there already)
        return out.logits[0, :, : m.vocab_size].float().to(m.device)

    def _crop(self, n_drop):
        self.cache.crop(-n_drop)

    def _forward_tree(self, ids, parents):
        with reading(self.model.model, self):
            return forward_tree(self.model, self.cache, self.length, ids, parents)

    def _keep_path(self, path):
        keep_cache_path(self.cache, self.length, path, len(self.tree_parents))


class HFModel(LanguageModel):
    """A Hugging Face causal LM behind the session interface (DynamicCache with crop)."""

    def __init__(self, model, name: str, vocab_size: int | None = None):
        self.model = model.eval()
        self.name = name
        self.device = main_device(model)  # where ids go in and logits are brought back (see main_device)
        self.vocab_size = int(vocab_size or model.config.vocab_size)
        self.max_positions = getattr(model.config, "n_positions", None) or getattr(
            model.config, "max_position_embeddings", None
        )
        self.cache_keyword = cache_keyword(model)
        skip_padding_check(model)
        out = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
        if out is not None:
            rows_as_columns(out)  # a verify step's 2-4 rows through the LM head, on a CPU (lm_head.py says why)

    def session(self, prompt_ids, read_features: bool = False):
        return _HFSession(self, prompt_ids, read_features)

    def full_logits(self, ids) -> torch.Tensor:
        """(len(ids), V) float logits of one uncached forward pass over `ids`, on the model's device."""
        return uncached_logits(self.model, ids, self.vocab_size, self.device)

    @property
    def device_map(self) -> dict | None:
        """accelerate's device map of a model split over devices (module name -> device), else None."""
        return split_device_map(self.model)


def split_device_map(model) -> dict | None:
    """The `hf_device_map` of a model dispatched by accelerate (None for a model on one device)."""
    dm = getattr(model, "hf_device_map", None)
    return dict(dm) if dm else None


def main_device(model) -> torch.device:
    """The one device a (possibly split) Hugging Face model takes its ids on: where the engine keeps p.

    A model dispatched by accelerate (`device_map=...`) carries a hook on its root module whose
    execution device is the main device (inputs go there, outputs come back there); without a
    hook, the first device in `hf_device_map` that is not "cpu"/"disk" offload; otherwise the
    device of the first parameter that is not on "meta" (offloaded weights sit on "meta").

    >>> main_device(torch.nn.Linear(2, 2))
    device(type='cpu')
    """
    hook = getattr(model, "_hf_hook", None)
    dev = getattr(hook, "execution_device", None)
    if dev is not None:
        return _as_device(dev)
    dm = getattr(model, "hf_device_map", None) or {}
    on_devices = [d for d in dm.values() if str(d) not in ("cpu", "disk", "meta")]
    if on_devices:
        return _as_device(on_devices[0])
    for p in model.parameters():
        if p.device.type != "meta":
            return p.device
    return torch.device("cpu")


def _as_device(dev) -> torch.device:
    """An accelerate device (an int GPU index, a string or a torch.device) as a torch.device."""
    if isinstance(dev, int):
        return torch.device("cuda", dev)
    return torch.device(dev)


@torch.inference_mode()
def uncached_logits(hf_model, ids, vocab_size: int, device) -> torch.Tensor:
    """(len(ids), V) float logits of one forward pass without a cache (the reference for cached sessions)."""
    ids = ids.tolist() if isinstance(ids, torch.Tensor) else [int(t) for t in ids]
    if not ids:
        raise ValueError("full_logits needs at least one token id")
    x = torch.tensor([ids], dtype=torch.long, device=device)
    return hf_model(input_ids=x, use_cache=False).logits[0, :, :vocab_size].float().to(device)
