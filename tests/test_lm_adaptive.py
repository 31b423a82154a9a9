"""gamma="auto" and the GammaChooser contract: exact output, greedy equality, sensible choices, clear errors.

The exact-distribution check is a chi-square test at ALPHA = 1e-4 against exact enumeration,
with a fixed seed (a correct engine fails it with probability 1e-4 over seeds). The planted
choosers that peek at a drafted token are in tests/test_lm_adaptive_peeking.py.
"""

import numpy as np
import pytest
from stats_helpers import chi_square_pvalue
from test_lm_engine import L, exact_continuations

import specviz as sv
from specviz.exact.standardize import Sampling
from specviz.lm import NGramModel, Pair, SpeculativeEngine, autoregressive_generate, speculative_generate
from specviz.lm.drafts.prompt_lookup import PromptLookupModel
from specviz.lm.gamma.adaptive import AutoGamma, FixedGamma, GammaChooser, as_chooser, forget, recall

ALPHA = 1e-4


@pytest.fixture(scope="module")
def pair():
    target = NGramModel.random(3, order=2, seed=10, concentration=0.7, name="target")
    draft = NGramModel.random(3, order=2, seed=11, concentration=0.7, name="draft")
    return Pair(target, draft)


class Cycle(GammaChooser):
    """γ = 0, 1, 2, 3, 0, ... whatever happened: a schedule that depends only on the step count."""

    def __init__(self):
        self.i = -1

    def choose(self, room, run=None, match=None):
        self.i += 1
        return min(self.i % 4, room)


@pytest.mark.slow
@pytest.mark.parametrize("chooser", ["auto", "auto remembered", "cycle"])
def test_auto_and_scheduled_gamma_sample_the_target_exactly(pair, chooser):
    """ "auto remembered": gamma="auto", each run starting from what the runs before it measured."""
    exact = exact_continuations(pair.target, [1], L, Sampling())
    rng = np.random.default_rng(7)
    counts = np.zeros(3**L, dtype=np.int64)
    forget(pair)
    for _ in range(3000):
        g = {"auto": lambda: AutoGamma(max_gamma=3), "auto remembered": lambda: "auto", "cycle": Cycle}[chooser]()
        r = SpeculativeEngine().generate(pair, [1], max_new_tokens=L, gamma=g, seed=rng)
        counts[sv.sequence_index(np.array([r.new_ids]), 3)[0]] += 1
    assert chi_square_pvalue(counts, exact) >= ALPHA


# Auto γ at temperature 0 equals plain greedy decoding on the model and lookup drafts: the contract in
# tests/test_lm_draft_kinds.py.


def test_auto_works_with_top_k_top_p_and_temperature(pair):
    for kw in ({"top_k": 2}, {"top_p": 0.8}, {"temperature": 0.5}):
        r = speculative_generate(pair, [1], 40, "auto", seed=0, **kw)
        assert len(r.new_ids) == 40 and r.gamma == "auto"


@pytest.mark.slow
def test_auto_on_the_bundled_pair_with_static_caches_is_greedy_exact():
    from specviz.lm import load_pair

    pair = load_pair("bundled", "bundled", device="cpu", static_cache=True, progress=False)
    ids = pair.encode("ROMEO:\n")
    plain = autoregressive_generate(pair, ids, 40, temperature=0).new_ids
    r = speculative_generate(pair, ids, 40, "auto", temperature=0)
    assert r.new_ids == plain and r.gamma == "auto" and sum(s.gamma for s in r.steps) > 0  # it drafted


def test_gamma_zero_is_plain_decoding_through_the_engine(pair):
    r = speculative_generate(pair, [1], 30, 0, seed=3)
    assert [s.gamma for s in r.steps] == [0] * 30 and set(r.fates()) == {"target"}
    assert all(s.kind == "target" and s.token is not None for s in r.steps)


