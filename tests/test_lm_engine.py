"""The real engine, driven by toy n-gram models with known probabilities.

Goodness-of-fit checks are chi-square tests at ALPHA = 1e-4 with fixed seeds (a correct
engine fails a given check with probability 1e-4 over random seeds; with the fixed seed
the outcome is deterministic). Bug variants are planted by subclassing the engine.
"""

import itertools

import numpy as np
import pytest
from scipy import stats

import specviz as sv
from specviz.lm import NGramModel, Pair, SpeculativeEngine, autoregressive_generate, speculative_generate
from specviz.standardize import Sampling

ALPHA = 1e-4
L = 3  # continuation length


def exact_continuations(model: NGramModel, prompt, length, sampling: Sampling):
    """(V**length,) exact probability of each continuation under AR sampling with `sampling`."""
    V = model.vocab_size
    out = np.zeros(V ** length)
    for i, seq in enumerate(itertools.product(range(V), repeat=length)):
        prob, hist = 1.0, list(prompt)
        for t in seq:
            logits = np.log(np.maximum(model.probs_for(hist), 1e-300))
            prob *= sv.standardize(logits, sampling.temperature, sampling.top_k, sampling.top_p)[t]
            hist.append(t)
        out[i] = prob
    return out


def empirical(engine, pair, n, gamma, seed, **kw):
    rng = np.random.default_rng(seed)
    V = pair.target.vocab_size
    counts = np.zeros(V ** L, dtype=np.int64)
    for _ in range(n):
        r = engine.generate(pair, [1], max_new_tokens=L, gamma=gamma, seed=rng, **kw)
        counts[sv.sequence_index(np.array([r.new_ids]), V)[0]] += 1
    return counts


def pvalue(counts, probs):
    assert counts[probs == 0].sum() == 0, "a continuation with probability 0 was generated"
    keep = probs > 0
    exp = probs[keep] * counts.sum()
    small = exp < 5
    c, e = counts[keep][~small], exp[~small]
    if small.any():
        c, e = np.append(c, counts[keep][small].sum()), np.append(e, exp[small].sum())
    return stats.chisquare(c, e).pvalue


@pytest.fixture(scope="module")
def pair():
    target = NGramModel.random(3, order=2, seed=10, concentration=0.7, name="target")
    draft = NGramModel.random(3, order=2, seed=11, concentration=0.7, name="draft")
    return Pair(target, draft)


@pytest.mark.parametrize("gamma,kw", [(1, {}), (2, {"temperature": 0.7}), (4, {"top_k": 2})])
def test_engine_output_matches_exact_autoregressive_distribution(pair, gamma, kw):
    exact = exact_continuations(pair.target, [1], L, Sampling(**kw))
    counts = empirical(SpeculativeEngine(), pair, 4000, gamma, seed=gamma, **kw)
    assert pvalue(counts, exact) >= ALPHA


class ResampleFromP(SpeculativeEngine):
    def residual(self, p_k, q_k):
        return p_k


class NoRollback(SpeculativeEngine):
    def rollback(self, session, keep, next_logits):
        pass  # rejected drafts stay in the cache


class OffByOne(SpeculativeEngine):
    def target_row(self, j):
        return j + 1  # compares draft j with the target's distribution one position later


class NoBonus(SpeculativeEngine):
    def bonus_dist(self, p_rows, gamma):
        return None


@pytest.mark.parametrize("engine", [ResampleFromP(), NoRollback(), OffByOne()], ids=lambda e: type(e).__name__)
def test_planted_bugs_are_caught(pair, engine):
    exact = exact_continuations(pair.target, [1], L, Sampling())
    counts = empirical(engine, pair, 3000, 2, seed=5)
    assert (counts[exact == 0].sum() > 0) or pvalue(counts, exact) < ALPHA


