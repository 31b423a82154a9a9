"""Prompt lookup's draft tree: the runs that followed several earlier occurrences of the suffix, merged into a trie.

`PromptLookupSession.propose_tree` ranks its candidate runs as `propose_run` ranks them (best
first) and `LookupTrie.build` merges them: identical prefixes share nodes, so siblings are
distinct tokens; a node keeps its best-ranked children, at most `widths[d]` at depth d (the root
at depth 0); the trie is at most len(widths) deep and holds at most MAX_TREE_NODES nodes (a
candidate that would pass the cap stops there). Nodes come breadth first, every parent before
its children and a node's children in rank order, which is the order `specviz.lm.trees.verify`
tests them in. Each child's q is the point mass on its own token, chosen from the history before
the target is read, so the walk with one q per child (`verify_tree_torch(..., one_hot=True)`)
emits exactly the target's law.

>>> t = LookupTrie.build([[5, 6, 7], [5, 8], [9]], widths=(2, 2, 1))
>>> t.tokens, t.parents       # 5 and 9 under the root, 6 and 8 under 5, 7 under 6
((5, 9, 6, 8, 7), (-1, -1, 0, 0, 2))
>>> t.run, t.widths, t.levels, t.chain
([5, 6, 7], (2, 2, 1), ((0, 2), (2, 2), (4, 1)), None)
>>> t.cut((1, 1)).chain      # one child per node: the best run's first two tokens
[5, 6]
>>> until_end([4, 2, 0, 7], eos={0})
[4, 2, 0]
"""

from __future__ import annotations

from dataclasses import dataclass

from ...foundation.checks import MAX_TREE_NODES

__all__ = ["LookupTrie", "until_end"]


def until_end(run: list, eos) -> list:
    """`run` cut after its first end token (what would follow it is never emitted: the turn ends there)."""
    for i, t in enumerate(run):
        if t in eos:
            return run[: i + 1]
    return run


@dataclass(frozen=True)
class LookupTrie:
    """Candidate runs merged into a trie: node i holds `tokens[i]` under `parents[i]` (-1: the root), breadth first."""

    tokens: tuple  # (N,) each node's token (host ints)
    parents: tuple  # (N,) each node's parent node, -1 for the root
    run: list  # the best candidate's run: what `propose_run` returns, cut after an end token
    candidates: tuple = ()  # the ranked runs it was built from, best first (what `cut` rebuilds from)

    @classmethod
    def build(cls, runs, widths) -> LookupTrie:
        """The trie of `runs` (best first) with at most widths[d] children per node at depth d, len(widths) deep."""
        runs = tuple(list(r) for r in runs)
        if any(isinstance(w, bool) or int(w) != w or w < 1 for w in widths):
            raise ValueError(f"widths must be whole numbers >= 1 (children per node at each depth), got {widths!r}")
        kids: list[dict] = [{}]  # per node in insertion order (0: the root): token -> node, in rank order
        for run in runs:
            node = 0
            for d, t in enumerate(run[: len(widths)]):
                nxt = kids[node].get(t)
                if nxt is None:  # a new child: only while the node has room and the trie is under the cap
                    if len(kids[node]) >= widths[d] or len(kids) > MAX_TREE_NODES:
                        break
                    nxt = kids[node][t] = len(kids)
                    kids.append({})
                node = nxt
        tokens, parents, queue = [], [], [(0, -1)]  # queue: (insertion node, its breadth-first index)
        for node, index in queue:  # the queue grows while it is read: breadth first
            for t, child in kids[node].items():
                tokens.append(t)
                parents.append(index)
                queue.append((child, len(tokens) - 1))
        return cls(tuple(tokens), tuple(parents), runs[0] if runs else [], runs)

    def cut(self, widths) -> LookupTrie:
        """The trie the same candidates make under `widths` (a step's shape: fewer levels or fewer children)."""
        return LookupTrie.build(self.candidates, widths)

    @property
    def depths(self) -> tuple:
        """(N,) each node's depth, 1 for the root's children."""
        out: list[int] = []
        for par in self.parents:
            out.append(1 if par < 0 else out[par] + 1)
        return tuple(out)

    @property
    def levels(self) -> tuple:
        """Per depth 1..D: (first node, node count) (the nodes of one depth are consecutive)."""
        depths = self.depths
        return tuple((depths.index(d), depths.count(d)) for d in range(1, max(depths, default=0) + 1))

    @property
    def widths(self) -> tuple:
        """Per depth 1..D: the most children of one node at the depth above (the shape drafted)."""
        depths, count = self.depths, {}
        for par in self.parents:
            count[par] = count.get(par, 0) + 1
        return tuple(
            max(n for par, n in count.items() if (0 if par < 0 else depths[par]) == d - 1)
            for d in range(1, max(depths, default=0) + 1)
        )

    @property
    def chain(self) -> list | None:
        """The tokens when every node has at most one child (a chain, [] for an empty trie), else None."""
        return list(self.tokens) if self.parents == tuple(range(-1, len(self.parents) - 1)) else None
