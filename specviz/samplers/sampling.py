"""Vectorised samplers for one speculative step (numpy; no Python loop per sample).

>>> s = spec_sample([0.6, 0.3, 0.1], [0.4, 0.5, 0.1], n=100_000, seed=0)
>>> s.tokens.shape, s.accepted.dtype
((100000,), dtype('bool'))
>>> bool(abs(s.accepted.mean() - 0.8) < 0.01)      # P(accept) = sum min(p, q) = 0.8
True
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from ..exact.multidraft import check_draft_count, multi_draft_stages
from ..exact.rules import get_rule
from ..exact.theory import acceptance_prob, envelope_constant
from ..foundation.checks import integer, real
from ..foundation.validate import as_dist, as_pair

MAX_SAMPLES = 10**9  # more samples than this in one call would not fit in memory anyway


def make_rng(seed=None) -> np.random.Generator:
    """An int/None seed (0-d arrays and tensors count), a SeedSequence or an existing Generator -> a numpy Generator."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None or isinstance(seed, (np.random.SeedSequence, np.random.BitGenerator)):
        return np.random.default_rng(seed)
    if isinstance(seed, numbers.Integral) and not isinstance(seed, (bool, np.bool_)):
        seed = int(seed)  # exact, however large
        if seed < 0:
            raise ValueError(f"seed must be an integer >= 0, a numpy Generator or None, got {seed}")
        return np.random.default_rng(seed)
    if hasattr(seed, "ndim") and getattr(seed, "ndim", None) == 0 and "int" in str(getattr(seed, "dtype", "")):
        return make_rng(int(seed.item()))  # 0-d integer array or tensor
    if isinstance(seed, (list, tuple)) and seed and all(isinstance(v, numbers.Integral) and v >= 0 for v in seed):
        return np.random.default_rng(list(seed))  # numpy's own entropy-list seeding
    return np.random.default_rng(integer(seed, "seed", lo=0))


def check_sample_count(n, name: str = "n (number of samples)") -> int:
    """n as an int, a number of samples (ValueError unless a whole number in 0..MAX_SAMPLES)."""
    return integer(n, name, lo=0, hi=MAX_SAMPLES)


# categorical: up to this many tokens (through the last nonzero one) a count of comparisons
# beats a binary search; a guide table pays once there are at least as many draws as tokens
_COMPARE_MAX_V = 16
_GUIDE_MIN_N = 1024


