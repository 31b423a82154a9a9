"""A model draft: a language model's session drafts from its q, a chain token by token or a tree level by level.

- **Chain.** The draft reads the pending tokens, then draws up to g tokens, each from q after the
  text and the drafts before it (`categorical_torch`, on the device); a session whose `next_logits`
  is None has no proposal there, and the chain stops (the step verifies what it has).
- **Tree.** Each node of a level gets k children drawn i.i.d. from its q with replacement (its
  row repeated), and the level is read with `Session.feed_tree` to give the next level's q (the
  last level is not read). At temperature 0 the children are the draft's top-k distinct tokens
  instead (a greedy tree: the output is the target's argmax chain, whatever the tree).
- **Rollback.** A chain's cache is cropped to the accepted prefix (`engine.rollback`), a tree's
  keeps the accepted nodes it read (`engine.keep`); the tokens it did not read wait for its next step.

It gives no summary before drafting: a γ chooser prices it from the run's measurements.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import TYPE_CHECKING

import torch

from ...samplers.torch_sampling import categorical_torch
from ..engine.logits import probs_on_device
from .base import Draft, Proposal, chain_parents

if TYPE_CHECKING:
    from ...exact.standardize import Sampling
    from ..engine.models import Session

__all__ = ["ModelDraft", "draft_chain", "draft_tree"]


class ModelDraft(Draft):
    """A draft model's session: q from its logits after the standardized sampling of the run."""

    def propose(self, seq, s: Sampling, g: int, widths, gen) -> Proposal:
        if widths is not None and max(widths, default=1) > 1:
            tree = draft_tree(self.session, seq, s, widths, gen)
            return Proposal(tree.tokens, tree.parents, tree.q, tree.logits, True, tree.widths, tree.levels, len(seq))
        drafts, q_rows, d_logits = draft_chain(self.session, seq, s, g, gen)
        tokens = torch.cat(drafts) if drafts else torch.zeros(0, dtype=torch.long)
        n = len(drafts)
        return Proposal(
            tokens, chain_parents(n), q_rows, d_logits, False, (1,) * n, tuple((j, 1) for j in range(n)), len(seq)
        )

    def rollback(self, proposal: Proposal, path: list, engine) -> None:
        D, k = self.session, len(path)
        if not proposal.tree:
            d_logits = proposal.logits
            engine.rollback(D, proposal.start + k, d_logits[k] if k < len(d_logits) else None)
            return
        fed = proposal.size - proposal.levels[-1][1]  # the draft read every node but the last level's
        kept = [i for i in path if i < fed]
        engine.keep(D, kept, _draft_row(proposal, kept[-1]) if kept else None)


def draft_chain(D: Session, seq: list, s: Sampling, g: int, gen) -> tuple[list, list, list]:
    """Up to g draft tokens from q: ((1,) ids on the device each, (1, V) q rows, logits after each prefix)."""
    if g == 0:  # nothing to draft: the draft reads what it missed at its next drafting step
        return [], [], [None]
    pend = seq[D.length :]
    if pend:
        D.feed(pend)
    d_logits = [D.next_logits]  # d_logits[j]: the draft's logits after seq + drafts[:j]
    drafts, q_rows = [], []
    for j in range(g):
        if d_logits[j] is None:  # no proposal (e.g. prompt lookup without a match)
            break
        q_j = probs_on_device(d_logits[j], s)  # (1, V)
        x = categorical_torch(q_j, gen)  # (1,) stays on the device
        drafts.append(x)
        q_rows.append(q_j)
        if j < g - 1:
            D.feed(x)
            d_logits.append(D.next_logits)
    return drafts, q_rows, d_logits


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


def _draft_row(tree, node: int) -> torch.Tensor:
    """The draft's (V,) logits after tree node `node` (which the draft read)."""
    for d, (first, n) in enumerate(tree.levels):
        if first <= node < first + n:
            return tree.logits[d + 1][node - first]
    raise IndexError(node)  # pragma: no cover - the caller passes a node the draft read
