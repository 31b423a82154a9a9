"""Lossless audit: does a verifier's output follow the target distribution p? And, when the verifier shows its
drafts, does it keep as many of them as a lossless rule can (Σ min(p, q))?

>>> audit("lossless", [0.6, 0.3, 0.1], [0.4, 0.5, 0.1]).passed
True
>>> report = audit("resample_target", [0.6, 0.3, 0.1], [0.4, 0.5, 0.1])
>>> report.passed, round(float(report.empirical[0]), 2)   # cat lands near 0.52, not 0.6
(False, 0.52)

A verifier that returns `(drafts, tokens)` is also checked for efficiency. One that ignores its draft
and samples p directly is lossless, but speculates nothing:

>>> def ignores_the_draft(p, q, n, rng):
...     return rng.choice(len(q), n, p=q), rng.choice(len(p), n, p=p)
>>> report = audit(ignores_the_draft, [0.6, 0.3, 0.1], [0.4, 0.5, 0.1])
>>> report.lossless, report.efficient, round(report.acceptance, 2), round(report.optimum, 2)
(True, False, 0.4, 0.8)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

import numpy as np

from ..exact.rules import RULES, Rule
from ..foundation.budget import call_within, mode_in_use
from ..foundation.checks import flag, real
from ..foundation.palette import pass_fail
from ..foundation.validate import as_pair
from .sampling import check_sample_count, make_rng, spec_sample

DEFAULT_SIGNIFICANCE = 1e-3  # the false-alarm rate of an audit (α in the tests; α is the acceptance rate elsewhere)

EFFICIENCY_SIGNIFICANCE = 1e-6
"""False-alarm rate of the efficiency check: a two-sided binomial z-test of the acceptance against Σ min(p, q)."""

EFFICIENCY_Z = 4.891638475699412
"""|z| beyond which the acceptance is refused: the two-sided normal quantile of EFFICIENCY_SIGNIFICANCE (1e-6)."""

TIME_LIMIT_S = 60.0
"""Seconds a sampler function gets for its n draws by default (on Linux in a child process, ended at the limit)."""


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
    lossless: bool | None = None  # the output-law verdict alone (None only in reports built by hand)
    acceptance: float | None = None  # fraction of outputs equal to their draft (None: the drafts were not shown)
    optimum: float | None = None  # Σ min(p, q): the acceptance of every optimal lossless rule
    efficient: bool | None = None  # acceptance consistent with the optimum, drafts ~ q (None: not checked)
    acceptance_z: float | None = None  # binomial z-score of acceptance against optimum (None: not computed)
    joint_ok: bool | None = None  # (draft, output) follows the textbook rule's joint law (None: not checked)

    def __str__(self) -> str:
        return ("PASS" if self.passed else "FAIL") + f": {self.explanation}"

    def _repr_html_(self) -> str:  # notebooks show the verdict, not a dataclass dump
        colour = pass_fail(self.passed)
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


def _shape(v) -> tuple | None:
    """np.shape(v), or None when v has none (ragged lists, odd objects)."""
    try:
        return np.shape(v)
    except Exception:  # noqa: BLE001 - whatever the verifier returned
        return None


def split_drafts(out, n: int):
    """(drafts, tokens) from what a verifier returned: a pair `(drafts, tokens)` (tuple or list) of two length-n
    arrays or lists, an object with `.drafts` and `.tokens` (a SpecSample), or the tokens alone (drafts None).
    Drafts of another length are a ValueError, never a reason to skip the efficiency check."""
    if hasattr(out, "tokens"):
        drafts = getattr(out, "drafts", None)
        if drafts is not None and _shape(drafts) != (n,):
            raise ValueError(f"the sampler's .drafts must hold its n = {n} drafts (shape ({n},)), got {_shape(drafts)}")
        return drafts, out.tokens
    if isinstance(out, tuple | list) and len(out) == 2:  # (drafts, tokens), or [drafts, tokens] as lists
        shapes = [_shape(v) for v in out]
        if shapes[0] == shapes[1] == (n,):  # never a token array: that would have shape (2, n)
            return out[0], out[1]
        if (n,) in shapes:  # nor n token ids: one of the pair has the wrong length
            raise ValueError(f"a (drafts, tokens) pair must hold two arrays of n = {n} ids, got shapes {shapes}")
    return None, out


def _ids(out, n, what="sampler"):
    """`out` as (n,) int64 token ids, or a ValueError that says what is wrong with it."""
    try:
        tokens = np.asarray(out)
    except Exception as e:  # noqa: BLE001 - report whatever the user returned
        raise ValueError(f"{what} returned something that is not an array of token ids: {e}") from None
    if tokens.shape != (n,):
        raise ValueError(f"{what} must return {n} token ids (shape ({n},)), got shape {tokens.shape}")
    if tokens.dtype.kind == "f" and np.all(np.mod(tokens, 1) == 0):
        tokens = tokens.astype(np.int64)
    if tokens.dtype.kind not in "iu":
        raise ValueError(f"{what} must return integer token ids, got dtype {tokens.dtype}")
    return tokens.astype(np.int64)


def _draw(sampler, p, q, n, seed, params, rule_drafts=False, limit=None, mode=None):
    """Call a rule name, a Rule or a user function sampler(p, q, n, rng) (within `limit` s where `mode` says, see
    `budget.call_within`): (tokens, drafts or None). A rule's drafts only when `rule_drafts` (audit's
    efficiency=True): some registered rules are lossless on purpose but not optimal."""
    if isinstance(sampler, str) and sampler not in RULES:
        raise ValueError(f"sampler {sampler!r} is not a known rule ({', '.join(RULES)}) nor a function")
    if isinstance(sampler, (str, Rule)):
        s = spec_sample(p, q, n, rule=sampler, seed=seed, **params)
        return s.tokens, (s.drafts if rule_drafts else None)
    if not callable(sampler):
        raise ValueError(f"sampler must be a rule name or a function sampler(p, q, n, rng), got {sampler!r}")
    if params:
        raise TypeError(f"{', '.join(params)}: options of a rule name; a function sampler(p, q, n, rng) takes none")
    if limit is None:
        return draw_function(sampler, p, q, n, seed)
    lift = "time_limit=None runs it without a limit" + (
        "; mode='process' ends code that outlasts it" if mode == "inline" else ""
    )
    return call_within(partial(draw_function, sampler, p, q, n, seed), limit, mode, "the sampler", lift)


def draw_function(sampler, p, q, n: int, seed) -> tuple[np.ndarray, np.ndarray | None]:
    """(tokens, drafts or None) of `sampler(p, q, n, rng)` called as `audit` calls it, checked as int ids."""
    p, q = (a.astype(np.float64) for a in as_pair(p, q))
    drafts, out = split_drafts(sampler(p.copy(), q.copy(), n, make_rng(seed)), n)
    tokens = _ids(out, n)
    return tokens, (None if drafts is None else _ids(drafts, n, "sampler (its drafts)"))


def _efficiency(tokens, drafts, p, q):
    """(acceptance, optimum, z, efficient, why): are the drafts ~ q, and is P(output = draft) = Σ min(p, q)?

    z is the binomial z-score of the acceptance against the optimum (None when the drafts are not from q).
    """
    n, V = tokens.size, p.size
    optimum = float(np.minimum(p, q).sum())
    acceptance = float(np.mean(tokens == drafts))
    bad = drafts[(drafts < 0) | (drafts >= V)]
    counts = np.bincount(drafts[(drafts >= 0) & (drafts < V)], minlength=V)
    never = np.flatnonzero((counts > 0) & (q == 0))
    if bad.size:
        return acceptance, optimum, None, False, f"draft id {int(bad[0])} is outside the vocabulary 0..{V - 1}"
    if never.size:
        x = int(never[0])
        why = f"draft {x} appears {int(counts[x])} times although q({x}) = 0: these are not drafts from q"
        return acceptance, optimum, None, False, why
    _, pval, _ = _pooled_chisquare(counts[q > 0], n * q[q > 0])
    if pval < EFFICIENCY_SIGNIFICANCE:
        why = f"the drafts are not distributed as q (chi-square p-value {pval:.2g} < {EFFICIENCY_SIGNIFICANCE:g})"
        return acceptance, optimum, None, False, why
    sd = math.sqrt(optimum * (1 - optimum) / n)
    gap = acceptance - optimum
    z = gap / sd if sd > 0 else (0.0 if gap == 0 else math.copysign(math.inf, gap))
    test = f"z = {z:.1f}; |z| > {EFFICIENCY_Z:.2f} is refused, false-alarm rate {EFFICIENCY_SIGNIFICANCE:g}"
    if z < -EFFICIENCY_Z:
        why = (
            f"your rule keeps the draft only {acceptance:.4f} of the time; the optimum Σ min(p, q) is {optimum:.4f}: "
            f"it throws away what the draft proposed ({test})"
        )
        return acceptance, optimum, z, False, why
    if z > EFFICIENCY_Z:
        why = (
            f"the output equals its draft {acceptance:.4f} of the time, above the optimum Σ min(p, q) = "
            f"{optimum:.4f}, which no rule whose output is p can reach: the returned drafts are not the ones the "
            f"output was built from ({test})"
        )
        return acceptance, optimum, z, False, why
    return (
        acceptance,
        optimum,
        z,
        True,
        f"keeps the draft {acceptance:.4f} of the time, optimum Σ min(p, q) = {optimum:.4f}",
    )


def textbook_joint(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """(V, V) P(draft = x, output = y) of the textbook rule: min(p, q) on the diagonal, q(x) − min(p(x), q(x))
    spread over (p − q)+ / Z.

    >>> textbook_joint(np.array([0.6, 0.3, 0.1]), np.array([0.4, 0.5, 0.1])).round(3).tolist()
    [[0.4, 0.0, 0.0], [0.2, 0.3, 0.0], [0.0, 0.0, 0.1]]
    """
    kept = np.minimum(p, q)
    residual = np.maximum(p - q, 0.0)
    z = residual.sum()
    spread = np.outer(q - kept, residual / z) if z > 0 else np.zeros((p.size, p.size))
    return np.diag(kept) + spread


def _joint(tokens, drafts, p, q):
    """(ok, why): does (draft, output) follow `textbook_joint` (pooled chi-square; a zero-probability cell fails)?"""
    V, n = p.size, tokens.size
    want = textbook_joint(p, q).ravel()
    counts = np.bincount(drafts * V + tokens, minlength=V * V)
    never = np.flatnonzero((counts > 0) & (want == 0))
    if never.size:
        x, y = divmod(int(never[0]), V)
        what = "kept" if x == y else f"replaced by {y}"
        return False, f"draft {x} was {what} {int(counts[never[0]])} times, which the rule never does"
    _, pval, _ = _pooled_chisquare(counts[want > 0], n * want[want > 0])
    if pval < EFFICIENCY_SIGNIFICANCE:
        worst = int(np.argmax(np.abs(counts / n - want)))
        x, y = divmod(worst, V)
        return False, (
            f"the pairs (draft, output) do not follow the rule "
            f"(chi-square p-value {pval:.2g} < {EFFICIENCY_SIGNIFICANCE:g}); "
            f"largest gap at draft {x} → output {y}: {counts[worst] / n:.4f} vs {want[worst]:.4f}"
        )
    return True, ""


def audit(
    sampler,
    p,
    q,
    n=100_000,
    seed=0,
    significance=DEFAULT_SIGNIFICANCE,
    efficiency=None,
    joint=False,
    time_limit=TIME_LIMIT_S,
    mode=None,
    **params,
) -> AuditReport:
    """Check that `sampler` emits tokens distributed exactly as the target p.

    `sampler` is a rule name ("lossless", "resample_target", ...) or your own function
    `sampler(p, q, n, rng) -> (n,) token ids`. The test is Pearson's chi-square
    goodness of fit against p (cells with expected count < 5 pooled); the audit fails
    when its p-value is below `significance`, or at once when a token with p(x) = 0 or an id
    outside the vocabulary is emitted.

    False-alarm rate: a correct (lossless) sampler fails with probability `significance`
    (default 1e-3, i.e. one run in a thousand), up to the chi-square approximation.
    With a fixed `seed` the verdict is reproducible.

    Efficiency: a verifier may show its drafts by returning `(drafts, tokens)` (two length-n arrays) or an
    object with `.drafts` and `.tokens`. Then (`efficiency=None`, the default) the audit also checks that the
    drafts follow q (chi-square) and that the fraction of outputs equal to their draft
    matches Σ min(p, q), the acceptance of every optimal lossless rule: a two-sided binomial z-test with a
    false-alarm rate of EFFICIENCY_SIGNIFICANCE (1e-6; the drafts' chi-square uses the same level, so a
    correct verifier's false-alarm rate grows by at most 2e-6). A rule that ignores its draft and samples p is
    lossless but fails here. `efficiency=True` requires the drafts (a rule name shows them only then: some
    registered rules are lossless but not optimal on purpose; a function that returns tokens alone is then a
    ValueError); `efficiency=False` skips the check. The report carries
    `lossless`, `efficient`, `acceptance`, `optimum` and `acceptance_z` separately; `passed` needs both verdicts.
    `joint=True` also tests the pairs (draft, output) against the textbook rule's joint law (`textbook_joint`,
    pooled chi-square at EFFICIENCY_SIGNIFICANCE; it needs the drafts, as `efficiency=True` does): what an exercise
    that asks for that rule checks. `efficiency` and `joint` take True or False only ("yes", 1: a TypeError).
    p and q are checked as `sv.as_dist` checks them (finite, non-negative, summing to 1 within 1e-6, else a
    ValueError naming p or q) and then divided by their sums, so the draws see exact distributions.

    A sampler function gets `time_limit` s (None: no limit), run where `mode` says: "inline" (default: here, its
    state yours; a timer that code catching BaseException can outlast), "process" (a forked child ended at the
    limit; Linux) or "auto" (`budget.MODE`, as `sv.exercises.check`); past it a TimeoutError says where it ran.
    Inline, the sampler runs in your process as any call of yours does: a sampler that catches BaseException in a
    loop runs past `time_limit` (the alarm it swallows is the only stop), and one that calls `os._exit` ends your
    process (in a notebook: the kernel dies) with no word from the audit. For code you have not
    seen return, use mode="process": the child is ended at the limit, and a child that dies (os._exit, out of
    memory) or raises KeyboardInterrupt is reported by name. Inline stays the default because a verifier's own
    state (counters, a torch generator) would otherwise stay in the child.

    >>> from specviz.samplers.verifiers import correct_verifier
    >>> r = audit(lambda p, q, n, rng: correct_verifier(p, q, n, rng, with_drafts=True), [0.6, 0.3, 0.1], [0.4, 0.5, 0.1])
    >>> r.passed, r.efficient, round(r.acceptance, 2)
    (True, True, 0.8)
    """
    p, q = as_pair(p, q)  # each within 1e-6 of summing to 1 (else a ValueError naming it), then made to sum to 1:
    p, q = p.astype(np.float64), q.astype(np.float64)  # numpy's draws and the chi-square need ~1e-8
    p, q = (x / x.sum() if abs(x.sum() - 1) > 1e-12 else x for x in (p, q))
    n = check_sample_count(n)
    if n == 0:
        raise ValueError("n must be >= 1 to audit anything")
    if "alpha" in params:
        raise TypeError("audit's false-alarm rate is now called `significance=` (alpha means the acceptance rate)")
    significance = real(significance, "significance (false-alarm rate)", lo=0, hi=1, lo_open=True, hi_open=True)
    if efficiency is not None and not isinstance(efficiency, bool | np.bool_):
        why = "None: checked when the verifier shows its drafts"
        raise TypeError(f"efficiency must be True, False or None ({why}), got {efficiency!r:.80}")
    efficiency, joint = (None if efficiency is None else bool(efficiency)), flag(joint, "joint")
    limit = None if time_limit is None else real(time_limit, "time_limit (seconds, or None)", lo=0, lo_open=True)
    # "inline" unless asked: a verifier's own state (counters, a torch generator) must not stay in a child process
    mode = "inline" if mode is None else mode
    mode_in_use(mode)  # checked even when no function of the learner's runs
    tokens, drafts = _draw(sampler, p, q, n, seed, params, efficiency or joint, limit, mode)
    if (efficiency or joint) and drafts is None:
        need = "efficiency=True" if efficiency else "joint=True"
        raise ValueError(f"{need} needs the drafts: return (drafts, tokens) from the verifier")
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
    lossless = passed
    acceptance = optimum = acceptance_z = efficient = joint_ok = None
    if drafts is not None and efficiency is not False:
        acceptance, optimum, acceptance_z, efficient, how = _efficiency(tokens, drafts, p, q)
        if lossless and not efficient:
            passed, why = False, f"lossless, but not efficient: {how}"
        elif lossless:
            why += f"; {how}"
    if joint and drafts is not None and passed:
        joint_ok, how = _joint(tokens, drafts, p, q)
        if not joint_ok:
            passed, why = False, how
    verdict = (passed, pval, empirical, tv, why, n, significance, chi2, dof, impossible, p)
    shown = {"acceptance": acceptance, "optimum": optimum, "efficient": efficient, "acceptance_z": acceptance_z}
    return AuditReport(*verdict, lossless=lossless, joint_ok=joint_ok, **shown)
