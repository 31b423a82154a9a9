"""Acceptance statistics of speculative runs, with the definitions vLLM and sglang use.

- draft acceptance rate = accepted drafts / drafted tokens
- mean acceptance length = tokens emitted per verify step = 1 + accepted / steps
- per-position acceptance, unconditional (vLLM): accepted at position i / steps that drafted i;
  conditional (sglang): accepted at position i / steps that reached position i
- α = mean over verified positions of sum_x min(p(x), q(x)) (the exact per-position acceptance)
- textbook speedup bound (1 - α^(γ+1)) / ((1 - α)(γ c + 1)), c = draft step / target step time
- cost-model prediction from measured times: E[tokens/step] · t_target / (γ t_draft + t_verify)

>>> from specviz.lm import NGramModel, Pair, speculative_generate
>>> pair = Pair(NGramModel.random(4, seed=0), NGramModel.random(4, seed=1))
>>> st = spec_stats([speculative_generate(pair, [0], 200, 3, seed=0)])
>>> 0 < st.acceptance_rate < 1 and 1 <= st.mean_acceptance_length <= 4
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..gamma import accepted_length_dist, best_gamma, cost_model_speedup, expected_tokens, speedup

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .results import GenerationResult


@dataclass(frozen=True)
class SpecStats:
    """Summary of one or more speculative runs (only steps with the full γ count for position stats)."""

    gamma: int
    steps: int
    drafted: int
    accepted: int
    generated: int
    acceptance_rate: float  # accepted / drafted
    mean_acceptance_length: float  # tokens per verify step
    per_position: np.ndarray  # (γ,) unconditional acceptance per draft position
    per_position_conditional: np.ndarray  # (γ,) acceptance given the previous drafts were accepted
    accepted_hist: np.ndarray  # (γ+1,) counts of k accepted drafts per step
    accepted_hist_theory: np.ndarray  # (γ+1,) expected counts from the measured α
    alpha: float  # mean sum min(p, q) over verified positions
    seconds: float
    tokens_per_second: float
    draft_token_s: float  # mean seconds per drafted token
    verify_step_s: float  # mean seconds per verify step
    expected_tokens_per_step: float  # theory at the measured α

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
            ("per-position acceptance", d["per_position_acceptance"]),
            ("accepted-length histogram (k = 0..γ)", d["accepted_length_histogram"]),
            ("tokens/s", d["tokens_per_second"]),
        ]
        body = "".join(
            f"<tr><td style='text-align:left'>{k}</td><td style='text-align:left'>{fmt(v)}</td></tr>" for k, v in rows
        )
        return f"<table><thead><tr><th>statistic</th><th>value</th></tr></thead><tbody>{body}</tbody></table>"

    def bound(self, c: float) -> float:
        """Textbook speedup (1 - α^(γ+1)) / ((1 - α)(γ c + 1)) at cost ratio c."""
        return speedup(min(self.alpha, 1.0), self.gamma, c)

    def predicted_speedup(self, target_token_s: float) -> float:
        """Cost-model speedup from measured draft-token and verify-step times."""
        return cost_model_speedup(
            min(self.alpha, 1.0), self.gamma, self.draft_token_s, self.verify_step_s, target_token_s
        )

    def suggested_gamma(self, target_token_s: float, max_gamma: int = 16) -> int:
        """γ maximising the cost-model speedup, assuming a verify step costs like now."""
        c = self.draft_token_s / target_token_s
        v = self.verify_step_s / target_token_s
        g = np.arange(1, max_gamma + 1)
        pred = [expected_tokens(min(self.alpha, 1.0), int(x)) / (x * c + v) for x in g]
        return int(g[int(np.argmax(pred))]) if self.steps else best_gamma(self.alpha, c)


def spec_stats(results: GenerationResult | Sequence[GenerationResult]) -> SpecStats:
    """Aggregate the step records of speculative GenerationResults (one or a list)."""
    if not isinstance(results, (list, tuple)):
        results = [results]
    if not results:
        raise ValueError("results is empty: no generation results to summarise")
    for r in results:
        if not hasattr(r, "steps") or not hasattr(r, "new_ids"):
            raise TypeError(f"results must be GenerationResults (from speculative_generate), got {type(r).__name__}")
    gamma = max(r.gamma for r in results)
    steps = [s for r in results for s in r.steps]
    full = [s for s in steps if s.gamma == gamma and gamma > 0]  # the last step of a run may draft fewer
    drafted = sum(s.gamma for s in steps)
    accepted = sum(s.accepted for s in steps)
    generated = sum(len(r.new_ids) for r in results)
    seconds = sum(r.seconds for r in results)
    ks = np.array([s.accepted for s in full], dtype=np.int64)
    hist = np.bincount(ks, minlength=gamma + 1) if gamma else np.zeros(1, np.int64)
    reached = np.array([(ks >= i).sum() for i in range(gamma)], dtype=float)  # steps whose draft i was tested
    acc_at = np.array([(ks > i).sum() for i in range(gamma)], dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        per_pos = acc_at / max(len(full), 1)
        cond = np.where(reached > 0, acc_at / np.maximum(reached, 1), np.nan)
    alphas = [a for s in steps for a in s.alphas]
    alpha = float(np.mean(alphas)) if alphas else float("nan")
    theory = (accepted_length_dist(min(alpha, 1.0), gamma) * len(full)) if gamma and alphas else np.zeros(gamma + 1)
    n_draft = sum(s.gamma for s in steps)
    return SpecStats(
        gamma=gamma,
        steps=len(steps),
        drafted=drafted,
        accepted=accepted,
        generated=generated,
        acceptance_rate=accepted / drafted if drafted else float("nan"),
        mean_acceptance_length=(sum(s.n_emitted for s in steps) / len(steps)) if steps else float("nan"),
        per_position=per_pos,
        per_position_conditional=cond,
        accepted_hist=hist,
        accepted_hist_theory=theory,
        alpha=alpha,
        seconds=seconds,
        tokens_per_second=generated / seconds if seconds > 0 else float("nan"),
        draft_token_s=(sum(s.draft_s for s in steps) / n_draft) if n_draft else float("nan"),
        verify_step_s=(sum(s.verify_s for s in steps) / len(steps)) if steps else float("nan"),
        expected_tokens_per_step=expected_tokens(min(alpha, 1.0), gamma) if alphas else float("nan"),
    )
