"""Planted adaptive-γ rules for the engine: two that look at a drafted token and leave it out, one that stops after it.

Whether draft x_j is verified must be decided before x_j is drawn (a stopping time; the proof
is in `specviz.lm.gamma.adaptive`). A `GammaChooser` cannot break this, because the engine asks it
before drafting. These engines break it on purpose: each drafts γ tokens as usual, then cuts
the list at the first draft its rule objects to. `specviz.exact.stopping` gives the exact laws on a
context-free pair; `tests/test_lm_adaptive_peeking.py` catches the two lossy ones.

* `DropUnlikelyDrafts(t)`: leaves out x_j and everything after it when p(x_j)/q(x_j) < t,
  a peek at the target's verdict: lossy;
* `DropLowConfidenceDrafts(t)`: the same when q(x_j) < t, the draft's confidence in a token it
  has already sampled: lossy;
* `StopAfterLowConfidence(t)`: verifies x_j and drops only the drafts after it when q(x_j) < t,
  transformers' `assistant_confidence_threshold`: lossless.

Drafts after the cut were drawn and thrown away: their randomness is never used again, so
cutting late is, in law, the same as stopping early.

>>> from specviz.lm import NGramModel, Pair
>>> pair = Pair(NGramModel([0.6, 0.3, 0.1], name="target"), NGramModel([0.4, 0.5, 0.1], name="draft"))
>>> r = DropUnlikelyDrafts(0.7).generate(pair, [0], max_new_tokens=30, gamma=4, seed=0)
>>> all(pair.target.probs_for([0])[x] >= 0.7 * pair.draft.probs_for([0])[x] for s in r.steps for x in s.drafted)
True
"""

from __future__ import annotations

from dataclasses import replace

import torch

from ..drafts.base import ONE_HOT, chain_parents
from ..engine.logits import probs_on_device
from ..engine.loop import SpeculativeEngine

__all__ = ["CutDrafts", "DropLowConfidenceDrafts", "DropUnlikelyDrafts", "StopAfterLowConfidence"]


class CutDrafts(SpeculativeEngine):
    """An engine that drafts γ tokens, then keeps only the first `keep(...)` of them (subclasses set the rule)."""

    def __init__(self, threshold: float):
        self.threshold = float(threshold)
        self.target = None

    def generate(self, pair, prompt, settings=None, *args, **kwargs):
        """`SpeculativeEngine.generate`, keeping the target: the p-peeking rule reads its p at each drafted position."""
        self.target = pair.target
        return super().generate(pair, prompt, settings, *args, **kwargs)

    def keep(self, seq: list, drafts: list, q_rows: list, s) -> int:  # pragma: no cover - interface
        """How many of `drafts` (ids drawn after `seq` from the rows `q_rows`) the step verifies."""
        raise NotImplementedError

    def propose(self, draft, seq, s, g, widths, gen):
        prop = super().propose(draft, seq, s, g, widths, gen)
        if prop.tree or prop.q == ONE_HOT or not prop.size:  # the rules cut a model draft's chain
            return prop
        drafts, q_rows, d_logits = list(prop.tokens.split(1)), prop.q, prop.logits
        k = self.keep(seq, drafts, q_rows, s)
        if k < len(drafts):
            D = draft.session
            if D.length > len(seq) + k:  # the draft read x_k and later: roll it back to the kept prefix
                D.truncate(len(seq) + k, d_logits[k])
            prop = replace(
                prop, tokens=prop.tokens[:k], parents=chain_parents(k), q=q_rows[:k], logits=d_logits[: k + 1]
            )
        return prop

    def q_drafted(self, drafts: list, q_rows: list) -> list:
        """q(x_j) of each draft, on the host."""
        return [float(q[0, x[0]]) for x, q in zip(drafts, q_rows)]

    def p_drafted(self, seq: list, drafts: list, s) -> list:
        """p(x_j) of each draft: the target's processed distribution after seq + x_1..x_{j-1}."""
        session = self.target.session(seq)
        before = session.next_logits[None]
        rows = session.feed(torch.cat(drafts[:-1])) if len(drafts) > 1 else before[:0]
        p_rows = probs_on_device(torch.cat([before, rows.to(before.device)]), s)
        return [float(p_rows[j, x[0]]) for j, x in enumerate(drafts)]


def _first(flags: list, default: int) -> int:
    return next((j for j, f in enumerate(flags) if f), default)


class DropUnlikelyDrafts(CutDrafts):
    """Leaves out draft j and all after it when p(x_j)/q(x_j) < threshold: peeks at the target's verdict (lossy)."""

    def keep(self, seq, drafts, q_rows, s) -> int:
        qs, ps = self.q_drafted(drafts, q_rows), self.p_drafted(seq, drafts, s)
        return _first([p < self.threshold * q for p, q in zip(ps, qs)], len(drafts))


class DropLowConfidenceDrafts(CutDrafts):
    """Leaves out draft j and all after it when q(x_j) < threshold, a token already sampled (lossy).

    >>> from specviz.lm import NGramModel, Pair
    >>> pair = Pair(NGramModel([0.6, 0.3, 0.1]), NGramModel([0.4, 0.5, 0.1]))
    >>> r = DropLowConfidenceDrafts(0.2).generate(pair, [0], max_new_tokens=40, gamma=4, seed=0)
    >>> any(2 in s.drafted for s in r.steps)   # fish (q = 0.1) is drafted but never verified
    False
    """

    def keep(self, seq, drafts, q_rows, s) -> int:
        return _first([q < self.threshold for q in self.q_drafted(drafts, q_rows)], len(drafts))


class StopAfterLowConfidence(CutDrafts):
    """Verifies draft j and drafts no more after it when q(x_j) < threshold: transformers' rule (lossless).

    >>> from specviz.lm import NGramModel, Pair
    >>> pair = Pair(NGramModel([0.6, 0.3, 0.1]), NGramModel([0.4, 0.5, 0.1]))
    >>> r = StopAfterLowConfidence(0.2).generate(pair, [0], max_new_tokens=40, gamma=4, seed=0)
    >>> all(2 not in s.drafted[:-1] for s in r.steps)   # fish, when drafted, is the step's last draft
    True
    """

    def keep(self, seq, drafts, q_rows, s) -> int:
        return _first([q < self.threshold for q in self.q_drafted(drafts, q_rows)], len(drafts) - 1) + 1
