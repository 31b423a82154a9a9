"""The draft side of a verify step: what every draft kind does (`Draft`), what it proposes (`Proposal`), its `Summary`.

A step runs in four calls on its draft, whatever the kind (and a kind whose `features` is True is
first given the target's features at every prompt position, by `start(features)`: (len(prompt), H)):

1. `summary(seq, limit, widths, eos)`, before the γ (or tree) chooser decides: a cheap look at
   what the draft could propose (`Summary`: how many tokens, and how far the text agrees with
   their source), or None when it cannot tell without drafting (a model draft). Prompt lookup
   does its whole lookup here; the chooser sees the summary, never the lookup itself.
2. `propose(seq, s, g, widths, gen)`: a chain of up to g tokens (`widths` None, or all ones) or a
   tree of that shape, as a `Proposal`: token ids on the device, each node's parent (-1: the
   root), and q, the rows the tokens were drawn from, or `ONE_HOT` for a deterministic draft (each
   node's q is the point mass on its own token).
3. `accept(proposal, path, features)`: what the target kept, the accepted nodes, and, only for a
   kind whose `features` is True, the target's last-layer features (before the final norm) at the
   positions it kept this step, the last row at the last kept token (on a plain step that drafted
   nothing, an empty proposal and path with the features of the pending tokens it read).
4. `rollback(proposal, path, engine)`: put the draft's own state back to the accepted prefix,
   through the engine's planted-bug hooks (`engine.rollback` for a chain, `engine.keep` for a tree).

Why any kind stays lossless: the engine verifies with the rule for the q the proposal carries,
and q is fixed before the target is read, so the output follows the target's law whatever the
draft proposes (`specviz.lm.gamma.adaptive` for a γ chosen from the summary).

>>> p = Proposal(tokens=None, parents=[-1, 0, 0], q=ONE_HOT, logits=[], tree=True)
>>> p.size, p.chain, Proposal(tokens=None, parents=chain_parents(3), q=ONE_HOT, logits=[]).chain
(3, False, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..gamma.chooser import Summary

if TYPE_CHECKING:
    from ...exact.standardize import Sampling

__all__ = ["ONE_HOT", "Draft", "Proposal", "Summary", "chain_parents"]

ONE_HOT = "one-hot"
"""A proposal's q when each node's q is the point mass on its own token (a deterministic draft)."""


@dataclass
class Proposal:
    """A chain or a tree of drafted tokens: node i holds tokens[i] under parents[i] (-1: the root), breadth first."""

    tokens: Any  # (N,) long tensor on the draft's device
    parents: list  # (N,) host ints, each parent before its children
    q: list | str  # ONE_HOT, or the q rows behind each depth: (nodes of the depth above, V) each, the root's first
    logits: list  # the draft's logits behind q, one entry per depth (None where it had none), for the broken-row check
    tree: bool = False  # verified as a tree (the tree step, a tree record), else as a chain
    widths: tuple = ()  # the shape drafted: the most children of one node at each depth
    levels: tuple = ()  # per depth: (first node, node count)
    start: int = 0  # the length of the text it was proposed after
    state: Any = None  # what the kind keeps for `accept` and `rollback`

    @property
    def size(self) -> int:
        """Nodes proposed (0: nothing, the step is a plain target step)."""
        return len(self.parents)

    @property
    def chain(self) -> bool:
        """True when every node has at most one child."""
        return list(self.parents) == list(range(-1, len(self.parents) - 1))


class Draft:
    """One draft kind around one draft session; subclasses define `propose` and `rollback` (see the module doc)."""

    features = False  # True: `accept` gets the target's features at the positions it kept

    def __init__(self, session):
        self.session = session

    def start(self, features) -> None:
        """Only for a kind whose `features` is True, before the first step: (len(prompt), H), the target's prompt."""

    def summary(self, seq: list, limit: int, widths: tuple | None, eos) -> Summary | None:
        """What this step could propose, at most `limit` tokens (`widths`: a tree step's widest shape), or None."""
        return None

    def propose(self, seq: list, s: Sampling, g: int, widths: tuple | None, gen) -> Proposal:  # pragma: no cover
        """A chain of up to g tokens after `seq` (`widths` None or all ones), else a tree of shape `widths`."""
        raise NotImplementedError(f"{type(self).__name__} must define propose(seq, s, g, widths, gen)")

    def accept(self, proposal: Proposal, path: list, features) -> None:
        """The nodes the target kept (each the parent of the next) and, if asked for, its features there."""

    def rollback(self, proposal: Proposal, path: list, engine) -> None:  # pragma: no cover - interface
        """Bring the draft's state back to the text plus the accepted `path` (through `engine`'s hooks)."""
        raise NotImplementedError(f"{type(self).__name__} must define rollback(proposal, path, engine)")


def chain_parents(n: int) -> list:
    """The parents of a chain of n nodes: [-1, 0, 1, ...]."""
    return list(range(-1, n - 1))
