"""Where losslessness meets floating point: one speculative step computed in fp64/fp32/fp16/bf16.

The proof assumes exact p(x), q(x) and p(x)/q(x). A real engine gets logits in some
dtype, takes the softmax in that dtype and evaluates the verification rule in that
dtype. This module does exactly that, with no sampling (no Monte-Carlo noise): the
*exact* output distribution of the lossless rule is evaluated with the arithmetic of
each dtype and compared with the fp64 target p.

Two sources of drift are kept apart:

* ``p_tv``: TV(p computed in the dtype, p in fp64): the target itself is already
  different (rounded logits, rounded exp, underflow of small probabilities to 0);
* ``verify_tv``: TV(output, p in the dtype): the error added by evaluating
  min(p, q) + (1 - sum min(p, q)) (p - q)+ / Z in the dtype (usually tiny).

``out_tv`` = TV(output, fp64 p) is what a user sees.

>>> t, d = [2.0, 1.0, 0.0], [1.0, 2.0, 0.0]
>>> rows = precision_report(t, d)
>>> [r.dtype for r in rows]
['float64', 'float32', 'float16', 'bfloat16']
>>> rows[0].out_tv < 1e-15, rows[3].out_tv > 1e-4
(True, True)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

try:
    import torch
except ImportError as e:  # the light install has no torch
    raise ImportError("specviz.exact.numerics simulates low precision with torch: pip install 'specviz[lm]'") from e

from .standardize import as_logits

DTYPES = ("float64", "float32", "float16", "bfloat16")

_TORCH_DTYPES = {
    "float64": torch.float64,
    "float32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
}
_ALIASES = {
    "fp64": "float64",
    "double": "float64",
    "fp32": "float32",
    "float": "float32",
    "fp16": "float16",
    "half": "float16",
    "bf16": "bfloat16",
}


def dtype_name(dtype) -> str:
    """'fp16', 'half', torch.float16, ... -> the canonical name ('float16')."""
    if isinstance(dtype, torch.dtype):
        for name, dt in _TORCH_DTYPES.items():
            if dt == dtype:
                return name
        raise ValueError(f"unsupported dtype {dtype}; use one of {', '.join(DTYPES)}")
    name = str(dtype).lower().removeprefix("torch.")
    name = _ALIASES.get(name, name)
    if name not in _TORCH_DTYPES:
        raise ValueError(f"unsupported dtype {dtype!r}; use one of {', '.join(DTYPES)}")
    return name


def torch_dtype(dtype) -> torch.dtype:
    """The torch dtype for a name such as 'bf16' or 'float32'."""
    return _TORCH_DTYPES[dtype_name(dtype)]


def softmax_in(logits, dtype="float32", temperature=1.0) -> torch.Tensor:
    """softmax(logits / T) with the logits first cast to `dtype` and every op done in it.

    Returns a tensor of that dtype (what a model running in that precision samples from).
    """
    if not (temperature > 0) or not np.isfinite(temperature):
        raise ValueError(f"temperature must be a finite number > 0, got {temperature!r}")
    z = torch.as_tensor(as_logits(logits), dtype=torch.float64)
    dt = torch_dtype(dtype)
    z = z.to(dt)
    if temperature != 1.0:
        z = z / torch.tensor(temperature, dtype=dt)
    return torch.softmax(z, dim=-1)


def lossless_output_in(p, q, dtype="float32") -> torch.Tensor:
    """The exact lossless output q a + (1 - sum q a) (p - q)+ / Z, evaluated in `dtype`.

    a = min(1, p/q) (1 where q = 0). In exact arithmetic this returns p; in low
    precision the rounding of the ratio, the products and Z shows up.
    """
    dt = torch_dtype(dtype)
    p = torch.as_tensor(p).to(dt)
    q = torch.as_tensor(q).to(dt)
    if p.shape != q.shape or p.ndim != 1:
        raise ValueError(f"p and q must be 1-D of the same length, got {tuple(p.shape)} and {tuple(q.shape)}")
    one = torch.ones((), dtype=dt)
    ratio = torch.where(q > 0, p / torch.where(q > 0, q, one), one)
    acc = q * torch.clamp(ratio, max=1.0)  # (V,) P(x and accept), in dtype
    res = torch.clamp(p - q, min=0.0)  # (V,) (p - q)+
    z = res.sum()
    r = res / z if float(z) > 0 else p
    return acc + (one - acc.sum()) * r


def _tv(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).sum() / 2)


@dataclass(frozen=True)
class PrecisionRow:
    """One dtype's exact result, compared with the fp64 target."""

    dtype: str
    p: np.ndarray  # (V,) target softmax computed in dtype (as float64 values)
    q: np.ndarray  # (V,) draft softmax computed in the draft's dtype
    output: np.ndarray  # (V,) lossless output evaluated in dtype
    p_tv: float  # TV(p in dtype, p in fp64): drift of the target itself
    verify_tv: float  # TV(output, p in dtype): error of the verification arithmetic
    out_tv: float  # TV(output, p in fp64): what the user gets vs what they asked for
    max_abs: float  # max_x |output(x) - p64(x)|
    sum_error: float  # |sum(output) - 1|
    underflow: int  # tokens with p64 > 0 whose dtype p is exactly 0


