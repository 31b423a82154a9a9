"""Draft trees: k drafts per node, `depth` levels, verified from the root with SpecInfer's multi-draft rule.

A node's k children are drafted i.i.d. from q and tested in turn with the multi-draft rule of
`specviz.exact.multidraft` (R := p; accept child i with min(1, R(x_i)/q(x_i)); after a rejection
R := (R - q)+ / Z). The first accepted child becomes the new node and its own children are
tested; when every child of a node is rejected, the step ends with a token drawn from the
final R (a *resampled* token); when a leaf is accepted, a *bonus* token comes from p.

The toy keeps p and q the same at every position (the levels are independent), so the
number of tokens per verify step follows notebook 8's chain formula with the per-node
acceptance beta_k = `multi_draft_acceptance_rate(p, q, k)` in place of alpha.

>>> tree = draft_tree([0.6, 0.3, 0.1], [0.4, 0.5, 0.1], n_drafts=2, depth=2, seed=0)
>>> len(tree.nodes), tree.nodes[0].depth            # the root (the prefix) and 2 + 4 drafted nodes
(7, 0)
>>> round(tree_expected_tokens([0.6, 0.3, 0.1], [0.4, 0.5, 0.1], 1, 2), 6)   # k = 1: the chain, 1 + a + a^2
2.44

That rule is exact because the children are drawn i.i.d. from q. With `rule="deterministic"` the
children of every node are instead q's k most likely tokens, distinct (as EAGLE-2 and Medusa
choose them; a prompt-lookup trie's distinct continuations are the same case), and each is
verified with the rule for deterministic children: accept x with probability R(x), else
R(x) := 0 and renormalise. P(some child accepted) is then p of the children:

>>> round(node_acceptance([0.6, 0.3, 0.1], [0.4, 0.5, 0.1], 2, rule="deterministic"), 6)   # p(dog) + p(cat)
0.9
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..exact.multidraft import (
    check_draft_count,
    check_rule,
    children_walk,
    multi_draft_acceptance_rate,
    top_k_children,
)
from ..exact.theory import repair
from ..foundation.checks import integer
from ..foundation.validate import as_pair
from .sampling import categorical, make_rng

MAX_TREE_NODES = 4096
"""The largest number of drafted nodes (k + k^2 + ... + k^depth) a tree may have."""

MAX_DEPTH = 64
"""The most levels a draft tree may have."""


def token_ids(tokens, V: int, name: str) -> list[int]:
    """`tokens` as a list of ints, each a whole number in 0..V-1; TypeError / ValueError naming `name` otherwise."""
    if tokens is None or isinstance(tokens, (str, bytes, dict)) or not hasattr(tokens, "__len__"):
        raise TypeError(f"{name} must be a list of token ids, got {tokens!r}")
    if getattr(tokens, "ndim", 1) != 1:
        raise TypeError(f"{name} must be a flat list of token ids, got an array of shape {tuple(tokens.shape)}")
    return [integer(x, f"{name}[{i}] (a token id, 0..{V - 1})", lo=0, hi=V - 1) for i, x in enumerate(tokens)]


@dataclass(frozen=True)
class TreeNode:
    """One node of a draft tree; the root (index 0) is the prefix and drafts no token."""

    index: int
    parent: int  # -1 for the root
    depth: int  # 0 for the root, 1..depth for drafted tokens
    rank: int  # order in which it is tested among its siblings (0 = first)
    token: int  # the drafted token (-1 for the root)
    accept_given_parent: float  # P(this child is the accepted one | its parent was reached), given the drafts
    on_path: float  # P(this node is on the accepted path), given the drafted tokens
    status: str  # in this draw: "root", "accepted", "rejected" or "untested"


@dataclass(frozen=True)
class DraftTree:
    """A drafted tree, its exact per-node probabilities, and one verification of it (`path`, `final_token`)."""

    p: np.ndarray
    q: np.ndarray
    n_drafts: int
    depth: int
    nodes: tuple[TreeNode, ...]
    path: tuple[int, ...]  # node indices from the root to the last accepted node
    final_token: int  # the resampled (all children rejected) or bonus (a leaf accepted) token
    final_kind: str  # "resampled" or "bonus"
    final_dist: np.ndarray  # what final_token was drawn from: the last node's final R, or p
    rule: str = "multi_draft"  # how children were drafted and verified: "multi_draft" (i.i.d.) or "deterministic"

    def children(self, index: int) -> list[TreeNode]:
        """The children of node `index` (0..len(nodes)-1), in the order they are tested."""
        index = integer(index, "index (a node of the tree)", lo=0, hi=len(self.nodes) - 1)
        return [n for n in self.nodes if n.parent == index]

    @property
    def emitted(self) -> list[int]:
        """The tokens this verify step emits: the accepted path, then the final token."""
        return [self.nodes[i].token for i in self.path[1:]] + [self.final_token]


def check_tree_shape(n_drafts, depth) -> tuple[int, int]:
    """(n_drafts, depth) as ints, ValueError unless the tree has 1..MAX_TREE_NODES drafted nodes."""
    k = check_draft_count(n_drafts)
    d = integer(depth, "depth (tree levels)", lo=1, hi=MAX_DEPTH)
    size = tree_size(k, d)
    if size > MAX_TREE_NODES:
        raise ValueError(
            f"a tree with n_drafts={k} per node and depth={d} has {size} drafted nodes; at most {MAX_TREE_NODES}"
        )
    return k, d


def tree_size(n_drafts: int, depth: int) -> int:
    """The number of drafted nodes k + k^2 + ... + k^depth.

    >>> tree_size(2, 3)
    14
    """
    k = check_draft_count(n_drafts)
    d = integer(depth, "depth (tree levels)", lo=0, hi=MAX_DEPTH)
    return sum(k**level for level in range(1, d + 1))


def child_acceptance(p, q, children, rule="multi_draft") -> tuple[np.ndarray, float, np.ndarray]:
    """For drafted children tokens x_1..x_k: P(child i is the accepted one), P(all rejected), the final R.

    With the i.i.d. rule a second copy of a rejected draft can never pass: after the rejection R is 0 there.

    >>> acc, none, R = child_acceptance([0.6, 0.3, 0.1], [0.4, 0.5, 0.1], [1, 1])
    >>> acc.round(4).tolist(), round(none, 4), R.round(4).tolist()
    ([0.6, 0.0], 0.4, [1.0, 0.0, 0.0])
    """
    p, q = as_pair(p, q)
    p, q = p.astype(np.float64), q.astype(np.float64)
    children = token_ids(children, p.size, "children")
    if not children:
        raise ValueError("children must hold at least one drafted token id, got none")
    acc, none, R = children_walk(p, q, children, rule)
    return np.asarray(acc, dtype=np.float64), float(none), np.asarray(R, dtype=np.float64)


def node_acceptance(p, q, n_drafts, rule="multi_draft") -> float:
    """P(some child of a node is accepted): beta_k for k i.i.d. drafts, or p(q's top k) for deterministic children."""
    k = check_draft_count(n_drafts)
    if check_rule(rule) == "multi_draft":
        return float(multi_draft_acceptance_rate(p, q, k))
    p, q = as_pair(p, q)
    return float(sum(float(p[x]) for x in top_k_children(q, k)))


def draft_tree(p, q, n_drafts=2, depth=2, seed=None, tokens=None, rule="multi_draft") -> DraftTree:
    """Draft a full tree (k children per node, `depth` levels) from q and verify it once.

    `tokens` (optional) gives the drafted tokens in breadth-first order instead of drawing
    them; the uniforms of the verification and the final token come from `seed`. With
    rule="deterministic" every node's children are q's top k (distinct), or the given
    `tokens` (distinct among siblings), verified with the rule for deterministic children.
    """
    p, q = as_pair(p, q)
    p, q = p.astype(np.float64), q.astype(np.float64)
    k, d = check_tree_shape(n_drafts, depth)
    rule = check_rule(rule)
    det = rule == "deterministic"
    rng = make_rng(seed)
    size = tree_size(k, d)
    if tokens is None and det:
        drafted = top_k_children(q, k) * (size // k)
    elif tokens is None:
        drafted = categorical(q, size, rng)
    else:
        drafted = token_ids(tokens, p.size, "tokens")
        if len(drafted) != size:
            raise ValueError(f"tokens must be {size} token ids (breadth-first, k={k}, depth={d}), got {len(drafted)}")
        cannot = [] if det else [x for x in drafted if q[x] <= 0]
        if cannot:
            raise ValueError(f"tokens must be ids the draft q can propose (q(id) > 0): q({cannot[0]}) = 0")
    # breadth-first layout: parent of node j (1-based among drafted nodes) is (j - 1) // k
    parents, depths, ranks = [-1], [0], [0]
    for j in range(1, size + 1):
        parents.append((j - 1) // k)
        depths.append(depths[(j - 1) // k] + 1)
        ranks.append((j - 1) % k)
    toks = [-1] + [int(x) for x in drafted]
    given = np.zeros(size + 1)
    on_path = np.zeros(size + 1)
    given[0] = on_path[0] = 1.0
    for parent in range(size + 1):
        first = parent * k + 1
        if first > size:
            break
        acc, _, _ = child_acceptance(p, q, toks[first : first + k], rule)
        given[first : first + k] = acc
        on_path[first : first + k] = on_path[parent] * acc
    # one verification of this tree
    status = ["root"] + ["untested"] * size
    path, node = [0], 0
    final_kind, final_dist = "bonus", p
    while depths[node] < d:
        first = node * k + 1
        R, nxt = p.copy(), None
        for i, x in enumerate(toks[first : first + k]):
            a = float(R[x]) if det else (min(1.0, float(R[x]) / float(q[x])) if q[x] > 0 else 0.0)
            if rng.random() < a:
                status[first + i], nxt = "accepted", first + i
                break
            status[first + i] = "rejected"
            if det:  # deterministic child: remove x from R, renormalise
                R = R.copy()
                R[x] = 0.0
                R = R / R.sum() if R.sum() > 0 else R
            else:
                R, _ = repair(R, q)
        if nxt is None:
            final_kind, final_dist = "resampled", np.asarray(R, dtype=np.float64)
            break
        path.append(nxt)
        node = nxt
    final = int(categorical(final_dist, 1, rng)[0])
    nodes = tuple(
        TreeNode(i, parents[i], depths[i], ranks[i], toks[i], float(given[i]), float(on_path[i]), status[i])
        for i in range(size + 1)
    )
    return DraftTree(p, q, k, d, nodes, tuple(path), final, final_kind, final_dist, rule)


def tree_expected_tokens(p, q, n_drafts, depth, rule="multi_draft") -> float:
    """E[tokens per verify step] of a full tree: 1 + b + ... + b^depth with b = `node_acceptance(p, q, k, rule)`.

    >>> round(tree_expected_tokens([0.5, 0.3, 0.15, 0.05], [0.1, 0.2, 0.3, 0.4], 2, 1), 6)
    1.65
    """
    k, d = check_tree_shape(n_drafts, depth)
    b = node_acceptance(p, q, k, rule)
    return float(sum(b**i for i in range(d + 1)))
