"""The torch batch sampler (specviz.samplers.torch_sampling): lossless in every precision and path, one host read per step.

Paths: the CPU default builds the residual for the rejected rows only
(`gather_rejected=True`); other devices build it for every row (`gather_rejected=False`),
tested here on CPU. Tables with V <= 2048 (or few entries) take a plain float64
cumulative sum per row; larger ones the blocked inverse CDF (V = 3001 and 200,000 here,
both with a short last block).

Every goodness-of-fit check is a chi-square test against the rows *as given* (in their
own dtype), normalised in float64, through `specviz.samplers.audit` (cells with expected count < 5
pooled) at ALPHA = 1e-4: a correct sampler fails one such check with probability 1e-4
for a random seed; the seeds here are fixed, so outcomes are deterministic. Acceptance
rates are checked to 5 standard deviations (false alarm ~6e-7 each).
"""

from __future__ import annotations

import numpy as np
import pytest
from lm_fixtures import spy_host_reads

import specviz as sv

torch = pytest.importorskip("torch")

from specviz.samplers.torch_rows import U_MAX, check_rows, seeded_uniforms, sum_tolerance  # noqa: E402
from specviz.samplers.torch_sampling import categorical_torch, residual_rows, spec_sample_torch, verify_chain_torch  # noqa: E402

ALPHA = 1e-4


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Many small steps: torch's intra-op threads only add overhead here (and the machine is shared)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


DTYPES = [torch.float32, torch.bfloat16, torch.float16, torch.float64]
DTYPE_IDS = ["fp32", "bf16", "fp16", "fp64"]
PATHS = [True, False]
PATH_IDS = ["gather_rejected", "all_rows"]


def normalised(rows: torch.Tensor) -> np.ndarray:
    """The rows as given (any dtype), normalised in float64: the distributions a lossless sampler must hit."""
    r = rows.double()
    return (r / r.sum(-1, keepdim=True)).numpy()