def test_the_cost_model_drafts_nothing_when_drafts_fail_and_more_when_they_pass():
    bad = AutoGamma(max_gamma=8)
    for _ in range(3):
        bad.observe(0, 0, 0.0, 0.010)  # plain steps: 100 tokens/s
    for _ in range(20):
        bad.observe(2, 0, 0.004, 0.014)  # two drafts, never accepted: 1 token in 18 ms
    picks = [bad.choose(100) for _ in range(40)]
    assert picks.count(0) >= 36  # plain steps, with a drafting step now and then to look again
    good = AutoGamma(max_gamma=8)
    for _ in range(3):
        good.observe(0, 0, 0.0, 0.010)
    for g in (2, 4):
        for _ in range(5):
            good.observe(g, g, 0.0002 * g, 0.010 + 0.001 * g)  # cheap drafts, all accepted
    assert good.choose(100) >= 4
    assert good.choose(3) <= 3 and good.choose(0) == 0  # never past the room left


def test_a_model_draft_measures_plain_steps_first_then_drafts():
    a = AutoGamma(max_gamma=8)
    assert a.choose(100) == 0
    for _ in range(3):
        a.observe(0, 0, 0.0, 0.010)
    assert a.choose(100) > 0  # now the drafting side gets measured


def test_prompt_lookup_acceptance_is_kept_per_agreement_length():
    a = AutoGamma(max_gamma=8)
    a.observe(0, 0, 0.0, 0.010)
    for _ in range(10):
        a.observe(4, 4, 0.0001, 0.016, match=3)  # contexts that agreed for 3 tokens: all accepted
        a.observe(4, 0, 0.0001, 0.016, match=1)  # one-token agreements: none
    assert a.acceptance(3) > 0.9 and a.acceptance(1) < 0.1
    assert a.choose(100, run=list(range(8)), match=3) >= 4
    assert a.choose(100, run=list(range(8)), match=1) <= 1
    assert a.choose(100, run=[5], match=3) <= 1  # never more than the run proposes


def test_an_untested_longer_agreement_borrows_from_the_shorter_ones_but_data_wins():
    a = AutoGamma()
    for _ in range(6):
        a.observe(1, 1, 0.0001, 0.016, match=2)  # successes after 2 agreeing tokens (bucket of 2 only)
    r2 = a.agreement_rate(2)
    assert r2 > 0.8
    assert all(a.agreement_rate(m) >= r2 for m in range(3, 80))  # untested: never rated below a shorter one
    for _ in range(6):
        a.observe(1, 0, 0.0001, 0.016, match=20)  # but failures at 20 count there
    assert a.agreement_rate(20) < 0.4 < r2
    fresh = AutoGamma()  # nothing seen: the prior m / (m + 3) at each bucket's middle
    assert fresh.agreement_rate(1) == pytest.approx(1 / 4) and fresh.agreement_rate(3) == pytest.approx(3 / 6)


def test_a_copy_in_progress_earns_long_runs_and_free_text_stops_drafting():
    """A replay in plain steps of 10 ms: a copy (every draft accepted) climbs past 16 drafts; misses stop it."""
    verify = lambda g: 0.010 * (1.4 + 0.03 * g) if g else 0.010  # noqa: E731 (a CPU-like verify cost)
    copy, free = AutoGamma(), AutoGamma()
    for a in (copy, free):
        a.observe(0, 0, 0.0, verify(0))
    m, picks = 3, []
    for _ in range(6):
        g = copy.choose(200, run=list(range(64)), match=m)
        picks.append(g)
        copy.observe(g, g, 0.0001, verify(g), match=m)
        m = min(m + g + 1, 64)
    assert max(picks) > 16, picks
    for _ in range(8):
        g = free.choose(200, run=list(range(64)), match=1)
        if g:
            free.observe(g, 0, 0.0001, verify(g), match=1)
        else:
            free.observe(0, 0, 0.0, verify(0))
    later = [free.choose(200, run=list(range(64)), match=1) for _ in range(3)]
    assert later == [0, 0, 0]
    assert max(free.choose(200, run=list(range(64)), match=3) for _ in range(40)) <= free.probe_max  # probes stay small


