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

import torch

from ..torch_sampling import categorical_torch
from .logits import bad_rows, probs_on_device, raise_if_bad
from .readout import StepClock, read_once, step_record, top_tokens
from .results import StepRecord, TreeStep
from .tree_verify import tree_layout, verify_tree_torch

if TYPE_CHECKING:
    from ..standardize import Sampling
    from .models import Session

__all__ = ["LOOKUP_TREE_ERROR", "TreeSteps", "draft_tree"]

LOOKUP_TREE_ERROR = "a prompt-lookup draft proposes one run: tree drafting needs a model draft"
"""Why a deterministic draft (`propose_run`) cannot draft a tree (yet)."""


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

    def _tree_step(self, T, D, seq, s: Sampling, widths: tuple, gen_t, gen_d, index: int, start: int) -> StepRecord:
        """One verify step of a draft tree: draft, one target forward, the walk, one host read, keep the path."""
        dev = torch.device(getattr(T.model, "device", None) or "cpu")
        clock = StepClock(dev)
        clock.mark()
        tree = draft_tree(D, seq, s, widths, gen_d)
        clock.mark()
        N, depth = len(tree.parents), len(tree.widths)
        tokens = tree.tokens.to(dev)
        # --- verify: the target's pending tokens (a chain under its last token) and every node, in one forward
        pend = seq[T.length :]
        m = len(pend)
        if m:
            ids = torch.cat([torch.tensor(pend, dtype=torch.long, device=dev), tokens])
            chain = list(range(-1, m - 1))
            rows = T.feed_tree(ids, chain + [p + m if p >= 0 else m - 1 for p in tree.parents]).to(dev)
            all_rows = rows[m - 1 :]  # (N + 1, V): row 0 after the root, row 1 + i after node i
        else:
            all_rows = torch.cat([T.next_logits.reshape(1, -1).to(dev), T.feed_tree(tokens, tree.parents).to(dev)])
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
        final = verdict.residual.topk(min(max(self.top_n, 1), V))  # what the final token was drawn from
        h = read_once(
            path=verdict.path,  # (depth,) accepted nodes, padded with -1
            accepted=verdict.accepted,  # () the path's length
            token=verdict.token,  # () the final token
            fates=verdict.fates,  # (N,) 1 accepted, 0 rejected, -1 never tested
            bonus=verdict.bonus,  # () the walk stopped at a leaf: the final token came from P
            final_ids=final.indices,  # (top,) R's (or P's) top tokens at the stop node
            final_p=final.values,  # (top,)
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
        return step_record(_host(h, tree, path, depth), k, token, index, start, clock, tree=_record(h, tree, path))


def _any_bad(levels: list) -> torch.Tensor:
    """(len(levels),) bool on the device: whether any row of each level's (n, V) logits is broken."""
    return torch.stack([bad_rows(rows).any() for rows in levels])


def _draft_row(tree: SimpleNamespace, node: int) -> torch.Tensor:
    """The draft's (V,) logits after tree node `node` (which the draft read)."""
    for d, (first, n) in enumerate(tree.levels):
        if first <= node < first + n:
            return tree.logits[d + 1][node - first]
    raise IndexError(node)  # pragma: no cover - the caller passes a node the draft read


def _host(h: SimpleNamespace, tree: SimpleNamespace, path: list, depth: int) -> SimpleNamespace:
    """The host read as `step_record` takes it: the positions verified along the path (path, then the stop's first child)."""
    k = len(path)
    nodes = list(path)
    if k < depth:  # the stop node has children: its first child was tested (and rejected)
        stop = path[-1] if path else -1
        nodes.append(tree.parents.index(stop, path[-1] + 1 if path else 0))
    out = SimpleNamespace(
        drafted=[int(h.tokens[i]) for i in nodes],
        p_x=[float(h.p_x[i]) for i in nodes],
        q_x=[float(h.q_x[i]) for i in nodes],
        alphas=[float(a) for a in h.alphas[: len(nodes)]],
    )
    if hasattr(h, "top_p_ids"):
        out.top_p_ids, out.top_p, out.top_q_ids, out.top_q = h.top_p_ids, h.top_p, h.top_q_ids, h.top_q
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
