"""Acceptance statistics of speculative runs, with the definitions vLLM and sglang use.

- draft acceptance rate = accepted drafts / drafted tokens
- drafts = verify steps that drafted at least one token (vLLM's `num_drafts`)
- mean acceptance length = 1 + accepted / drafts (vLLM's definition)
- per-position acceptance, unconditional (vLLM): accepted at position i / drafts, so that
  mean acceptance length = 1 + Σ_i per-position[i] holds exactly, whatever γ each step used;
  conditional (sglang): accepted at position i / steps that verified position i (drafted at
  least i + 1 tokens and accepted the first i)
- tokens per step = generated tokens / all verify steps (a γ = 0 step emits one plain token);
  `tokens_per_call` is the same figure read as tokens per target call (each verify step is one
  target verification; vLLM's docs have no name for it: their mean acceptance length counts
  drafting steps only)
- nodes per step = drafted nodes per drafting step: a tree's N nodes, a chain's γ
- shapes = how many steps used each shape ("3,2,1", "1,1" a chain of 2, "plain"): what `tree="auto"` chose

Variable γ (gamma="auto", prompt lookup proposing fewer, a shorter last step) is counted as
vLLM counts it: a step that drafted g tokens adds one draft and adds to positions 0..g-1 only;
a position it did not draft counts as not accepted. `gamma` here is the longest draft of the
run; with a fixed γ and full steps these are the textbook per-position figures.

A draft tree's step is counted as vLLM counts trees, along the accepted path: its γ is the
tree's depth, its accepted tokens are the path's length, and per-position acceptance is
acceptance per depth (paths reaching depth i + 1 / drafts), so mean acceptance length =
1 + Σ per-position holds for trees too (tested); `drafted` and the acceptance rate count depths,
`nodes_per_step` the nodes verified, `tree` the shape. The theory below is a chain's.

- α = mean over verified positions of sum_x min(p(x), q(x)) (the exact per-position acceptance)
- textbook speed-up (1 - α^(γ+1)) / ((1 - α)(γ c + 1)), c = draft step / target step time
- cost-model prediction from measured times: E[tokens/step] · t_target / (γ t_draft + t_verify)

>>> from specviz.lm import NGramModel, Pair, speculative_generate
>>> pair = Pair(NGramModel.random(4, seed=0), NGramModel.random(4, seed=1))
>>> st = spec_stats([speculative_generate(pair, [0], 200, 3, seed=0)])
>>> 0 < st.acceptance_rate < 1 and 1 <= st.mean_acceptance_length <= 4
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ...exact.gamma import accepted_length_dist, best_gamma, cost_model_speedup, expected_tokens, speedup

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..engine.results import GenerationResult


@dataclass(frozen=True)
class SpecStats:
    """Summary of one or more speculative runs; per-position figures over all drafts, vLLM's way (module doc)."""

    gamma: int  # the longest draft of the run(s)
    steps: int
    drafts: int  # verify steps that drafted at least one token
    drafted: int
    accepted: int
    generated: int
    acceptance_rate: float  # accepted / drafted
    mean_acceptance_length: float  # 1 + accepted / drafts (= 1 + sum(per_position))
    per_position: np.ndarray  # (γ,) accepted at position i / drafts
    per_position_conditional: np.ndarray  # (γ,) accepted at i / steps that verified position i
    accepted_hist: np.ndarray  # (γ+1,) counts of k accepted drafts per drafting step
    accepted_hist_theory: np.ndarray  # (γ+1,) expected counts from the measured α (each step at its own γ)
    alpha: float  # mean sum min(p, q) over verified positions
    seconds: float
    tokens_per_second: float
    draft_token_s: float  # mean seconds per drafted token
    verify_step_s: float  # mean seconds per verify step
    expected_tokens_per_step: float  # theory at the measured α, averaged over the drafting steps' γ
    tokens_per_step: float = float("nan")  # generated / verify steps (γ = 0 steps included)
    gammas: tuple = ()  # the γ of each verify step, in order (a tree step's depth)
    nodes_per_step: float = float("nan")  # drafted nodes per drafting step (a tree's N, a chain's γ)
    tree: tuple | None = None  # the draft tree's widths per depth (the deepest; every step drafted a prefix of it)
    shapes: tuple = ()  # (shape, steps) most used first: "3,2,1" a tree, "1,1" a chain of 2, "plain" a γ = 0 step

    @property
    def tokens_per_call(self) -> float:
        """Generated tokens per target call: `tokens_per_step` (each verify step is one target verification)."""
        return self.tokens_per_step

    def __repr__(self) -> str:
        return (
            f"SpecStats(γ={self.gamma}, {self.steps} verify steps, acceptance rate {self.acceptance_rate:.3f}, "
            f"mean acceptance length {self.mean_acceptance_length:.2f}, α={self.alpha:.3f}, "
            f"{self.tokens_per_second:.1f} tokens/s)"
        )

    def to_dict(self) -> dict:
        """JSON-ready figures, named as vLLM names them (arrays as lists, NaN as None)."""

        def num(v):
            v = float(v)
            return v if np.isfinite(v) else None

        return {
            "gamma": self.gamma,
            "verify_steps": self.steps,
            "num_drafts": self.drafts,
            "drafted_tokens": self.drafted,
            "accepted_tokens": self.accepted,
            "generated_tokens": self.generated,
            "acceptance_rate": num(self.acceptance_rate),
            "mean_acceptance_length": num(self.mean_acceptance_length),
            "per_position_acceptance": [num(v) for v in self.per_position],
            "per_position_acceptance_conditional": [num(v) for v in self.per_position_conditional],
            "accepted_length_histogram": [int(v) for v in self.accepted_hist],
            "alpha": num(self.alpha),
            "seconds": num(self.seconds),
            "tokens_per_second": num(self.tokens_per_second),
            "draft_token_seconds": num(self.draft_token_s),
            "verify_step_seconds": num(self.verify_step_s),
            "expected_tokens_per_step": num(self.expected_tokens_per_step),
            "tokens_per_step": num(self.tokens_per_step),
            "tokens_per_call": num(self.tokens_per_call),
            "nodes_per_step": num(self.nodes_per_step),
            "tree_widths": None if self.tree is None else [int(w) for w in self.tree],
            "tree_shapes": dict(self.shapes),
            "gamma_per_step": [int(g) for g in self.gammas],
        }

    def _repr_html_(self) -> str:
        d = self.to_dict()

        def fmt(v):
            if v is None:
                return "—"
            if isinstance(v, list):
                return ", ".join(fmt(x) for x in v)
            return f"{v:.3g}" if isinstance(v, float) else str(v)

        rows = [
            ("γ", d["gamma"]),
            ("verify steps", d["verify_steps"]),
            ("acceptance rate (accepted / drafted)", d["acceptance_rate"]),
            ("mean acceptance length (tokens per step)", d["mean_acceptance_length"]),
            ("α = E[Σ min(p, q)]", d["alpha"]),
            ("per-position acceptance" + (" (per depth)" if self.tree else ""), d["per_position_acceptance"]),
            ("accepted-length histogram (k = 0..γ)", d["accepted_length_histogram"]),
            ("tokens/s", d["tokens_per_second"]),
            ("tokens per target call", d["tokens_per_call"]),
            ("nodes verified per step", d["nodes_per_step"]),
        ]
        if self.tree:
            rows.insert(1, ("draft tree (drafts per node at each depth)", d["tree_widths"]))
        body = "".join(
            f"<tr><td style='text-align:left'>{k}</td><td style='text-align:left'>{fmt(v)}</td></tr>" for k, v in rows
        )
        return f"<table><thead><tr><th>statistic</th><th>value</th></tr></thead><tbody>{body}</tbody></table>"

    def bound(self, c: float) -> float:
        """Textbook speedup (1 - α^(γ+1)) / ((1 - α)(γ c + 1)) at cost ratio c; NaN when no step drafted."""
        if not self._measured(c):
            return float("nan")
        return speedup(min(self.alpha, 1.0), self.gamma, c)

    def predicted_speedup(self, target_token_s: float) -> float:
        """Cost-model speedup from measured draft-token and verify-step times; NaN when no step drafted.

        (A run of γ = 0 steps only, e.g. gamma="auto" on text where nothing pays, measured no
        draft and no acceptance: there is nothing to predict from.)
        """
        if not self._measured(self.draft_token_s, self.verify_step_s, target_token_s):
            return float("nan")
        return cost_model_speedup(
            min(self.alpha, 1.0), self.gamma, self.draft_token_s, self.verify_step_s, target_token_s
        )

    def _measured(self, *numbers) -> bool:
        """True when some step drafted and α and `numbers` are finite (what the two speed-up formulas need)."""
        return self.drafted > 0 and all(math.isfinite(x) for x in (self.alpha, *numbers))

    def suggested_gamma(self, target_token_s: float, max_gamma: int = 16) -> int | None:
        """γ maximising the cost-model speedup, assuming a verify step costs like now; None when no step drafted."""
        if not self._measured(self.draft_token_s, self.verify_step_s, target_token_s):
            return None
        c = self.draft_token_s / target_token_s
        v = self.verify_step_s / target_token_s
        g = np.arange(1, max_gamma + 1)
        pred = [expected_tokens(min(self.alpha, 1.0), int(x)) / (x * c + v) for x in g]
        return int(g[int(np.argmax(pred))]) if self.steps else best_gamma(self.alpha, c)


