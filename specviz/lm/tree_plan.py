"""How each verify step's tree shape is chosen: a fixed shape cut to the step's depth, or `tree="auto"`.

The engine asks its plan for the widths of a step whose depth the γ chooser picked
(`widths(g)`), and tells it each step's record afterwards (`observe_step`). A fixed plan
keeps `tree[:g]` (an int k: k at every depth). A shape of all ones is a chain, and the
engine then runs its chain step; the depth 0 (a plain target step) is the chooser's to pick.
Which shape a step uses never depends on that step's draws, so every step stays exact
(the argument of `specviz.lm.adaptive`, with the shape in place of γ).

>>> plan = TreePlan((3, 2, 1))
>>> plan.widths(2), plan.widths(5), TreePlan(2).widths(3)
((3, 2), (3, 2, 1), (2, 2, 2))
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..checks import AUTO

if TYPE_CHECKING:
    from .gamma_chooser import GammaChooser
    from .results import StepRecord

__all__ = ["TreePlan", "tree_plan", "tree_widths"]


def tree_widths(tree: tuple | int, depth: int) -> tuple:
    """The shape of a step of `depth` levels: the first `depth` widths of a tuple, or (k,) * depth for an int k."""
    if isinstance(tree, int):
        return (tree,) * depth
    return tuple(tree[:depth])


class TreePlan:
    """A fixed tree shape: each step drafts `tree_widths(tree, g)` for the chooser's depth g."""

    def __init__(self, tree: tuple | int):
        self.tree = tree

    @property
    def label(self) -> tuple | int:
        """What a result records as its tree setting."""
        return self.tree

    def widths(self, g: int) -> tuple:
        """The widths of a step of depth g (g >= 1)."""
        return tree_widths(self.tree, g)

    def observe_step(self, record: StepRecord) -> None:
        """What the last step did (a fixed shape learns nothing)."""


def tree_plan(tree, chooser: GammaChooser) -> tuple:
    """(plan, chooser) for a run: (None, chooser) without a tree; "auto" is a `TreeAuto` that is both."""
    if tree is None:
        return None, chooser
    if tree == AUTO:
        from .tree_auto import TreeAuto  # noqa: PLC0415 - only an auto tree run needs it

        auto = TreeAuto(chooser)
        return auto, auto
    return TreePlan(tree), chooser
