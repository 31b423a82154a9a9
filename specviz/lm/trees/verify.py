"""A draft tree verified on the device with SpecInfer's multi-draft rule, with no host synchronisation.

The tree analogue of `specviz.samplers.torch_sampling.verify_chain_torch`, and the device version of the
toy's walk in `specviz.samplers.tree`. The N drafted nodes come in an order where every parent comes
before its children (breadth-first by depth); node i holds `tokens[i]` and hangs under
`parents[i]` (-1: the root). Row 0 of P and Q belongs to the root, row 1 + i to node i.

The walk: cur = root, R := P[cur]. Each child c of cur, in index order, is accepted with
probability min(1, R(x_c)/q(x_c)), q = Q[cur]; after a rejection R := (R - q)+ / Z (R is kept
where Z = 0, as `specviz.exact.theory.resample_dist` keeps p). The first accepted child becomes cur,
R := P[cur], and the walk goes on. When every child of cur is rejected the final token is drawn
from R; when cur has no children it is drawn from P[cur] (the bonus). Greedy (T = 0): follow the
first child equal to argmax P[cur], and end with argmax P[cur] at the stop.

With `one_hot=True` each child has its own q, the point mass on its token (prompt lookup's
trie, `specviz.lm.drafts.lookup_trie`: siblings are distinct tokens, each chosen from the history before
the target is read), and Q is not needed. The same rule with one q per child (SpecInfer's
multi-SSM form): child c (token x) is accepted with probability min(1, R(x)/1) = R(x); on
rejection R := (R - onehot(x))+ / Z, i.e. R with x zeroed and renormalised. Each token y then
leaves the node with probability R(y) exactly (accepted as a child, or drawn at the end), so the
walk stays lossless.

The tree's shape is read on the host once (`tree_layout`, cached per shape and device); the
walk itself keeps the current node, R, the accept flags and the stop on the device, so the
caller reads the verdict with one host read. Uniforms: one per drafted node, drawn up front
from `gen` (a node uses its own when it is tested), then the final draw: a seed fixes the verdict.

>>> P = torch.tensor([[0.6, 0.3, 0.1], [0.2, 0.2, 0.6], [1.0, 0.0, 0.0]], dtype=torch.float64)
>>> Q = torch.tensor([[0.4, 0.5, 0.1], [0.3, 0.3, 0.4], [0.0, 0.0, 0.0]], dtype=torch.float64)
>>> v = verify_tree_torch(P, Q, torch.tensor([0, 2]), [-1, 0], torch.Generator().manual_seed(0))
>>> v.path.tolist(), int(v.accepted), v.fates.tolist()   # token 0 after the root: p/q = 1.5, always kept
([0, 1], 2, [1, 1])
>>> int(v.token), bool(v.bonus)                          # node 1 is a leaf: the bonus comes from P[2]
(0, True)
>>> w = verify_tree_torch(P, None, torch.tensor([1, 2]), [-1, -1], torch.Generator().manual_seed(0), one_hot=True)
>>> w.fates.tolist(), w.residual.tolist(), int(w.token)   # both rejected: R is P[0] with 1 and 2 removed
([0, 0], [1.0, 0.0, 0.0], 0)

The numbers are checked by default (one host read); `check=False`, the engine's path, trusts them:

>>> bad = P.clone(); bad[1] *= 2                  # row 1 sums to 2
>>> verify_tree_torch(bad, Q, torch.tensor([0, 2]), [-1, 0], torch.Generator().manual_seed(0))
Traceback (most recent call last):
...
ValueError: P row 1 sums to 2, not 1 (tolerance 8.3e-07 for float64 rows of length 3)
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import torch

from ...foundation.checks import MAX_TREE_NODES, integer
from ...samplers.torch_rows import ACCUMULATE, diagnose, rows_ok
from ...samplers.torch_sampling import categorical_torch, residual_rows


@dataclass(frozen=True)
class TreeLayout:
    """A tree's shape on the device: rows 0 (the root) and 1 + i (node i), each row's children as row ids."""

    n_nodes: int  # N drafted nodes
    parents: tuple[int, ...]  # (N,) node i's parent node, -1 for the root
    depths: tuple[int, ...]  # (N,) node i's depth, 1 for the root's children
    widths: tuple[int, ...]  # per depth 1..D: the most children of one node at the depth above
    children: torch.Tensor  # (N + 1, max width) int64: row r's children rows in test order, padded with -1
    has_children: torch.Tensor  # (N + 1,) bool
    parent_rows: torch.Tensor  # (N + 1,) int64: row r's parent row (0 for the root itself)


@dataclass(frozen=True)
class TreeVerdict:
    """One tree verified on the device: the accepted path, the final token, each node's fate, R at the stop."""

    path: torch.Tensor  # (D,) int64: accepted node indices from the root down, padded with -1
    accepted: torch.Tensor  # () int64: the path's length (tokens kept from the tree)
    token: torch.Tensor  # () int64: the final token (resampled from R, or the bonus from P at a childless node)
    fates: torch.Tensor  # (N,) int8 per node: 1 accepted, 0 rejected, -1 never tested
    residual: torch.Tensor  # (V,) what the final token was drawn from: R after the stop node's rejections, or P
    bonus: torch.Tensor  # () bool: the walk stopped at a node with no children (final token from P, not a residual)


