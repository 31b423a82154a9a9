"""One verify step of a draft tree: drafted level by level, every node read by the target in one forward, one path kept.

The engine (`specviz.lm.engine.loop`) runs this step when `GenerationSettings.tree` is set and the
step's depth is above 0. The shape: `tree[:depth]` drafts per node at each depth (an int k: k at
every depth), the depth being the chooser's γ for the step, at most len(tree).

- **Draft.** The step's draft kind proposes the tree (`specviz.lm.drafts`): a model draft draws it
  level by level (`specviz.lm.drafts.model.draft_tree`), prompt lookup cuts its trie of runs.
- **Verify.** The target reads its pending tokens (a chain of tree nodes under its last token) and
  every drafted node in one `feed_tree` forward. P holds its processed probabilities after the
  root and after each node, Q the draft's (zeros for leaves), and `verify_tree_torch` walks the
  tree with the multi-draft rule on the device.
- **One host read** of the walk's verdict and the record's numbers, then both sessions keep the
  accepted path (`keep`, the hook a planted cache bug overrides). The step emits the path's tokens
  and the final token (a residual draw, or the bonus after a leaf).

The step's shape comes from the run's plan (`specviz.lm.trees.shape`).

A prompt-lookup trie (`specviz.lm.drafts.lookup_trie`, found before the γ chooser, cut to the step's shape)
has a one-hot q: the walk gives each child its own q (`one_hot=True` in `verify_tree_torch`), and
only the target keeps the path (the lookup session read no node, and reads the emitted tokens at
its next lookup). A trie cut to a chain runs the chain step. Its record's widths are the trie's own
shape (at most the plan's; branches may end early, and a walk that reaches a leaf above the deepest
level ends with a bonus), and each node's q(x) is 1.

>>> from specviz.lm.engine.models import NGramModel
>>> from specviz.lm.engine.pair import Pair
>>> from specviz.lm.engine.loop import speculative_generate
>>> pair = Pair(NGramModel.random(5, seed=1), NGramModel.random(5, seed=2))
>>> t = speculative_generate(pair, [0], max_new_tokens=6, gamma=2, tree=(3, 2), seed=0).steps[0].tree
>>> t.widths, t.parents, t.fates[:3]     # 3 children of the root, 2 under each; all 3 rejected
((3, 2), [-1, -1, -1, 0, 0, 1, 1, 2, 2], [0, 0, 0])
>>> t.stop, t.bonus, round(sum(p for _, p in t.final), 6)   # the final token came from R at the root
(-1, False, 1.0)
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import TYPE_CHECKING

import numpy as np
import torch

from ..drafts import ONE_HOT
from ..drafts.model import draft_tree
from ..trees.verify import tree_layout, verify_tree_torch
from .logits import bad_rows, probs_on_device, raise_if_bad
from .readout import read_once, step_record, top_tokens
from .results import TreeStep

if TYPE_CHECKING:
    from ...exact.standardize import Sampling
    from ..drafts import Draft, Proposal
    from .models import Session

__all__ = ["TreeSteps", "draft_tree"]


class TreeSteps:
    """The tree step of `SpeculativeEngine` (mixed in); `keep` is where a cache bug would live, for tests to plant.

    It records the top `self.top_n` tokens of p and q at each emitted position, as the engine's chain step does.
    """

    def keep(self, session: Session, path: list, next_logits: torch.Tensor | None) -> None:
        """Commit the session's tree nodes `path` (each the parent of the next) and drop every other tree node."""
        session.keep_path(path, next_logits)

    def tell(self, draft: Draft, prop: Proposal, path: list, features) -> None:
        """What the target kept, to the draft: it rolls back to the accepted path, then reads it (and the features)."""
        draft.rollback(prop, path, self)
        draft.accept(prop, path, features)

    def _tree_step(self, T, draft: Draft, tree: Proposal, seq, s: Sampling, gen_t, index: int, start: int, clock):
        """A tree's verify: one target forward over every node, the walk, one host read, the accepted path kept.

        With a one-hot q (`ONE_HOT`, prompt lookup's trie) each child has its own q, the point mass on its
        token (`one_hot=True` in `verify_tree_torch`), and the record keeps p's top tokens only.
        """
        dev = torch.device(getattr(T.model, "device", None) or "cpu")
        N = len(tree.parents)
        tokens = tree.tokens.to(dev)
        all_rows, m = _target_rows(T, seq, tokens, tree.parents, dev)  # (N + 1, V), pending tokens read
        P = probs_on_device(all_rows, s)  # (N + 1, V)
        V = P.shape[-1]
        lay = tree_layout(tree.parents, dev)
        one_hot = tree.q is ONE_HOT
        if one_hot:
            Q = None
        else:
            n_q = sum(len(q) for q in tree.q)  # the root and every node above the last level
            Q = torch.cat([*(q.to(dev) for q in tree.q), P.new_zeros((N + 1 - n_q, V))])  # (N + 1, V)
        verdict = verify_tree_torch(P, Q, tokens, lay, gen_t, greedy=s.temperature == 0, one_hot=one_hot, check=False)
        # --- the one host synchronisation of this step
        node_rows = lay.parent_rows[1:]  # (N,) each node's parent's row
        path_rows = torch.cat([verdict.path.new_zeros(1), verdict.path + 1])  # (depth + 1,): the root, then the path
        P_path = P.index_select(0, path_rows)  # a padded -1 reads the root
        reads = dict(
            **_verdict_reads(verdict, min(max(self.top_n, 1), V)),
            tokens=tokens,  # (N,)
            p_x=P[node_rows, tokens],  # (N,) p of each node's token after its parent
            target_bad=_any_bad([all_rows[:1]] + [all_rows[1 + a : 1 + a + n] for a, n in tree.levels]),  # (depth+1,)
        )
        top_n = min(self.top_n, V)
        if one_hot:  # p's top tokens at each path position (q is one-hot on each node: its top is the node's token)
            if top_n:
                tp = P_path.topk(top_n, dim=-1)
                reads.update(top_p_ids=tp.indices, top_p=tp.values)  # (depth + 1, top_n) each
        else:
            Q_path = Q.index_select(0, path_rows)
            reads.update(
                q_x=Q[node_rows, tokens],  # (N,) q of each node's token after its parent
                alphas=torch.minimum(P_path, Q_path).sum(-1),  # (depth + 1,) Σ min(p, q) at each path position
                draft_bad=_any_bad([rows.to(dev) for rows in tree.logits]),  # (depth,) the rows q came from, by depth
                **top_tokens(P_path, Q_path, top_n),  # (depth + 1, top_n) each
            )
        h = read_once(**reads)
        raise_if_bad(h.target_bad, [] if one_hot else h.draft_bad, start, index)
        if one_hot:
            h.q_x = np.ones(N)  # (N,) each node's q is the point mass on its token
        k, token = int(h.accepted), int(h.token)
        path = [int(i) for i in h.path[:k]]
        # --- the target keeps the accepted path, then the draft is told it
        kept = list(range(m)) + [m + i for i in path]
        self.keep(T, kept, all_rows[1 + path[-1]] if path else all_rows[0])
        self.tell(draft, tree, path, T.features[kept] if draft.features else None)
        return step_record(_host(h, tree, path), k, token, index, start, clock, tree=_record(h, tree, path))


