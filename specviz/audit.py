"""Lossless audit: does a verifier's output follow the target distribution p?

>>> audit("lossless", [0.6, 0.3, 0.1], [0.4, 0.5, 0.1]).passed
True
>>> report = audit("resample_target", [0.6, 0.3, 0.1], [0.4, 0.5, 0.1])
>>> report.passed, round(float(report.empirical[0]), 2)   # cat lands near 0.52, not 0.6
(False, 0.52)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .checks import real
from .rules import RULES, Rule
from .sampling import check_sample_count, make_rng, spec_sample
from .validate import as_pair

DEFAULT_SIGNIFICANCE = 1e-3  # the false-alarm rate of an audit (α in the tests; α is the acceptance rate elsewhere)


@dataclass(frozen=True)
class AuditReport:
    """Outcome of one audit: verdict, p-value, empirical distribution and its TV from p."""

    passed: bool
    p_value: float  # chi-square goodness-of-fit p-value against p (0 if a p = 0 token appeared)
    empirical: np.ndarray  # (V,) empirical output distribution
    tv: float  # TV(empirical, p)
    explanation: str  # one line
    n: int
    significance: float  # significance level = false-alarm rate
    chi2: float
    dof: int
    impossible_tokens: np.ndarray  # token ids emitted although p(x) = 0
    target: np.ndarray  # (V,) p

    def __str__(self) -> str:
        return ("PASS" if self.passed else "FAIL") + f": {self.explanation}"

    def _repr_html_(self) -> str:  # notebooks show the verdict, not a dataclass dump
        colour = "#1a7f37" if self.passed else "#cf222e"
        return f"<b style='color:{colour}'>{'PASS' if self.passed else 'FAIL'}</b> {self.explanation}"


def _pooled_chisquare(counts: np.ndarray, expected: np.ndarray):
    """Chi-square test, pooling cells with expected count < 5 into one (Cochran's rule)."""
    from scipy import stats  # imported here: scipy.stats takes ~1 s to import

    small = expected < 5
    if small.any() and (~small).any():
        counts = np.append(counts[~small], counts[small].sum())
        expected = np.append(expected[~small], expected[small].sum())
    if counts.size < 2:
        return 0.0, 1.0, 0
    chi2, pval = stats.chisquare(counts, expected)
    return float(chi2), float(pval), counts.size - 1


def _draw(sampler, p, q, n, seed, params):
    """Call a rule name, a Rule or a user function sampler(p, q, n, rng) -> (n,) token ids."""
    if isinstance(sampler, str) and sampler not in RULES:
        raise ValueError(f"sampler {sampler!r} is not a known rule ({', '.join(RULES)}) nor a function")
    if isinstance(sampler, (str, Rule)):
        return spec_sample(p, q, n, rule=sampler, seed=seed, **params).tokens
    if not callable(sampler):
        raise ValueError(f"sampler must be a rule name or a function sampler(p, q, n, rng), got {sampler!r}")
    out = sampler(p.copy(), q.copy(), n, make_rng(seed))
    out = getattr(out, "tokens", out)
    try:
        tokens = np.asarray(out)
    except Exception as e:  # noqa: BLE001 - report whatever the user returned
        raise ValueError(f"sampler returned something that is not an array of token ids: {e}") from None
    if tokens.shape != (n,):
        raise ValueError(f"sampler must return {n} token ids (shape ({n},)), got shape {tokens.shape}")
    if tokens.dtype.kind == "f" and np.all(np.mod(tokens, 1) == 0):
        tokens = tokens.astype(np.int64)
    if tokens.dtype.kind not in "iu":
        raise ValueError(f"sampler must return integer token ids, got dtype {tokens.dtype}")
    return tokens.astype(np.int64)


def audit(sampler, p, q, n=100_000, seed=0, significance=DEFAULT_SIGNIFICANCE, **params) -> AuditReport:
    """Check that `sampler` emits tokens distributed exactly as the target p.

    `sampler` is a rule name ("lossless", "resample_target", ...) or your own function
    `sampler(p, q, n, rng) -> (n,) token ids`. The test is Pearson's chi-square
    goodness of fit against p (cells with expected count < 5 pooled); the audit fails
    when its p-value is below `significance`, or at once when a token with p(x) = 0 or an id
    outside the vocabulary is emitted.

    False-alarm rate: a correct (lossless) sampler fails with probability `significance`
    (default 1e-3, i.e. one run in a thousand), up to the chi-square approximation.
    With a fixed `seed` the verdict is reproducible.
    """
    p, q = as_pair(p, q)
    p, q = p.astype(np.float64), q.astype(np.float64)
    n = check_sample_count(n)
    if n == 0:
        raise ValueError("n must be >= 1 to audit anything")
    if "alpha" in params:
        raise TypeError("audit's false-alarm rate is now called `significance=` (alpha means the acceptance rate)")
    significance = real(significance, "significance (false-alarm rate)", lo=0, hi=1, lo_open=True, hi_open=True)
    tokens = _draw(sampler, p, q, n, seed, params)
    V = p.size
    outside = tokens[(tokens < 0) | (tokens >= V)]
    inside = tokens[(tokens >= 0) & (tokens < V)]
    counts = np.bincount(inside, minlength=V)
    empirical = counts / n
    tv = float(np.abs(empirical - p).sum() / 2 + outside.size / n / 2)
    impossible = np.flatnonzero((counts > 0) & (p == 0))
    support = p > 0
    chi2, pval, dof = float("inf"), 0.0, int(support.sum()) - 1
    if not outside.size and not impossible.size:
        chi2, pval, dof = _pooled_chisquare(counts[support], n * p[support])
    if outside.size:
        passed = False
        why = (
            f"{outside.size} of {n} token ids fall outside the vocabulary 0..{V - 1} "
            f"(e.g. {int(outside[0])}): the verifier emits ids that do not exist"
        )
    elif impossible.size:
        passed = False
        x = int(impossible[0])
        why = (
            f"token {x} was emitted {int(counts[x])} times although p({x}) = 0: "
            "the output cannot be the target distribution"
        )
    elif pval < significance:
        passed = False
        worst = int(np.argmax(np.abs(empirical - p)))
        why = (
            f"output differs from p (chi-square p-value {pval:.2g} < {significance:g}, TV {tv:.4f}); "
            f"largest gap at token {worst}: {empirical[worst]:.4f} vs p = {p[worst]:.4f}"
        )
    else:
        passed = True
        why = f"consistent with p (chi-square p-value {pval:.3g} >= {significance:g}, TV {tv:.4f} over {n} samples)"
    return AuditReport(passed, pval, empirical, tv, why, n, significance, chi2, dof, impossible, p)
