"""From a model's logits to the distributions the engine samples, on the models' device; broken logits caught.

`process_probs` applies temperature, top-k and top-p as `specviz.exact.standardize` does (its checked
entry point); `probs_on_device` is the same without checks or host reads, for the hot loop.
`bad_rows` flags rows of logits that hold NaN or +inf (or nothing but -inf), and the decoders stop
with a `NonFiniteLogitsError` naming the model and the generated token instead of sampling from them.
`make_generator` and `torch_threads` set up a run's randomness and CPU threads.

>>> process_probs(torch.tensor([0.0, 0.0, 10.0]), Sampling(temperature=0)).tolist()
[[0.0, 0.0, 1.0]]
>>> bad_rows(torch.tensor([[0.0, 1.0], [float("nan"), 0.0]])).tolist()
[False, True]
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

import numpy as np
import torch

from ...exact.standardize import Sampling

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = [
    "NonFiniteLogitsError",
    "bad_rows",
    "draft_bad_rows",
    "first_bad",
    "make_generator",
    "non_finite_error",
    "pair_generators",
    "probs_on_device",
    "process_logits",
    "process_probs",
    "raise_if_bad",
    "torch_threads",
]


def process_probs(rows: torch.Tensor, s: Sampling, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """(k, V) or (V,) logits -> (k, V) probabilities after temperature, top-k, top-p, on the rows' device.

    Same semantics as `specviz.exact.standardize`: temperature 0 is a one-hot argmax. The logits
    are shifted by their maximum before dividing, so a tiny temperature (1e-310) tends to
    the argmax instead of overflowing into NaN.

    >>> process_probs(torch.tensor([0.0, 1.0, 2.0]), Sampling(temperature=1e-310)).tolist()
    [[0.0, 0.0, 1.0]]
    """
    if not isinstance(s, Sampling):
        raise TypeError(f"s must be a specviz.exact.standardize.Sampling, got {type(s).__name__}")
    if not isinstance(rows, torch.Tensor):  # lists and numpy arrays are converted; checks below need no sync
        if rows is None or isinstance(rows, (str, bytes)):
            raise TypeError(f"rows (logits) must be a tensor or an array of numbers, got {rows!r}")
        try:
            rows = torch.as_tensor(np.asarray(rows, dtype=np.float64))
        except (TypeError, ValueError) as e:
            raise TypeError(f"rows (logits) must be a tensor or an array of numbers: {e}") from None
    if rows.ndim not in (1, 2) or rows.shape[-1] == 0 or rows.is_complex() or rows.dtype == torch.bool:
        raise ValueError(
            f"rows (logits) must be a non-empty (V,) or (k, V) real tensor, got {rows.dtype} "
            f"of shape {tuple(rows.shape)}"
        )
    z = rows.detach().to(dtype)
    bad = torch.isnan(z) | torch.isposinf(z)  # -inf is a masked token; NaN and +inf are not logits
    if bool(bad.any()) or bool(torch.isneginf(z).all(-1).any()):  # one read: this is the checked entry point
        raise ValueError("rows (logits) contain NaN or +inf, or a row that is all -inf (no token can be sampled)")
    return probs_on_device(z, s, dtype)


def probs_on_device(rows: torch.Tensor, s: Sampling, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """`process_probs` without its checks: no host read, for the engine's hot loop (rows must be logits)."""
    z = rows.detach().to(dtype)
    if z.ndim == 1:
        z = z[None]  # (1, V)
    if s.temperature == 0:
        out = torch.zeros_like(z)
        return out.scatter_(-1, z.argmax(-1, keepdim=True), 1.0)
    if s.temperature < 1e-3:  # shift to max 0 first, or z / T overflows to inf (softmax shifts anyway)
        z = z - z.amax(-1, keepdim=True)
    z = z / s.temperature  # (k, V)
    if s.top_k:
        k = min(int(s.top_k), z.shape[-1])
        kth = torch.topk(z, k, dim=-1).values[:, -1:]
        z = z.masked_fill(z < kth, float("-inf"))
    prob = torch.softmax(z, dim=-1)
    if s.top_p is not None and s.top_p < 1:
        sp, order = torch.sort(prob, dim=-1, descending=True, stable=True)
        cum = sp.cumsum(-1)
        target = torch.full((len(cum), 1), s.top_p - 1e-12, dtype=cum.dtype, device=cum.device)
        keep_n = torch.searchsorted(cum, target) + 1
        keep_sorted = torch.arange(z.shape[-1], device=z.device)[None, :] < keep_n
        keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
        prob = torch.where(keep, prob, torch.zeros_like(prob))
        prob = prob / prob.sum(-1, keepdim=True)
    return prob


