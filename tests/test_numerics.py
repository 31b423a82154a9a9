"""specviz.exact.numerics: the lossless step evaluated exactly in fp64 / fp32 / fp16 / bf16."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import specviz
from specviz.exact import numerics as N


def test_dtype_names_and_aliases():
    assert N.dtype_name("bf16") == "bfloat16"
    assert N.dtype_name(torch.float16) == "float16"
    assert N.torch_dtype("fp32") is torch.float32
    with pytest.raises(ValueError, match="unsupported dtype"):
        N.dtype_name("int8")


def test_softmax_in_runs_in_the_requested_dtype():
    logits = [2.0, 1.0, 0.0]
    for name in N.DTYPES:
        p = N.softmax_in(logits, name)
        assert p.dtype == N.torch_dtype(name)
    p64 = N.softmax_in(logits, "float64").numpy()
    np.testing.assert_allclose(p64, specviz.softmax(logits), rtol=0, atol=1e-15)
    # bf16 has an 8-bit mantissa: its p differs from fp64 by more than fp32's
    e32 = np.abs(N.softmax_in(logits, "float32").double().numpy() - p64).max()
    e16 = np.abs(N.softmax_in(logits, "bfloat16").double().numpy() - p64).max()
    assert e16 > 1e-4 > 1e-6 > e32


def test_lossless_output_in_fp64_is_p_for_the_tutorial():
    p, q = torch.tensor(specviz.TUTORIAL_P, dtype=torch.float64), torch.tensor(specviz.TUTORIAL_Q, dtype=torch.float64)
    out = N.lossless_output_in(p, q, "float64").numpy()
    np.testing.assert_allclose(out, specviz.TUTORIAL_P, atol=1e-15)
    # agrees with the core's exact output for a random pair
    rng = np.random.default_rng(3)
    p, q = rng.dirichlet(np.ones(7)), rng.dirichlet(np.ones(7))
    out = N.lossless_output_in(torch.tensor(p), torch.tensor(q), "float64").numpy()
    np.testing.assert_allclose(out, specviz.output_dist(p, q), atol=1e-14)


def test_lossless_output_handles_p_equal_q_and_zero_q():
    p = torch.tensor([0.5, 0.5, 0.0], dtype=torch.float64)
    out = N.lossless_output_in(p, p.clone(), "float32")  # Z = 0 branch
    np.testing.assert_allclose(out.double().numpy(), [0.5, 0.5, 0.0], atol=1e-7)
    q = torch.tensor([0.0, 0.5, 0.5], dtype=torch.float64)  # q = 0 where p > 0
    out = N.lossless_output_in(p, q, "float64").numpy()
    np.testing.assert_allclose(out, [0.5, 0.5, 0.0], atol=1e-15)


def test_precision_report_orders_the_dtypes_by_error():
    t, d = N.example_logits(V=64, scale=6.0, seed=0)
    rows = {r.dtype: r for r in N.precision_report(t, d)}
    assert list(rows) == list(N.DTYPES)
    assert rows["float64"].out_tv < 1e-15
    assert rows["float64"].p_tv == 0.0
    assert rows["float32"].out_tv < 1e-6
    assert rows["float16"].out_tv > 1e-5 and rows["bfloat16"].out_tv > 1e-4
    # fp16 underflows the tiny probabilities of peaked logits to exactly 0
    assert rows["float16"].underflow > 0 and rows["float32"].underflow == 0
    for r in rows.values():
        # what the user sees is bounded by the target's drift plus the verification arithmetic
        assert r.out_tv <= r.p_tv + r.verify_tv + 1e-12
        np.testing.assert_allclose(r.max_abs, np.max(np.abs(r.output - rows["float64"].p)), rtol=1e-9)
        assert r.output.shape == (64,)


def test_precision_report_mixed_draft_dtype_and_validation():
    t, d = N.example_logits(V=16, seed=1)
    rows = N.precision_report(t, d, dtypes=["bf16"], draft_dtype="float64")
    assert rows[0].dtype == "bfloat16" and rows[0].q.dtype == np.float64
    np.testing.assert_allclose(rows[0].q, specviz.softmax(d), atol=1e-15)  # the draft stayed exact
    with pytest.raises(ValueError, match="different lengths"):
        N.precision_report([1.0, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="temperature"):
        N.precision_report(t, d, temperature=0)
    with pytest.raises(ValueError, match="V"):
        N.example_logits(V=1)