def spec_stats(results: GenerationResult | Sequence[GenerationResult]) -> SpecStats:
    """Aggregate the step records of speculative GenerationResults (one or a list).

    A draft tree's step counts as vLLM counts it, by positions along the accepted path (its γ is the
    tree's depth), so mean acceptance length = 1 + Σ per-position holds for trees as for chains.
    """
    if not isinstance(results, (list, tuple)):
        results = [results]
    if not results:
        raise ValueError("results is empty: no generation results to summarise")
    for r in results:
        if not hasattr(r, "steps") or not hasattr(r, "new_ids"):
            raise TypeError(f"results must be GenerationResults (from speculative_generate), got {type(r).__name__}")
    steps = [s for r in results for s in r.steps]
    gammas = [s.gamma for s in steps]
    gamma = max(gammas, default=0)
    drafting = [s for s in steps if s.gamma > 0]
    drafted = sum(gammas)
    accepted = sum(s.accepted for s in steps)
    generated = sum(len(r.new_ids) for r in results)
    seconds = sum(r.seconds for r in results)
    ks = np.array([s.accepted for s in drafting], dtype=np.int64)  # (drafts,)
    gs = np.array([s.gamma for s in drafting], dtype=np.int64)  # (drafts,)
    hist = np.bincount(ks, minlength=gamma + 1) if gamma else np.zeros(1, np.int64)
    pos = np.arange(gamma)[:, None]  # (γ, 1)
    acc_at = (ks[None, :] > pos).sum(1).astype(float)  # (γ,) drafts whose position i was accepted
    reached = ((ks[None, :] >= pos) & (gs[None, :] > pos)).sum(1).astype(float)  # (γ,) position i verified
    with np.errstate(invalid="ignore", divide="ignore"):
        per_pos = acc_at / len(drafting) if drafting else np.full(gamma, np.nan)
        cond = np.where(reached > 0, acc_at / np.maximum(reached, 1), np.nan)
    alphas = [a for s in steps for a in s.alphas]
    alpha = float(np.mean(alphas)) if alphas else float("nan")
    a = min(alpha, 1.0)
    theory = np.zeros(gamma + 1)
    g_values, g_counts = np.unique(gs, return_counts=True)  # each γ used, and by how many drafts
    if alphas:
        for g, c in zip(g_values.tolist(), g_counts.tolist()):
            theory[: g + 1] += c * accepted_length_dist(a, g)
    return SpecStats(
        gamma=gamma,
        steps=len(steps),
        drafts=len(drafting),
        drafted=drafted,
        accepted=accepted,
        generated=generated,
        acceptance_rate=accepted / drafted if drafted else float("nan"),
        mean_acceptance_length=1.0 + accepted / len(drafting) if drafting else float("nan"),
        per_position=per_pos,
        per_position_conditional=cond,
        accepted_hist=hist,
        accepted_hist_theory=theory,
        alpha=alpha,
        seconds=seconds,
        tokens_per_second=generated / seconds if seconds > 0 else float("nan"),
        draft_token_s=(sum(s.draft_s for s in steps) / drafted) if drafted else float("nan"),
        verify_step_s=(sum(s.verify_s for s in steps) / len(steps)) if steps else float("nan"),
        expected_tokens_per_step=float(np.average([expected_tokens(a, g) for g in g_values.tolist()], weights=g_counts))
        if alphas and drafting
        else float("nan"),
        tokens_per_step=generated / len(steps) if steps else float("nan"),
        gammas=tuple(gammas),
        nodes_per_step=float(np.mean([nodes_drafted(s) for s in drafting])) if drafting else float("nan"),
        tree=tree_shape(drafting),
        shapes=step_shapes(steps),
    )


