"""Prompt-lookup drafting: its proposals, its one-hot q, and exactness through the engine."""

import itertools
import random

import pytest
import torch
from stats_helpers import chi_square_pvalue

import specviz.lm.drafts.prompt_lookup as prompt_lookup
from specviz.lm import NGramModel, autoregressive_generate, load_pair, speculative_generate
from specviz.lm.drafts.prompt_lookup import PromptLookupModel
from specviz.lm.engine.loop import SpeculativeEngine
from specviz.lm.engine.pair import Pair

ALPHA = 1e-3  # false-alarm rate of each chi-square test below


@pytest.mark.parametrize(
    "tokens, expected",
    [
        ([1, 2, 3, 9, 1, 2], 3),  # "1 2" was followed by 3
        ([5, 6, 7, 5, 6, 8, 5, 6], 8),  # most recent earlier occurrence wins: "5 6" -> 8, not 7
        ([4, 2, 3, 8, 2, 3, 9, 4, 2, 3], 8),  # the longest suffix wins: "4 2 3" -> 8, though "2 3" -> 9 is newer
        ([7, 7], 7),  # a 1-gram match
        ([1, 2, 3], None),  # nothing earlier matches
        ([4], None),  # one token: nothing earlier
    ],
)
def test_proposals_on_hand_made_sequences(tokens, expected):
    lm = PromptLookupModel(vocab_size=10)
    assert lm.propose(tokens) == expected
    s = lm.session(tokens)
    assert s.proposal == expected
    if expected is None:
        assert s.next_logits is None
    else:
        z = s.next_logits
        assert z.shape == (10,) and z.dtype == torch.float32 and z.device == lm.device
        assert z[expected] == 0 and torch.isneginf(z).sum() == 9


def test_ngram_limits():
    seq = [4, 2, 3, 8, 2, 3, 9, 4, 2, 3]
    assert PromptLookupModel(10, max_ngram=1).propose(seq) == 9  # only "3": its latest follower is 9
    assert PromptLookupModel(10, max_ngram=2).propose(seq) == 9  # "2 3" -> 9 (most recent)
    assert PromptLookupModel(10, min_ngram=2).propose([1, 5, 1]) is None  # "1" matches but is too short
    assert PromptLookupModel(10, max_ngram=5, min_ngram=4).propose([1, 2, 3, 4, 0, 1, 2, 3, 4]) == 0
    for bad in (dict(max_ngram=0), dict(min_ngram=3, max_ngram=2), dict(min_ngram=1.5)):
        with pytest.raises(ValueError):
            PromptLookupModel(10, **bad)
    with pytest.raises(ValueError, match="vocab_size"):
        PromptLookupModel(0)


def test_session_follows_feed_and_truncate_exactly():
    """After any mix of feeds and truncations the session proposes what a fresh search of its tokens finds."""
    rng = random.Random(0)
    lm = PromptLookupModel(vocab_size=5)
    for _ in range(30):
        s = lm.session([rng.randrange(5) for _ in range(rng.randint(1, 6))])
        for _ in range(40):
            if rng.random() < 0.3 and s.length > 1:
                s.truncate(rng.randint(1, s.length))
            else:
                ids = [rng.randrange(5) for _ in range(rng.randint(1, 4))]
                rows = s.feed(torch.tensor(ids) if rng.random() < 0.5 else ids)
                assert rows.shape == (len(ids), 5)
                for i in range(len(ids)):  # row i: one-hot on the proposal after ids[:i+1], zeros if none
                    want = lm.propose(s.tokens[: s.length - len(ids) + i + 1])
                    if want is None:
                        assert torch.equal(rows[i], torch.zeros(5))
                    else:
                        assert int(rows[i].argmax()) == want and torch.isneginf(rows[i]).sum() == 4
            assert s.proposal == lm.propose(s.tokens)
            assert (s.next_logits is None) == (s.proposal is None)


