"""Standardized sampling: the distribution actually sampled from after temperature/top-k/top-p.

Speculative decoding is lossless only if p and q in the ratio are exactly the
distributions the tokens were drawn from, after every processor. `standardize`
folds the processors into one probability vector; `mismatch_output_dist` gives the
exact output when target and draft were processed differently.

>>> standardize([2.0, 1.0, 0.0], temperature=0).tolist()      # greedy is a one-hot
[1.0, 0.0, 0.0]
>>> standardize([2.0, 1.0, 0.0], top_k=2).round(4).tolist()
[0.7311, 0.2689, 0.0]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..foundation.checks import integer, real
from ..foundation.validate import as_dist
from .theory import acceptance_prob, resample_dist

MAX_TOP_K = 2**24
"""The largest top-k taken (16,777,216: beyond any vocabulary, whose largest are ~262,144 tokens); a larger one is
refused, not read as "off" (None or 0 say that), so a typo such as 2**70 is named at once."""


@dataclass(frozen=True)
class Sampling:
    """Sampling settings: temperature (0 = greedy), top_k (None/0 = off), top_p (None/1 = off)."""

    temperature: float = 1.0
    top_k: int | None = None
    top_p: float | None = None

    def __post_init__(self):
        # 0-d arrays and tensors become Python numbers; Python numbers are kept as given
        def plain(x, v):
            return x if isinstance(x, (int, float)) else v

        object.__setattr__(self, "temperature", plain(self.temperature, real(self.temperature, "temperature", lo=0)))
        if self.top_k is not None:
            try:
                k = integer(self.top_k, "top_k", lo=0, hi=MAX_TOP_K)
            except ValueError as e:
                raise ValueError(f"{e} (top_k: 0..{MAX_TOP_K:,}, more than any vocabulary; None or 0 is off)") from None
            object.__setattr__(self, "top_k", plain(self.top_k, k))
        if self.top_p is not None:
            object.__setattr__(self, "top_p", plain(self.top_p, real(self.top_p, "top_p", lo=0, hi=1, lo_open=True)))


def as_logits(logits: ArrayLike, name: str = "logits") -> np.ndarray:
    """(V,) float64 logits from any array or tensor; ValueError for NaN, +inf, all -inf, or not 1-D."""
    if hasattr(logits, "detach"):
        logits = logits.detach().cpu().double().numpy()
    if logits is None or isinstance(logits, (str, bytes)):
        raise TypeError(f"{name} must be a 1-D array of numbers, got {logits!r}")
    try:
        arr = np.asarray(logits, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{name} must be a 1-D array of numbers: {e}") from None
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array, got shape {arr.shape}")
    if np.isnan(arr).any():
        raise ValueError(f"{name}[{int(np.flatnonzero(np.isnan(arr))[0])}] is NaN")
    if np.isposinf(arr).any():
        raise ValueError(f"{name} contain +inf")
    if np.isneginf(arr).all():
        raise ValueError(f"{name} are all -inf: no token can be sampled")
    return arr


def standardize(
    logits: ArrayLike, temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None
) -> np.ndarray:
    """(V,) logits -> (V,) the distribution sampled from (temperature, then top-k, then top-p).

    temperature 0 is greedy: a one-hot at the first argmax, no division by zero.
    top-p keeps the smallest set of most likely tokens whose mass reaches top_p.
    """
    return _standardize(logits, Sampling(temperature, top_k, top_p), "logits")


def _standardize(logits: ArrayLike, s: Sampling, name: str) -> np.ndarray:
    """`standardize` with the settings in `s`; errors about the logits name them `name`."""
    z = as_logits(logits, name)
    if s.temperature == 0:
        out = np.zeros_like(z)
        out[int(np.argmax(z))] = 1.0
        return out
    with np.errstate(over="ignore"):  # shifted first: a tiny temperature tends to the argmax, never NaN
        z = (z - z.max()) / s.temperature
    if s.top_k:
        k = min(int(s.top_k), z.size)
        kth = np.sort(z)[-k]
        z = np.where(z >= kth, z, -np.inf)
    prob = np.exp(z - z.max())
    prob /= prob.sum()
    if s.top_p is not None and s.top_p < 1:
        order = np.argsort(-prob, kind="stable")
        cum = np.cumsum(prob[order])
        keep_n = int(np.searchsorted(cum, s.top_p - 1e-12) + 1)
        mask = np.zeros(z.size, dtype=bool)
        mask[order[:keep_n]] = True
        prob = np.where(mask, prob, 0.0)
        prob /= prob.sum()
    return prob


def softmax(logits: ArrayLike, temperature: float = 1.0) -> np.ndarray:
    """Plain softmax at a temperature (> 0)."""
    return standardize(logits, temperature=temperature)


def verify_output_dist(p_ratio: ArrayLike, q_ratio: ArrayLike, q_sampled: ArrayLike) -> np.ndarray:
    """Exact output when drafts come from `q_sampled` but the ratio uses `p_ratio`/`q_ratio`.

    Lossless iff q_sampled == q_ratio; the output is then p_ratio (which must be the
    intended target for the whole thing to be right).
    """
    p = as_dist(p_ratio, "p_ratio")
    q = as_dist(q_ratio, "q_ratio")
    s = as_dist(q_sampled, "q_sampled")
    if not (p.size == q.size == s.size):
        raise ValueError(f"p_ratio, q_ratio, q_sampled have lengths {p.size}, {q.size}, {s.size}: must match")
    a = np.where(q > 0, acceptance_prob(p, q), 0.0)  # a token with q_ratio = 0 is rejected (vLLM's guard)
    acc = s * a
    return acc + (1.0 - acc.sum()) * resample_dist(p, q)


@dataclass(frozen=True)
class Mismatch:
    """Exact result of a standardisation mismatch: output vs the intended target."""

    intended: np.ndarray  # (V,) the target distribution the user asked for
    output: np.ndarray  # (V,) what the sampler actually produces
    tv: float  # TV(output, intended)


def mismatch_output_dist(
    target_logits: ArrayLike,
    draft_logits: ArrayLike,
    intended: Sampling,
    target_used: Sampling | None = None,
    draft_sampled: Sampling | None = None,
    draft_ratio: Sampling | None = None,
) -> Mismatch:
    """Exact output when p, the sampled draft and the q in the ratio use different settings.

    `intended` is what the user asked for; `target_used` is how p in the ratio was made,
    `draft_sampled` how the draft token was drawn, `draft_ratio` how q in the ratio was
    made (each defaults to `intended`, `intended`, `draft_sampled`).

    >>> m = mismatch_output_dist([2., 1., 0.], [0., 1., 2.], Sampling(0.7), target_used=Sampling(1.0))
    >>> round(m.tv, 4)   # target at T=1 while the user asked for T=0.7
    0.1057
    """
    for name, v in (
        ("intended", intended),
        ("target_used", target_used),
        ("draft_sampled", draft_sampled),
        ("draft_ratio", draft_ratio),
    ):
        if not isinstance(v, Sampling) and (name == "intended" or v is not None):
            raise TypeError(f"{name} must be a Sampling(temperature, top_k, top_p), got {v!r}")
    target_used = target_used or intended
    draft_sampled = draft_sampled or intended
    draft_ratio = draft_ratio or draft_sampled
    want = _standardize(target_logits, intended, "target_logits")
    p = _standardize(target_logits, target_used, "target_logits")
    s = _standardize(draft_logits, draft_sampled, "draft_logits")
    q = _standardize(draft_logits, draft_ratio, "draft_logits")
    out = verify_output_dist(p, q, s)
    return Mismatch(want, out, float(np.abs(out - want).sum() / 2))