def process_logits(rows: torch.Tensor, s: Sampling) -> np.ndarray:
    """(k, V) logits -> (k, V) float64 numpy probabilities (`process_probs`, moved to the host)."""
    return process_probs(rows, s).cpu().numpy()


def make_generator(
    seed: int | np.random.Generator | torch.Generator | None, device: torch.device | str
) -> torch.Generator:
    """A torch.Generator on `device` from a seed as `GenerationSettings` checks it: an int, a numpy or torch Generator, None.

    A torch.Generator is used as given; a numpy Generator gives the seed; None is a fresh one.
    """
    if isinstance(seed, torch.Generator):
        return seed
    if isinstance(seed, np.random.Generator):
        seed = int(seed.integers(2**63))
    elif seed is None:
        seed = int(np.random.SeedSequence().entropy % 2**63)
    g = torch.Generator(device=device)
    g.manual_seed(int(seed))
    return g


def pair_generators(seed, target_device: torch.device, draft_device: torch.device) -> tuple:
    """(target's generator, draft's generator): one shared generator, or on another device one seeded from it."""
    gen_t = make_generator(seed, target_device)
    if draft_device == target_device:
        return gen_t, gen_t
    return gen_t, make_generator(int(torch.randint(2**62, (1,), generator=gen_t, device=target_device)), draft_device)


@contextlib.contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Temporarily set torch's intra-op threads to `n`, checked by `GenerationSettings` (None: leave them)."""
    if n is None:
        yield
        return
    old = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)


class NonFiniteLogitsError(RuntimeError):
    """A model produced NaN or inf logits: decoding stops instead of emitting a token drawn from them."""


def bad_rows(logits: torch.Tensor) -> torch.Tensor:
    """(k,) bool on the device: rows of (k, V) logits holding NaN or +inf, or nothing but -inf (no token possible).

    A -inf entry alone is a masked token and fine.
    """
    return (torch.isnan(logits) | torch.isposinf(logits)).any(-1) | torch.isneginf(logits).all(-1)


def draft_bad_rows(d_logits: list, g: int, device: torch.device) -> torch.Tensor:
    """(γ,) bool: which of the draft's logits rows behind the γ drafts are broken (all False for a lookup run).

    `d_logits[j]` is the draft's (V,) logits row for draft j, None where it had none (a lookup run).
    """
    rows = [r for r in d_logits[:g] if r is not None]
    if not rows:
        return torch.zeros(g, dtype=torch.bool, device=device)
    out = bad_rows(torch.stack([r.reshape(-1) for r in rows]).to(device))
    return out if len(rows) == g else torch.cat([out, out.new_zeros(g - len(rows))])


def non_finite_error(which: str, position: int, index: int | None = None) -> NonFiniteLogitsError:
    """The error for non-finite logits from the `which` model ("target" or "draft") at a generated position (from 0)."""
    step = "" if index is None else f", verify step {index}"
    return NonFiniteLogitsError(
        f"the {which} model produced non-finite logits (NaN or inf) for generated token {position + 1}"
        f"{step}: its weights or activations are broken (a corrupted file, or fp16 overflow: try float32 or bfloat16)"
    )


def first_bad(flags) -> int | None:
    """Index of the first true flag (host floats), or None."""
    return next((j for j, f in enumerate(flags) if f), None)


def raise_if_bad(target_flags, draft_flags, start: int, index: int) -> None:
    """Raise for the earliest broken row of a verify step (the draft's row j is used before the target's row j)."""
    jt, jd = first_bad(target_flags), first_bad(draft_flags)
    if jd is not None and (jt is None or jd <= jt):
        raise non_finite_error("draft", start + jd, index)
    if jt is not None:
        raise non_finite_error("target", start + jt, index)