def test_bad_ids_are_refused():
    lm = PromptLookupModel(vocab_size=5)
    with pytest.raises(ValueError, match="empty"):
        lm.session([])
    s = lm.session([1, 2])
    with pytest.raises(ValueError, match="token id 7"):
        s.feed([7])
    with pytest.raises(TypeError, match="integer"):
        s.feed(torch.tensor([1.0]))
    with pytest.raises(TypeError, match="integers"):
        s.feed([1.5])
    with pytest.raises(ValueError, match="truncate"):
        s.truncate(0)


def _greedy_equal(pair, prompt, n, gammas):
    want = autoregressive_generate(pair, prompt, n, temperature=0).new_ids
    results = []
    for g in gammas:
        r = speculative_generate(pair, prompt, n, g, temperature=0)
        assert r.new_ids == want, f"gamma {g}"
        results.append(r)
    return results


def test_greedy_speculative_equals_autoregressive_on_the_ngram_toy():
    accepted = no_proposal_steps = 0
    for seed in range(6):
        target = NGramModel.random(7, order=3, seed=seed, concentration=0.3)
        pair = Pair(target, PromptLookupModel(7))
        prompt = [seed % 7, (seed + 3) % 7, 1]
        for r in _greedy_equal(pair, prompt, 40, (1, 3, 8)):
            accepted += sum(s.accepted for s in r.steps)
            no_proposal_steps += sum(s.gamma == 0 for s in r.steps)
    assert accepted > 100 and no_proposal_steps > 0  # both paths exercised


def test_greedy_speculative_equals_autoregressive_on_the_bundled_target():
    pair = load_pair("bundled", "prompt-lookup", device="cpu")
    assert isinstance(pair.draft, PromptLookupModel) and pair.draft.vocab_size == pair.target.vocab_size
    (r,) = _greedy_equal(pair, "To be, or not to be, that is the question. To be, or not to be", 40, (5,))
    assert sum(s.accepted for s in r.steps) > 0


# ------------------------------------------------------------------------------ exact distribution


V, N_NEW, N_RUNS = 4, 3, 10_000  # per prompt: 20,000 runs in all
# [0, 1, 2, 3]: the last token is new, so the first step has no proposal (γ = 0) and later ones do;
# [2, 3, 1, 2, 3]: "2 3" was followed by 1 and "2 3 1" by 2, so the first step drafts two tokens.
PROMPTS = ([0, 1, 2, 3], [2, 3, 1, 2, 3])


def _exact_sequence_probs(target: NGramModel, prompt) -> dict:
    """P(y1, y2, y3 | prompt) under the target, by enumerating all V**3 continuations."""
    out = {}
    for ys in itertools.product(range(V), repeat=N_NEW):
        p, hist = 1.0, list(prompt)
        for y in ys:
            p *= target.probs_for(hist)[y]
            hist.append(y)
        out[ys] = p
    return out


def _chi_square_p(counts: dict, probs: dict, n: int) -> float:
    """Chi-square p-value of the sampled continuations against their exact probabilities (n runs)."""
    cells = list(probs)
    assert sum(counts.values()) == n and set(counts) <= set(cells)
    return chi_square_pvalue([counts.get(c, 0) for c in cells], [probs[c] for c in cells])


def _sample(pair, engine, prompt, n_runs):
    counts, drafted, accepted = {}, 0, 0
    for seed in range(n_runs):
        r = engine.generate(pair, prompt, max_new_tokens=N_NEW, gamma=2, seed=seed)
        counts[tuple(r.new_ids)] = counts.get(tuple(r.new_ids), 0) + 1
        drafted += sum(s.gamma for s in r.steps)
        accepted += sum(s.accepted for s in r.steps)
    return counts, drafted, accepted


@pytest.fixture(scope="module")
def toy_target():
    return NGramModel.random(V, order=3, seed=11, concentration=0.7)


