"""Verification rules: how a drafted token is accepted and what replaces it on rejection.

A rule is (accept probability a(x), replacement distribution r) and the exact output
follows from the two-branch decomposition

    P(out = y) = q(y) a(y)  +  [sum_x q(x) (1 - a(x))] r(y)
                 ^ accepted     ^ P(reject)

Adding a rule is one `register(Rule(...))` call. `token_match` needs its own
replacement (it depends on the drafted token), so it overrides `reject_joint` and
`sample_rejected`.

>>> out = output_dist([0.6, 0.3, 0.1], [0.4, 0.5, 0.1], rule="resample_target")
>>> round(float(out[0]), 12)   # the tutorial's pitfall: cat gets 0.52, not 0.6
0.52
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike

from ..foundation.checks import real
from ..foundation.validate import as_pair, is_exact
from .theory import Joint, acceptance_prob, resample_dist, safe_ratio


def _one(p):
    return Fraction(1) if is_exact(p) else 1.0


@dataclass(frozen=True)
class Rule:
    """One verification rule: accept(p, q, **params) -> a, resample(p, q, **params) -> r."""

    name: str
    lossless: bool
    description: str
    accept: Callable[..., np.ndarray]
    resample: Callable[..., np.ndarray] | None
    defaults: dict = field(default_factory=dict)
    ranges: dict = field(default_factory=dict)  # parameter -> (lo, hi, lo_open): finite values in that range

    def params(self, given: dict) -> dict:
        """The rule's parameters: the defaults, overridden by `given` (checked: known, finite, in range)."""
        unknown = set(given) - set(self.defaults)
        if unknown:
            allowed = ", ".join(self.defaults) or "none"
            raise ValueError(f"rule {self.name!r} got unknown parameter(s) {sorted(unknown)}; allowed: {allowed}")
        out = {**self.defaults, **given}
        for name, value in given.items():
            lo, hi, lo_open = self.ranges.get(name, (None, None, False))
            v = real(value, f"rule {self.name!r} parameter {name}", lo=lo, hi=hi, lo_open=lo_open)
            out[name] = value if isinstance(value, (int, Fraction)) and not isinstance(value, bool) else v  # exact
        return out

    def reject_joint(self, p: np.ndarray, q: np.ndarray, a: np.ndarray, **params: float) -> np.ndarray:
        """(V,) P(output = y and reject)."""
        p_reject = (q * (_one(p) - a)).sum()
        return p_reject * self.resample(p, q, **params)

    def sample_rejected(
        self,
        p: np.ndarray,
        q: np.ndarray,
        drafts: np.ndarray,
        rng: np.random.Generator,
        categorical: Callable[[np.ndarray, int, np.random.Generator], np.ndarray],
        **params: float,
    ) -> np.ndarray:
        """Replacement tokens for the rejected `drafts` (same length)."""
        return categorical(self.resample(p, q, **params).astype(np.float64), len(drafts), rng)


class TokenMatchRule(Rule):
    """Draw y ~ p; keep the draft x iff y == x, else emit y (exact; accepts sum p*q)."""

    def reject_joint(self, p: np.ndarray, q: np.ndarray, a: np.ndarray, **params: float) -> np.ndarray:
        # P(y and reject) = sum_{x != y} q(x) p(y) = p(y) (1 - q(y))
        return p * (_one(p) - q)

    def sample_rejected(
        self,
        p: np.ndarray,
        q: np.ndarray,
        drafts: np.ndarray,
        rng: np.random.Generator,
        categorical: Callable[[np.ndarray, int, np.random.Generator], np.ndarray],
        **params: float,
    ) -> np.ndarray:
        # y ~ p conditioned on y != x: rejection-sample, vectorised over the batch
        out = np.empty(len(drafts), dtype=np.int64)
        todo = np.arange(len(drafts))
        pf = p.astype(np.float64)
        while todo.size:
            y = categorical(pf, todo.size, rng)
            ok = y != drafts[todo]
            out[todo[ok]] = y[ok]
            todo = todo[~ok]
        return out


