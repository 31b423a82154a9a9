"""Draft trees in a session's cache: read every node in one forward, then keep one path.

A draft tree grows after a session's committed tokens. Each node has a parent: -1 (the root,
the last committed token) or an earlier node. `feed_tree` reads N new nodes in one forward in
which each node sees every committed position, its own ancestors among the tree nodes and
itself, at position `committed + depth` (a child of the root sits where the next token would):
its logits row is what feeding the path root -> node would give. `keep_path` commits one chain
of nodes and drops the others: every layer's keys and values at the kept positions move up
behind the committed ones, and the prefix is never recomputed.

How the mask reaches a Hugging Face model, read in the installed sources: one float mask of
shape (1, 1, N, committed + tree nodes), 0 where a node may look and the dtype's minimum
elsewhere, with explicit `position_ids`.
- transformers 4.52 .. 4.5x: GPT-2's and Llama's `_update_causal_mask` pass a 4-D mask through
  as given ("already in inverted form", additive);
- 5.x: `masking_utils.create_causal_mask` returns a 4-D mask as it is (its early exit); eager
  attention adds it to the scores, SDPA takes it as its float `attn_mask`.
Flash and flex attention take no dense mask, and a sliding-window model would need the window in
the mask too: `check_tree_support` refuses them in one line. The cache gather writes in place into
5.x's `cache.layers[i].keys/.values` or 4.52's `key_cache`/`value_cache` lists, then `crop`s.

>>> tree_depths((-1, -1, 0, 2))
(0, 0, 1, 2)
>>> path_to((-1, -1, 0, 2), 3)
[0, 2, 3]
>>> tree_paths(([5, 6, 7, 8],), (-1, -1, 0, 2), 2)
[[5, 7], [5, 7, 8]]
"""

from __future__ import annotations

import functools
import inspect

import torch

from ...foundation.checks import exact_int


def _transformers_version() -> str:
    import transformers

    return transformers.__version__


class TreeSession:
    """What every session does with a draft tree: read its nodes in one forward, keep one path.

    A subclass implements `_forward_tree(ids, parents)` ((N, V) logits of the N new nodes `ids`,
    the last N of all the nodes' `parents`) and `_keep_path(path)` (its cache keeps the committed
    tokens, then the nodes `path`, and nothing else); `Session` supplies the rest.
    """

    tree_parents: tuple = ()  # each tree node's parent (-1: the last committed token), in the order read
    _tree_ids: tuple = ()  # the tree nodes' ids, in the parts fed (lists of ints, or device tensors left unread)

    def feed_tree(self, ids, parents) -> torch.Tensor:
        """Read draft-tree nodes after the committed tokens; return (N, V) logits, row i after the path to node i.

        `ids`: N token ids (a list or a 1-D integer tensor); `parents[i]`: -1 (the last committed
        token) or the index of an earlier node (the nodes already read, 0..M-1, then this call's
        M..M+N-1). `next_logits` and `length` still describe the committed tokens.
        """
        ids, parents = check_tree(ids, parents, len(self.tree_parents))
        if not parents:
            return self.next_logits.expand(0, -1)
        rows = self._forward_tree(ids, self.tree_parents + parents)
        self.tree_parents, self._tree_ids = self.tree_parents + parents, (*self._tree_ids, ids)
        return rows

    def keep_path(self, path, next_logits=None) -> None:
        """Commit the tree nodes `path` (a chain down from a child of the root; may be empty), drop every other node.

        `next_logits`: the logits after the last kept token when the caller has them (a row of
        `feed_tree`); without them that token is read again, as `truncate` does.
        """
        path = check_path(path, self.tree_parents)
        ids = path_ids(self._tree_ids, path)
        self._keep_path(path)
        self.tree_parents, self._tree_ids = (), ()
        self._record(ids)
        if next_logits is not None:
            self.next_logits = next_logits
        elif path:
            self.truncate(self.length - 1, self.next_logits)  # drop the last kept token, then read it again
            self.feed(ids[-1:])

    def _forward_tree(self, ids, parents) -> torch.Tensor:  # pragma: no cover - interface
        raise NotImplementedError

    def _keep_path(self, path) -> None:  # pragma: no cover - interface
        raise NotImplementedError


