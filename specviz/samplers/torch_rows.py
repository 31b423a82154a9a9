"""The inputs of the torch samplers: (B, V) probability rows checked with one host read, and per-row seeded uniforms.

`specviz.samplers.torch_sampling` samples; this module reads what it samples from. Rows are taken
as given in float16, bfloat16, float32 or float64 (numpy arrays and nested lists are
converted), and each dtype accumulates in `ACCUMULATE[dtype]`. `rows_ok` combines every check of
a step into one boolean tensor that the host reads once; only a bad batch pays for
`diagnose`, which names the first problem (tensor, row, entry). `check_rows` is both in one
call. `uniforms` gives the step's float64 uniforms, from a generator or from each row's own
seed (`seeded_uniforms`, a counter-based draw: vLLM's mixed seeded batch).

>>> check_rows([[0.6, 0.3, 0.1]], [[0.4, 0.5, 0.1]])   # silent when the rows are fine
>>> check_rows([[0.6, 0.3, 0.2]], [[0.4, 0.5, 0.1]])
Traceback (most recent call last):
...
ValueError: p row 0 sums to 1.1, not 1 (tolerance 8.3e-07 for float64 rows of length 3)
"""

from __future__ import annotations

import math

import numpy as np
import torch

# ---------------------------------------------------------------------------------------- rows

# accumulation dtype per input dtype: reduced precisions accumulate in fp32, fp64 in fp64
ACCUMULATE = {
    torch.float16: torch.float32,
    torch.bfloat16: torch.float32,
    torch.float32: torch.float32,
    torch.float64: torch.float64,
}
# integer dtype of the same width, for the bit-level sign check
_BITS = {
    torch.float16: torch.int16,
    torch.bfloat16: torch.int16,
    torch.float32: torch.int32,
    torch.float64: torch.int64,
}


def sum_tolerance(dtype: torch.dtype, V: int) -> float:
    """How far from 1 a valid probability row of `dtype` and length V may sum.

    eps(dtype) for rounding each entry to the dtype, V x its smallest subnormal for entries
    below the normal range (fp16 at large V), and 4 sqrt(V) eps(fp32) for the computation
    of the row itself. bf16: ~7.8e-3; fp16 at V = 32,000: ~3e-3; fp32 at V = 32,000: ~8.6e-5.

    >>> round(sum_tolerance(torch.float32, 32_000), 7)
    8.54e-05
    """
    fi = torch.finfo(dtype)
    subnormal = fi.tiny * fi.eps
    return float(fi.eps + V * subnormal + 4 * math.sqrt(V) * torch.finfo(torch.float32).eps)


def as_prob_rows(x, name: str = "p", like: torch.Tensor | None = None) -> torch.Tensor:
    """x as a float tensor: tensors as they are, numpy arrays and nested lists converted (on `like`'s device).

    numpy float16/32/64 arrays keep their dtype; lists and other numeric arrays become float64.
    Raises TypeError for anything else (or a non-float tensor), ValueError for ragged lists.
    """
    if isinstance(x, torch.Tensor):
        if not x.is_floating_point():
            raise TypeError(f"{name} must hold floating-point probabilities, got a {x.dtype} tensor")
        if x.dtype not in ACCUMULATE:
            raise TypeError(f"{name} has dtype {x.dtype}; supported: float16, bfloat16, float32, float64")
        return x
    if isinstance(x, (np.ndarray, list, tuple)):
        try:
            arr = np.asarray(x)
        except ValueError as e:
            raise ValueError(f"{name} is a ragged nested list, not a (batch, vocabulary) table: {e}") from None
        if arr.dtype.kind not in "fiub":
            raise TypeError(f"{name} must hold numbers, got a numpy array of dtype {arr.dtype}")
        if arr.dtype not in (np.float16, np.float32, np.float64):
            arr = arr.astype(np.float64)
        t = torch.from_numpy(np.ascontiguousarray(arr))
        return t if like is None else t.to(like.device)
    raise TypeError(
        f"{name} must be a torch.Tensor, a numpy array or a nested list of probabilities, got {type(x).__name__}"
    )