class DropUnlikelyRule(Rule):
    """Draw x ~ q; when p(x)/q(x) < t leave x out and emit y ~ p (γ = 0 for this step), else verify x as usual.

    The one-position form of an adaptive γ that peeks at the target's verdict before deciding
    whether to verify (`specviz.exact.stopping`). Lossy in general; t = 0 verifies every draft.

    >>> output_dist([0.6, 0.3, 0.1], [0.4, 0.5, 0.1], "drop_unlikely", t=0.7).round(12)  # dog left out
    array([0.7 , 0.15, 0.15])
    """

    def reject_joint(self, p: np.ndarray, q: np.ndarray, a: np.ndarray, **params: float) -> np.ndarray:
        # dropped drafts are replaced by p, verified-and-rejected ones by (p - q)+ / Z
        dropped = _dropped(p, q, params["t"])
        zero = _one(p) - _one(p)
        p_dropped = sum((v for v, d in zip(q, dropped) if d), zero)
        p_rejected = sum((v * (_one(p) - av) for v, av, d in zip(q, a, dropped) if not d), zero)
        return p_dropped * p + p_rejected * resample_dist(p, q)

    def sample_rejected(
        self,
        p: np.ndarray,
        q: np.ndarray,
        drafts: np.ndarray,
        rng: np.random.Generator,
        categorical: Callable[[np.ndarray, int, np.random.Generator], np.ndarray],
        **params: float,
    ) -> np.ndarray:
        dropped = _dropped(p, q, params["t"])[drafts]
        out = np.empty(len(drafts), dtype=np.int64)
        out[dropped] = categorical(p.astype(np.float64), int(dropped.sum()), rng)
        out[~dropped] = categorical(resample_dist(p, q).astype(np.float64), int((~dropped).sum()), rng)
        return out


def _dropped(p, q, t) -> np.ndarray:
    """(V,) bool: the drafts the peeking rule leaves out, p(x)/q(x) < t (a token q never drafts is never left out)."""
    return np.array([qv > 0 and pv < t * qv for pv, qv in zip(p, q)], dtype=bool)


def _drop_unlikely_accept(p, q, t):
    return np.where(_dropped(p, q, t), _one(p) - _one(p), acceptance_prob(p, q))


def _lenient_accept(p, q, l):  # noqa: E741  (l: the lenience, the rule parameter users pass as l=)
    if not l > 0:
        raise ValueError(f"lenience l must be > 0, got {l}")
    return np.minimum(safe_ratio(p, q * l, where_zero=1), _one(p))


def _typical_accept(p, q, eps, delta):
    pf = p.astype(np.float64)
    nz = pf[pf > 0]
    threshold = min(eps, delta * math.exp(float((nz * np.log(nz)).sum())))  # delta * exp(-H(p))
    return (pf > threshold).astype(np.float64)


def _abs_resample(p, q):
    d = abs(p - q)
    z = d.sum()
    return p.copy() if z <= 0 else d / z


RULES: dict[str, Rule] = {}


def register(rule: Rule) -> Rule:
    """Add a rule to the registry (its name becomes usable in output_dist, spec_sample, audit)."""
    RULES[rule.name] = rule
    return rule


register(
    Rule(
        "lossless",
        True,
        "accept min(1, p/q); on rejection sample (p - q)+ / Z",
        lambda p, q: acceptance_prob(p, q),
        lambda p, q: resample_dist(p, q),
    )
)
register(
    Rule(
        "resample_target",
        False,
        "pitfall: on rejection sample from p itself",
        lambda p, q: acceptance_prob(p, q),
        lambda p, q: p,
    )
)
register(
    Rule(
        "abs_residual",
        False,
        "pitfall: on rejection sample |p - q| / sum|p - q|",
        lambda p, q: acceptance_prob(p, q),
        _abs_resample,
    )
)
register(
    Rule(
        "lenient",
        False,
        "accept min(1, p/(l q)), resample (p - q)+ / Z; lossy for every l != 1 (l = 1 is the lossless rule)",
        _lenient_accept,
        lambda p, q, l: resample_dist(p, q),  # noqa: E741
        {"l": 0.5},
        {"l": (0, None, True)},
    )
)  # noqa: E741
register(
    Rule(
        "typical",
        False,
        "Medusa: accept iff p(x) > min(eps, delta exp(-H(p))); else sample p",
        _typical_accept,
        lambda p, q, eps, delta: p,
        {"eps": 0.09, "delta": 0.3},
        {"eps": (0, 1, True), "delta": (0, None, True)},
    )
)
register(
    TokenMatchRule(
        "token_match", True, "draw y ~ p; keep the draft iff y == x, else emit y", lambda p, q: p.copy(), None
    )
)

