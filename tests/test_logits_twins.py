"""The numpy and torch logits -> distribution twins agree (micrograd-style: one checks the other).

`specviz.exact.standardize.standardize` (numpy, the tutorials and the exact theory) and
`specviz.lm.engine.logits.process_probs` (torch, on the models' device) must give the same distribution
for every temperature / top-k / top-p, including ties, tiny temperatures and -inf logits.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from specviz.exact.standardize import Sampling, standardize  # noqa: E402
from specviz.lm.engine.logits import process_probs  # noqa: E402

SETTINGS = [
    dict(),
    dict(temperature=0),
    dict(temperature=0.5),
    dict(temperature=2.0),
    dict(temperature=1e-310),
    dict(top_k=1),
    dict(top_k=3),
    dict(top_k=50),
    dict(top_p=0.5),
    dict(top_p=0.9),
    dict(temperature=0.7, top_k=5, top_p=0.8),
]


def logits_cases(rng):
    yield rng.normal(size=7) * 3
    yield rng.normal(size=1000)
    yield np.array([1.0, 1.0, 0.0, -1.0, 1.0])  # ties at the top (top-k keeps every tied token)
    yield np.array([0.0, -np.inf, 2.0, -np.inf])  # masked tokens
    yield np.array([300.0, 0.0, -300.0])  # large spreads


@pytest.mark.parametrize("kw", SETTINGS, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()) or "plain")
def test_numpy_and_torch_twins_agree(kw):
    rng = np.random.default_rng(0)
    for z in logits_cases(rng):
        ref = standardize(z, **kw)
        got = process_probs(torch.tensor(z), Sampling(**kw))[0].numpy()
        assert np.isfinite(ref).all() and np.isfinite(got).all()
        np.testing.assert_allclose(got, ref, atol=1e-12, err_msg=f"{kw} on {z[:5]}")
        assert abs(ref.sum() - 1) < 1e-12
