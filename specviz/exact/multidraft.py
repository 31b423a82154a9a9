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
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..foundation.checks import flag, integer
from ..foundation.validate import as_pair, is_exact
from .theory import repair

MAX_DRAFTS = 100_000  # each draft is one pass of a Python loop


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
