"""Throughput of spec_sample vs a bare numpy categorical draw and a per-sample Python loop.

Run with `make bench`. Each contender draws the same n samples in the same process;
times are the best of `repeats` after a warm-up, and results are printed as ratios.
The per-sample loop (the way educational repositories usually write it) is timed on
fewer samples and scaled, since it is ~1000x slower.
"""

from __future__ import annotations

import time

import numpy as np

import specviz as sv


def python_loop(p, q, n, rng):
    """One speculative step at a time, as popular educational code does it."""
    out = np.empty(n, dtype=np.int64)
    V = len(p)
    for i in range(n):
        x = rng.choice(V, p=q)
        if rng.random() < min(1.0, p[x] / q[x]):
            out[i] = x
        else:
            r = np.maximum(p - q, 0)
            out[i] = rng.choice(V, p=r / r.sum())
    return out


def best_time(fn, repeats=5):
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main(n=1_000_000, loop_n=5_000):
    cases = [("tutorial V=3", np.array(sv.TUTORIAL_P), np.array(sv.TUTORIAL_Q))]
    rng0 = np.random.default_rng(0)
    for V in (100, 50_000):
        cases.append((f"Dirichlet V={V}", rng0.dirichlet(np.ones(V)), rng0.dirichlet(np.ones(V))))
    print(f"spec_sample throughput, n = {n:,} samples per run, best of 5 (loop: {loop_n:,} samples, scaled)\n")
    header = "| case | numpy categorical (Msamples/s) | spec_sample (Msamples/s) | spec / categorical time | python loop (Msamples/s) | spec speed-up over loop |"
    print(header)
    print("|" + "---|" * 6)
    for name, p, q in cases:
        rng = np.random.default_rng(1)
        t_cat = best_time(lambda: rng.choice(len(p), size=n, p=q))
        t_spec = best_time(lambda: sv.spec_sample(p, q, n, seed=rng))
        t_loop = best_time(lambda: python_loop(p, q, loop_n, rng), repeats=1) * n / loop_n
        print(
            f"| {name} | {n / t_cat / 1e6:.1f} | {n / t_spec / 1e6:.1f} | {t_spec / t_cat:.2f}x | "
            f"{n / t_loop / 1e6:.4f} | {t_loop / t_spec:,.0f}x |"
        )


if __name__ == "__main__":
    main()