def nodes_drafted(step) -> int:
    """The nodes one verify step drafted: its tree's N, or its γ for a chain."""
    return step.gamma if step.tree is None else len(step.tree.tokens)


def step_shapes(steps) -> tuple:
    """((shape, steps), ...) most used first: each step's widths as "3,2,1" (a chain of 2: "1,1"), "plain" for γ = 0.

    What a `tree="auto"` run did (`specviz.lm.trees.shape`), as a histogram over its steps.

    >>> from types import SimpleNamespace as Step
    >>> step_shapes([Step(gamma=2, tree=None), Step(gamma=0, tree=None), Step(gamma=2, tree=Step(widths=(3, 1)))] * 2)
    (('1,1', 2), ('plain', 2), ('3,1', 2))
    """
    counts: dict = {}
    for s in steps:
        shape = ",".join(map(str, s.tree.widths if s.tree is not None else (1,) * s.gamma)) or "plain"
        counts[shape] = counts.get(shape, 0) + 1
    return tuple(sorted(counts.items(), key=lambda kv: -kv[1]))


def tree_shape(steps) -> tuple | None:
    """The widths of the deepest tree among `steps` when every step drafted a prefix of it (depth capped by γ, a
    shorter last step), else None (a chain, or shapes that differ).

    >>> from types import SimpleNamespace as Step
    >>> tree_shape([Step(tree=Step(widths=(3, 2, 1))), Step(tree=Step(widths=(3, 2)))])
    (3, 2, 1)
    >>> tree_shape([Step(tree=Step(widths=(3, 2))), Step(tree=Step(widths=(2,)))]), tree_shape([Step(tree=None)])
    (None, None)
    """
    shapes = [None if s.tree is None else tuple(s.tree.widths) for s in steps]
    if not shapes or None in shapes:
        return None
    deepest = max(shapes, key=len)
    return deepest if all(deepest[: len(w)] == w for w in shapes) else None