def precision_report(
    target_logits, draft_logits, dtypes=DTYPES, temperature=1.0, draft_dtype=None
) -> list[PrecisionRow]:
    """Exact lossless output per dtype vs the fp64 target, one row per dtype.

    `draft_dtype` (default: the same dtype as the row) lets the draft run in another
    precision (e.g. a bf16 target verified against an fp32 draft's q).
    """
    t = as_logits(target_logits)
    d = as_logits(draft_logits)
    if t.shape != d.shape:
        raise ValueError(f"target and draft logits have different lengths ({t.size} vs {d.size})")
    if not dtypes:
        raise ValueError("dtypes is empty: name at least one of " + ", ".join(DTYPES))
    p64 = softmax_in(t, "float64", temperature).numpy()
    rows = []
    for dt in dtypes:
        name = dtype_name(dt)
        p_t = softmax_in(t, name, temperature)
        q_t = softmax_in(d, dtype_name(draft_dtype) if draft_dtype is not None else name, temperature)
        out_t = lossless_output_in(p_t, q_t, name)
        p_d = p_t.double().numpy()
        q_d = q_t.double().numpy()
        out = out_t.double().numpy()
        rows.append(
            PrecisionRow(
                dtype=name,
                p=p_d,
                q=q_d,
                output=out,
                p_tv=_tv(p_d, p64),
                verify_tv=_tv(out, p_d),
                out_tv=_tv(out, p64),
                max_abs=float(np.max(np.abs(out - p64))),
                sum_error=float(abs(out.sum() - 1.0)),
                underflow=int(np.sum((p64 > 0) & (p_d == 0))),
            )
        )
    return rows


def example_logits(V: int = 64, scale: float = 4.0, draft_noise: float = 1.0, seed=0):
    """A reproducible (target_logits, draft_logits) pair: N(0, scale²) logits, draft = target + noise.

    Larger `scale` means peakier distributions and more tiny probabilities (fp16 underflow).
    """
    if int(V) != V or V < 2:
        raise ValueError(f"V (vocabulary size) must be an integer >= 2, got {V!r}")
    if not (scale >= 0) or not np.isfinite(scale):
        raise ValueError(f"scale must be a finite number >= 0, got {scale!r}")
    if not (draft_noise >= 0) or not np.isfinite(draft_noise):
        raise ValueError(f"draft_noise must be a finite number >= 0, got {draft_noise!r}")
    rng = np.random.default_rng(seed)
    target = scale * rng.standard_normal(int(V))
    draft = target + draft_noise * rng.standard_normal(int(V))
    return target, draft


__all__ = [
    "DTYPES",
    "PrecisionRow",
    "dtype_name",
    "example_logits",
    "lossless_output_in",
    "precision_report",
    "softmax_in",
    "torch_dtype",
]
