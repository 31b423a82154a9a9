"""Multi-draft verification (SpecInfer-style): n_drafts i.i.d. drafts from q checked in turn.

Lossless rule: R := p; for each draft x_i accept with min(1, R(x_i)/q(x_i)); on
rejection R := (R - q)+ / Z and go on; if every draft is rejected, sample from R.
The naive variant keeps comparing against p and is not lossless.

>>> p, q = [0.5, 0.3, 0.15, 0.05], [0.1, 0.2, 0.3, 0.4]
>>> round(multi_draft_acceptance_rate(p, q, 2), 6)   # vs 0.5 for one draft
0.65
>>> naive = multi_draft_output_dist(p, q, 2, update_residual=False)
>>> round(float(abs(naive - p).sum() / 2), 6)         # TV of the naive variant
0.15

That rule is exact because the drafts are i.i.d. from q. Children chosen by the draft instead
(its top k, as Medusa and EAGLE-2 do, or a prompt-lookup trie) need the rule for deterministic
children: accept child x with probability R(x), else set R(x) := 0 and renormalise
(`children_walk(..., rule="deterministic")`), exact for any distinct children:

>>> p, q = [0.6, 0.3, 0.1], [0.4, 0.5, 0.1]
>>> top = top_k_children(q, 2)                        # dog, then cat
>>> top, children_output_dist(p, q, top).round(6).tolist()          # the i.i.d. rule on them: biased
([1, 0], [0.4, 0.6, 0.0])
>>> children_output_dist(p, q, top, rule="deterministic").round(6).tolist()   # exactly p
[0.6, 0.3, 0.1]
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..foundation.checks import flag, integer
from ..foundation.validate import as_dist, as_pair, is_exact
from .theory import repair

MAX_DRAFTS = 100_000  # each draft is one pass of a Python loop

CHILD_RULES = ("multi_draft", "deterministic")
"""How fixed children are verified: SpecInfer's i.i.d. rule, or the rule for deterministic children."""


def check_draft_count(n_drafts) -> int:
    """n_drafts as an int (ValueError unless a whole number in 1..MAX_DRAFTS)."""
    return integer(n_drafts, "n_drafts (number of drafts)", lo=1, hi=MAX_DRAFTS)


def multi_draft_stages(p, q, n_drafts, update_residual=True):
    """Per stage i: (R_i, P(reach stage i)); the last entry is the fallback distribution."""
    p, q = as_pair(p, q)
    n_drafts = check_draft_count(n_drafts)
    update_residual = flag(update_residual, "update_residual")
    R, reach = p, (Fraction(1) if is_exact(p) else 1.0)
    stages = []
    fallback, _ = repair(p, q)
    for _ in range(n_drafts):
        stages.append((R, reach))
        nxt, z = repair(R, q)
        reach = reach * z if update_residual else reach * (1 - np.minimum(p, q).sum())
        R = nxt if update_residual else p
    stages.append((R if update_residual else fallback, reach))
    return stages


def multi_draft_output_dist(p, q, n_drafts, update_residual=True) -> np.ndarray:
    """Exact P(output = x) with n_drafts drafts; equals p when update_residual=True."""
    p, q = as_pair(p, q)
    stages = multi_draft_stages(p, q, n_drafts, update_residual)
    out = sum(reach * np.minimum(R, q) for R, reach in stages[:-1])
    R_last, reach_last = stages[-1]
    return out + reach_last * R_last


def multi_draft_acceptance_rate(p, q, n_drafts, update_residual=True):
    """P(some draft is accepted) = 1 - P(all n_drafts rejected)."""
    reach = multi_draft_stages(p, q, n_drafts, update_residual)[-1][1]
    out = 1 - reach
    return out if isinstance(out, Fraction) else float(out)


def check_rule(rule) -> str:
    """`rule` if it is one of CHILD_RULES, else ValueError naming them."""
    if not isinstance(rule, str) or rule not in CHILD_RULES:
        raise ValueError(f"rule must be one of {CHILD_RULES}, got {rule!r}")
    return rule


def top_k_children(q, n_drafts) -> list[int]:
    """The n_drafts most likely tokens of q, most likely first (ties: lower id first): distinct children.

    ValueError when q gives fewer than n_drafts tokens a positive probability.

    >>> top_k_children([0.4, 0.5, 0.1], 2)
    [1, 0]
    """
    q = as_dist(q, "q")
    k = check_draft_count(n_drafts)
    order = sorted(range(q.size), key=lambda x: (-q[x], x))
    support = int(np.count_nonzero(q > 0))
    if k > support:
        raise ValueError(f"n_drafts={k} distinct children need {k} tokens with q > 0; q has {support}")
    return order[:k]


def children_walk(p, q, children, rule="multi_draft"):
    """Fixed drafted children x_1..x_k tested in turn: (P(child i is the accepted one), P(all rejected), final R).

    rule="multi_draft": accept x_i with min(1, R(x_i)/q(x_i)), on rejection R := (R - q)+ / Z
    (exact on average over children drawn i.i.d. from q). rule="deterministic": accept x_i with
    R(x_i), on rejection R(x_i) := 0 and renormalise (exact for any distinct children; q not read).
    Exact Fractions in, exact Fractions out.

    >>> acc, none, R = children_walk([0.6, 0.3, 0.1], [0.4, 0.5, 0.1], [1, 0], rule="deterministic")
    >>> acc.round(6).tolist(), round(float(none), 6), R.round(6).tolist()
    ([0.3, 0.6], 0.1, [0.0, 0.0, 1.0])
    """
    p, q = as_pair(p, q)
    rule = check_rule(rule)
    if children is None or isinstance(children, (str, bytes, dict)) or not hasattr(children, "__len__"):
        raise TypeError(f"children must be a list of token ids, got {children!r}")
    if getattr(children, "ndim", 1) != 1:
        raise TypeError(f"children must be a flat list of token ids, got an array of shape {tuple(children.shape)}")
    children = [
        integer(x, f"children[{i}] (a token id, 0..{p.size - 1})", lo=0, hi=p.size - 1) for i, x in enumerate(children)
    ]
    if not children:
        raise ValueError("children must hold at least one drafted token id, got none")
    if rule == "deterministic" and len(set(children)) != len(children):
        raise ValueError(f"the deterministic rule needs distinct children, got {children}")
    one, zero = (Fraction(1), Fraction(0)) if is_exact(p) else (1.0, 0.0)
    R, still, acc = p.copy(), one, []
    for x in children:
        if rule == "deterministic":
            a = R[x]
        else:
            a = min(one, R[x] / q[x]) if q[x] > 0 else zero
        acc.append(still * a)
        still = still * (1 - a)
        if rule == "deterministic":
            rest = R.copy()
            rest[x] = zero
            R = rest / rest.sum() if rest.sum() > 0 else rest
        else:
            R, _ = repair(R, q)
    return np.array(acc, dtype=object if is_exact(p) else np.float64), still, R


def children_output_dist(p, q, children, rule="multi_draft") -> np.ndarray:
    """Exact P(the token that leaves the node = x) for fixed children: the accepted child, else a draw from R.

    Summed over every outcome of the walk (accept child 1, reject it and accept child 2, ...,
    all rejected then each token of the final R), with no sampling.
    """
    p, q = as_pair(p, q)
    acc, none, R = children_walk(p, q, children, rule)
    out = none * R
    for x, a in zip(children, acc):
        out[x] = out[x] + a
    return out