def test_expected_tokens_with_one_acceptance_everywhere_is_the_geometric_sum():
    """Nothing measured, every position at the prior a: the chain is 1 + a + ... + a^g (notebook 8)."""
    for a in (0.0, 0.3, 0.8, 1.0):
        chain = AutoGamma(prior_acceptance=a).expected(5)
        for g in range(6):
            assert chain[g] == pytest.approx(sum(a**i for i in range(g + 1)))
    assert AutoGamma(prior_acceptance=0.8).expected(4)[4] == pytest.approx(sv.expected_tokens(0.8, 4))


@pytest.mark.parametrize(
    "gamma,match",
    [("fast", "whole number >= 0 or 'auto'"), (-1, "gamma"), (2.5, "gamma"), (True, "gamma"), ("", "auto")],
)
def test_bad_gamma_values_name_the_problem(pair, gamma, match):
    with pytest.raises((ValueError, TypeError), match=match):
        speculative_generate(pair, [1], 5, gamma)


def test_a_chooser_out_of_range_is_an_error(pair):
    class TooMany(GammaChooser):
        def choose(self, room, run=None, match=None):
            return room + 1

    with pytest.raises(ValueError, match="choose returned"):
        speculative_generate(pair, [1], 5, TooMany())

    class Text(GammaChooser):
        def choose(self, room, run=None, match=None):
            return "2"

    with pytest.raises(ValueError, match=r"Text\.choose returned '2': need a whole number 0\.\.4"):
        speculative_generate(pair, [1], 5, Text())


def test_as_chooser_accepts_the_three_forms():
    assert isinstance(as_chooser("auto"), AutoGamma) and isinstance(as_chooser(" AUTO "), AutoGamma)
    assert as_chooser(3).choose(10) == 3 and as_chooser(3).choose(2) == 2
    c = FixedGamma(5)
    assert as_chooser(c) is c and c.choose(10, run=[1, 2]) == 2


def test_prompt_lookup_grows_into_long_runs_only_as_the_text_copies():
    """One 3-token match on free text must not buy a 30-token verify: at most 4x the longest accepted run."""
    a = AutoGamma()
    a.observe(0, 0, 0.0, 0.010)
    for _ in range(3):
        a.observe(2, 1, 0.0001, 0.014, match=1)  # runs of one accepted draft
    assert a.longest == 1
    assert a.choose(200, run=list(range(64)), match=40) <= max(a.probe_max, 4)
    a.observe(4, 4, 0.0001, 0.016, match=40)
    assert a.choose(200, run=list(range(64)), match=44) <= 16


def test_auto_starts_from_the_last_auto_run_on_the_same_models_and_settings(pair):
    """gamma="auto" carries the clock and a model draft's acceptance (capped) to the next run; nothing else does."""
    forget(pair)
    settings = Sampling()
    fresh = AutoGamma(remember=True)
    recall(fresh, pair, settings)
    assert not fresh.verify  # nothing run yet
    speculative_generate(pair, [1], 200, "auto", seed=0)
    warm = AutoGamma(remember=True)
    recall(warm, pair, settings)
    assert 0 in warm.verify and warm.draft.n > 0 and warm.line is not None
    tested = warm.first[None][1]
    assert 0 < tested <= 32 and all(t <= 32 for _, t in warm.deeper)  # capped: this run's own drafts soon weigh more
    warm.observe(0, 0, 0.0, 123.0)
    again = AutoGamma(remember=True)
    recall(again, pair, settings)
    assert again.verify[0].value != warm.verify[0].value  # a copy: the new run does not write into the memory
    for other, settings_ in ((AutoGamma(), settings), (AutoGamma(remember=True), Sampling(temperature=0.5))):
        recall(other, pair, settings_)
        assert not other.verify  # a chooser made by hand, or other sampling settings: a fresh start
    forget(pair)
    recall(again := AutoGamma(remember=True), pair, settings)
    assert not again.verify


def test_prompt_lookup_remembers_the_clock_but_not_how_much_the_last_text_repeated(pair):
    lookup = Pair(pair.target, PromptLookupModel(3))
    forget(lookup)
    speculative_generate(lookup, [0, 1, 2, 0, 1, 2, 0, 1], 120, "auto", temperature=0)
    warm = AutoGamma(remember=True)
    recall(warm, lookup, Sampling(temperature=0))
    assert warm.verify and not warm.agreed_any() and warm.longest == 0 and not warm.first
