"""What a generation returns: one record per verify step, and the whole run (short repr, HTML, dict).

>>> r = GenerationResult([5], [7, 8], steps=[StepRecord(0, 0, [7], [0.5], [0.6], 1, 8, "bonus", [0.9], [], [],
...                                                   0.001, 0.002)], seconds=0.5, gamma=1)
>>> r
GenerationResult(2 new tokens, γ=1, 1 verify steps, 4.0 tokens/s, text='')
>>> r.fates(), r.to_dict()["fates"]
(['accepted', 'bonus'], ['accepted', 'bonus'])

A tree step also keeps its tree: node i holds `tokens[i]` under `parents[i]` (-1: the root), and
its fate is 1 (accepted), 0 (rejected) or -1 (never tested).

>>> t = TreeStep(widths=(2,), tokens=[7, 4], parents=[-1, -1], fates=[0, 1], path=[1], p_x=[0.1, 0.5],
...              q_x=[0.5, 0.5])
>>> s = StepRecord(0, 0, [4], [0.5], [0.5], 1, 8, "bonus", [0.6], [], [], 0.0, 0.0, tree=t)
>>> s.gamma, s.emitted, s.to_dict()["tree"]["path"]
(1, [4, 8], [1])
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field

from ..stats.fates import fates_html


@dataclass
class TreeStep:
    """The draft tree of one verify step: its nodes (parents before children), their fates, the accepted path."""

    widths: tuple  # drafts per node at each depth: the tree's shape (its depth is len(widths))
    tokens: list  # (N,) each node's drafted token
    parents: list  # (N,) each node's parent node, -1 for the root (the last token before the step)
    fates: list  # (N,) 1 accepted, 0 rejected, -1 never tested
    path: list  # the accepted nodes from the root down (len = the step's accepted drafts)
    p_x: list  # (N,) p of each node's token after its parent
    q_x: list  # (N,) q of each node's token after its parent (the law it was drawn from)
    # what the final token was drawn from, where the walk stopped: R after the stop node's rejected
    # children (the money diagram's residual, at a real node), or p itself after a leaf (the bonus)
    final: list = field(default_factory=list)  # [(id, prob)] its top tokens, most likely first
    bonus: bool = False  # the walk stopped at a node with no children: the final token is a bonus from p

    @property
    def stop(self) -> int:
        """The node where the walk stopped: the last node of the path, -1 for the root."""
        return self.path[-1] if self.path else -1

    def to_dict(self) -> dict:
        """Plain JSON-ready fields (lists)."""
        return {
            "widths": list(self.widths),
            "tokens": list(self.tokens),
            "parents": list(self.parents),
            "fates": list(self.fates),
            "path": list(self.path),
            "p_x": list(self.p_x),
            "q_x": list(self.q_x),
            "final": [list(pair) for pair in self.final],
            "bonus": self.bonus,
        }


@dataclass
class StepRecord:
    """What happened in one verify step.

    A tree step (`tree` set) records the positions it verified along the accepted path: `drafted`
    holds the path's tokens, then the first child tested where the walk stopped (when that node has
    children), with their p, q and Σ min(p, q); its γ is the tree's depth, so per-position counts are
    positions along the accepted path, as vLLM counts them.
    """

    index: int  # verify step number, from 0
    start: int  # number of tokens generated before this step
    drafted: list  # γ drafted token ids
    q_drafted: list  # q(x_j) of each drafted token
    p_drafted: list  # p(x_j) of each drafted token
    accepted: int  # how many drafts were kept (0..γ)
    token: int | None  # the replacement (after a rejection) or bonus token; None if bonus_dist gave none
    kind: str  # "resampled", "bonus" (all γ accepted) or "target" (γ = 0: a plain target step)
    # (the step's γ is len(drafted): with gamma="auto" or prompt lookup it varies from step to step)
    alphas: list  # sum_x min(p, q) at every verified position
    top_p: list  # per emitted position: [(id, p)] top tokens of p
    top_q: list  # per emitted position: [(id, q)] top tokens of q ([] for the bonus position)
    draft_s: float  # seconds spent drafting
    verify_s: float  # seconds in the target's verify forward and the accept/reject logic
    tree: TreeStep | None = None  # the draft tree, for a tree step

    @property
    def gamma(self) -> int:
        """Drafts verified in a row: γ of a chain step, the depth of a tree step."""
        return len(self.drafted) if self.tree is None else len(self.tree.widths)

    @property
    def emitted(self) -> list:
        return list(self.drafted[: self.accepted]) + ([] if self.token is None else [self.token])

    @property
    def n_emitted(self) -> int:
        return self.accepted + (self.token is not None)

    def to_dict(self) -> dict:
        """Plain JSON-ready fields of this step."""
        out = {
            "index": self.index,
            "start": self.start,
            "drafted": list(self.drafted),
            "accepted": self.accepted,
            "token": self.token,
            "kind": self.kind,
            "p_drafted": list(self.p_drafted),
            "q_drafted": list(self.q_drafted),
            "alphas": list(self.alphas),
            "draft_s": self.draft_s,
            "verify_s": self.verify_s,
        }
        if self.tree is not None:
            out["tree"] = self.tree.to_dict()
        return out


@dataclass(repr=False)
class GenerationResult:
    """Output of one generation: ids, text, and (for speculative runs) a record per verify step."""

    prompt_ids: list
    new_ids: list
    text: str = ""
    steps: list = field(default_factory=list)
    seconds: float = 0.0
    gamma: int | str = 0  # the setting: a whole number, or "auto" (each step's γ is in its StepRecord)
    stopped: bool = False  # True when on_step asked to stop
    finish_reason: str | None = None  # "stop" (an end token), "length" (max_new_tokens) or "abort" (stopped)
    tokenizer: object = None  # for _repr_html_ (not part of to_dict)

    @property
    def ids(self) -> list:
        return self.prompt_ids + self.new_ids

    @property
    def tokens_per_second(self) -> float:
        return len(self.new_ids) / self.seconds if self.seconds > 0 else float("nan")

    def fates(self) -> list:
        """Per generated token: "accepted", "resampled", "bonus" or "target"."""
        out = []
        for s in self.steps:
            out += ["accepted"] * s.accepted + ([] if s.token is None else [s.kind])
        if not self.steps:  # a plain autoregressive run
            out = ["target"] * len(self.new_ids)
        return out[: len(self.new_ids)]

    def __repr__(self) -> str:
        text = self.text if len(self.text) <= 40 else self.text[:37] + "..."
        kind = f"γ={self.gamma}, {len(self.steps)} verify steps" if self.steps else "autoregressive"
        tps = self.tokens_per_second
        return (
            f"GenerationResult({len(self.new_ids)} new tokens, {kind}, {tps:.1f} tokens/s, text={text!r})"
            if math.isfinite(tps)
            else f"GenerationResult({len(self.new_ids)} new tokens, {kind}, text={text!r})"
        )

    def to_dict(self, steps: bool = False) -> dict:
        """Plain JSON-ready summary (the per-step records too with steps=True)."""
        out = {
            "prompt_ids": list(self.prompt_ids),
            "new_ids": list(self.new_ids),
            "text": self.text,
            "gamma": self.gamma,
            "seconds": self.seconds,
            "tokens_per_second": self.tokens_per_second,
            "verify_steps": len(self.steps),
            "stopped": self.stopped,
            "finish_reason": self.finish_reason,
            "fates": self.fates(),
        }
        if steps:
            out["steps"] = [s.to_dict() for s in self.steps]
        return out

    def _repr_html_(self) -> str:
        """The text with each token coloured by its fate (the live view's rendering)."""
        return f"<div style='font-size:12px'>{html.escape(repr(self))}</div>" + fates_html(self, self.tokenizer)
