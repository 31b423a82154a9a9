"""The real engine, driven by toy n-gram models with known probabilities.

Goodness-of-fit checks are chi-square tests at ALPHA = 1e-4 with fixed seeds (a correct
engine fails a given check with probability 1e-4 over random seeds; with the fixed seed
the outcome is deterministic). Bug variants are planted by subclassing the engine.
"""

import itertools

import numpy as np
import pytest
from lm_fixtures import spy_host_reads
from scipy import stats
from stats_helpers import chi_square_pvalue

import specviz as sv
from specviz.exact.standardize import Sampling
from specviz.lm import (
    LanguageModel,
    NGramModel,
    Pair,
    Session,
    SpeculativeEngine,
    autoregressive_generate,
    speculative_generate,
)

ALPHA = 1e-4
L = 3  # continuation length


def exact_continuations(model: NGramModel, prompt, length, sampling: Sampling):
    """(V**length,) exact probability of each continuation under AR sampling with `sampling`."""
    V = model.vocab_size
    out = np.zeros(V**length)
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
    counts = np.zeros(V**L, dtype=np.int64)
    for _ in range(n):
        r = engine.generate(pair, [1], max_new_tokens=L, gamma=gamma, seed=rng, **kw)
        counts[sv.sequence_index(np.array([r.new_ids]), V)[0]] += 1
    return counts


@pytest.fixture(scope="module")
def pair():
    target = NGramModel.random(3, order=2, seed=10, concentration=0.7, name="target")
    draft = NGramModel.random(3, order=2, seed=11, concentration=0.7, name="draft")
    return Pair(target, draft)


@pytest.mark.parametrize("gamma,kw", [(1, {}), (2, {"temperature": 0.7}), (4, {"top_k": 2})])
def test_engine_output_matches_exact_autoregressive_distribution(pair, gamma, kw):
    exact = exact_continuations(pair.target, [1], L, Sampling(**kw))
    counts = empirical(SpeculativeEngine(), pair, 4000, gamma, seed=gamma, **kw)
    assert chi_square_pvalue(counts, exact) >= ALPHA


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
    assert (counts[exact == 0].sum() > 0) or chi_square_pvalue(counts, exact) < ALPHA


def test_missing_bonus_is_caught_by_the_statistics():
    """Context-free models make α constant, so tokens per step must follow the theory."""
    p, q = np.array([0.6, 0.3, 0.1]), np.array([0.4, 0.5, 0.1])
    pair = Pair(NGramModel(p, name="target"), NGramModel(q, name="draft"))
    gamma = 3

    def tokens_per_step(engine):
        rng = np.random.default_rng(0)
        steps = [
            s for _ in range(300) for s in engine.generate(pair, [0], 40, gamma, seed=rng).steps if s.gamma == gamma
        ]
        return np.array([s.n_emitted for s in steps]), np.array([s.accepted for s in steps])

    emitted, accepted = tokens_per_step(SpeculativeEngine())
    hist = np.bincount(accepted, minlength=gamma + 1)
    assert stats.chisquare(hist, sv.accepted_length_dist(0.8, gamma) * hist.sum()).pvalue >= ALPHA
    expected = sv.expected_tokens(0.8, gamma)
    se = emitted.std() / np.sqrt(len(emitted))
    assert abs(emitted.mean() - expected) < 5 * se
    emitted_bug, _ = tokens_per_step(NoBonus())
    assert emitted_bug.mean() < expected - 5 * se


# Greedy equality on the toy pairs, every draft kind x step x chooser: tests/test_lm_draft_kinds.py (the contract).


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


# ------------------------------------------------------------------------------ variable γ, input checks, results


class SometimesSilent(NGramModel):
    """The draft n-gram, except that after token 2 it has no proposal (next_logits None), like prompt lookup."""

    def session(self, prompt_ids):
        s = super().session(prompt_ids)
        base_truncate = s.truncate

        def silence():
            if s.tokens and s.tokens[-1] == 2:
                s.next_logits = None

        def feed(ids):
            rows = type(s).feed(s, ids)
            silence()
            return rows

        def truncate(length, next_logits=None):
            base_truncate(length, next_logits)
            silence()

        s.feed, s.truncate = feed, truncate
        silence()
        return s