def test_missing_bonus_is_caught_by_the_statistics():
    """Context-free models make α constant, so tokens per step must follow the theory."""
    p, q = np.array([0.6, 0.3, 0.1]), np.array([0.4, 0.5, 0.1])
    pair = Pair(NGramModel(p, name="target"), NGramModel(q, name="draft"))
    gamma = 3

    def tokens_per_step(engine):
        rng = np.random.default_rng(0)
        steps = [s for _ in range(300) for s in engine.generate(pair, [0], 40, gamma, seed=rng).steps
                 if s.gamma == gamma]
        return np.array([s.n_emitted for s in steps]), np.array([s.accepted for s in steps])

    emitted, accepted = tokens_per_step(SpeculativeEngine())
    hist = np.bincount(accepted, minlength=gamma + 1)
    assert stats.chisquare(hist, sv.accepted_length_dist(0.8, gamma) * hist.sum()).pvalue >= ALPHA
    expected = sv.expected_tokens(0.8, gamma)
    se = emitted.std() / np.sqrt(len(emitted))
    assert abs(emitted.mean() - expected) < 5 * se
    emitted_bug, _ = tokens_per_step(NoBonus())
    assert emitted_bug.mean() < expected - 5 * se


def test_greedy_speculative_equals_greedy_autoregressive(pair):
    for gamma in (1, 2, 4, 8):
        for prompt in ([0], [1, 2], [2, 2, 0]):
            spec = speculative_generate(pair, prompt, 30, gamma, temperature=0)
            ar = autoregressive_generate(pair, prompt, 30, temperature=0)
            assert spec.new_ids == ar.new_ids


def test_seeded_runs_reproducible_and_max_new_tokens_respected(pair):
    a = speculative_generate(pair, [0], 50, 4, seed=3)
    b = speculative_generate(pair, [0], 50, 4, seed=3)
    c = speculative_generate(pair, [0], 50, 4, seed=4)
    assert a.new_ids == b.new_ids and a.new_ids != c.new_ids
    for n in (1, 2, 3, 7, 8, 9):
        for gamma in (0, 1, 3, 8):
            r = speculative_generate(pair, [0], n, gamma, seed=n)
            assert len(r.new_ids) == n == sum(s.n_emitted for s in r.steps)
            assert len(r.fates()) == n


def test_records_are_consistent(pair):
    r = speculative_generate(pair, [0], 40, 3, seed=1)
    for s in r.steps:
        assert 0 <= s.accepted <= s.gamma
        assert s.kind == ("bonus" if s.accepted == s.gamma and s.gamma > 0 else "resampled") or s.kind == "target"
        assert len(s.top_p) == s.accepted + 1
        assert all(0 < q <= 1 for q in s.q_drafted)
        assert len(s.alphas) == min(s.accepted + 1, s.gamma)


def test_on_step_can_stop(pair):
    seen = []
    r = speculative_generate(pair, [0], 100, 2, seed=0, on_step=lambda rec: seen.append(rec) or len(seen) < 3)
    assert r.stopped and len(r.steps) == 3


def test_bad_input_errors(pair):
    with pytest.raises(ValueError, match="empty"):
        speculative_generate(pair, [], 5)
    with pytest.raises(ValueError, match="max_new_tokens"):
        speculative_generate(pair, [0], 0)
    with pytest.raises(ValueError, match="gamma"):
        speculative_generate(pair, [0], 5, gamma=-1)
    with pytest.raises(ValueError, match="temperature"):
        speculative_generate(pair, [0], 5, temperature=-1)
    with pytest.raises(ValueError, match="outside"):
        speculative_generate(pair, [7], 5)
    small = NGramModel.random(3, seed=0)
    small.max_positions = 16
    with pytest.raises(ValueError, match="context of 16 positions"):
        speculative_generate(Pair(small, small), [0] * 16, 5)
    with pytest.raises(ValueError, match="share a vocabulary"):
        Pair(NGramModel.random(3, seed=0), NGramModel.random(4, seed=0))