def categorical(p: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """(n,) int64 draws from the probability vector p by inverse CDF; never a p = 0 token.

    The result is exactly `np.searchsorted(cumsum(p), u * total, side="right")` for
    u = rng.random(n) (clamped to the last nonzero token, in case u * total rounds up to the
    total), found faster when n is large: by counting comparisons for a tiny vocabulary,
    otherwise by a guide table and a short forward walk (Chen and Asau 1974).

    >>> categorical(np.array([0.0, 0.5, 0.0, 0.5]), 8, np.random.default_rng(0)).tolist()
    [3, 1, 1, 1, 3, 3, 3, 3]
    """
    last = int(np.flatnonzero(p)[-1])
    cdf = np.cumsum(p[: last + 1])  # tokens past the last nonzero one are never drawn
    u = rng.random(n)
    u *= cdf[-1]
    m = cdf.size
    if m <= _COMPARE_MAX_V and n:
        # searchsorted(side="right") = how many cdf entries are <= u; leaving out the last entry
        # (the total) counts at most `last`, which is the clamp, so no np.minimum pass is needed
        count = np.zeros(n, dtype=np.uint8)
        ge = np.empty(n, dtype=np.bool_)
        for k in range(m - 1):
            np.greater_equal(u, cdf[k], out=ge)
            count += ge.view(np.uint8)  # a bool is one byte, 0 or 1: no cast pass
        return count.astype(np.intp)
    if n >= max(m, _GUIDE_MIN_N):
        idx = _guided_search(cdf, u)
    else:
        idx = np.searchsorted(cdf, u, side="right")
    np.minimum(idx, last, out=idx)
    return idx


def _guided_search(cdf: np.ndarray, u: np.ndarray) -> np.ndarray:
    """np.searchsorted(cdf, u, side="right") for many u in [0, cdf[-1]]: a guide table, then a forward walk.

    Bucket b of M equal slices of [0, total) starts the search at the number of cdf entries
    below the slice's lower end (lowered by 1e-12 relative, so float rounding of u * M / total
    can never start a search past its answer); the walk then steps forward while cdf <= u:
    about one step per draw with M = 4 x the number of tokens.
    """
    m = cdf.size
    M = 4 * m if m <= 8192 else 2 * m
    scale = M / cdf[-1]
    bucket = (u * scale).astype(np.intp)
    np.minimum(bucket, M - 1, out=bucket)
    lower = np.arange(M) / scale * (1 - 1e-12)
    idx = np.searchsorted(cdf, lower, side="left")[bucket]  # every entry before it is < lower <= u
    cdf_end = np.append(cdf, np.inf)
    step = cdf_end[idx] <= u
    idx += step
    todo = np.flatnonzero(step)
    while todo.size:
        at = idx[todo]
        step = cdf_end[at] <= u[todo]
        at += step
        idx[todo] = at
        todo = todo[step]
    return idx


@dataclass(frozen=True)
class SpecSample:
    """n independent speculative steps: what was drafted, whether it was kept, what came out."""

    tokens: np.ndarray  # (n,) int64 emitted token ids
    accepted: np.ndarray  # (n,) bool, True where the draft was kept
    drafts: np.ndarray  # (n,) int64 drafted token ids (from q)
    vocab_size: int

    def counts(self) -> np.ndarray:
        """(V,) how often each token was emitted."""
        return np.bincount(self.tokens, minlength=self.vocab_size)

    def empirical(self) -> np.ndarray:
        """(V,) empirical output distribution."""
        return self.counts() / max(len(self.tokens), 1)

    def accepted_counts(self) -> np.ndarray:
        """(V,) emitted-and-accepted counts per token (the min(p, q) part)."""
        return np.bincount(self.tokens[self.accepted], minlength=self.vocab_size)

    def rejected_counts(self) -> np.ndarray:
        """(V,) emitted-after-rejection counts per token (the (p - q)+ part)."""
        return np.bincount(self.tokens[~self.accepted], minlength=self.vocab_size)

    @property
    def acceptance(self) -> float:
        """Fraction of drafts kept."""
        return float(self.accepted.mean()) if len(self.accepted) else float("nan")


def spec_sample(p, q, n, rule="lossless", seed=None, **params) -> SpecSample:
    """Run n independent single-token speculative steps of `rule` on target p and draft q.

    Each step drafts x ~ q, keeps it with probability a(x) of the rule, and otherwise
    emits a replacement. Seeded runs are bit-identical.
    """
    p, q = as_pair(p, q)
    p, q = p.astype(np.float64), q.astype(np.float64)
    n = check_sample_count(n)
    r = get_rule(rule)
    kw = r.params(params)
    rng = make_rng(seed)
    a = np.asarray(r.accept(p, q, **kw), dtype=np.float64)  # (V,)
    drafts = categorical(q, n, rng)
    accepted = rng.random(n) < a[drafts]
    tokens = drafts.copy()
    rej = np.flatnonzero(~accepted)
    if rej.size:
        tokens[rej] = r.sample_rejected(p, q, drafts[rej], rng, categorical, **kw)
    return SpecSample(tokens, accepted, drafts, p.size)


@dataclass(frozen=True)
class MultiDraftSample:
    """n multi-draft steps: emitted tokens and the index of the accepted draft (-1: none)."""

    tokens: np.ndarray  # (n,) int64
    accepted_index: np.ndarray  # (n,) int64 in -1..k-1
    drafts: np.ndarray  # (n, k) int64
    vocab_size: int

    def empirical(self) -> np.ndarray:
        return np.bincount(self.tokens, minlength=self.vocab_size) / max(len(self.tokens), 1)

    @property
    def acceptance(self) -> float:
        return float((self.accepted_index >= 0).mean())


def multi_draft_sample(p, q, n, n_drafts, update_residual=True, seed=None) -> MultiDraftSample:
    """SpecInfer-style verification of n_drafts i.i.d. drafts from q, n times (loop over n_drafts only)."""
    p, q = as_pair(p, q)
    p, q = p.astype(np.float64), q.astype(np.float64)
    n, n_drafts = check_sample_count(n), check_draft_count(n_drafts)
    rng = make_rng(seed)
    stages = multi_draft_stages(p, q, n_drafts, update_residual)
    drafts = (
        np.stack([categorical(q, n, rng) for _ in range(n_drafts)], axis=1) if n else np.zeros((0, n_drafts), np.int64)
    )
    u = rng.random((n, n_drafts))
    tokens = np.full(n, -1, dtype=np.int64)
    acc_idx = np.full(n, -1, dtype=np.int64)
    open_ = np.ones(n, dtype=bool)
    for i, (R, _) in enumerate(stages[:-1]):  # draft i against the running R: min(1, R/q), 1 where q = 0
        ok = open_ & (u[:, i] < acceptance_prob(R, q)[drafts[:, i]])
        tokens[ok] = drafts[ok, i]
        acc_idx[ok] = i
        open_ &= ~ok
    rest = np.flatnonzero(open_)
    if rest.size:
        tokens[rest] = categorical(stages[-1][0].astype(np.float64), rest.size, rng)
    return MultiDraftSample(tokens, acc_idx, drafts, p.size)


def rejection_sample(p, q, n, M=None, seed=None, max_tries: int = 10_000):
    """Classic rejection sampling with envelope M q >= p: returns (tokens (n,), tries (n,)).

    Each try draws x ~ q and accepts with p(x) / (M q(x)); on rejection it starts over.
    """
    p, q = as_pair(p, q)
    p, q = p.astype(np.float64), q.astype(np.float64)
    n = check_sample_count(n)
    max_tries = integer(max_tries, "max_tries", lo=1)
    if M is None:
        M = envelope_constant(p, q)
        if not np.isfinite(M):
            raise ValueError(f"no finite envelope M: q = 0 where p > 0, so rejection sampling cannot reach p (M={M})")
    M = real(M, "M (envelope constant)", lo=0, lo_open=True)
    rng = make_rng(seed)
    ratio = np.zeros_like(p)
    np.divide(p, M * q, out=ratio, where=q > 0)
    tokens = np.full(n, -1, dtype=np.int64)
    tries = np.zeros(n, dtype=np.int64)
    todo = np.arange(n)
    for _ in range(max_tries):
        if not todo.size:
            break
        x = categorical(q, todo.size, rng)
        tries[todo] += 1
        ok = rng.random(todo.size) < ratio[x]
        tokens[todo[ok]] = x[ok]
        todo = todo[~ok]
    if todo.size:
        raise ValueError(
            f"{todo.size} samples still rejected after max_tries={max_tries} tries: "
            f"acceptance too low (M = {M:g} accepts about 1/M per try)"
        )
    return tokens, tries


def importance_estimate(f, p, q, n, seed=None):
    """Running self-normalised-free IS estimate of E_p[f] from n draft samples: (n,) array.

    `f` is a (V,) array of values per token. The last entry is the final estimate.
    """
    p, q = as_pair(p, q)
    p, q = p.astype(np.float64), q.astype(np.float64)
    try:
        f = np.asarray(f.detach().cpu() if hasattr(f, "detach") else f, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise TypeError(f"f must be an array of one number per token: {e}") from None
    if f.shape != p.shape:
        raise ValueError(f"f must give one value per token: shape {f.shape} vs vocabulary {p.shape}")
    if not np.isfinite(f).all():
        raise ValueError(
            f"f[{int(np.flatnonzero(~np.isfinite(f))[0])}] is not finite: every value must be a finite number"
        )
    n = check_sample_count(n)
    rng = make_rng(seed)
    x = categorical(q, n, rng)
    w = np.zeros_like(p)
    np.divide(p, q, out=w, where=q > 0)
    return np.cumsum(w[x] * f[x]) / np.arange(1, n + 1)


def sample_from(p, n, seed=None) -> np.ndarray:
    """(n,) plain samples from p (the autoregressive baseline)."""
    p = as_dist(p).astype(np.float64)
    return categorical(p, check_sample_count(n), make_rng(seed))