def test_a_draft_without_proposals_keeps_the_output_exact(pair):
    """Steps where the draft stops early (variable γ, down to 0) still give the target's distribution."""
    draft = SometimesSilent(pair.draft.table, name="silent")
    vpair = Pair(pair.target, draft)
    exact = exact_continuations(pair.target, [1], L, Sampling())
    counts = empirical(SpeculativeEngine(), vpair, 4000, 3, seed=9)
    assert chi_square_pvalue(counts, exact) >= ALPHA
    r = speculative_generate(vpair, [2], 60, 3, seed=0)
    gammas = {s.gamma for s in r.steps}
    assert 0 in gammas and max(gammas) == 3  # some steps had no proposal, some a full one
    assert all(s.kind == "target" for s in r.steps if s.gamma == 0)
    for prompt in ([0], [2], [1, 2]):
        assert (
            speculative_generate(vpair, prompt, 30, 4, temperature=0).new_ids
            == autoregressive_generate(vpair, prompt, 30, temperature=0).new_ids
        )


@pytest.mark.parametrize(
    "bad,match",
    [
        ([0, -1], r"prompt token 1 has id -1"),
        ([0, 3], r"prompt token 1 has id 3"),
        ([0, 1.5], r"prompt token 1 is 1.5"),
        (["a"], r"prompt token 0 is 'a'"),
        ([True], "prompt token 0 is True"),
        (np.array([[0]]), "1-D"),
    ],
)
def test_prompt_ids_are_validated_by_both_generators(pair, bad, match):
    with pytest.raises(ValueError, match=match):
        speculative_generate(pair, bad, 4)
    with pytest.raises(ValueError, match=match):
        autoregressive_generate(pair, bad, 4)


def test_tiny_temperature_is_the_greedy_limit_not_nan(pair):
    for t in (1e-310, 5e-324, 1e-30):
        spec = speculative_generate(pair, [1], 20, 3, temperature=t, seed=0)
        assert spec.new_ids == autoregressive_generate(pair, [1], 20, temperature=0).new_ids
        assert all(np.isfinite(s.alphas).all() for s in spec.steps)


class StrictContext(NGramModel):
    """An n-gram whose sessions raise if they ever read more than max_positions tokens."""

    def session(self, prompt_ids):
        s = super().session(prompt_ids)
        feed = s.feed

        def checked(ids):
            rows = feed(ids)
            assert s.length <= self.max_positions, f"read {s.length} > {self.max_positions} tokens"
            return rows

        s.feed = checked
        return s


def test_context_check_counts_only_the_drafting_that_happens():
    t = StrictContext(NGramModel.random(3, seed=0).table, name="t", max_positions=16)
    d = StrictContext(NGramModel.random(3, seed=1).table, name="d", max_positions=16)
    p = Pair(t, d)
    for gamma in (1, 4, 8):  # prompt 10 + 7 new tokens needs 16 positions: fits, whatever γ
        r = speculative_generate(p, [0] * 10, 7, gamma, seed=gamma)
        assert len(r.new_ids) == 7
    with pytest.raises(ValueError, match="needs 17 positions"):
        speculative_generate(p, [0] * 10, 8, 1)
    with pytest.raises(ValueError, match="needs 17 positions"):
        autoregressive_generate(p, [0] * 10, 8)


@pytest.mark.parametrize("seed", [-1, 1.5, "x", True])
def test_bad_seeds_are_named(pair, seed):
    with pytest.raises((ValueError, TypeError), match="seed"):
        speculative_generate(pair, [0], 4, seed=seed)


def test_seed_kinds_reproduce(pair):
    import torch

    a = speculative_generate(pair, [0], 30, 3, seed=np.random.default_rng(5)).new_ids
    assert a == speculative_generate(pair, [0], 30, 3, seed=np.random.default_rng(5)).new_ids
    g1, g2 = torch.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    assert (
        speculative_generate(pair, [0], 30, 3, seed=g1).new_ids
        == speculative_generate(pair, [0], 30, 3, seed=g2).new_ids
    )


