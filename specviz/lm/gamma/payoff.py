"""When does speculative decoding pay? The textbook speed-up at a measured α for drafts of different cost.

With per-position acceptance α (i.i.d.), γ drafts per verify step and a draft step that
costs c target steps, a verify step emits (1 − α^(γ+1)) / (1 − α) tokens in the time of
γc + 1 target steps (Leviathan et al. 2023, "Fast Inference from Transformers via
Speculative Decoding", arXiv:2211.17192, Theorem 3.8). The bound assumes that
scoring γ + 1 tokens in one target pass costs about one target step, which holds when the
target is memory-bound: at batch size 1 its time goes into reading the weights, not into
arithmetic (Chen et al. 2023, "Accelerating Large Language Model Decoding with Speculative
Sampling", arXiv:2302.01318, §1).

Speculating with some γ ≥ 1 beats plain decoding exactly when c < α (Leviathan et al.,
Corollary 3.9, gives the "if"): the speed-up exceeds 1 iff α + α² + … + α^γ > γc, and the
mean of α, …, α^γ is largest at γ = 1. So a draft pays only if it is cheap. On a GPU a
tiny draft is dominated by per-step overhead (kernel launches, not arithmetic) and costs
about half a target step, far from the c ≪ α that a large gain needs.

>>> [(r.c, r.best_gamma, round(r.speedup, 2)) for r in payoff_table(0.8, cs=(0.05, 0.25, 0.5), max_gamma=16)]
[(0.05, 8, 3.09), (0.25, 3, 1.69), (0.5, 2, 1.22)]
>>> break_even_cost(0.6)
0.6
"""

from __future__ import annotations

from typing import NamedTuple

from ...exact.gamma import best_gamma, speedup
from ...foundation.checks import integer, real
from ...foundation.i18n import t

DEFAULT_COSTS = (0.05, 0.25, 0.5)
"""Draft costs c compared by default: a cheap draft, a moderate one, a GPU-overhead-bound tiny one."""


class PayoffRow(NamedTuple):
    """The best textbook speed-up at one draft cost c (γ = 0: speculation does not pay, speed-up 1)."""

    c: float
    best_gamma: int
    speedup: float


def _check_alpha(alpha) -> float:
    return real(alpha, "alpha (the acceptance probability)", lo=0, hi=1)


def _check_cost(c) -> float:
    return real(c, "c (the draft cost ratio, draft step / target step)", lo=0)


def _check_costs(cs) -> list:
    if isinstance(cs, (str, bytes)) or not hasattr(cs, "__iter__"):
        raise TypeError(f"cs (draft cost ratios) must be a sequence of numbers, got {cs!r}")
    return [real(c, "cs (draft cost ratios)", lo=0) for c in cs]


def break_even_cost(alpha) -> float:
    """The largest draft cost ratio c at which some γ ≥ 1 still beats plain decoding: c < α."""
    return _check_alpha(alpha)


def payoff_table(alpha, cs=DEFAULT_COSTS, max_gamma: int = 16) -> list[PayoffRow]:
    """For each draft cost c in `cs`: the γ in 0..max_gamma with the best textbook speed-up, and that speed-up."""
    a = _check_alpha(alpha)
    max_gamma = integer(max_gamma, "max_gamma", lo=1, hi=100_000)
    rows = []
    for c in _check_costs(cs):
        g = best_gamma(a, c, max_gamma)
        rows.append(PayoffRow(c, g, float(speedup(a, g, c))))
    return rows


def _gain(row: PayoffRow) -> str:
    if not row.best_gamma:
        return t("live.payoff_no_gain")
    return t("live.payoff_gain", speedup=row.speedup, gamma=row.best_gamma)


def payoff_sentence(alpha, c=None, cs=DEFAULT_COSTS, max_gamma: int = 16, verify=None) -> str:
    """One plain-text paragraph (current language): when speculation pays at α, for this run's c and the costs `cs`.

    `verify`: a verify step's measured time in target steps (the bound assumes about 1).
    """
    a = _check_alpha(alpha)
    text = t("live.payoff_intro")
    if c is not None:
        here = payoff_table(a, [c], max_gamma)[0]
        text += t("live.payoff_here", alpha=a, c=here.c, gain=_gain(here))
    else:
        text += t("live.payoff_no_c", alpha=a)
    others = t("live.list_sep").join(f"c = {r.c:.2f} → {_gain(r)}" for r in payoff_table(a, cs, max_gamma))
    text += t("live.payoff_others", others=others) if others else ""
    if verify is not None:
        text += t("live.payoff_verify", verify=_check_cost(verify))
    return text


__all__ = ["DEFAULT_COSTS", "PayoffRow", "break_even_cost", "payoff_sentence", "payoff_table"]