@pytest.mark.parametrize("prompt", PROMPTS)
def test_sequence_distribution_matches_exact_enumeration(toy_target, prompt):
    """10,000 speculative runs with a one-hot q: the 64 continuations have the target's probabilities."""
    probs = _exact_sequence_probs(toy_target, prompt)
    assert abs(sum(probs.values()) - 1) < 1e-12
    pair = Pair(toy_target, PromptLookupModel(V))
    counts, drafted, accepted = _sample(pair, SpeculativeEngine(), prompt, N_RUNS)
    assert drafted >= N_RUNS and 0.1 < accepted / drafted < 0.9  # proposals happen, and both outcomes
    assert sum(counts.values()) == N_RUNS
    assert _chi_square_p(counts, probs, N_RUNS) > ALPHA


class _KeepXOnRejection(SpeculativeEngine):
    """A planted bug: after rejecting x, resample from p itself instead of p with x removed."""

    def residual(self, p_rows, q_rows):
        return p_rows


def test_the_chi_square_test_catches_a_wrong_rejection_rule(toy_target):
    probs = _exact_sequence_probs(toy_target, PROMPTS[1])
    pair = Pair(toy_target, PromptLookupModel(V))
    counts, _, _ = _sample(pair, _KeepXOnRejection(), PROMPTS[1], 5_000)
    assert _chi_square_p(counts, probs, 5_000) < ALPHA


def test_the_run_comes_from_the_occurrence_whose_context_agrees_longest():
    """Two earlier "5 1 2" (the 3-gram suffix); the older one is preceded by 7 as the text is: it wins."""
    A, B = 40, 41
    toks = [7, 5, 1, 2, A, A, 8, 5, 1, 2, B, B, 7, 5, 1, 2]
    s = PromptLookupModel(vocab_size=50).session(toks)
    run, agreed = s.propose_run(2)
    assert run == [A, A] and agreed == 4
    toks[12] = 9  # now neither context agrees beyond the suffix: the most recent occurrence wins
    run, agreed = PromptLookupModel(vocab_size=50).session(toks).propose_run(2)
    assert run == [B, B] and agreed == 3


def test_agreement_counts_back_from_the_end_and_is_capped():
    assert prompt_lookup.agreement([1, 2, 3, 1, 2, 3], 3) == 3
    assert prompt_lookup.agreement([4, 2, 3, 1, 2, 3], 3) == 2
    long = list(range(100)) * 2
    assert prompt_lookup.agreement(long, 100) == prompt_lookup.AGREEMENT_CAP


def test_a_run_is_cut_after_the_end_token_when_the_engine_stops_there():
    """The prompt holds the end token (2) with text after it: no run reaches past it; outputs equal plain decoding."""
    from types import SimpleNamespace

    from specviz.lm import SpeculativeEngine

    class Spy(SpeculativeEngine):  # what the lookup draft proposes (γ 8 takes its whole run: it is at most the room)
        def propose(self, draft, seq, s, g, widths, gen):
            prop = super().propose(draft, seq, s, g, widths, gen)
            runs.append(prop.tokens.tolist())
            return prop

    target = NGramModel.random(6, order=1, seed=3, concentration=0.3, name="target")
    pair = Pair(target, PromptLookupModel(vocab_size=6))
    pair.tokenizer = SimpleNamespace(eos_token_id=2, decode=lambda ids, **kw: " ".join(map(str, ids)))
    prompt = [1, 3, 2, 4, 5, 1, 3, 2, 4, 5, 0, 1, 3, 4, 5, 0, 1] * 2  # the end token, with text after it
    for stop in (True, False):
        runs = []
        r = Spy().generate(pair, prompt, 40, 8, temperature=0, stop_at_eos=stop)
        plain = autoregressive_generate(pair, prompt, 40, temperature=0, stop_at_eos=stop)
        assert r.new_ids == plain.new_ids
        with_end = [run for run in runs if 2 in run]
        assert with_end, "the test needs a run that reaches the end token"
        if stop:
            assert all(run.index(2) == len(run) - 1 for run in with_end), with_end
        else:
            assert any(run.index(2) < len(run) - 1 for run in with_end)  # without the stop, runs go on past it
