"""Every copy of the acceptance rule min(1, p/q) agrees with the reference, `theory.acceptance_prob`.

The copies are the ones listed in `acceptance_prob`'s docstring. Each is reached through its
module's public entry point and run on random (p, q) pairs with p = 0 and q = 0 entries (and
one with both zero). Closed forms are compared entry by entry: exactly where the copy does
the same float64 arithmetic, to fp or print tolerance otherwise. Samplers are compared by
acceptance frequencies per drafted token, with fixed seeds. Where the rule gives 0 or 1
the count must be exact. Otherwise each cell allows 5 standard deviations, a false-alarm
rate of 6e-7 per cell and under 1e-4 for this whole file. At q = 0 the value is never used,
because such a token is never drafted. Each copy's own choice there (the reference's 1, or 0)
is checked as stated. Planted wrong rules show that both kinds of check can fail.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
import re

import numpy as np
import pytest

from specviz.exact.theory import acceptance_prob, acceptance_rate, resample_dist

V = 6
SIGMAS = 5.0  # two-sided normal tail 5.7e-7 per cell


def random_pairs(seed: int = 0, count: int = 4) -> list[tuple[np.ndarray, np.ndarray]]:
    """(p, q) float64 pairs over V tokens, each with a p = 0 entry, a q = 0 entry and one zero in both, plus p == q."""
    rng = np.random.default_rng(seed)
    out = [(np.array([0.6, 0.3, 0.1, 0.0, 0.0, 0.0]), np.array([0.4, 0.5, 0.0, 0.1, 0.0, 0.0]))]
    for _ in range(count):
        p, q = rng.dirichlet(np.ones(V)), rng.dirichlet(np.ones(V))
        i, j, k = rng.permutation(V)[:3]
        p[i] = q[j] = p[k] = q[k] = 0.0
        out.append((p / p.sum(), q / q.sum()))
    p = rng.dirichlet(np.ones(V))
    p[1] = 0.0
    out.append((p / p.sum(), p / p.sum()))  # p == q: every draft is kept
    return out


PAIRS = random_pairs()


def a_ref(p_x: float, q_x: float) -> float:
    """The reference acceptance of one token with p(x) = p_x and q(x) = q_x (the rest of the mass elsewhere)."""
    return float(acceptance_prob([p_x, 1.0 - p_x], [q_x, 1.0 - q_x])[0])


def assert_rule(a, p, q, *, at_q0: float, rtol: float = 0.0, atol: float = 0.0, what: str = "") -> None:
    """A closed-form copy `a` (V,) equals acceptance_prob(p, q) where q > 0 and `at_q0` (its own choice) where q = 0."""
    a, ref = np.asarray(a, dtype=np.float64), acceptance_prob(p, q)
    drafted = q > 0
    np.testing.assert_allclose(a[drafted], ref[drafted], rtol=rtol, atol=atol, err_msg=f"{what}: p={p}, q={q}")
    assert (a[~drafted] == at_q0).all(), f"{what}: at q = 0 it gives {a[~drafted]}, says {at_q0}"


def assert_frequencies(hits, trials, prob, what: str = "") -> None:
    """hits[x] successes in trials[x] independent tries with success probability prob[x], for every x.

    Exact where prob is 0 or 1; otherwise within SIGMAS binomial standard deviations.
    """
    hits, trials, prob = (np.asarray(v, dtype=np.float64) for v in (hits, trials, prob))
    for x in np.flatnonzero(trials > 0):
        n, pr = trials[x], prob[x]
        if pr in (0.0, 1.0):
            assert hits[x] == pr * n, f"{what}: token {x}: {hits[x]:.0f} of {n:.0f}, rule says always {pr:.0f}"
            continue
        sd = np.sqrt(pr * (1 - pr) / n)
        assert abs(hits[x] / n - pr) <= SIGMAS * sd, (
            f"{what}: token {x}: frequency {hits[x] / n:.4f} in {n:.0f} tries, reference {pr:.4f} (sd {sd:.4f})"
        )


# ------------------------------------------------------------------------------ the reference and the checks


def test_the_reference_keeps_its_conventions():
    for p, q in PAIRS:
        a = acceptance_prob(p, q)
        assert ((a >= 0) & (a <= 1)).all()
        assert (a[q == 0] == 1).all() and (a[(p == 0) & (q > 0)] == 0).all() and (a[p >= q] == 1).all()
        np.testing.assert_allclose(a[q > 0], np.minimum(1, p[q > 0] / q[q > 0]), rtol=0)


@pytest.mark.parametrize(
    "planted",
    [
        lambda p, q: np.minimum(1.0, p / np.where(q > 0, q, 1.0)),  # q = 0 read as q = 1: gives p there, not 1
        lambda p, q: np.minimum(1.0, q / np.where(p > 0, p, 1.0)),  # the ratio inverted
        lambda p, q: np.where(q > 0, p / np.where(q > 0, q, 1.0), 1.0),  # no clip at 1
    ],
)
def test_a_planted_wrong_rule_fails_the_closed_form_check(planted):
    with pytest.raises(AssertionError):
        for p, q in PAIRS:
            assert_rule(planted(p, q), p, q, at_q0=1.0, what="planted")


def test_a_planted_lenient_verifier_fails_the_frequency_check():
    """The frequency check has the power to see min(1, p/(0.9 q)) in place of min(1, p/q)."""
    from specviz.samplers.verifiers import BUGGY_VERIFIERS

    with pytest.raises(AssertionError, match="frequency"):
        for p, q in PAIRS:
            _check_verifier(BUGGY_VERIFIERS["lenient_0.9"], p, q)


# ------------------------------------------------------------------------------ closed forms


def test_tree_child_acceptance():
    from specviz.samplers.tree import child_acceptance

    for p, q in PAIRS:
        a = [child_acceptance(p, q, [x])[0][0] for x in range(V)]  # the first child: R = p
        assert_rule(a, p, q, at_q0=0.0, what="tree.child_acceptance")


@pytest.mark.slow
def test_tree_draft_tree_records_and_draws_the_rule():
    """draft_tree with one child: the node's recorded acceptance is exact, its verdict a draw against it."""
    from specviz.samplers.tree import draft_tree

    n = 600
    for p, q in PAIRS[:3]:
        a_node, hits, trials = np.zeros(V), np.zeros(V), np.zeros(V)
        for x in np.flatnonzero(q > 0):  # tokens the draft can propose (draft_tree refuses the others)
            for seed in range(n):
                t = draft_tree(p, q, n_drafts=1, depth=1, seed=seed, tokens=[int(x)])
                a_node[x] = t.nodes[1].accept_given_parent
                hits[x] += t.nodes[1].status == "accepted"
            trials[x] = n
        ref = acceptance_prob(p, q)
        np.testing.assert_array_equal(a_node[q > 0], ref[q > 0])
        assert_frequencies(hits, trials, ref, "tree.draft_tree")


