"""A verify step's host side: its one read from the device, its clock, and the `StepRecord` made from them.

The engine keeps everything on the models' device during a step; `read_once` brings the numbers
the record needs to the host in one transfer, `StepClock` times the step's draft and verify
phases (CUDA events on a GPU, read after that transfer), and `step_record` is the one place a
`StepRecord` is made.

>>> h = read_once(drafted=torch.tensor([4, 2]), p_x=torch.tensor([0.5, 0.1]), q_x=torch.tensor([0.25, 0.5]),
...               alphas=torch.tensor([0.75, 0.5]))
>>> rec = step_record(h, 1, 3, index=0, start=0, clock=0.0)
>>> rec.emitted, rec.kind, rec.alphas
([4, 3], 'resampled', [0.75, 0.5])
"""

from __future__ import annotations

import math
import time
from types import SimpleNamespace

import numpy as np
import torch

from .results import StepRecord, TreeStep

__all__ = ["StepClock", "read_once", "step_record", "top_tokens"]


class StepClock:
    """Phase timer: CUDA events on a GPU (read after the step's one sync), perf_counter on CPU."""

    def __init__(self, device: torch.device):
        self.cuda = device.type == "cuda"
        self.marks = []

    def mark(self) -> None:
        """The time now, as the next mark."""
        if self.cuda:
            e = torch.cuda.Event(enable_timing=True)
            e.record()
            self.marks.append(e)
        else:
            self.marks.append(time.perf_counter())

    def seconds(self) -> list:
        """Seconds between consecutive marks (call after the host has synchronised)."""
        if self.cuda:
            return [a.elapsed_time(b) / 1e3 for a, b in zip(self.marks, self.marks[1:])]
        return [b - a for a, b in zip(self.marks, self.marks[1:])]


def read_once(**named: torch.Tensor) -> SimpleNamespace:
    """Named device tensors brought to the host in one transfer, each back as a float64 array of its own shape.

    The tensors are flattened, cast to float64 (exact for token ids below 2^53) and
    concatenated on the device; the one `.tolist()` is the step's host read, and the
    sizes recorded here split it back by name.

    >>> h = read_once(ids=torch.tensor([3, 1]), k=torch.tensor(1), rows=torch.eye(2))
    >>> h.ids.tolist(), int(h.k), h.rows.shape
    ([3.0, 1.0], 1, (2, 2))
    """
    shapes = {name: tuple(t.shape) for name, t in named.items()}
    flat = torch.cat([t.reshape(-1).to(torch.float64) for t in named.values()]).tolist()  # the one read
    host, out, o = np.array(flat, dtype=np.float64), {}, 0
    for name, shape in shapes.items():
        n = math.prod(shape)
        out[name] = host[o : o + n].reshape(shape)
        o += n
    return SimpleNamespace(**out)


def top_tokens(P: torch.Tensor, Q: torch.Tensor, top_n: int) -> dict:
    """The `top_n` tokens of p and q at each row, as `read_once` takes them ({} when top_n is 0)."""
    if not top_n:
        return {}
    tp, tq = P.topk(top_n, dim=-1), Q.topk(top_n, dim=-1)
    return dict(top_p_ids=tp.indices, top_p=tp.values, top_q_ids=tq.indices, top_q=tq.values)


def step_record(
    h: SimpleNamespace, k: int, token: int, index: int, start: int, clock, tree: TreeStep | None = None
) -> StepRecord:
    """The step's record from its host read `h`: `k` drafts kept, then `token` (< 0: none).

    `h` holds the γ drafts (`drafted`), p and q of each (`p_x`, `q_x`) and Σ min(p, q) at each
    (`alphas`), and when the engine records them the top tokens of p and q at each position
    (`top_p_ids`, `top_p`, `top_q_ids`, `top_q`). `clock` is the step's `StepClock`, marked here
    (after the read and the rollback), or on CPU the perf_counter time a plain step began.
    """
    g = len(h.drafted)
    verified = min(k + 1, g)  # draft positions tested: those accepted and the first rejected
    top_p = top_q = []
    if hasattr(h, "top_p_ids"):  # the bonus position has no q ([])
        top_p = [_pairs(h.top_p_ids[j], h.top_p[j]) for j in range(k + 1)]
        top_q = [_pairs(h.top_q_ids[j], h.top_q[j]) for j in range(verified)] + ([[]] if k == g else [])
    if isinstance(clock, float):
        draft_s, verify_s = 0.0, time.perf_counter() - clock
    else:
        clock.mark()
        draft_s, verify_s = clock.seconds()
    return StepRecord(
        index=index,
        start=start,
        drafted=[int(t) for t in h.drafted],
        q_drafted=[float(q) for q in h.q_x],
        p_drafted=[float(p) for p in h.p_x],
        accepted=k,
        token=None if token < 0 else token,
        kind="target" if g == 0 else "bonus" if k == g else "resampled",
        alphas=[float(a) for a in h.alphas[:verified]],
        top_p=top_p,
        top_q=top_q,
        draft_s=draft_s,
        verify_s=verify_s,
        tree=tree,
    )


def _pairs(ids, probs) -> list:
    """[(id, probability)] from a row of ids and a row of probabilities, as Python numbers."""
    return [(int(i), float(v)) for i, v in zip(ids, probs)]