def check_shapes(p: torch.Tensor, q: torch.Tensor) -> None:
    """Shape and device checks (metadata only: no host read)."""
    if p.ndim != 2 or q.ndim != 2:
        bad, t = ("p", p) if p.ndim != 2 else ("q", q)
        raise ValueError(f"p and q must be 2-D (batch, vocabulary); {bad} is {t.ndim}-D with shape {tuple(t.shape)}")
    if p.shape != q.shape:
        what = "batch sizes B" if p.shape[0] != q.shape[0] else "vocabulary sizes V"
        raise ValueError(
            f"p {tuple(p.shape)} and q {tuple(q.shape)} must have the same (B, V) shape (their {what} differ)"
        )
    if p.shape[1] == 0:
        raise ValueError("the vocabulary is empty (V = 0)")
    if p.device != q.device:
        raise ValueError(f"p is on {p.device} but q is on {q.device}: put both on one device")


def as_drafts(drafts, B: int, device: torch.device) -> torch.Tensor:
    """(B,) int64 draft ids on `device`, from a tensor, numpy array or list (metadata checks only)."""
    if isinstance(drafts, (np.ndarray, list, tuple)):
        arr = np.asarray(drafts)
        if arr.dtype.kind not in "iu":
            raise TypeError(f"drafts must be integer token ids, got a {arr.dtype} array")
        drafts = torch.from_numpy(arr.astype(np.int64)).to(device)
    if not isinstance(drafts, torch.Tensor):
        raise TypeError(f"drafts must be a tensor, numpy array or list of token ids, got {type(drafts).__name__}")
    if drafts.is_floating_point() or drafts.is_complex() or drafts.dtype == torch.bool:
        raise TypeError(f"drafts must be integer token ids, got a {drafts.dtype} tensor")
    if tuple(drafts.shape) != (B,):
        raise ValueError(f"drafts must have shape ({B},) (one id per row), got {tuple(drafts.shape)}")
    if drafts.device != device:
        raise ValueError(f"drafts are on {drafts.device} but p and q on {device}")
    return drafts.long()


# ---------------------------------------------------------------------------------------- per-row seeds

_M64 = 1 << 64


def _s64(c: int) -> int:
    """An unsigned 64-bit constant as the int64 with the same bits."""
    return c - _M64 if c >= 1 << 63 else c


_GOLDEN, _MIX1, _MIX2 = _s64(0x9E3779B97F4A7C15), _s64(0xBF58476D1CE4E5B9), _s64(0x94D049BB133111EB)


def _shr(z: torch.Tensor, s: int) -> torch.Tensor:
    """Logical right shift of int64 bits (torch's >> is arithmetic)."""
    return (z >> s) & ((1 << (64 - s)) - 1)


def _splitmix64(z: torch.Tensor) -> torch.Tensor:
    """SplitMix64 (Steele, Lea and Flood 2014) on int64 tensors, wrapping modulo 2^64."""
    z = z + _GOLDEN
    z = (z ^ _shr(z, 30)) * _MIX1
    z = (z ^ _shr(z, 27)) * _MIX2
    return z ^ _shr(z, 31)


def seeded_uniforms(seeds: torch.Tensor, k: int) -> torch.Tensor:
    """(B, k) float64 uniforms in [0, 1) that depend only on each row's int64 seed (a counter-based draw).

    >>> a = seeded_uniforms(torch.tensor([1, 2]), 3)
    >>> bool(torch.equal(a[1], seeded_uniforms(torch.tensor([2]), 3)[0])), bool(((a >= 0) & (a < 1)).all())
    (True, True)
    """
    base = _splitmix64(seeds.long())
    z = _splitmix64(base[:, None] + torch.arange(1, k + 1, device=seeds.device))
    return _shr(z, 11).to(torch.float64) * 2.0**-53


