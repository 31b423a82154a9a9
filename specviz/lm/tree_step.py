"""One verify step of a draft tree: drafted level by level, every node read by the target in one forward, one path kept.

The engine (`specviz.lm.engine`) runs this step when `GenerationSettings.tree` is set and the
step's depth is above 0. The shape: `tree[:depth]` drafts per node at each depth (an int k: k at
every depth), the depth being the chooser's γ for the step, at most len(tree).

- **Draft.** The draft reads the pending tokens; each node of a level gets k children drawn i.i.d.
  from its q with replacement (`categorical_torch` on the row repeated), and the level is read with
  `Session.feed_tree` to give the next level's q (the last level is not read). At temperature 0
  the children are the draft's top-k distinct tokens instead (a greedy tree: the output is the
  target's argmax chain, whatever the tree).
- **Verify.** The target reads its pending tokens (a chain of tree nodes under its last token) and
  every drafted node in one `feed_tree` forward. P holds its processed probabilities after the
  root and after each node, Q the draft's (zeros for leaves), and `verify_tree_torch` walks the
  tree with the multi-draft rule on the device.
- **One host read** of the walk's verdict and the record's numbers, then both sessions keep the
  accepted path (`keep`, the hook a planted cache bug overrides). The step emits the path's tokens
  and the final token (a residual draw, or the bonus after a leaf).

The step's shape comes from the run's plan (`specviz.lm.tree_plan`).

A prompt-lookup draft (a session with `propose_tree`) drafts no tree level by level: its trie of
candidate runs (`specviz.lm.lookup_trie`), cut to the step's shape, is the tree (`_lookup_draft`
before the γ chooser, `_lookup_tree_step` after). The target reads its pending tokens and every
trie node in one forward, the walk gives each child its own one-hot q (`one_hot=True` in
`verify_tree_torch`), one host read, and only the target keeps the path: the lookup session read
no node, and reads the emitted tokens at the next step. A trie cut to a chain runs the chain step.
Its record's widths are the trie's own shape (at most the plan's; branches may end early, and a
walk that reaches a leaf above the deepest level ends with a bonus), and each node's q(x) is 1.

>>> from specviz.lm.models import NGramModel
>>> from specviz.lm.pair import Pair
>>> from specviz.lm.engine import speculative_generate
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

from ..torch_sampling import categorical_torch
from .logits import bad_rows, probs_on_device, raise_if_bad
from .lookup_trie import LookupTrie, until_end
from .readout import StepClock, read_once, step_record, top_tokens
from .results import StepRecord, TreeStep
from .tree_verify import tree_layout, verify_tree_torch

if TYPE_CHECKING:
    from ..standardize import Sampling
    from .models import Session

__all__ = ["TreeSteps", "draft_tree"]


def draft_tree(D: Session, seq: list, s: Sampling, widths: tuple, gen: torch.Generator) -> SimpleNamespace:
    """Draft a tree on the draft session D after `seq`, level by level, breadth first; nothing is read on the host.

    Returns `tokens` ((N,) on the draft's device), `parents` (host list, -1: the root), `widths`
    (the shape drafted: at temperature 0 a level has at most V distinct children), `levels` (each
    level's (first node, node count)), `q` (the q rows of the root and of every node of all but the
    last level) and `logits` (the draft's logits rows behind them, one tensor per level above).
    """
    pend = seq[D.length :]
    if pend:
        D.feed(pend)
    logits = D.next_logits.reshape(1, -1)  # (1, V): after the root
    greedy = s.temperature == 0
    tokens, parents, q_rows, logit_rows, levels, shape = [], [], [], [logits], [], []
    above = [-1]  # the nodes of the level above (the root)
    for d, k in enumerate(widths):
        q = probs_on_device(logits, s)  # (len(above), V)
        q_rows.append(q)
        if greedy:  # the draft's k most likely tokens, distinct
            k = min(k, q.shape[-1])
            ids = logits.topk(k, dim=-1).indices.reshape(-1)
        else:  # k i.i.d. draws from each node's q, with replacement
            ids = categorical_torch(q.repeat_interleave(k, dim=0), gen)
        level_parents = [p for p in above for _ in range(k)]
        first = len(parents)
        levels.append((first, len(level_parents)))
        parents += level_parents
        tokens.append(ids)
        shape.append(k)
        above = list(range(first, len(parents)))
        if d < len(widths) - 1:  # the last level's q is never used: not read
            logits = D.feed_tree(ids, level_parents)  # (n, V)
            logit_rows.append(logits)
    return SimpleNamespace(
        tokens=torch.cat(tokens), parents=parents, widths=tuple(shape), levels=levels, q=q_rows, logits=logit_rows
    )


class TreeSteps:
    """The tree step of `SpeculativeEngine` (mixed in); `keep` is where a cache bug would live, for tests to plant.

    It records the top `self.top_n` tokens of p and q at each emitted position, as the engine's chain step does.
    """

    def keep(self, session: Session, path: list, next_logits: torch.Tensor | None) -> None:
        """Commit the session's tree nodes `path` (each the parent of the next) and drop every other tree node."""
        session.keep_path(path, next_logits)

    def _tree_step(self, T, D, seq, s: Sampling, shape, gen_t, gen_d, index: int, start: int) -> StepRecord:
        """One verify step of a draft tree: draft, one target forward, the walk, one host read, keep the path.

        `shape`: the widths per depth, or a prompt-lookup draft's `LookupTrie` (the tree, drafted already).
        """
        if isinstance(shape, LookupTrie):
            return self._lookup_tree_step(T, seq, s, shape, gen_t, index, start)
        dev = torch.device(getattr(T.model, "device", None) or "cpu")
        clock = StepClock(dev)
        clock.mark()
        tree = draft_tree(D, seq, s, shape, gen_d)
        clock.mark()
        N = len(tree.parents)
        tokens = tree.tokens.to(dev)
        all_rows, m = _target_rows(T, seq, tokens, tree.parents, dev)  # (N + 1, V), pending tokens read
        P = probs_on_device(all_rows, s)  # (N + 1, V)
        V = P.shape[-1]
        n_q = sum(len(q) for q in tree.q)  # the root and every node above the last level
        Q = torch.cat([*(q.to(dev) for q in tree.q), P.new_zeros((N + 1 - n_q, V))])  # (N + 1, V)
        lay = tree_layout(tree.parents, dev)
        verdict = verify_tree_torch(P, Q, tokens, lay, gen_t, greedy=s.temperature == 0)
        # --- the one host synchronisation of this step
        node_rows = lay.parent_rows[1:]  # (N,) each node's parent's row
        path_rows = torch.cat([verdict.path.new_zeros(1), verdict.path + 1])  # (depth + 1,): the root, then the path
        P_path, Q_path = P.index_select(0, path_rows), Q.index_select(0, path_rows)  # a padded -1 reads the root
        tops = top_tokens(P_path, Q_path, min(self.top_n, V))
        h = read_once(
            **_verdict_reads(verdict, min(max(self.top_n, 1), V)),
            tokens=tokens,  # (N,)
            p_x=P[node_rows, tokens],  # (N,) p of each node's token after its parent
            q_x=Q[node_rows, tokens],  # (N,) q of each node's token after its parent
            alphas=torch.minimum(P_path, Q_path).sum(-1),  # (depth + 1,) Σ min(p, q) at each path position
            target_bad=_any_bad([all_rows[:1]] + [all_rows[1 + a : 1 + a + n] for a, n in tree.levels]),  # (depth+1,)
            draft_bad=_any_bad([rows.to(dev) for rows in tree.logits]),  # (depth,) the rows q came from, by depth
            **tops,  # (depth + 1, top_n) each
        )
        raise_if_bad(h.target_bad, h.draft_bad, start, index)
        k, token = int(h.accepted), int(h.token)
        path = [int(i) for i in h.path[:k]]
        # --- both sessions keep the accepted path
        self.keep(T, list(range(m)) + [m + i for i in path], all_rows[1 + path[-1]] if path else all_rows[0])
        fed = N - tree.levels[-1][1]  # the draft read every node but the last level's
        kept = [i for i in path if i < fed]
        self.keep(D, kept, _draft_row(tree, kept[-1]) if kept else None)
        return step_record(_host(h, tree, path), k, token, index, start, clock, tree=_record(h, tree, path))

    def _lookup_draft(self, D, seq: list, limit: int, plan, eos) -> tuple:
        """(run, match, trie) of a prompt-lookup draft: its best run cut after an end token; its trie with a plan."""
        D.read(seq[D.length :])
        if plan is None:  # a chain run
            run, match = D.propose_run(limit)
            return until_end(run, eos), match, None
        trie, match = D.propose_tree(limit, plan.widths(limit) if limit >= 1 else (), eos)
        return trie.run, match, trie

    def _lookup_tree_step(self, T, seq, s: Sampling, trie: LookupTrie, gen_t, index: int, start: int) -> StepRecord:
        """One verify step of a prompt-lookup trie: one target forward, the one-hot walk, one host read, keep the path."""
        dev = torch.device(getattr(T.model, "device", None) or "cpu")
        clock = StepClock(dev)
        clock.mark()
        clock.mark()  # nothing drafted here: the lookup was timed by the engine
        tokens = torch.tensor(trie.tokens, dtype=torch.long, device=dev)  # (N,)
        all_rows, m = _target_rows(T, seq, tokens, trie.parents, dev)  # (N + 1, V)
        P = probs_on_device(all_rows, s)  # (N + 1, V)
        V = P.shape[-1]
        lay = tree_layout(trie.parents, dev)
        verdict = verify_tree_torch(P, None, tokens, lay, gen_t, greedy=s.temperature == 0, one_hot=True)
        # --- the one host synchronisation of this step
        path_rows = torch.cat([verdict.path.new_zeros(1), verdict.path + 1])  # (depth + 1,): the root, then the path
        top_n = min(self.top_n, V)
        tops = {}
        if top_n:  # p's top tokens at each path position (q is one-hot on each node: its top is the node's token)
            tp = P.index_select(0, path_rows).topk(top_n, dim=-1)
            tops = dict(top_p_ids=tp.indices, top_p=tp.values)  # (depth + 1, top_n) each
        h = read_once(
            **_verdict_reads(verdict, min(max(self.top_n, 1), V)),
            tokens=tokens,  # (N,)
            p_x=P[lay.parent_rows[1:], tokens],  # (N,) p of each node's token after its parent
            target_bad=_any_bad([all_rows[:1]] + [all_rows[1 + a : 1 + a + n] for a, n in trie.levels]),  # (depth+1,)
            **tops,
        )
        raise_if_bad(h.target_bad, [], start, index)
        h.q_x = np.ones(len(trie.tokens))  # (N,) each node's q is the point mass on its token
        k, token = int(h.accepted), int(h.token)
        path = [int(i) for i in h.path[:k]]
        # --- the target keeps the accepted path (the lookup session read no node: it reads seq next step)
        self.keep(T, list(range(m)) + [m + i for i in path], all_rows[1 + path[-1]] if path else all_rows[0])
        return step_record(_host(h, trie, path), k, token, index, start, clock, tree=_record(h, trie, path))


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


def _draft_row(tree: SimpleNamespace, node: int) -> torch.Tensor:
    """The draft's (V,) logits after tree node `node` (which the draft read)."""
    for d, (first, n) in enumerate(tree.levels):
        if first <= node < first + n:
            return tree.logits[d + 1][node - first]
    raise IndexError(node)  # pragma: no cover - the caller passes a node the draft read


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