def _whole(x, what: str) -> int:
    """x as an int when it is a whole number (an int, a numpy or 0-d tensor integer); a TypeError names `what`."""
    if type(x) is int:  # the fast path: the engine's lists
        return x
    n = exact_int(x)
    if n is None:
        raise TypeError(f"{what} must be an integer, got {x!r:.60}")
    return n


def check_parents(parents, n_before: int = 0, what: str = "parents") -> tuple:
    """`parents` as a tuple of ints, each -1 (a child of the root) or an earlier node: a list that names a later
    node (or the node itself) would be a cycle, and every layout function here refuses it before walking it.

    `n_before`: nodes already read before these (a `feed_tree` call's own nodes may hang under them).

    >>> check_parents([-1, 0, 0])
    (-1, 0, 0)
    >>> check_parents([1, 0])
    Traceback (most recent call last):
    ...
    ValueError: parents: tree node 0 has parent 1: give -1 (the root) or an earlier node (none here); a later node or the node itself would make a cycle
    """
    if parents is None or isinstance(parents, (str, bytes, dict)) or not hasattr(parents, "__len__"):
        raise TypeError(f"{what} must be a list of node indices (-1 for the root), got {parents!r:.60}")
    if isinstance(parents, torch.Tensor):
        parents = parents.tolist()
    out = tuple(_whole(p, f"{what}[{i}]") for i, p in enumerate(parents))
    for i, p in enumerate(out):
        if not -1 <= p < n_before + i:
            earlier = f"0..{n_before + i - 1}" if n_before + i else "none here"
            raise ValueError(
                f"{what}: tree node {n_before + i} has parent {p}: give -1 (the root) or an earlier node ({earlier}); "
                "a later node or the node itself would make a cycle"
            )
    return out


def _count(x, what: str, hi: int) -> int:
    """A whole number 0..hi (a node count or a node index); errors name `what` and the range."""
    n = _whole(x, what)
    if not 0 <= n <= hi:
        raise ValueError(f"{what} must be in 0..{hi}, got {n}")
    return n


def check_tree(ids, parents, n_before: int) -> tuple:
    """(ids, parents) checked: ids a list of ints or a 1-D integer tensor, parents a tuple (-1 or an earlier node)."""
    if isinstance(ids, torch.Tensor):
        if ids.ndim != 1 or ids.dtype.is_floating_point or ids.dtype.is_complex or ids.dtype == torch.bool:
            raise TypeError(
                f"feed_tree takes a 1-D integer tensor of token ids, got {ids.dtype} of shape {tuple(ids.shape)}"
            )
    else:
        if ids is None or isinstance(ids, (str, bytes, dict)) or not hasattr(ids, "__len__"):
            raise TypeError(f"feed_tree takes a list of token ids, got {ids!r:.60}")
        ids = [_whole(t, f"feed_tree's ids[{i}] (a token id)") for i, t in enumerate(ids)]
        if any(t < 0 for t in ids):
            i = next(i for i, t in enumerate(ids) if t < 0)
            raise ValueError(f"feed_tree's ids[{i}] is {ids[i]}: token ids are >= 0")
    parents = check_parents(parents, n_before, "feed_tree's parents")
    if len(parents) != len(ids):
        raise ValueError(f"feed_tree got {len(ids)} token ids but {len(parents)} parents")
    return ids, parents


def tree_depths(parents) -> tuple:
    """Each node's depth: 0 for a child of the root (the last committed token), its parent's + 1 otherwise."""
    return _depths(check_parents(parents))


def _depths(parents: tuple) -> tuple:
    depths = []
    for p in parents:
        depths.append(0 if p < 0 else depths[p] + 1)
    return tuple(depths)


def path_to(parents, node: int) -> list:
    """The nodes from a child of the root down to `node`, in order (the root itself is committed, not a node)."""
    parents = check_parents(parents)
    node = _whole(node, "node")
    if not -1 <= node < len(parents):
        raise ValueError(f"node must be -1 (the root: an empty path) or a tree node 0..{len(parents) - 1}, got {node}")
    return _path_to(parents, node)