def test_numerics_lossless_output():
    """lossless_output_in is q a + (1 - Σ q a) (p - q)+ / Z; in float64 it matches the reference's terms to 1e-12."""
    pytest.importorskip("torch")
    from specviz.exact.numerics import lossless_output_in

    for p, q in PAIRS:
        want = q * acceptance_prob(p, q) + (1 - acceptance_rate(p, q)) * resample_dist(p, q)
        got = lossless_output_in(p, q, "float64").numpy()
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
        under = (p <= q) & (q > 0)  # no residual there: the output is q(x) a(x) alone
        assert_rule(np.where(under, got / np.where(q > 0, q, 1.0), acceptance_prob(p, q)), p, q, at_q0=1.0, atol=1e-12)
        # in float32 the same rule, to float32 rounding
        np.testing.assert_allclose(lossless_output_in(p, q, "float32").double().numpy(), want, rtol=0, atol=2e-6)


def test_standardize_verify_output_dist():
    """verify_output_dist with every draft on one token x: out = a(x) e_x + (1 - a(x)) r, so a(x) is read back."""
    from specviz.exact.standardize import verify_output_dist

    for p, q in PAIRS:
        a = np.full(V, np.nan)
        for x in range(V):
            out, r = verify_output_dist(p, q, np.eye(V)[x]), resample_dist(p, q)
            if r[x] < 1:  # r(x) = 1: out = e_x whatever a(x) is
                a[x] = round(1 - (out.sum() - out[x]) / (1 - r[x]), 12)  # read back to rounding
        seen = ~np.isnan(a)
        assert_rule(np.where(seen, a, acceptance_prob(p, q)), p, q, at_q0=0.0, atol=1e-12, what="standardize")


def _closeup_module():
    """The close-up module, wherever the live widgets keep it."""
    for name in ("specviz.widgets.live.closeup", "specviz.widgets.closeup", "specviz.lm.closeup"):
        try:
            mod = importlib.import_module(name)
        except ImportError:
            continue
        if hasattr(mod, "token_closeup"):
            return mod
    pytest.fail("no close-up module with token_closeup found")