def test_results_print_short_and_convert(pair):
    import json

    from specviz.lm.stats.stats import spec_stats

    r = speculative_generate(pair, [0], 2000, 4, seed=0)
    assert len(repr(r)) < 200 and "2000 new tokens" in repr(r)
    d = json.loads(json.dumps(r.to_dict(steps=True)))
    assert d["new_ids"] == r.new_ids and len(d["steps"]) == len(r.steps) and d["fates"] == r.fates()
    html = r._repr_html_()
    assert html.count("class='specviz-tok ") == len(r.new_ids) and "accepted draft" in html
    st = spec_stats(r)
    assert len(repr(st)) < 200
    sd = json.loads(json.dumps(st.to_dict()))
    assert sd["acceptance_rate"] == pytest.approx(st.acceptance_rate)
    assert len(sd["per_position_acceptance"]) == 4 and "<table>" in st._repr_html_()
    ar = autoregressive_generate(pair, [0], 5, seed=0)
    assert ar.fates() == ["target"] * 5 and "autoregressive" in repr(ar)


# ------------------------------------------------------------------------------ one host sync per verify step


class DeviceTable(LanguageModel):
    """A bigram whose logits are looked up on the device from id tensors: no host reads of its own."""

    def __init__(self, V, seed, name):
        import torch

        self.vocab_size, self.name, self.max_positions = V, name, None
        self.device = torch.device("cpu")
        self.table = torch.randn(V, V, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)

    def session(self, prompt_ids):
        return _DeviceTableSession(self, prompt_ids)


class _DeviceTableSession(Session):
    def __init__(self, model, prompt_ids):
        self.model, self.n, self.last, self.next_logits = model, 0, None, None
        self.feed(prompt_ids)

    @property
    def length(self):
        return self.n

    def feed(self, ids):
        import torch

        ids = ids if isinstance(ids, torch.Tensor) else torch.tensor(list(ids))
        rows = self.model.table[ids]  # (k, V), no host read
        self.n += ids.shape[0]
        self.next_logits = rows[-1]
        return rows

    def truncate(self, length, next_logits=None):
        self.n = length
        self.next_logits = next_logits


def test_one_host_read_per_verify_step(monkeypatch):
    """Between two verify steps nothing leaves the device except one transfer (counted on CPU by patching)."""
    pair = Pair(DeviceTable(50, 0, "t"), DeviceTable(50, 1, "d"))
    reads = spy_host_reads(monkeypatch)
    steps = []
    r = SpeculativeEngine().generate(pair, [1, 2], 40, 4, seed=0, on_step=lambda rec: steps.append(len(reads)))
    per_step = np.diff([0] + steps)
    del reads[:]
    ar = autoregressive_generate(pair, [1, 2], 40, seed=0)
    monkeypatch.undo()
    assert len(r.new_ids) == 40 and len(ar.new_ids) == 40
    assert (per_step == 1).all(), f"host reads per verify step: {per_step.tolist()} ({sorted(set(reads))})"
    assert reads == ["tolist"], f"plain decoding read the device {len(reads)} times: {reads[:5]}"


def test_stop_at_eos_uses_the_tokenizer_and_the_generation_config(pair):
    from types import SimpleNamespace

    from specviz.lm.engine.inputs import eos_ids

    fake = SimpleNamespace(
        target=SimpleNamespace(model=SimpleNamespace(generation_config=SimpleNamespace(eos_token_id=[1, 2]))),
        tokenizer=SimpleNamespace(eos_token_id=0),
    )
    assert eos_ids(fake) == {0, 1, 2}
    free = speculative_generate(pair, [0], 60, 3, seed=4).new_ids
    first = free.index(2)  # the toy emits token 2 somewhere in 60 tokens
    tok_pair = Pair(pair.target, pair.draft, tokenizer=SimpleNamespace(eos_token_id=2, decode=lambda ids, **k: ""))
    for gen in (
        lambda: speculative_generate(tok_pair, [0], 60, 3, seed=4, stop_at_eos=True),
        lambda: autoregressive_generate(tok_pair, [0], 60, seed=4, stop_at_eos=True),
    ):
        ids = gen().new_ids
        assert ids[-1] == 2 and 2 not in ids[:-1]
    assert speculative_generate(tok_pair, [0], 60, 3, seed=4, stop_at_eos=True).new_ids == free[: first + 1]
