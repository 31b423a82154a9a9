"""An adaptive γ stays lossless when it decides before a draft is drawn; peeking at the drafted token breaks it.

The engine runs toy n-gram pairs with known probabilities; the counts of 3-token continuations
are compared with the exact law by a chi-square test at ALPHA = 1e-4 (`stats_helpers`). With
the fixed seeds below every outcome is deterministic, except the `gamma="auto"` check, whose
choices follow the clock: a correct engine fails one of those checks with probability 1e-4
over seeds and clocks (the false-alarm rate), and a planted bug is caught when its p-value
falls below 1e-4 or a continuation of probability 0 is seen.
"""

import numpy as np
import pytest
from stats_helpers import chi_square_pvalue
from test_lm_engine import L, exact_continuations

import specviz as sv
from specviz.exact import stopping
from specviz.exact.standardize import Sampling
from specviz.lm import NGramModel, Pair, SpeculativeEngine
from specviz.lm.gamma.adaptive import AutoGamma, GammaChooser
from specviz.lm.gamma.peeking import DropLowConfidenceDrafts, DropUnlikelyDrafts, StopAfterLowConfidence

ALPHA = 1e-4
P, Q = np.array(sv.TUTORIAL_P), np.array(sv.TUTORIAL_Q)


def empirical(engine, pair, n, gamma, seed):
    """(V**L,) counts of n continuations of [1]; `gamma` is a γ, "auto", a chooser, or a function making a chooser."""
    rng = np.random.default_rng(seed)
    V = pair.target.vocab_size
    counts = np.zeros(V**L, dtype=np.int64)
    steps = []
    for _ in range(n):
        chooser = gamma() if callable(gamma) else gamma
        on_step = getattr(chooser, "record", None)
        r = engine.generate(pair, [1], max_new_tokens=L, gamma=chooser, seed=rng, on_step=on_step)
        counts[sv.sequence_index(np.array([r.new_ids]), V)[0]] += 1
        steps += r.steps
    return counts, steps


class FromNextP(GammaChooser):
    """γ from the target's p at the next position: a function of the history only, so lossless."""

    name = "from-next-p"

    def __init__(self, target, prompt):
        self.target, self.history, self.choices = target, list(prompt), []

    def choose(self, room, run=None, match=None) -> int:
        g = 0 if self.target.probs_for(self.history).max() < 0.6 else min(room, 3)  # draft only where p is confident
        self.choices.append((room, g))
        return g

    def record(self, step) -> None:
        self.history += step.emitted


@pytest.fixture(scope="module")
def pair():
    target = NGramModel.random(3, order=2, seed=10, concentration=0.7, name="target")
    draft = NGramModel.random(3, order=2, seed=11, concentration=0.7, name="draft")
    return Pair(target, draft)


@pytest.fixture(scope="module")
def tutorial_pair():
    """The tutorial's p and q at every position (context-free), where `specviz.exact.stopping` gives exact laws."""
    return Pair(NGramModel(P, name="target"), NGramModel(Q, name="draft"))


@pytest.mark.slow
@pytest.mark.parametrize(
    "engine", [DropUnlikelyDrafts(0.9), DropLowConfidenceDrafts(0.1)], ids=lambda e: type(e).__name__
)
def test_dropping_a_drafted_token_is_caught(pair, engine):
    exact = exact_continuations(pair.target, [1], L, Sampling())
    counts, _ = empirical(engine, pair, 3000, 3, seed=7)
    assert chi_square_pvalue(counts, exact) < ALPHA


@pytest.mark.slow
@pytest.mark.parametrize(
    "engine,gamma",
    [
        (StopAfterLowConfidence(0.1), 3),
        (SpeculativeEngine(), AutoGamma(max_gamma=3)),  # one chooser for every run: it learns as it goes
        (SpeculativeEngine(), "from-next-p"),
    ],
    ids=["stop-after-low-confidence", "auto", "gamma-from-next-p"],
)
def test_choices_made_before_the_draft_pass(pair, engine, gamma):
    if gamma == "from-next-p":
        gamma = lambda: FromNextP(pair.target, [1])  # noqa: E731  (a fresh history per run)
    exact = exact_continuations(pair.target, [1], L, Sampling())
    counts, steps = empirical(engine, pair, 4000, gamma, seed=3)
    assert chi_square_pvalue(counts, exact) >= ALPHA
    assert sum(s.gamma > 0 for s in steps) >= 50  # it did draft: the check was not plain decoding


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
def test_the_adaptive_choices_really_vary(pair):
    """The lossless choosers above are not a fixed γ in disguise."""
    made = []
    _, steps = empirical(
        SpeculativeEngine(), pair, 300, lambda: made.append(FromNextP(pair.target, [1])) or made[-1], 0
    )
    choices = {(room > 0, g > 0) for c in made for room, g in c.choices}
    assert {(True, False), (True, True)} <= choices  # with room to draft, it sometimes drafts and sometimes not
    _, steps = empirical(StopAfterLowConfidence(0.1), pair, 300, 3, seed=0)
    assert {s.gamma for s in steps if s.start == 0} >= {1, 2}  # stopped early after a low-confidence draft


@pytest.mark.slow
@pytest.mark.parametrize("rule", stopping.STOPPING_RULES)
def test_engine_follows_the_exact_law_of_each_rule(tutorial_pair, rule):
    """On the context-free tutorial pair the engine's law is `stopping.sequence_dist`, lossy or not."""
    t = stopping.DEFAULT_THRESHOLDS[rule]
    engine = {
        "fixed": SpeculativeEngine(),
        "stop_after_low_confidence": StopAfterLowConfidence(t),
        "drop_low_confidence": DropLowConfidenceDrafts(t),
        "drop_unlikely": DropUnlikelyDrafts(t),
    }[rule]
    counts, _ = empirical(engine, tutorial_pair, 3000, 3, seed=11)
    predicted = stopping.sequence_dist(P, Q, L, 3, rule, t)
    assert chi_square_pvalue(counts, predicted) >= ALPHA
    target = exact_continuations(tutorial_pair.target, [1], L, Sampling())
    if rule in stopping.LOSSLESS_RULES:
        np.testing.assert_allclose(predicted, target, atol=1e-12)
    else:
        assert chi_square_pvalue(counts, target) < ALPHA


def test_the_one_position_rule_matches_the_pitfall_zoo():
    """`rules.py`'s "drop_unlikely" is the first position of the peeking engine, and the audit catches it."""
    for t in (0.0, 0.5, 0.7, 1.2, 2.0):
        np.testing.assert_allclose(
            sv.output_dist(P, Q, "drop_unlikely", t=t), stopping.first_token_dist(P, Q, "drop_unlikely", t), atol=1e-12
        )
    np.testing.assert_allclose(sv.output_dist(P, Q, "drop_unlikely"), [0.7, 0.15, 0.15], atol=1e-12)
    assert not sv.audit("drop_unlikely", P, Q, n=20_000, seed=0).passed
    assert sv.audit("drop_unlikely", P, Q, n=20_000, seed=0, t=0.0).passed


def test_stopping_rules_reject_bad_input():
    with pytest.raises(ValueError, match="unknown stopping rule"):
        stopping.first_token_dist(P, Q, "peek")
    with pytest.raises(ValueError, match="threshold"):
        stopping.position_law(P, Q, "drop_unlikely", -1)
    with pytest.raises(ValueError, match="to enumerate"):
        stopping.sequence_dist(P, Q, 13, 2, "fixed")