register(
    DropUnlikelyRule(
        "drop_unlikely",
        False,
        "pitfall (peeking γ): leave the draft out when p(x)/q(x) < t and sample p; else verify it",
        _drop_unlikely_accept,
        None,
        {"t": 0.7},
        {"t": (0, None, False)},
    )
)


def get_rule(rule: str | Rule) -> Rule:
    """Look up a rule by name (or pass a Rule through)."""
    if isinstance(rule, Rule):
        return rule
    try:
        return RULES[rule]
    except KeyError:
        raise ValueError(f"unknown rule {rule!r}; known rules: {', '.join(RULES)}") from None


def rule_joint(p: ArrayLike, q: ArrayLike, rule: str | Rule = "lossless", **params: float) -> Joint:
    """Exact P(out = x and accept), P(out = x and reject) for any rule."""
    p, q = as_pair(p, q)
    r = get_rule(rule)
    kw = r.params(params)
    a = r.accept(p, q, **kw)
    acc = q * a
    rej = r.reject_joint(p, q, a, **kw)
    if is_exact(p):
        rej = np.array([Fraction(v) for v in rej], dtype=object)
    return Joint(accept=acc, reject=rej)


def output_dist(p: ArrayLike, q: ArrayLike, rule: str | Rule = "lossless", **params: float) -> np.ndarray:
    """Exact P(output = x) of one verification step under `rule`.

    >>> output_dist([0.6, 0.3, 0.1], [0.4, 0.5, 0.1]).round(12)
    array([0.6, 0.3, 0.1])
    """
    return rule_joint(p, q, rule, **params).output


def rule_acceptance_rate(
    p: ArrayLike, q: ArrayLike, rule: str | Rule = "lossless", **params: float
) -> float | Fraction:
    """P(the drafted token is kept) under `rule`."""
    total = rule_joint(p, q, rule, **params).p_accept
    return total if isinstance(total, Fraction) else float(total)


def is_lossless(rule: str | Rule) -> bool:
    """Whether `rule` preserves the target distribution for every p, q."""
    return get_rule(rule).lossless


@dataclass(frozen=True)
class RuleReport:
    """A rule's exact behaviour on one (p, q): output, acceptance, TV from p."""

    rule: str
    lossless: bool
    output: np.ndarray
    acceptance: float
    tv: float


def compare_rules(
    p: ArrayLike,
    q: ArrayLike,
    rules: Sequence[str] | None = None,
    params: dict[str, dict[str, float]] | None = None,
) -> list[RuleReport]:
    """Exact output, acceptance and TV(output, p) for several rules side by side."""
    p, q = as_pair(p, q)
    params = params or {}
    out = []
    for name in rules or list(RULES):
        j = rule_joint(p, q, name, **params.get(name, {}))
        o = j.output.astype(np.float64)
        out.append(
            RuleReport(
                name, get_rule(name).lossless, o, float(j.p_accept), float(np.abs(o - p.astype(np.float64)).sum() / 2)
            )
        )
    return out


__all__ = [
    "Rule",
    "DropUnlikelyRule",
    "RULES",
    "register",
    "get_rule",
    "joint",
    "rule_joint",
    "output_dist",
    "rule_acceptance_rate",
    "is_lossless",
    "compare_rules",
    "RuleReport",
]


def joint(p: ArrayLike, q: ArrayLike) -> Joint:
    """The lossless rule's decomposition: accept part min(p, q), reject part (p - q)+.

    >>> j = joint([0.6, 0.3, 0.1], [0.4, 0.5, 0.1])
    >>> j.output.round(12)
    array([0.6, 0.3, 0.1])
    """
    return rule_joint(p, q, "lossless")