@pytest.mark.slow
def test_closeup_shows_the_rule():
    """token_closeup explains a drafted token with "kept with probability min(1, p/q) = …" (3 decimals)."""
    pytest.importorskip("torch")
    from specviz.lm.engine.loop import speculative_generate
    from specviz.lm.engine.models import NGramModel
    from specviz.lm.engine.pair import Pair

    closeup = _closeup_module()
    pair = Pair(NGramModel.random(V, seed=1), NGramModel.random(V, seed=2))
    r = speculative_generate(pair, [0], max_new_tokens=3 * V * len(PAIRS), gamma=1, seed=0)
    steps = [s for s in r.steps if s.gamma == 1]
    cases = [(p[x], q[x]) for p, q in PAIRS for x in range(V)]
    assert len(steps) >= len(cases)
    run = copy.copy(r)
    run.steps = list(r.steps)
    for s, (px, qx) in zip(steps, cases):
        run.steps[run.steps.index(s)] = dataclasses.replace(s, p_drafted=[float(px)], q_drafted=[float(qx)])
    for s, (px, qx) in zip(steps, cases):
        text = closeup.token_closeup(pair, run, s.start, exact=False)["explanation"]
        shown = re.search(r"p/q\)? = (\d+\.\d+)", text)
        assert shown, text
        want = a_ref(px, qx)  # q = 0: the close-up shows 1, as the reference does
        assert abs(float(shown.group(1)) - want) <= 5e-4 + 1e-12, f"p = {px}, q = {qx}: {text}"


# ------------------------------------------------------------------------------ samplers


def _check_verifier(verifier, p, q, n=200_000, seed=0):
    x, out = verifier(p, q, n, np.random.default_rng(seed), with_drafts=True)
    # a rejected draft has p < q, so (p - q)+ is 0 there and the replacement is never the draft itself
    kept = out == x
    assert_frequencies(
        np.bincount(x[kept], minlength=V), np.bincount(x, minlength=V), acceptance_prob(p, q), "verifiers"
    )


def test_correct_verifier():
    from specviz.samplers.verifiers import correct_verifier

    for i, (p, q) in enumerate(PAIRS):
        _check_verifier(correct_verifier, p, q, seed=i)


def test_multi_draft_sample():
    """multi_draft_sample with one draft: a drafted token x is the accepted one with frequency a(x)."""
    from specviz.samplers.sampling import multi_draft_sample

    n = 200_000
    for i, (p, q) in enumerate(PAIRS):
        s = multi_draft_sample(p, q, n, 1, seed=i)
        drafts = s.drafts[:, 0]
        hits = np.bincount(drafts[s.accepted_index == 0], minlength=V)
        assert_frequencies(hits, np.bincount(drafts, minlength=V), acceptance_prob(p, q), "sampling.multi_draft_sample")


@pytest.mark.slow
def test_chain_sampler():
    """spec_chain_sample, one token, γ = 1: P(first token = x and its draft kept) = q(x) a(x)."""
    from specviz.samplers.chain import MarkovPair, spec_chain_sample

    n = 200_000
    for i, (p, q) in enumerate(PAIRS):
        pair = MarkovPair(np.tile(p, (V + 1, 1)), np.tile(q, (V + 1, 1)), tuple(range(V)))
        s = spec_chain_sample(pair, length=1, gamma=1, n=n, seed=i)
        assert (s.steps == 1).all() and s.accepted_per_step.shape == (n,)  # one verify step per sequence
        kept = s.accepted_per_step == 1
        hits = np.bincount(s.sequences[kept, 0], minlength=V)
        assert_frequencies(hits, np.full(V, n), q * acceptance_prob(p, q), "chain.spec_chain_sample")


def test_torch_verify_chain():
    """verify_chain_torch's per-draft flags: each given draft x kept with frequency a(x); never where q = 0."""
    torch = pytest.importorskip("torch")
    from specviz.samplers.torch_sampling import verify_chain_torch

    reps = 30_000
    for i, (p, q) in enumerate(PAIRS):
        drafts = torch.arange(V).repeat(reps)
        P = torch.tensor(p).expand(len(drafts), V)
        Q = torch.tensor(q).expand(len(drafts), V)
        flags = verify_chain_torch(P, Q, drafts, torch.Generator().manual_seed(i)).accept_flags
        hits = torch.bincount(drafts[flags], minlength=V).numpy()
        a = np.where(q > 0, acceptance_prob(p, q), 0.0)  # its choice at q = 0: reject
        assert_frequencies(hits, np.full(V, reps), a, "torch_sampling.verify_chain_torch")


