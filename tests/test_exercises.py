"""specviz.exercises: every solution passes its checker, every known-wrong answer fails, hints in both languages."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import specviz as sv
from specviz import exercises
from specviz.exercises.core import number_exercise
from specviz.i18n import LANGUAGES, set_language

ALL = exercises.exercises()
IDS = [ex.id for ex in ALL]


@pytest.fixture(autouse=True)
def english():
    set_language("en")
    yield
    set_language("en")


def test_there_are_exercises_for_every_tutorial():
    assert {ex.notebook for ex in ALL} >= {f"{n:02d}" for n in range(1, 12)}, sorted({ex.notebook for ex in ALL})


@pytest.mark.parametrize("ex", ALL, ids=IDS)
def test_solution_passes(ex):
    feedback = exercises.check(ex.id, exercises.run_solution(ex.id))
    assert feedback.passed, f"{ex.id}: its own solution fails: {feedback.message}"


@pytest.mark.parametrize("ex", ALL, ids=IDS)
def test_wrong_answers_fail(ex):
    assert ex.wrong, f"{ex.id} lists no wrong answer, so nothing shows its checker can fail"
    for wrong in ex.wrong:
        feedback = exercises.check(ex.id, wrong)
        assert not feedback.passed and feedback.answered, f"{ex.id} accepts the wrong answer {wrong!r}"


@pytest.mark.parametrize("ex", ALL, ids=IDS)
def test_unanswered_and_garbage_never_raise(ex):
    assert not exercises.check(ex.id, None).answered
    if ex.kind in ("function", "verifier"):  # the notebook's placeholder `def f(...): return None`
        assert not exercises.check(ex.id, lambda *a: None).answered
    for junk in ("cat", float("nan"), [np.nan], lambda *a: 7):
        feedback = exercises.check(ex.id, junk)  # feedback, never an exception
        assert not feedback.passed, f"{ex.id} accepts {junk!r}"


@pytest.mark.parametrize("ex", ALL, ids=IDS)
def test_question_hints_and_solution_in_both_languages(ex):
    assert len(ex.hints) >= 2, f"{ex.id} has fewer than two hints"
    for entry in (ex.question, *ex.hints):
        for lang in LANGUAGES:
            assert entry.get(lang, "").strip(), f"{ex.id}: missing {lang} text in {entry}"
        assert any("\u4e00" <= ch <= "\u9fff" for ch in entry["zh"]), f"{ex.id}: no Chinese in {entry['zh']!r}"
    assert "answer" in ex.solution


def test_feedback_and_hints_follow_the_language():
    set_language("zh")
    first = ALL[0]
    assert "练习" in exercises.check(first.id, None).message
    assert "提示" in exercises.hint(first.id, 1)
    set_language("en")
    assert "Hint 1" in exercises.hint(first.id, 1)


def test_unknown_exercise_names_the_known_ones():
    with pytest.raises(KeyError, match="known: 1.1"):
        exercises.check("99.9", 1)


def test_number_checker_uses_a_computed_answer_and_a_tolerance():
    ex = number_exercise(
        "0.0",
        "00",
        {"en": "overlap mass", "zh": "重叠质量"},
        answer=lambda: float(sv.acceptance_rate(sv.TUTORIAL_P, sv.TUTORIAL_Q)),
        register_it=False,
    )
    assert ex.grade(0.8) and ex.grade(0.8 + 1e-9)
    assert not ex.grade(0.81) and not ex.grade(True) and not ex.grade(float("inf"))
    assert ex.grade(np.float64(0.8)) and ex.grade(np.array(0.8)) and ex.grade(Fraction(4, 5))
    assert not ex.grade(np.array([0.8])) and not ex.grade(np.bool_(True))


def test_hints_advance_and_run_out():
    ex = ALL[0]
    exercises.reset_hints(ex.id)
    shown = [str(exercises.hint(ex.id)) for _ in range(len(ex.hints) + 1)]
    assert shown[0].startswith("Hint 1") and "No more hints" in shown[-1]
    exercises.reset_hints()
    assert str(exercises.hint(ex.id)).startswith("Hint 1")
