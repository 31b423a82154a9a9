"""benchmarks/bench_gpu.py, the one GPU check script: its pure helpers' worked examples (no GPU, no timing).

The script itself runs only on a lent GPU machine (or with --device cpu by hand); what can be checked here is
the arithmetic of its tables and verdicts: a skipped CUDA test is not a pass on CUDA, every decoder runs
every seed in a rotated order, ratios are tree over chain.
"""

from __future__ import annotations

import doctest
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))
import bench_gpu  # noqa: E402


def test_bench_gpu_helpers_do_what_their_examples_say():
    result = doctest.testmod(bench_gpu, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 5 and result.failed == 0, result