def _path_to(parents: tuple, node: int) -> list:
    """`path_to` for checked parents (each earlier than its child, so the walk ends)."""
    chain = []
    while node >= 0:
        chain.append(node)
        node = parents[node]
    return chain[::-1]


def check_path(path, parents) -> list:
    """`path` checked as a chain of tree nodes down from a child of the root (each the parent of the next)."""
    parents = check_parents(parents)
    if path is None or isinstance(path, (str, bytes, dict)) or not hasattr(path, "__iter__"):
        raise TypeError(f"keep_path takes a list of tree nodes, got {path!r:.60}")
    path = [_whole(i, f"keep_path's path[{k}]") for k, i in enumerate(path)]
    if path and (not all(0 <= i < len(parents) for i in path) or _path_to(parents, path[-1]) != path):
        raise ValueError(
            f"keep_path takes a chain of tree nodes down from a child of the root, each the parent of the next; "
            f"got {path} for parents {list(parents)}"
        )
    return path


def path_ids(parts, path):
    """The ids of tree nodes `path`, from the ids fed in `parts`: a list, or a device tensor if any part was one."""
    if not any(isinstance(p, torch.Tensor) for p in parts):
        flat = [t for part in parts for t in part]
        return [flat[i] for i in path]
    dev = next(p.device for p in parts if isinstance(p, torch.Tensor))
    flat = torch.cat([torch.as_tensor(p, dtype=torch.long, device=dev) for p in parts])
    return flat[torch.tensor(path, dtype=torch.long, device=dev)]


def tree_paths(parts, parents, n_new: int) -> list:
    """For each of the last `n_new` nodes, the token ids (ints) of the path down to it (for uncached models).

    `parts`: the ids fed so far, one list (or 1-D tensor) per `feed_tree` call, `len(parents)` ids in all.
    """
    parents = check_parents(parents)
    n_new = _count(n_new, "n_new (the nodes just read)", len(parents))
    given = sum(len(part) for part in parts)
    if given != len(parents):
        raise ValueError(f"tree_paths got {given} token ids in its parts but {len(parents)} parents: one id a node")
    first = len(parents) - n_new
    return [[int(t) for t in path_ids(parts, _path_to(parents, node))] for node in range(first, len(parents))]


def tree_mask(parents, n_new: int, committed: int, dtype, device) -> torch.Tensor:
    """(1, 1, n_new, committed + len(parents)) additive mask: 0 where a new node may look, dtype's minimum elsewhere.

    Row i is node len(parents) - n_new + i: it sees every committed position, its ancestors and itself.
    """
    parents = check_parents(parents)
    total = len(parents)
    n_new = _count(n_new, "n_new (the nodes just read)", total)
    committed = _whole(committed, "committed (the positions before the tree)")
    if committed < 0:
        raise ValueError(f"committed (the positions before the tree) must be >= 0, got {committed}")
    sees = torch.zeros((n_new, total), dtype=torch.bool)
    for row, node in enumerate(range(total - n_new, total)):
        sees[row, _path_to(parents, node)] = True
    tree = torch.full((n_new, total), torch.finfo(dtype).min, dtype=dtype).masked_fill_(sees, 0)
    prefix = torch.zeros((n_new, committed), dtype=dtype, device=device)
    return torch.cat([prefix, tree.to(device)], dim=1)[None, None]


def tree_positions(parents, n_new: int, committed: int, device) -> torch.Tensor:
    """(1, n_new) position ids of the last n_new nodes: committed + depth."""
    parents = check_parents(parents)
    depths = _depths(parents)[len(parents) - _count(n_new, "n_new (the nodes just read)", len(parents)) :]
    return torch.tensor([[committed + d for d in depths]], dtype=torch.long, device=device)


@functools.lru_cache(maxsize=64)
def forward_parameters(model_class) -> frozenset:
    """The parameter names of a model class's forward (read once per class: a signature costs ~0.15 ms)."""
    return frozenset(inspect.signature(model_class.forward).parameters)