def sampled_tokens(p_row, q_row, n, batch, seed, **kw):
    """n speculative steps on one (p, q) pair, `batch` rows per call (expanded, not copied): (tokens, accepted)."""
    V = p_row.shape[-1]
    p, q = p_row[None].expand(batch, V), q_row[None].expand(batch, V)
    gen = torch.Generator().manual_seed(seed)
    toks, accs = [], []
    for _ in range(-(-n // batch)):
        out = spec_sample_torch(p, q, gen, **kw)
        toks.append(out.tokens)
        accs.append(out.accepted)
    return torch.cat(toks)[:n].numpy(), torch.cat(accs)[:n].numpy()


def audit_rows(p_row, q_row, n, batch, seed=0, **kw):
    """specviz.samplers.audit of the torch sampler on the rows as given (normalised in float64)."""
    p_ref, q_ref = normalised(p_row[None])[0], normalised(q_row[None])[0]
    acc = {}

    def sampler(p, q, n, rng):
        tokens, accepted = sampled_tokens(p_row, q_row, n, batch, int(rng.integers(2**62)), **kw)
        acc["rate"] = accepted.mean()
        return tokens

    report = sv.audit(sampler, p_ref, q_ref, n=n, seed=seed, significance=ALPHA)
    return report, acc["rate"], float(np.minimum(p_ref, q_ref).sum())


def assert_rate(rate, expected, n):
    assert abs(rate - expected) <= 5 * np.sqrt(expected * (1 - expected) / n) + 1e-9, (rate, expected)


def small_pair():
    """V = 7 with zeros in both p and q (token 3: p = 0 < q; token 6: q = 0 < p)."""
    p = torch.tensor([0.30, 0.05, 0.20, 0.0, 0.15, 0.10, 0.20], dtype=torch.float64)
    q = torch.tensor([0.10, 0.25, 0.20, 0.30, 0.05, 0.10, 0.0], dtype=torch.float64)
    return p, q


def blocked_pair(V=3001, seed=0):
    """A pair over V = 3001 tokens (blocks of 128 and a short last one): mass on ~40 tokens spread
    over the blocks, whole blocks at zero, p = 0 on some of q's tokens and the other way round."""
    g = torch.Generator().manual_seed(seed)
    support = torch.randperm(V, generator=g)[:40]
    support = torch.cat([support, torch.tensor([0, V - 1, V - 2])])  # first token and the short last block
    p = torch.zeros(V, dtype=torch.float64)
    q = torch.zeros(V, dtype=torch.float64)
    p[support[:30]] = torch.rand(30, generator=g, dtype=torch.float64) + 0.2
    q[support[10:]] = torch.rand(support.numel() - 10, generator=g, dtype=torch.float64) + 0.2
    p[V - 1] = 0.5
    p[1000:1500] = 0  # whole zero blocks in p
    return p / p.sum(), q / q.sum()


# ---------------------------------------------------------------------------------------- losslessness


@pytest.mark.parametrize("gather", PATHS, ids=PATH_IDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_lossless_small_table_every_dtype_and_path(dtype, gather):
    p64, q64 = small_pair()
    p, q = p64.to(dtype), q64.to(dtype)
    n = 200_000
    report, rate, expected_rate = audit_rows(p, q, n, batch=4000, seed=1, gather_rejected=gather)
    assert report.passed, report.explanation
    assert_rate(rate, expected_rate, n)


@pytest.mark.slow
@pytest.mark.parametrize("gather", PATHS, ids=PATH_IDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_lossless_blocked_table_every_dtype_and_path(dtype, gather):
    p64, q64 = blocked_pair()
    p, q = p64.to(dtype), q64.to(dtype)
    n = 48_000
    report, rate, expected_rate = audit_rows(p, q, n, batch=64, seed=2, gather_rejected=gather)
    assert report.passed, report.explanation
    assert_rate(rate, expected_rate, n)


def test_low_precision_softmax_rows_are_accepted_and_sampled_losslessly():
    """bf16/fp16 softmaxes sum to 1 only within ~1e-3 (the old check wanted 1e-4): accepted, sampled as they are."""
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(16, 32_000, generator=g) * 3
    for dtype in (torch.bfloat16, torch.float16):
        p = logits.softmax(-1).to(dtype)
        q = (logits + torch.randn(16, 32_000, generator=g)).softmax(-1).to(dtype)
        sums = p.double().sum(-1)
        assert (sums - 1).abs().max() > 1e-4  # what the old check refused
        out = spec_sample_torch(p, q, torch.Generator().manual_seed(1))  # validate=True
        assert out.tokens.shape == (16,)
    # fp16 at V = 128,256: a near-uniform row is all subnormal and sums to ~1.0014
    uniform = torch.full((2, 128_256), 1 / 128_256).half()
    assert abs(float(uniform.double().sum(-1)[0]) - 1) > 1e-3
    spec_sample_torch(uniform, uniform, torch.Generator().manual_seed(0))
    # a bf16 softmax row, drawn many times: lossless against the row as given
    p_row = logits[0, :50].softmax(-1).bfloat16()
    q_row = (logits[0, :50] + 1.5 * torch.randn(50, generator=g)).softmax(-1).bfloat16()
    report, rate, expected_rate = audit_rows(p_row, q_row, 200_000, batch=5000, seed=3)
    assert report.passed, report.explanation
    assert_rate(rate, expected_rate, 200_000)


@pytest.mark.parametrize("gather", PATHS, ids=PATH_IDS)
def test_rows_are_normalised_by_their_own_sums(gather):
    """bf16 rows off by -0.6% (p) and +0.6% (q), inside bf16's tolerance: accepted, and the step follows
    p / sum(p) (an acceptance test or residual on the raw rows would be off by ~1%: caught here)."""
    p64, q64 = small_pair()
    p, q = (p64 * 0.994).bfloat16(), (q64 * 1.006).bfloat16()
    n = 400_000
    report, rate, expected_rate = audit_rows(p, q, n, batch=20_000, seed=9, gather_rejected=gather)
    assert report.passed, report.explanation
    assert_rate(rate, expected_rate, n)


@pytest.mark.parametrize("gather", PATHS, ids=PATH_IDS)
@pytest.mark.parametrize("V", [4, pytest.param(3001, marks=pytest.mark.slow)])
def test_the_residual_is_taken_between_normalised_rows(V, gather):
    """p/Σp - q/Σq is positive only at token 0; the raw p - q (Σp = 1.006, Σq = 0.994) would also put a third
    of the rejections on tokens 2 and 3. Exact check, allowing 5 strays for fp32 rounding (each ~1e-6)."""
    p = torch.zeros(V)
    q = torch.zeros(V)
    p[:4] = torch.tensor([0.26, 0.24, 0.25, 0.25]) * 1.006
    q[:4] = 0.25 * 0.994
    n = 200_000
    tokens, accepted = sampled_tokens(
        p, q, n, batch=5000 if V == 4 else 64, seed=10, validate=False, gather_rejected=gather
    )
    p_hat, q_hat = normalised(p[None])[0], normalised(q[None])[0]
    assert_rate(accepted.mean(), float(np.minimum(p_hat, q_hat).sum()), n)
    rejected = tokens[~accepted]
    assert rejected.size > 1000 and (rejected != 0).sum() <= 5, np.bincount(rejected)


@pytest.mark.parametrize("gather", PATHS, ids=PATH_IDS)
@pytest.mark.parametrize("V", [5, 3001])
def test_an_empty_residual_after_a_rejection_falls_back_to_p(V, gather):
    """p == q up to a 1e-9 draft-only token: in fp32 the residual rounds to zero everywhere, yet drafting that
    token is rejected (p = 0 there). The replacement must come from p, never from a p = 0 token."""
    B = 64
    p = torch.zeros(B, V)
    p[:, 0] = p[:, 1] = 0.5
    q = p.clone()
    q[:, 3] = 1e-9
    out = spec_sample_torch(p, q, torch.Generator().manual_seed(0), drafts=torch.full((B,), 3), gather_rejected=gather)
    assert not out.accepted.any()
    assert set(out.tokens.tolist()) <= {0, 1}


def test_the_lossless_check_can_fail():
    """Swapping p and q gives output ~ q: the same audit rejects it (p-value far below ALPHA)."""
    p64, q64 = small_pair()
    p_ref = normalised(p64[None])[0]
    tokens, _ = sampled_tokens(q64, p64, 50_000, 5000, seed=0)
    report = sv.audit(lambda p, q, n, rng: tokens[:n], p_ref, normalised(q64[None])[0], n=50_000, significance=ALPHA)
    assert not report.passed


# ---------------------------------------------------------------------------------------- exact edge cases


def random_rows(B, V, dtype, seed, zeros=0.3):
    g = torch.Generator().manual_seed(seed)
    w = torch.rand(B, V, generator=g, dtype=torch.float64) ** 3
    w[torch.rand(B, V, generator=g) < zeros] = 0
    w[:, 0] += 0.01  # no empty row
    return (w / w.sum(-1, keepdim=True)).to(dtype)


@pytest.mark.parametrize("gather", PATHS, ids=PATH_IDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("B,V", [(3000, 50), (64, 3001)], ids=["small", "blocked"])
def test_p_equal_q_always_accepts(dtype, gather, B, V):
    p = random_rows(B, V, dtype, seed=1)
    for q in (p, p.clone()):
        out = spec_sample_torch(p, q, torch.Generator().manual_seed(2), gather_rejected=gather)
        assert bool(out.accepted.all())
        assert torch.equal(out.tokens, out.drafts)
        assert bool((p.gather(1, out.tokens[:, None]) > 0).all())


@pytest.mark.parametrize("gather", PATHS, ids=PATH_IDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_disjoint_supports_always_reject_and_give_p(dtype, gather):
    p = torch.tensor([0.1, 0, 0.3, 0, 0.2, 0, 0.25, 0, 0.15, 0], dtype=torch.float64).to(dtype)
    q = torch.tensor([0, 0.2, 0, 0.2, 0, 0.2, 0, 0.2, 0, 0.2], dtype=torch.float64).to(dtype)
    tokens, accepted = sampled_tokens(p, q, 100_000, 5000, seed=4, gather_rejected=gather)
    assert not accepted.any()
    assert (tokens % 2 == 0).all()  # only p's support
    report = sv.audit(lambda *_: tokens, normalised(p[None])[0], normalised(q[None])[0], n=100_000, significance=ALPHA)
    assert report.passed, report.explanation


@pytest.mark.parametrize("gather", PATHS, ids=PATH_IDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_one_hot_draft_and_one_hot_target(dtype, gather):
    p64, _ = small_pair()
    p = p64.to(dtype)
    q = torch.zeros(7, dtype=dtype)
    q[2] = 1  # prompt lookup: one proposed token, p(2) = 0.2
    tokens, accepted = sampled_tokens(p, q, 100_000, 5000, seed=5, gather_rejected=gather)
    assert_rate(accepted.mean(), float(normalised(p[None])[0][2]), 100_000)
    assert (tokens[~accepted] != 2).all()  # the residual has no mass on the proposal
    report = sv.audit(lambda *_: tokens, normalised(p[None])[0], normalised(q[None])[0], n=100_000, significance=ALPHA)
    assert report.passed, report.explanation
    one_hot_p = torch.zeros(7, dtype=dtype)
    one_hot_p[4] = 1
    tokens, accepted = sampled_tokens(one_hot_p, p, 20_000, 5000, seed=6, gather_rejected=gather)
    assert (tokens == 4).all()


@pytest.mark.parametrize("gather", PATHS, ids=PATH_IDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_vocabulary_of_one(dtype, gather):
    p = torch.ones(5, 1, dtype=dtype)
    out = spec_sample_torch(p, p.clone(), torch.Generator().manual_seed(0), gather_rejected=gather)
    assert out.tokens.tolist() == [0] * 5 and bool(out.accepted.all())


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_vocabulary_of_200_000(dtype):
    V = 200_000
    p = torch.zeros(V, dtype=torch.float64)
    q = torch.zeros(V, dtype=torch.float64)
    p[[0, 777, 99_999, 150_001, V - 1]] = torch.tensor([0.3, 0.1, 0.2, 0.15, 0.25], dtype=torch.float64)
    q[[0, 5, 99_999, 123_456, V - 2]] = torch.tensor([0.2, 0.3, 0.1, 0.3, 0.1], dtype=torch.float64)
    p, q = p.to(dtype), q.to(dtype)
    for gather in PATHS:
        report, rate, expected_rate = audit_rows(p, q, 4000, batch=32, seed=7, gather_rejected=gather)
        assert report.passed, report.explanation
        assert_rate(rate, expected_rate, 4000)


def test_empty_batch():
    out = spec_sample_torch(torch.zeros(0, 5), torch.zeros(0, 5))
    assert out.tokens.shape == (0,) and out.accepted.dtype == torch.bool and out.drafts.dtype == torch.int64


# ---------------------------------------------------------------------------------------- validation


def test_row_sum_tolerance_follows_dtype_and_vocabulary():
    assert sum_tolerance(torch.bfloat16, 32_000) > 3e-3  # a bf16 softmax sums to 1 +- ~3e-3
    assert sum_tolerance(torch.float16, 128_256) > 1.5e-3  # subnormal entries at large V
    assert 5e-5 < sum_tolerance(torch.float32, 32_000) < 1e-4
    assert sum_tolerance(torch.float64, 3) < 1e-6
    p = torch.full((1, 32_000), 1 / 32_000) * 1.001  # sums to 1.001
    with pytest.raises(ValueError, match=r"p row 0 sums to 1\.001, not 1 \(tolerance 8\.5e-05 for float32"):
        spec_sample_torch(p, torch.full((1, 32_000), 1 / 32_000))
    spec_sample_torch(p.bfloat16(), torch.full((1, 32_000), 1 / 32_000).bfloat16())  # within bf16's tolerance


def bad_rows(kind):
    p = torch.full((4, 6), 1 / 6)
    if kind == "nan":
        p[2, 5] = float("nan")
    elif kind == "inf":
        p[2, 5] = float("inf")
    elif kind == "-inf":
        p[2, 5] = float("-inf")
    elif kind == "negative":  # still sums to 1: only the sign check can catch it
        p[2, 5] = -0.01
        p[2, 4] += 1 / 6 + 0.01
    elif kind == "sum":
        p[2] *= 1.1
    return p


@pytest.mark.parametrize("gather", PATHS, ids=PATH_IDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize(
    "kind,message",
    [
        ("nan", r"row 2 contains nan at token 5: probabilities must be finite"),
        ("inf", r"row 2 contains inf at token 5"),
        ("-inf", r"row 2 contains -inf at token 5"),
        ("negative", r"row 2 has a negative entry -0\.01\d* at token 5"),
        ("sum", r"row 2 sums to 1\.1\d*, not 1 \(tolerance"),
    ],
)
def test_bad_rows_name_the_problem_tensor_and_row(kind, message, dtype, gather):
    bad, good = bad_rows(kind).to(dtype), torch.full((4, 6), 1 / 6, dtype=dtype)
    gen = torch.Generator().manual_seed(0)
    with pytest.raises(ValueError, match="p " + message):
        spec_sample_torch(bad, good, gen, gather_rejected=gather)
    with pytest.raises(ValueError, match="q " + message):
        spec_sample_torch(good, bad, gen, gather_rejected=gather)
    with pytest.raises(ValueError, match="q " + message):
        check_rows(good, bad)


def test_bad_rows_in_the_blocked_path():
    p, q = blocked_pair()
    P = p[None].repeat(64, 1).float()
    P[40, 2999] = float("nan")
    with pytest.raises(ValueError, match="p row 40 contains nan at token 2999"):
        spec_sample_torch(P, q[None].expand(64, -1).float())
    P[40, 2999] = -1e-3
    with pytest.raises(ValueError, match="p row 40 has a negative entry"):
        spec_sample_torch(P, q[None].expand(64, -1).float(), gather_rejected=False)


def test_negative_zero_is_a_zero():
    """-0.0 trips the fast bit-level sign check; the diagnosis clears it and the step stands."""
    p = torch.tensor([[0.5, -0.0, 0.5]])
    out = spec_sample_torch(p, torch.tensor([[0.25, 0.5, 0.25]]), torch.Generator().manual_seed(0))
    assert out.tokens.item() in (0, 2)
    check_rows(p, p)


@pytest.mark.parametrize(
    "p,q,error,message",
    [
        (torch.ones(6) / 6, torch.ones(6) / 6, ValueError, r"2-D \(batch, vocabulary\); p is 1-D"),
        (torch.ones(2, 3, 6) / 6, torch.ones(2, 3, 6) / 6, ValueError, r"2-D .* 3-D"),
        (torch.ones(2, 6) / 6, torch.ones(3, 6) / 6, ValueError, r"same \(B, V\) shape \(their batch sizes B differ\)"),
        (torch.ones(2, 6) / 6, torch.ones(2, 5) / 5, ValueError, r"their vocabulary sizes V differ"),
        (torch.ones(2, 0), torch.ones(2, 0), ValueError, r"vocabulary is empty"),
        (torch.ones(2, 3, dtype=torch.int64), torch.ones(2, 3), TypeError, r"p must hold floating-point probabilities"),
        (torch.ones(2, 3, dtype=torch.complex64), torch.ones(2, 3), TypeError, r"floating-point"),
        ("0.5 0.5", torch.ones(1, 2) / 2, TypeError, r"p must be a torch.Tensor, a numpy array or a nested list"),
        ([[0.5, 0.5], [1.0]], torch.ones(2, 2) / 2, ValueError, r"p is a ragged nested list"),
        (np.array([["a", "b"]]), torch.ones(1, 2) / 2, TypeError, r"p must hold numbers"),
    ],
)
def test_bad_shapes_and_types(p, q, error, message):
    with pytest.raises(error, match=message):
        spec_sample_torch(p, q)


def test_lists_and_numpy_arrays_are_converted():
    p = [[0.6, 0.3, 0.1], [0.1, 0.0, 0.9]]
    q = [[0.4, 0.5, 0.1], [0.3, 0.3, 0.4]]
    ref = spec_sample_torch(
        torch.tensor(p, dtype=torch.float64), torch.tensor(q, dtype=torch.float64), torch.Generator().manual_seed(3)
    )
    for pp, qq in ((p, q), (np.array(p), np.array(q)), (np.array(p), torch.tensor(q, dtype=torch.float64))):
        out = spec_sample_torch(pp, qq, torch.Generator().manual_seed(3))
        assert torch.equal(out.tokens, ref.tokens) and torch.equal(out.accepted, ref.accepted)
    out = spec_sample_torch(np.array(p, dtype=np.float32), np.array(q, dtype=np.float32))
    assert out.tokens.dtype == torch.int64
    check_rows(p, q)
    with pytest.raises(ValueError, match="q row 1 sums to 1.1"):
        check_rows(p, [[0.4, 0.5, 0.1], [0.4, 0.3, 0.4]])


def test_given_drafts_are_validated():
    p = torch.tensor([[0.6, 0.3, 0.1]] * 3)
    q = torch.tensor([[0.4, 0.6, 0.0]] * 3)
    gen = torch.Generator().manual_seed(0)
    out = spec_sample_torch(p, q, gen, drafts=[0, 1, 1])
    assert out.drafts.tolist() == [0, 1, 1] and bool(out.accepted[0])  # p/q = 1.5 at token 0
    assert spec_sample_torch(p, q, gen, drafts=np.array([1, 0, 0])).drafts.tolist() == [1, 0, 0]
    with pytest.raises(TypeError, match="drafts must be integer token ids, got a torch.float32 tensor"):
        spec_sample_torch(p, q, gen, drafts=torch.tensor([0.0, 1.0, 1.0]))
    with pytest.raises(TypeError, match="drafts must be integer token ids, got a float64 array"):
        spec_sample_torch(p, q, gen, drafts=[0.0, 1.0, 1.0])
    with pytest.raises(TypeError, match="drafts must be a tensor"):
        spec_sample_torch(p, q, gen, drafts="0 1 1")
    with pytest.raises(ValueError, match=r"drafts must have shape \(3,\)"):
        spec_sample_torch(p, q, gen, drafts=torch.tensor([0, 1]))
    with pytest.raises(ValueError, match=r"drafts\[1\] = 3 is outside the vocabulary 0..2"):
        spec_sample_torch(p, q, gen, drafts=torch.tensor([0, 3, 1]))
    with pytest.raises(ValueError, match=r"drafts\[0\] = -1 is outside"):
        spec_sample_torch(p, q, gen, drafts=torch.tensor([-1, 0, 1]), gather_rejected=False)
    with pytest.raises(ValueError, match=r"drafts\[2\] = 2 has q = 0 in row 2"):
        spec_sample_torch(p, q, gen, drafts=torch.tensor([0, 1, 2]))


def test_given_drafts_sampled_from_q_stay_lossless():
    p64, q64 = small_pair()
    gen = torch.Generator().manual_seed(8)
    B = 200_000
    p, q = p64[None].expand(B, 7).float(), q64[None].expand(B, 7).float()
    drafts = torch.multinomial(q64.float(), B, replacement=True, generator=gen)
    out = spec_sample_torch(p, q, gen, drafts=drafts)
    assert torch.equal(out.drafts, drafts)
    report = sv.audit(
        lambda *_: out.tokens.numpy(), normalised(p64[None])[0], normalised(q64[None])[0], n=B, significance=ALPHA
    )
    assert report.passed, report.explanation


# ---------------------------------------------------------------------------------------- per-row seeds


def splitmix64_reference(x: int) -> int:
    """SplitMix64 on Python ints (Steele, Lea and Flood 2014)."""
    m = (1 << 64) - 1
    z = (x + 0x9E3779B97F4A7C15) & m
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & m
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m
    return z ^ (z >> 31)


def test_seeded_uniforms_are_splitmix64_on_this_platform():
    seeds = [0, 1, 42, 2**40 + 3, 2**63 - 1]
    u = seeded_uniforms(torch.tensor(seeds), 3)
    for i, s in enumerate(seeds):
        base = splitmix64_reference(s)
        for k in range(3):
            z = splitmix64_reference((base + k + 1) & ((1 << 64) - 1))
            assert u[i, k].item() == (z >> 11) * 2.0**-53
    assert float(u.max()) < 1 and U_MAX < 1


@pytest.mark.parametrize("gather", PATHS, ids=PATH_IDS)
@pytest.mark.parametrize("B,V", [(6, 50), (64, 3001)], ids=["small", "blocked"])
def test_a_seeded_row_reproduces_whatever_else_is_in_the_batch(B, V, gather):
    p, q = random_rows(B, V, torch.float32, seed=10), random_rows(B, V, torch.float32, seed=11)
    row_p, row_q = p[3].clone(), q[3].clone()
    seeds = [None] * B
    seeds[3] = 12345
    a = spec_sample_torch(p, q, torch.Generator().manual_seed(0), seeds=seeds, gather_rejected=gather)
    # another batch: other rows, another size, the row somewhere else, another batch generator
    p2, q2 = random_rows(B + 5, V, torch.float32, seed=20), random_rows(B + 5, V, torch.float32, seed=21)
    p2[B], q2[B] = row_p, row_q
    seeds2 = torch.full((B + 5,), -1, dtype=torch.int64)
    seeds2[B] = 12345
    b = spec_sample_torch(p2, q2, torch.Generator().manual_seed(99), seeds=seeds2, gather_rejected=not gather)
    assert (a.tokens[3], a.accepted[3], a.drafts[3]) == (b.tokens[B], b.accepted[B], b.drafts[B])
    # a per-row torch.Generator: the same for equal states, and advanced by the call
    g1, g2 = torch.Generator().manual_seed(5), torch.Generator().manual_seed(5)
    seeds[3] = g1
    seeds2 = [None] * (B + 5)
    seeds2[B] = g2
    a = spec_sample_torch(p, q, seeds=seeds)
    b = spec_sample_torch(p2, q2, seeds=seeds2)
    assert (a.tokens[3], a.drafts[3]) == (b.tokens[B], b.drafts[B])
    assert g1.get_state().ne(torch.Generator().manual_seed(5).get_state()).any()


def test_seeded_rows_are_lossless_and_differ_by_seed():
    p64, q64 = small_pair()
    B = 100_000
    p, q = p64[None].expand(B, 7), q64[None].expand(B, 7)
    out = spec_sample_torch(p, q, seeds=torch.arange(B) * 7919 + 11)
    report = sv.audit(
        lambda *_: out.tokens.numpy(), normalised(p64[None])[0], normalised(q64[None])[0], n=B, significance=ALPHA
    )
    assert report.passed, report.explanation
    assert_rate(out.accepted.double().mean().item(), float(torch.minimum(p64, q64).sum()), B)


def test_bad_seeds():
    p = torch.ones(3, 4) / 4
    with pytest.raises(ValueError, match=r"seeds must be a \(3,\) integer tensor or a list of 3 entries"):
        spec_sample_torch(p, p, seeds=[1, 2])
    with pytest.raises(ValueError, match=r"seeds must be a \(3,\) integer tensor"):
        spec_sample_torch(p, p, seeds=torch.tensor([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match=r"seeds\[1\] = -4 is outside"):
        spec_sample_torch(p, p, seeds=[1, -4, None])
    with pytest.raises(TypeError, match=r"seeds\[2\] must be an int, a torch.Generator or None, got str"):
        spec_sample_torch(p, p, seeds=[1, 2, "3"])
    assert spec_sample_torch(p, p, seeds=np.array([1, 2, 3])).tokens.shape == (3,)


# ---------------------------------------------------------------------------------------- host reads


@pytest.mark.parametrize("gather", PATHS, ids=PATH_IDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("B,V", [(100, 50), (64, 3001)], ids=["small", "blocked"])
def test_a_validated_step_reads_the_device_once(monkeypatch, dtype, gather, B, V):
    p, q = random_rows(B, V, dtype, seed=1), random_rows(B, V, dtype, seed=2)
    drafts = categorical_torch(q, torch.Generator().manual_seed(0))
    seeds = [None, 3, torch.Generator().manual_seed(1)] + [None] * (B - 3)
    reads = spy_host_reads(monkeypatch)
    for kw in ({}, {"drafts": drafts}, {"seeds": seeds}, {"seeds": torch.arange(B) - 1}):
        del reads[:]
        spec_sample_torch(p, q, torch.Generator().manual_seed(0), gather_rejected=gather, **kw)
        assert reads == ["__bool__"], (kw.keys(), reads)
    del reads[:]
    spec_sample_torch(p, q, validate=False, gather_rejected=gather)
    categorical_torch(p)
    verify_chain_torch(p[:4], q[:4], drafts[:4], bonus_row=p[4])
    assert reads == []


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
def test_the_all_rows_path_has_no_hidden_synchronisation():
    """Logged at the aten level: one scalar read (the validation flag) and no data-dependent shapes
    (nonzero, masked_select, boolean indexing), which on a GPU would each wait for the device."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Log(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(str(func.overloadpacket))
            return func(*args, **(kwargs or {}))

    syncing = {
        "aten.nonzero",
        "aten.nonzero_static",
        "aten.masked_select",
        "aten.unique",
        "aten._unique2",
        "aten.item",
        "aten.is_nonzero",
        "aten.repeat_interleave",
    }
    for B, V in ((100, 50), (64, 3001)):
        p, q = random_rows(B, V, torch.bfloat16, seed=1), random_rows(B, V, torch.bfloat16, seed=2)
        with Log() as log:
            spec_sample_torch(
                p, q, torch.Generator().manual_seed(0), gather_rejected=False, seeds=[3] + [None] * (B - 1)
            )
        assert log.ops.count("aten._local_scalar_dense") == 1, log.ops
        assert not syncing & set(log.ops), syncing & set(log.ops)
        bool_index = [op for op in log.ops if op in ("aten.index", "aten.index_put", "aten.index_put_")]
        assert not bool_index, bool_index
        with Log() as log:
            categorical_torch(p)
        assert "aten._local_scalar_dense" not in log.ops and not syncing & set(log.ops)


# ---------------------------------------------------------------------------------------- categorical_torch


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize(
    "V,B", [(7, 50_000), (3001, 64), pytest.param(200_000, 8, marks=pytest.mark.slow)], ids=["small", "blocked", "200k"]
)
def test_categorical_torch_matches_the_rows_and_never_draws_a_zero(dtype, V, B):
    w = torch.zeros(V, dtype=torch.float64)
    g = torch.Generator().manual_seed(V)
    idx = torch.randperm(V, generator=g)[: min(V - 1, 40)]
    idx = torch.cat([idx, torch.tensor([V - 1])]).unique()
    w[idx] = torch.rand(idx.numel(), generator=g, dtype=torch.float64) + 0.1
    w = (w * 3.7).to(dtype)  # unnormalised weights
    rows = w[None].expand(B, V)
    gen = torch.Generator().manual_seed(1)
    n = 50_000 if V < 200_000 else 4_000
    draws = torch.cat([categorical_torch(rows, gen) for _ in range(-(-n // B))])[:n].numpy()
    ref = normalised(w[None])[0]
    report = sv.audit(lambda *_: draws, ref, ref, n=n, significance=ALPHA)
    assert report.passed, report.explanation


def test_categorical_torch_edge_rows():
    rows = torch.tensor([[0.0, 1.0, 0.0], [0.5, 0.0, 0.5], [0.0, 0.0, 2.0], [1e-300, 0.0, 0.0]], dtype=torch.float64)
    for seed in range(50):
        x = categorical_torch(rows, torch.Generator().manual_seed(seed)).tolist()
        assert x[0] == 1 and x[1] in (0, 2) and x[2] == 2 and x[3] == 0
    assert categorical_torch(torch.zeros(0, 5)).shape == (0,)


def test_residual_rows_and_verify_chain_unchanged():
    p = torch.tensor([[0.6, 0.3, 0.1], [0.2, 0.2, 0.6]], dtype=torch.float64)
    q = torch.tensor([[0.4, 0.5, 0.1], [0.2, 0.2, 0.6]], dtype=torch.float64)
    r = residual_rows(p, q)
    assert torch.allclose(r[0], torch.tensor([1.0, 0.0, 0.0], dtype=torch.float64))
    assert torch.equal(r[1], p[1])  # p == q: p itself (never sampled)
    v = verify_chain_torch(p, q, torch.tensor([0, 2]), torch.Generator().manual_seed(0), bonus_row=p[0])
    assert int(v.accepted) == 2 and v.accept_flags.tolist() == [True, True] and int(v.token) in (0, 1, 2)


# ---------------------------------------------------------------------------------------- moved from test_sampling.py


def test_torch_batch_sampler_matches_p():
    P, Q = np.array(sv.TUTORIAL_P), np.array(sv.TUTORIAL_Q)
    B = 200_000
    p = torch.tensor(np.array([P, [0.7, 0.2, 0.1]]), dtype=torch.float64).repeat(B // 2, 1)
    q = torch.tensor(np.array([Q, [0.1, 0.2, 0.7]]), dtype=torch.float64).repeat(B // 2, 1)
    out = sv.spec_sample_torch(p, q, generator=torch.Generator().manual_seed(0))
    tok = out.tokens.numpy()
    for half, target in ((tok[0::2], P), (tok[1::2], np.array([0.7, 0.2, 0.1]))):
        report = sv.audit(lambda *_, half=half: half, target, target, n=half.size, significance=ALPHA)
        assert report.passed, report.explanation
    acc = out.accepted.numpy()
    assert_rate(acc[0::2].mean(), 0.8, B // 2)
    assert_rate(acc[1::2].mean(), 0.4, B // 2)


def test_torch_sampler_seeded_runs_repeat():
    p = torch.tensor(np.tile(sv.TUTORIAL_P, (1000, 1)), dtype=torch.float32)
    q = torch.tensor(np.tile(sv.TUTORIAL_Q, (1000, 1)), dtype=torch.float32)
    g1, g2 = torch.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    a, b = sv.spec_sample_torch(p, q, generator=g1), sv.spec_sample_torch(p, q, generator=g2)
    assert torch.equal(a.tokens, b.tokens) and torch.equal(a.accepted, b.accepted)
    c = sv.spec_sample_torch(p, q, generator=g1)
    assert not torch.equal(a.tokens, c.tokens)
