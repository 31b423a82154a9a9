"""The validated torch speculative step against torch.multinomial, an inverse-CDF draw and one read of p and q.

Run with `make bench` (or `python benchmarks/bench_torch_sampler.py [--repeats N] [--device cpu|cuda|all]`).

For each (B, V) in {(4096, 50), (256, 32000), (64, 128256)} and dtype in {fp32, bf16}, on
CPU with one thread (and on CUDA when present), all in one process and on the same rows:

- step: `spec_sample_torch(p, q, generator)` with validation on (one host read); on CPU it builds
  the residual for the rejected rows only, so the all-rows path that other devices take
  (`gather_rejected=False`) is timed too;
- (a) `torch.multinomial(q, 1)`: one plain draw from q;
- (b) an inverse-CDF draw from q: `searchsorted(q.cumsum(-1, dtype=float32), u * total)` with a fresh
  u = torch.rand(B, 1) each call (a fixed u would let the CPU's branch predictor learn the searches);
- (c) the floor: one read of p and q, `p.sum() + q.sum()`.

Times are medians of `repeats` runs after a warm-up (CUDA: synchronised, timed with events).
Rows are softmaxes of N(0, 2^2) target logits and of the same logits plus N(0, 1) noise
for the draft, so that about two drafts in three are accepted (the acceptance column).
A last table compares numpy's spec_sample with a bare numpy categorical draw.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import specviz as sv  # noqa: E402
from specviz.samplers.torch_sampling import spec_sample_torch  # noqa: E402

SHAPES = [(4096, 50), (256, 32_000), (64, 128_256)]
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}


def rows(B, V, dtype, device, seed=0):
    """(p, q) softmax rows: target logits ~ N(0, 4), draft = target + N(0, 1) noise."""
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(B, V, generator=g) * 2
    p = logits.softmax(-1)
    q = (logits + torch.randn(B, V, generator=g)).softmax(-1)
    return p.to(device=device, dtype=dtype), q.to(device=device, dtype=dtype)


def median_ms(fn, device, repeats):
    """Median wall time of fn() in ms over `repeats` runs after one warm-up."""
    fn()
    cuda = device.type == "cuda"
    times = []
    for _ in range(repeats):
        if cuda:
            torch.cuda.synchronize(device)
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            torch.cuda.synchronize(device)
            times.append(start.elapsed_time(end))
        else:
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def measure(device, B, V, dtype, repeats):
    """One table row: times of the step and the three references, and the acceptance rate."""
    p, q = rows(B, V, dtype, device)
    gen = torch.Generator(device=device).manual_seed(0)

    def step():
        return spec_sample_torch(p, q, gen)

    def step_all_rows():  # the path other devices take: a residual for every row, no extra host read
        return spec_sample_torch(p, q, gen, gather_rejected=False)

    def multinomial():
        return torch.multinomial(q, 1, generator=gen)

    def inverse_cdf():  # a fresh uniform per row each call, like every other contender
        cdf = q.cumsum(-1, dtype=torch.float32)
        u = torch.rand(B, 1, generator=gen, device=device)
        return torch.searchsorted(cdf, u * cdf[:, -1:])

    def floor():
        return p.sum() + q.sum()

    t = {
        name: median_ms(fn, device, repeats)
        for name, fn in (
            ("step", step),
            ("all_rows", step_all_rows),
            ("multinomial", multinomial),
            ("icdf", inverse_cdf),
            ("floor", floor),
        )
    }
    acceptance = float(step().accepted.float().mean())
    return t, acceptance


def torch_table(devices, repeats):
    lines = [
        "| device | B × V | dtype | accepted | validated step (ms) | all-rows path (ms) | (a) multinomial (ms) "
        "| (b) inverse CDF (ms) | (c) read floor (ms) | step / (a) | step / (b) | step / (c) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    print("\n".join(lines), flush=True)
    for device in devices:
        where = "CPU, 1 thread" if device.type == "cpu" else torch.cuda.get_device_name(device)
        for B, V in SHAPES:
            for dname, dtype in DTYPES.items():
                t, acc = measure(device, B, V, dtype, repeats)
                lines.append(
                    f"| {where} | {B} × {V:,} | {dname} | {acc:.2f} | {t['step']:.3f} | {t['all_rows']:.3f} "
                    f"| {t['multinomial']:.3f} "
                    f"| {t['icdf']:.3f} | {t['floor']:.3f} | {t['step'] / t['multinomial']:.2f}× "
                    f"| {t['step'] / t['icdf']:.2f}× | {t['step'] / t['floor']:.1f}× |"
                )
                print(lines[-1], flush=True)
    return lines


def numpy_table(repeats, n=1_000_000):
    """spec_sample against a bare numpy categorical draw (rng.choice) on the same q."""
    lines = [
        "| numpy, n = 10⁶ | rng.choice from q (ms) | spec_sample (ms) | spec_sample / choice |",
        "|---|---|---|---|",
    ]
    print("\n".join(lines), flush=True)
    rng0 = np.random.default_rng(0)
    cases = [("tutorial V=3", np.array(sv.TUTORIAL_P), np.array(sv.TUTORIAL_Q))]
    for V in (100, 50_000):
        cases.append((f"Dirichlet V={V:,}", rng0.dirichlet(np.ones(V)), rng0.dirichlet(np.ones(V))))
    for name, p, q in cases:
        rng = np.random.default_rng(1)
        t_choice = median_ms(lambda: rng.choice(len(q), size=n, p=q), torch.device("cpu"), repeats)
        t_spec = median_ms(lambda: sv.spec_sample(p, q, n, seed=rng), torch.device("cpu"), repeats)
        lines.append(f"| {name} | {t_choice:.1f} | {t_spec:.1f} | {t_spec / t_choice:.2f}× |")
        print(lines[-1], flush=True)
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--device", choices=("cpu", "cuda", "all"), default="all")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    devices = [] if args.device == "cuda" else [torch.device("cpu")]
    if args.device != "cpu":
        if torch.cuda.is_available():
            devices.append(torch.device("cuda"))
        else:
            print("(no CUDA device here: CPU figures only)")
    print(
        f"torch {torch.__version__}; median of {args.repeats} runs; validated step = "
        "spec_sample_torch(p, q, generator), validate=True\n"
    )
    torch_table(devices, args.repeats)
    print()
    numpy_table(max(3, args.repeats // 2))


if __name__ == "__main__":
    main()