# uniforms are scaled into [0, U_MAX]: then fl(u * total) < total for every positive total, so an
# inverse-CDF search never runs off the end of a row (no clamping against the total needed)
U_MAX = 1.0 - 2.0**-52


def uniforms(B: int, k: int, generator, seeds, device) -> torch.Tensor:
    """(B, k) float64 uniforms in [0, U_MAX]: from `generator`, except rows with their own seed or generator.

    seeds (None: every row from `generator`): a (B,) integer tensor (a negative entry: use
    `generator`) or a list of B entries, each an int (a counter-based draw: the same seed
    gives the same uniforms, so pass a new seed each step), a torch.Generator (advanced by
    this call) or None (use `generator`).
    """
    u = torch.rand(B, k, generator=generator, device=device, dtype=torch.float64)
    if seeds is not None:
        u = _seeded_rows(u, k, seeds, device)
    return u.mul_(U_MAX)


def _seeded_rows(u: torch.Tensor, k: int, seeds, device) -> torch.Tensor:
    """u with the rows that have their own int seed or torch.Generator replaced by their own uniforms."""
    B = u.shape[0]
    if isinstance(seeds, torch.Tensor):
        if seeds.is_floating_point() or seeds.is_complex() or seeds.dtype == torch.bool or tuple(seeds.shape) != (B,):
            raise ValueError(
                f"seeds must be a ({B},) integer tensor (negative: not seeded), got {seeds.dtype} {tuple(seeds.shape)}"
            )
        if seeds.device != device:
            raise ValueError(f"seeds are on {seeds.device} but p and q on {device}")
        return torch.where((seeds >= 0)[:, None], seeded_uniforms(seeds.clamp_min(0), k), u)
    if isinstance(seeds, np.ndarray):
        seeds = seeds.tolist()
    if not isinstance(seeds, (list, tuple)) or len(seeds) != B:
        raise ValueError(
            f"seeds must be a ({B},) integer tensor or a list of {B} entries "
            f"(int, torch.Generator or None), got {type(seeds).__name__}"
            + (f" of length {len(seeds)}" if isinstance(seeds, (list, tuple)) else "")
        )
    int_rows, int_seeds, gen_rows, gen_u = [], [], [], []
    for i, s in enumerate(seeds):
        if s is None:
            continue
        if isinstance(s, torch.Generator):
            gen_rows.append(i)
            gen_u.append(torch.rand(k, generator=s, device=s.device, dtype=torch.float64).to(device))
        elif isinstance(s, (int, np.integer)) and not isinstance(s, (bool, np.bool_)):
            if not 0 <= s < 1 << 63:
                raise ValueError(f"seeds[{i}] = {s} is outside 0..2^63-1")
            int_rows.append(i)
            int_seeds.append(int(s))
        else:
            raise TypeError(f"seeds[{i}] must be an int, a torch.Generator or None, got {type(s).__name__}")
    if int_rows:
        u = u.index_copy(
            0, torch.tensor(int_rows, device=device), seeded_uniforms(torch.tensor(int_seeds, device=device), k)
        )
    if gen_rows:
        u = u.index_copy(0, torch.tensor(gen_rows, device=device), torch.stack(gen_u))
    return u


# ---------------------------------------------------------------------------------------- validation


def _sign_min(t: torch.Tensor) -> torch.Tensor:
    """() tensor, negative when an entry of t is negative (one pass, no copy; -0.0 or a NaN may also trip it).

    float16/bfloat16/float32: the minimum of the bits as same-width integers (the sign bit makes
    it negative: -0.0 and a NaN with the sign bit trip it too); float64: the float minimum (a NaN
    makes it NaN, which fails >= 0 too), since amin over an int64 view is ~2.4x slower (torch 2.13
    CPU, 256 x 32,000: 4.7 against 1.9 ms).
    """
    return t.amin() if t.dtype == torch.float64 else t.view(_BITS[t.dtype]).amin()


