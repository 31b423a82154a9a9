"""vLLM's speculative-decoding counters as one record: a reading, or the difference of two, and its figures.

`SpecCounters` holds what `specviz.lm.serve.vllm` reads from a server's `/metrics` page (drafts,
draft tokens, accepted tokens, accepted per draft position, summed over engines) and gives
vLLM's three figures from them: acceptance rate = accepted / draft tokens, mean acceptance
length = 1 + accepted / drafts, per-position acceptance[i] = accepted at i / drafts. Two
readings subtract into the counts of the interval between them (the later one alone when a
counter went down: the server restarted). `implied_alpha` is the i.i.d. acceptance α that
gives the measured mean acceptance length. No torch.

>>> c = SpecCounters(drafts=10, draft_tokens=30, accepted=15, accepted_per_position=(8, 5, 2))
>>> c.gamma, c.acceptance_rate, c.mean_acceptance_length, c.per_position_acceptance
(3, 0.5, 2.5, [0.8, 0.5, 0.2])
>>> c.accepted_hist.tolist()  # drafts with exactly 0, 1, 2, 3 tokens accepted
[2, 3, 3, 2]
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ...exact.gamma import accepted_length_dist, expected_tokens

if TYPE_CHECKING:
    from ..stats.stats import SpecStats

VLLM_SOURCE = "github.com/vllm-project/vllm, vllm/v1/spec_decode/metrics.py at commit ee4ceaae5953"


@dataclass(frozen=True)
class SpecCounters:
    """vLLM's four speculative-decoding counters, summed over engines: one reading, or the difference of two."""

    drafts: float
    draft_tokens: float
    accepted: float
    accepted_per_position: tuple = ()
    engines: tuple = ()  # the `engine` label values seen
    read_at: float = float("nan")  # time.monotonic() of the reading (of the later one for a difference)
    seconds: float | None = None  # the interval of a difference; None for a reading (totals since start)
    url: str = ""
    restarted: bool = field(default=False)  # a counter went down between the two readings
    model: str = ""  # the `model_name` label read ("" when the page has none)

    @property
    def gamma(self) -> int:
        """Draft positions the server reports (its num_speculative_tokens)."""
        return len(self.accepted_per_position)

    @property
    def acceptance_rate(self) -> float:
        """accepted / draft tokens (NaN when nothing was drafted)."""
        return self.accepted / self.draft_tokens if self.draft_tokens else float("nan")

    @property
    def mean_acceptance_length(self) -> float:
        """1 + accepted / drafts: tokens per verify step, the bonus or correction token included."""
        return 1 + self.accepted / self.drafts if self.drafts else float("nan")

    @property
    def per_position_acceptance(self) -> list:
        """accepted at position i / drafts, i = 0..γ-1 (NaN when there were no drafts)."""
        return [a / self.drafts if self.drafts else float("nan") for a in self.accepted_per_position]

    @property
    def accepted_hist(self) -> np.ndarray:
        """(γ+1,) drafts with exactly k accepted tokens: a draft with k accepted counts at positions 0..k-1."""
        reached = np.array([self.drafts, *self.accepted_per_position, 0.0])
        return np.maximum(np.round(reached[:-1] - reached[1:]), 0).astype(np.int64)

    @property
    def implied_alpha(self) -> float:
        """The i.i.d. acceptance α whose (1 - α^(γ+1)) / (1 - α) equals the mean acceptance length."""
        return implied_alpha(self.mean_acceptance_length, self.gamma)

    def __sub__(self, earlier: SpecCounters) -> SpecCounters:
        """The counts between `earlier` and this reading (the later reading alone after a restart)."""
        if not isinstance(earlier, SpecCounters):
            return NotImplemented
        if earlier.model != self.model:
            raise ValueError(f"cannot subtract a reading of model {earlier.model!r} from one of {self.model!r}")
        g = max(self.gamma, earlier.gamma)
        now = np.array([self.drafts, self.draft_tokens, self.accepted, *_pad(self.accepted_per_position, g)])
        then = np.array(
            [earlier.drafts, earlier.draft_tokens, earlier.accepted, *_pad(earlier.accepted_per_position, g)]
        )
        restarted = bool((now < then).any())
        diff = now if restarted else now - then
        return SpecCounters(
            float(diff[0]),
            float(diff[1]),
            float(diff[2]),
            tuple(float(v) for v in diff[3 : 3 + self.gamma]),
            self.engines,
            self.read_at,
            self.read_at - earlier.read_at,
            self.url,
            restarted,
            self.model,
        )

    def to_dict(self) -> dict:
        """JSON-ready figures, named as specviz's `SpecStats.to_dict` names them (NaN as None)."""
        sec = self.seconds
        return {
            "url": self.url,
            "model": self.model or None,
            "engines": list(self.engines),
            "interval_seconds": _num(sec),
            "drafts": int(self.drafts),
            "draft_tokens": int(self.draft_tokens),
            "accepted_tokens": int(self.accepted),
            "accepted_tokens_per_position": [int(v) for v in self.accepted_per_position],
            "acceptance_rate": _num(self.acceptance_rate),
            "mean_acceptance_length": _num(self.mean_acceptance_length),
            "per_position_acceptance": [_num(v) for v in self.per_position_acceptance],
            "implied_alpha": _num(self.implied_alpha),
            "accepted_tokens_per_second": _num(self.accepted / sec) if sec else None,
            "server_restarted": self.restarted,
            "metric_names_from": VLLM_SOURCE,
        }

    def summary(self) -> str:
        """One line: drafts, the three figures and (for an interval) accepted tokens per second."""
        if not self.drafts:
            what = "no drafts in this interval (the server was idle)" if self.seconds else "no drafts yet"
            return f"{what}: draft tokens {int(self.draft_tokens)}, accepted {int(self.accepted)}"
        pos = " ".join(f"{v:.3f}" for v in self.per_position_acceptance)
        line = (
            f"drafts {int(self.drafts)} · acceptance rate {self.acceptance_rate:.3f} · "
            f"mean acceptance length {self.mean_acceptance_length:.2f} · per position {pos}"
        )
        if self.seconds:
            line += f" · {self.accepted / self.seconds:.1f} accepted tokens/s"
        return line + (" · (server restarted)" if self.restarted else "")

    def stats(self) -> SpecStats:
        """These counts as a `SpecStats`, so specviz's acceptance figures and tables draw them.

        steps = drafts, generated = accepted + drafts; `alpha` is the implied α (the counters carry
        no p and q); the conditional per-position rate is accepted at i / accepted at i-1 (drafts
        for i = 0), exact when every draft proposes γ tokens. Timings unknown to vLLM are NaN.
        """
        from ..stats.stats import SpecStats

        g, d = self.gamma, self.drafts
        reached = np.array([d, *self.accepted_per_position[:-1]], dtype=float) if g else np.zeros(0)
        acc = np.array(self.accepted_per_position, dtype=float)
        with np.errstate(invalid="ignore", divide="ignore"):
            cond = np.where(reached > 0, acc / np.maximum(reached, 1e-300), np.nan)
        alpha = self.implied_alpha
        theory = accepted_length_dist(alpha, g) * d if g and math.isfinite(alpha) else np.zeros(g + 1)
        sec = self.seconds or float("nan")
        nan = float("nan")
        return SpecStats(
            gamma=g,
            steps=int(d),
            drafts=int(d),
            drafted=int(self.draft_tokens),
            accepted=int(self.accepted),
            generated=int(self.accepted + d),
            acceptance_rate=self.acceptance_rate,
            mean_acceptance_length=self.mean_acceptance_length,
            per_position=np.array(self.per_position_acceptance, dtype=float),
            per_position_conditional=cond,
            accepted_hist=self.accepted_hist,
            accepted_hist_theory=theory,
            alpha=alpha,
            seconds=sec,
            tokens_per_second=(self.accepted + d) / sec if self.seconds else nan,
            draft_token_s=nan,
            verify_step_s=nan,
            expected_tokens_per_step=expected_tokens(alpha, g) if math.isfinite(alpha) else nan,
        )


def _pad(values, n: int) -> list:
    return list(values) + [0.0] * (n - len(values))


def _num(v):
    if v is None:
        return None
    v = float(v)
    return v if math.isfinite(v) else None


def implied_alpha(mean_acceptance_length: float, gamma: int) -> float:
    """α in [0, 1] with expected_tokens(α, γ) = mean_acceptance_length (bisection; NaN when undefined).

    >>> round(implied_alpha(expected_tokens(0.7, 4), 4), 6)
    0.7
    """
    m = float(mean_acceptance_length)
    if not math.isfinite(m) or gamma < 1:
        return float("nan")
    if m <= 1:
        return 0.0
    if m >= gamma + 1:
        return 1.0
    lo, hi = 0.0, 1.0
    for _ in range(60):  # expected_tokens grows with α: halve the bracket to 1e-18
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if expected_tokens(mid, gamma) < m else (lo, mid)
    return (lo + hi) / 2


__all__ = ["SpecCounters", "VLLM_SOURCE", "implied_alpha"]