def tree_layout(parents, device=None) -> TreeLayout:
    """The children table of the tree whose node i hangs under `parents[i]` (-1: the root), on `device`.

    Each parent must come before its children. Built on the host and cached per shape and
    device, so a run that verifies the same shape every step copies it to the device once.

    >>> lay = tree_layout([-1, -1, 0, 0, 1])   # two children of the root, two under node 0, one under node 1
    >>> lay.widths, lay.depths, lay.children[:3].tolist()
    ((2, 2), (1, 1, 2, 2, 2), [[1, 2], [3, 4], [5, -1]])
    """
    if parents is None or isinstance(parents, (str, bytes, dict)) or not hasattr(parents, "__len__"):
        raise TypeError(f"parents must be a list of node indices (-1 for the root), got {parents!r}")
    if len(parents) > MAX_TREE_NODES:
        raise ValueError(f"a tree may have at most {MAX_TREE_NODES} drafted nodes, got {len(parents)}")
    checked = tuple(
        integer(par, f"parents[{i}] (a node before node {i}, or -1 for the root)", lo=-1, hi=i - 1)
        for i, par in enumerate(parents)
    )
    return _layout(checked, torch.device(device if device is not None else "cpu"))


@functools.lru_cache(maxsize=64)
def _layout(parents: tuple[int, ...], device: torch.device) -> TreeLayout:
    """`tree_layout` for checked parents (cached: the table is copied to the device once per shape)."""
    n = len(parents)
    depth = [0] * (n + 1)  # by row
    kids: list[list[int]] = [[] for _ in range(n + 1)]
    for i, par in enumerate(parents):
        depth[i + 1] = depth[par + 1] + 1
        kids[par + 1].append(i + 1)
    widths = tuple(
        max(len(kids[r]) for r in range(n + 1) if depth[r] == d - 1) for d in range(1, max(depth, default=0) + 1)
    )
    width = max(widths, default=1)
    table = torch.tensor([k + [-1] * (width - len(k)) for k in kids], dtype=torch.int64)
    has_children = torch.tensor([bool(k) for k in kids])
    parent_rows = torch.tensor([0] + [par + 1 for par in parents], dtype=torch.int64)
    # non_blocking: a plain copy would wait for the device's queued work (a host synchronisation on CUDA)
    on_device = [t.to(device, non_blocking=True) for t in (table, has_children, parent_rows)]
    return TreeLayout(n, parents, tuple(depth[1:]), widths, *on_device)


def _row(t: torch.Tensor, i: torch.Tensor) -> torch.Tensor:
    """t[i] for a () int64 device index, by index_select (a tensor used as a Python index may be read on the host)."""
    return t.index_select(0, i.reshape(1))[0]


def _check(P, Q, tokens, lay: TreeLayout, one_hot: bool) -> None:
    """Shapes, dtypes and devices (metadata only: no host read); Q is not read when `one_hot`."""
    if one_hot:
        Q = P
    for name, t in (("P", P), ("Q", Q)):
        if not isinstance(t, torch.Tensor) or t.ndim != 2 or not t.is_floating_point():
            raise TypeError(f"{name} must be a 2-D floating-point tensor (N + 1, V), got {type(t).__name__}")
    if not isinstance(tokens, torch.Tensor) or tokens.ndim != 1 or tokens.is_floating_point():
        raise TypeError(f"tokens must be a 1-D integer tensor (one drafted id per node), got {type(tokens).__name__}")
    N = lay.n_nodes
    if tuple(tokens.shape) != (N,):
        raise ValueError(f"tokens has shape {tuple(tokens.shape)} but parents names {N} nodes")
    if P.shape[0] != N + 1 or Q.shape != P.shape or P.shape[1] == 0:
        raise ValueError(
            f"P {tuple(P.shape)} and Q {tuple(Q.shape)} must both be (N + 1, V) = ({N + 1}, V): "
            "row 0 after the root, row 1 + i after node i"
        )
    if not (P.device == Q.device == tokens.device == lay.children.device):
        raise ValueError(
            f"P ({P.device}), Q ({Q.device}), tokens ({tokens.device}) and the layout "
            f"({lay.children.device}) must be on one device"
        )


def _check_values(P, Q, tokens, lay: TreeLayout, one_hot: bool) -> None:
    """The numbers, with one host read when all is well: P's rows finite, non-negative, summing to 1; Q's the same
    for the rows whose children were drawn from them (a leaf's row is unused and may be zeros); tokens in 0..V-1.
    A ValueError names the first problem (tensor, row, token); `diagnose` reads more only for a bad call."""
    V = P.shape[1]
    in_vocab = ((tokens >= 0) & (tokens < V)).all()
    Sp = P.sum(-1, dtype=ACCUMULATE.get(P.dtype, torch.float64))
    if one_hot:
        ok = rows_ok(P, P, Sp, Sp, V) & in_vocab
    else:
        Sq = Q.sum(-1, dtype=ACCUMULATE.get(Q.dtype, torch.float64))
        Sq = torch.where(lay.has_children, Sq, torch.ones_like(Sq))  # a leaf's row: not read, not summed
        ok = rows_ok(P, Q, Sp, Sq, V) & in_vocab
    if bool(ok):  # the one host read of a checked call
        return
    if not bool(in_vocab):
        i = int(((tokens < 0) | (tokens >= V)).nonzero()[0])
        raise ValueError(
            f"tokens[{i}] is {int(tokens[i])}: a drafted token id must be in 0..{V - 1} (P has {V} columns)"
        )
    diagnose((("P", P),) if one_hot else (("P", P), ("Q", Q)), (Sp,) if one_hot else (Sp, Sq))


