"""Exercises 7.3 and 10.3 grade what a verifier does with its draft (issue 19), not only its output law."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

import specviz as sv
from specviz import exercises
from specviz.foundation.i18n import set_language
from specviz.samplers.verifiers import BUGGY_VERIFIERS, ignores_the_draft

IDS = ["7.3", "10.3"]


@pytest.fixture(autouse=True)
def english():
    set_language("en")
    yield
    set_language("en")


def textbook(p, q, n, rng):
    drafts = rng.choice(len(q), size=n, p=q)
    keep = rng.random(n) * q[drafts] < p[drafts]
    out = drafts.copy()
    if (~keep).any():
        short = np.maximum(p - q, 0.0)
        out[~keep] = rng.choice(len(p), size=int((~keep).sum()), p=short / short.sum())
    return drafts, out


@pytest.mark.parametrize("id", IDS)
def test_the_draft_ignoring_verifier_of_the_issue_is_refused(id):
    """`rng.choice(len(p), n, p=p)` got '✔ Correct' before: its output law is right, but nothing was speculated."""
    feedback = exercises.check(id, lambda p, q, n, rng: rng.choice(len(p), n, p=p))
    assert feedback.answered and not feedback.passed
    assert "(drafts, out)" in feedback.message


@pytest.mark.parametrize("id", IDS)
def test_a_verifier_that_shows_drafts_but_ignores_them_is_told_its_acceptance(id):
    feedback = exercises.check(id, ignores_the_draft)
    assert feedback.answered and not feedback.passed
    # on the running example it keeps a draft Σ p·q = 0.40 of the time; the optimum is 0.8
    assert "keeps the draft only 0.39" in feedback.message or "keeps the draft only 0.40" in feedback.message
    assert "0.8000" in feedback.message and "throws away what the draft proposed" in feedback.message


@pytest.mark.parametrize("id", IDS)
def test_the_textbook_verifier_and_the_reference_pass(id):
    assert exercises.check(id, textbook).passed
    assert exercises.check(id, partial(sv.correct_verifier, with_drafts=True)).passed
    assert exercises.check(id, exercises.run_solution(id)).passed


@pytest.mark.parametrize("id", IDS)
@pytest.mark.parametrize("name", ["lenient_0.9", "resample_from_p", "abs_residual", "off_by_one", "inverted_ratio"])
def test_lossy_verifiers_still_fail_the_law_check(id, name):
    feedback = exercises.check(id, partial(BUGGY_VERIFIERS[name], with_drafts=True))
    assert feedback.answered and not feedback.passed
    assert "audit rejects it" in feedback.message, feedback.message


@pytest.mark.parametrize("id", IDS)
def test_pairs_that_break_the_rule_are_refused(id):
    def fake_drafts(p, q, n, rng):  # the output as its own draft: acceptance 1, above any lossless rule
        out = rng.choice(len(p), n, p=p)
        return out, out

    def repair_from_the_draft(p, q, n, rng):  # right output law and acceptance, wrong joint law
        drafts, out = textbook(p, q, n, rng)
        rejected = np.flatnonzero(out != drafts)
        out[rejected] = np.sort(out[rejected])[np.argsort(np.argsort(drafts[rejected], kind="stable"))]
        return drafts, out

    assert not exercises.check(id, fake_drafts).passed
    feedback = exercises.check(id, repair_from_the_draft)
    assert not feedback.passed and "(draft, output)" in feedback.message, feedback.message


def test_the_feedback_follows_the_language():
    set_language("zh")
    assert "草稿" in exercises.check("7.3", lambda p, q, n, rng: rng.choice(len(p), n, p=p)).message
    assert "0.8000" in exercises.check("10.3", ignores_the_draft).message