def rows_ok(p, q, Sp, Sq, V: int, drafts=None, q_x=None) -> torch.Tensor:
    """() bool tensor, True when every row is finite, non-negative and sums to 1 (and every draft is valid).

    Beyond the row sums (NaN and inf propagate into them), one pass per tensor: a sign check
    (`_sign_min`), which -0.0 or a NaN may also trip (the diagnosis then decides).
    """
    if p.dtype == q.dtype:
        ok = (torch.stack([Sp, Sq]) - 1).abs_().amax() <= sum_tolerance(p.dtype, V)
    else:
        ok = ((Sp - 1).abs_().amax() <= sum_tolerance(p.dtype, V)) & (
            (Sq - 1).abs_().amax() <= sum_tolerance(q.dtype, V)
        )
    ok &= torch.minimum(_sign_min(p), _sign_min(q)) >= 0
    if drafts is not None:
        ok &= ((drafts >= 0) & (drafts < V) & (q_x > 0)).all()
    return ok


def diagnose(named_rows, sums=None, drafts=None, q_x=None, atol=None) -> None:
    """Raise a ValueError naming the first problem (tensor, row, entry); return if there is none.

    Host reads are fine here: this runs only for a batch the fast check flagged.
    """
    for k, (name, t) in enumerate(named_rows):
        V = t.shape[-1]
        finite = torch.isfinite(t)
        if not bool(finite.all()):
            i, j = (int(v) for v in (~finite).nonzero()[0])
            raise ValueError(f"{name} row {i} contains {float(t[i, j])} at token {j}: probabilities must be finite")
        neg = t < 0
        if bool(neg.any()):
            i, j = (int(v) for v in neg.nonzero()[0])
            raise ValueError(f"{name} row {i} has a negative entry {float(t[i, j]):.6g} at token {j}")
        s = sums[k] if sums is not None else t.sum(-1, dtype=ACCUMULATE[t.dtype])
        tol = sum_tolerance(t.dtype, V) if atol is None else float(atol)
        bad = ~((s - 1).abs() <= tol)
        if bool(bad.any()):
            i = int(bad.nonzero()[0])
            raise ValueError(
                f"{name} row {i} sums to {float(s[i]):.6g}, not 1 (tolerance {tol:.2g} for "
                f"{str(t.dtype).replace('torch.', '')} rows of length {V})"
            )
    if drafts is not None:
        V = named_rows[-1][1].shape[-1]
        out = (drafts < 0) | (drafts >= V)
        if bool(out.any()):
            i = int(out.nonzero()[0])
            raise ValueError(f"drafts[{i}] = {int(drafts[i])} is outside the vocabulary 0..{V - 1}")
        zero = ~(q_x > 0)
        if bool(zero.any()):
            i = int(zero.nonzero()[0])
            raise ValueError(f"drafts[{i}] = {int(drafts[i])} has q = 0 in row {i}: it cannot have been drawn from q")


def check_rows(p, q, atol: float | None = None) -> None:
    """Validate (B, V) probability rows: same shape, finite, non-negative, rows sum to 1.

    The tolerance on the sums follows the dtype and V (`sum_tolerance`) unless `atol` is given.
    Raises ValueError naming the tensor, row and problem; reads the device once when all is well.
    """
    p = as_prob_rows(p, "p")
    q = as_prob_rows(q, "q", like=p)
    check_shapes(p, q)
    sums = [p.sum(-1, dtype=ACCUMULATE[p.dtype]), q.sum(-1, dtype=ACCUMULATE[q.dtype])]
    if atol is None and bool(rows_ok(p, q, *sums, p.shape[1])):
        return
    diagnose((("p", p), ("q", q)), sums, atol=atol)