def _target_rows(T, seq: list, tokens: torch.Tensor, parents, dev) -> tuple[torch.Tensor, int]:
    """((N + 1, V) target logits after the root and after each node; m pending tokens) from one `feed_tree` forward.

    The target's pending tokens go in as a chain under its last token, the tree's nodes under them.
    """
    pend = seq[T.length :]
    m = len(pend)
    if m:
        ids = torch.cat([torch.tensor(pend, dtype=torch.long, device=dev), tokens])
        chain = list(range(-1, m - 1))
        rows = T.feed_tree(ids, chain + [p + m if p >= 0 else m - 1 for p in parents]).to(dev)
        return rows[m - 1 :], m  # row 0 after the root, row 1 + i after node i
    return torch.cat([T.next_logits.reshape(1, -1).to(dev), T.feed_tree(tokens, parents).to(dev)]), 0


def _verdict_reads(verdict, top: int) -> dict:
    """What every tree step reads of its verdict, as `read_once` takes it (device tensors; nothing is read here)."""
    final = verdict.residual.topk(top)  # what the final token was drawn from: R at the stop node, or P after a leaf
    return dict(
        path=verdict.path,  # (depth,) accepted nodes, padded with -1
        accepted=verdict.accepted,  # () the path's length
        token=verdict.token,  # () the final token
        fates=verdict.fates,  # (N,) 1 accepted, 0 rejected, -1 never tested
        bonus=verdict.bonus,  # () the walk stopped at a leaf: the final token came from P
        final_ids=final.indices,  # (top,) R's (or P's) top tokens at the stop node
        final_p=final.values,  # (top,)
    )


def _any_bad(levels: list) -> torch.Tensor:
    """(len(levels),) bool on the device: whether any row of each level's (n, V) logits is broken."""
    return torch.stack([bad_rows(rows).any() for rows in levels])


def _host(h: SimpleNamespace, tree, path: list) -> SimpleNamespace:
    """The host read as `step_record` takes it: the positions verified along the path (path, then the stop's first child).

    Without `alphas` and top q tokens in `h` (a one-hot q per node) Σ min(p, q) is each node's p, q's top its token.
    """
    nodes = list(path)
    if not h.bonus:  # the stop node has children: its first child was tested (and rejected)
        stop = path[-1] if path else -1
        nodes.append(tree.parents.index(stop, path[-1] + 1 if path else 0))
    out = SimpleNamespace(
        drafted=[int(h.tokens[i]) for i in nodes],
        p_x=[float(h.p_x[i]) for i in nodes],
        q_x=[float(h.q_x[i]) for i in nodes],
    )
    out.alphas = [float(a) for a in h.alphas[: len(nodes)]] if hasattr(h, "alphas") else out.p_x
    if hasattr(h, "top_p_ids"):
        out.top_p_ids, out.top_p = h.top_p_ids, h.top_p
        one_hot = ([[t] for t in out.drafted], [[1.0]] * len(nodes))
        out.top_q_ids, out.top_q = (h.top_q_ids, h.top_q) if hasattr(h, "top_q_ids") else one_hot
    return out


def _record(h: SimpleNamespace, tree: SimpleNamespace, path: list) -> TreeStep:
    """The step's `TreeStep`: its shape, nodes, fates and path, as plain Python numbers."""
    return TreeStep(
        widths=tree.widths,
        tokens=[int(t) for t in h.tokens],
        parents=list(tree.parents),
        fates=[int(f) for f in h.fates],
        path=path,
        p_x=[float(p) for p in h.p_x],
        q_x=[float(q) for q in h.q_x],
        final=[(int(i), float(p)) for i, p in zip(h.final_ids, h.final_p)],
        bonus=bool(h.bonus),
    )