@pytest.mark.slow
def test_torch_verify_tree_first_child():
    """verify_tree_torch: a node's first child x (tested against R = p) kept with frequency a(x); never where q = 0."""
    torch = pytest.importorskip("torch")
    from specviz.lm.trees.verify import verify_tree_torch

    reps = 600
    for i, (p, q) in enumerate(PAIRS[:2]):
        P = torch.tensor(np.stack([p, p]))  # row 0: the root; row 1: the child (a leaf: its row is not read)
        Q = torch.tensor(np.stack([q, np.zeros(V)]))
        hits = np.zeros(V)
        gen = torch.Generator().manual_seed(100 + i)
        for x in range(V):
            for _ in range(reps):
                hits[x] += int(verify_tree_torch(P, Q, torch.tensor([x]), [-1], gen).fates[0]) == 1
        a = np.where(q > 0, acceptance_prob(p, q), 0.0)  # its choice at q = 0: reject
        assert_frequencies(hits, np.full(V, reps), a, "lm.tree_verify.verify_tree_torch")


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_torch_spec_sample(dtype):
    """spec_sample_torch (rows normalised by their own sums): a given draft x is kept with frequency a(x)."""
    torch = pytest.importorskip("torch")
    from specviz.samplers.torch_sampling import spec_sample_torch

    reps = 30_000
    dt = getattr(torch, dtype)
    for i, (p, q) in enumerate(PAIRS):
        drafts = torch.arange(V).repeat(reps)
        P = torch.tensor(p, dtype=dt).expand(len(drafts), V)
        Q = torch.tensor(q, dtype=dt).expand(len(drafts), V)
        out = spec_sample_torch(P, Q, torch.Generator().manual_seed(i), drafts=drafts, validate=False)
        hits = torch.bincount(drafts[out.accepted], minlength=V).numpy()
        p32, q32 = P[0].double().numpy(), Q[0].double().numpy()  # the rows as held, normalised below
        p32, q32 = p32 / p32.sum(), q32 / q32.sum()
        a = np.where(q32 > 0, acceptance_prob(p32, q32), 0.0)  # its choice at q = 0: reject
        assert_frequencies(hits, np.full(V, reps), a, f"torch_sampling.spec_sample_torch ({dtype})")


def _engine_trials(r):
    """(kept, a) for every draft the engine tested: drafts up to and including the first rejection."""
    kept, a = [], []
    for s in r.steps:
        for j in range(min(s.accepted + 1, s.gamma)):
            kept.append(j < s.accepted)
            a.append(a_ref(s.p_drafted[j], s.q_drafted[j]))
    return np.array(kept), np.array(a)


@pytest.mark.slow
def test_engine_keeps_drafts_at_the_reference_rate():
    """SpeculativeEngine at temperature 1 (top-k 3: p = 0 drafts occur): kept drafts match Σ a, per band of a."""
    pytest.importorskip("torch")
    from specviz.lm.engine.loop import speculative_generate
    from specviz.lm.engine.models import NGramModel
    from specviz.lm.engine.pair import Pair

    pair = Pair(NGramModel.random(V, seed=3), NGramModel.random(V, seed=4))
    r = speculative_generate(pair, [0], max_new_tokens=3000, gamma=3, top_k=3, seed=0)
    kept, a = _engine_trials(r)
    assert len(a) > 1000 and (a == 0).any() and (a == 1).any() and ((a > 0) & (a < 1)).any()
    sure = (a == 0) | (a == 1)
    np.testing.assert_array_equal(kept[sure], a[sure] == 1)  # p = 0: always rejected; p >= q: always kept
    for lo, hi in [(0, 0.5), (0.5, 1)]:  # the rest: a sum of independent Bernoulli(a) per band
        band = (a > lo) & (a < hi)
        sd = np.sqrt((a[band] * (1 - a[band])).sum())
        assert abs(kept[band].sum() - a[band].sum()) <= SIGMAS * sd, (lo, hi, kept[band].sum(), a[band].sum())


def test_engine_greedy_path_is_the_rule_on_one_hot_rows():
    """At temperature 0 p and q are one-hot: the engine keeps a draft exactly when the reference gives a = 1."""
    pytest.importorskip("torch")
    from specviz.lm.engine.loop import speculative_generate
    from specviz.lm.engine.models import NGramModel
    from specviz.lm.engine.pair import Pair

    target = NGramModel.random(V, seed=5)
    table = target.table.copy()
    table[::2] = NGramModel.random(V, seed=6).table[::2]  # the draft agrees with the target after odd tokens only
    pair = Pair(target, NGramModel(table))
    runs = [speculative_generate(pair, [c], max_new_tokens=20, gamma=3, temperature=0.0, seed=0) for c in range(V)]
    kept, a = (np.concatenate(v) for v in zip(*map(_engine_trials, runs)))
    assert set(a.tolist()) == {0.0, 1.0}
    np.testing.assert_array_equal(kept, a == 1)