def verify_tree_torch(
    P,
    Q,
    tokens,
    parents,
    gen: torch.Generator | None = None,
    greedy: bool = False,
    one_hot: bool = False,
    check: bool = True,
) -> TreeVerdict:
    """Walk a draft tree with the multi-draft rule on the device: the accepted path, the final token, the fates.

    P (N + 1, V): the target's (processed) probabilities after the root (row 0) and after node i
    (row 1 + i). Q (N + 1, V): the draft's, row r being the q that row r's children were drawn from
    (rows of leaves are unused). `one_hot=True`: each child's q is the point mass on its own token
    (distinct siblings, as prompt lookup's trie has) and Q may be None. tokens (N,) int64 on the
    device. parents: a host list (node i's parent, -1 the root) or a `tree_layout`. gen: the
    device's generator (unused when greedy).

    check (default True): the numbers are checked first, with one host read: P's rows (and Q's rows that have
    children) finite, non-negative and summing to 1 within `sum_tolerance`, every drafted id in 0..V-1; a
    ValueError names the first problem. `check=False` is the unchecked path, with no host synchronisation (read
    the verdict once): only for a caller that has checked its rows already, as the engine's tree step
    (`specviz.lm.engine.tree_step`) has its logits; given NaNs or unnormalised rows it returns a path all the same.

    """
    lay = parents if isinstance(parents, TreeLayout) else tree_layout(parents, P.device)
    _check(P, Q, tokens, lay, one_hot)
    if check:
        _check_values(P, Q, tokens, lay, one_hot)
    dev, N = P.device, lay.n_nodes
    token_of = torch.cat([tokens.new_zeros(1), tokens]).long()  # by row; row 0 (the root) drafts nothing
    if not greedy:  # u_r q(x_r) for every node row r, its uniform drawn up front; q(x_r) = 0 (never drafted): inf
        q_x = P.new_ones(()) if one_hot else Q[lay.parent_rows, token_of]  # one-hot: q(x_r) = 1
        u = torch.nn.functional.pad(torch.rand(N, generator=gen, device=dev, dtype=torch.float64), (1, 0))
        uq = torch.where(q_x > 0, u * q_x, torch.inf)
    cur = torch.zeros((), dtype=torch.int64, device=dev)  # the current node's row
    alive = torch.ones((), dtype=torch.bool, device=dev)  # the walk has not stopped
    R = P[0]
    path, tested_rows, accepts = [], [], []
    for width in lay.widths:  # depth by depth; once stopped, the walk goes through with nothing tested
        q = None if greedy or one_hot else _row(Q, cur)
        kids = _row(lay.children, cur)
        top = R.argmax() if greedy else None  # R = P[cur] here
        nxt, open_ = cur, alive  # open_: at cur, and no child accepted yet
        for j in range(width):
            c = kids[j]
            tested = open_ & (c >= 0)
            c = c.clamp(min=0)
            x = _row(token_of, c)
            if greedy:
                acc = tested & (x == top)
            else:  # u < R(x)/q(x) without dividing: min(1, R/q) as verify_chain_torch writes it
                if one_hot:  # this child's own q: the point mass on x, so the residual is R with x removed
                    q = torch.zeros_like(R).index_fill_(0, x.reshape(1), 1.0)
                acc = tested & (_row(uq, c) < _row(R, x))
                R = torch.where(tested & ~acc, residual_rows(R[None], q[None])[0], R)
            nxt = torch.where(acc, c, nxt)
            open_ = open_ & ~acc
            tested_rows.append(torch.where(tested, c, 0))  # untested slots write into row 0, dropped
            accepts.append(acc)
        alive = alive & ~open_
        cur = nxt
        path.append(torch.where(alive, cur - 1, -1))
        R = torch.where(alive, _row(P, cur), R)
    token = R.argmax() if greedy else categorical_torch(R[None], gen)[0]
    fates = torch.full((N + 1,), -1, dtype=torch.int8, device=dev)
    if path:  # each node is tested in at most one slot: when the walk stands at its parent
        fates.scatter_(0, torch.stack(tested_rows), torch.stack(accepts).to(torch.int8))
    path_t = torch.stack(path) if path else torch.empty(0, dtype=torch.int64, device=dev)
    return TreeVerdict(
        path=path_t,
        accepted=(path_t >= 0).sum(),
        token=token,
        fates=fates[1:],
        residual=R,
        bonus=~_row(lay.has_children, cur),
    )