def check_tree_support(model) -> None:
    """Raise one line naming the transformers version and the model class where `model` cannot take a tree mask."""
    cfg = model.config
    impl = getattr(cfg, "_attn_implementation", None) or "eager"
    params = forward_parameters(type(model))
    why = None
    if impl not in ("eager", "sdpa"):
        why = f"its {impl} attention takes no dense 4-D mask (load it with attn_implementation='sdpa' or 'eager')"
    elif "sliding_attention" in (getattr(cfg, "layer_types", None) or ()) or (
        getattr(cfg, "sliding_window", None) and getattr(cfg, "use_sliding_window", True)
    ):
        why = "its sliding-window attention would need the window in the tree mask"
    elif not {"attention_mask", "position_ids"} <= set(params):
        why = "its forward takes no attention_mask or position_ids"
    if why:
        raise ValueError(
            f"transformers {_transformers_version()}: {type(model).__name__} cannot verify a draft tree: {why}"
        )


@torch.inference_mode()
def forward_tree(model, cache, committed: int, ids, parents) -> torch.Tensor:
    """(N, V) float logits of the N new nodes `ids` (the last N of `parents`), read through `cache` in one forward.

    `model` is an `HFModel`; `cache` (a DynamicCache) holds the `committed` tokens, then the earlier nodes.
    """
    hf, dev, n, total = model.model, model.device, len(ids), len(parents)
    check_tree_support(hf)
    positions = tree_positions(parents, n, committed, dev)
    deepest = committed + max(tree_depths(parents)[total - n :])
    if model.max_positions and deepest >= model.max_positions:
        raise ValueError(f"{model.name}: a tree node at position {deepest} is past its {model.max_positions} positions")
    before = cache.get_seq_length()
    if before != committed + total - n:
        raise RuntimeError(f"the cache holds {before} positions, not {committed} committed + {total - n} tree nodes")
    x = torch.as_tensor(ids, dtype=torch.long, device=dev).reshape(1, -1)
    mask = tree_mask(parents, n, committed, hf.dtype, dev)
    out = hf(input_ids=x, attention_mask=mask, position_ids=positions, use_cache=True, **{model.cache_keyword: cache})
    if cache.get_seq_length() != before + n:
        raise RuntimeError(
            f"transformers {_transformers_version()}: {type(hf).__name__} did not grow the cache by {n} tree nodes"
        )
    return out.logits[0, :, : model.vocab_size].float().to(dev)


def _kv_tensors(cache) -> list:
    """Every layer's key and value tensors (batch, heads, positions, dim) of a DynamicCache, 5.x or 4.5x."""
    layers = getattr(cache, "layers", None)
    if layers is not None:  # 5.x (and late 4.5x): one layer object each, its .keys and .values
        if any(getattr(layer, "is_sliding", False) for layer in layers):
            raise ValueError("a sliding-window cache layer cannot keep a tree path")
        tensors = [t for layer in layers for t in (getattr(layer, "keys", None), getattr(layer, "values", None))]
    elif hasattr(cache, "key_cache"):  # 4.52: the lists key_cache and value_cache
        tensors = [*cache.key_cache, *cache.value_cache]
    else:
        raise ValueError(
            f"transformers {_transformers_version()}: {type(cache).__name__} has neither layers nor key_cache; "
            "specviz cannot keep a tree path in it"
        )
    return [t for t in tensors if isinstance(t, torch.Tensor) and t.numel()]


@torch.inference_mode()
def keep_cache_path(cache, committed: int, path, n_tree: int) -> None:
    """Keep the cache's first `committed` positions, then the tree nodes `path` in order; drop the other tree nodes.

    Only the kept nodes' keys and values are copied (in place, behind the committed ones); then
    the cache is cropped. A path 0, 1, .., k-1 is already in place: only the crop.
    """
    k = len(path)
    if path != list(range(k)):
        index = {}
        for t in _kv_tensors(cache):
            if t.device not in index:
                index[t.device] = torch.tensor([committed + i for i in path], dtype=torch.long, device=t.device)
            t[..., committed : committed + k, :] = t.index_select(-2, index[t.device])
    if n_tree > k:
        cache.crop(-(n_tree - k))
