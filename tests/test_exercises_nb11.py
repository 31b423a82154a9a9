"""Exercises of tutorial 11: every solution passes, every listed wrong answer fails, hints exist in en and zh."""

import pytest

import specviz as sv
from specviz import exercises

IDS = [ex.id for ex in exercises.exercises("11")]


def test_tutorial_has_two_to_four_exercises():
    assert 2 <= len(IDS) <= 4, IDS


@pytest.mark.parametrize("id", IDS)
def test_solution_passes(id):
    assert exercises.check(id, exercises.run_solution(id)).passed


@pytest.mark.parametrize("id", IDS)
def test_wrong_answers_fail(id):
    ex = exercises.get(id)
    assert ex.wrong, f"exercise {id} lists no wrong answers"
    for w in ex.wrong:
        feedback = exercises.check(id, w)
        assert not feedback.passed and feedback.answered, (id, w)


@pytest.mark.parametrize("id", IDS)
def test_unanswered_is_not_an_error(id):
    ex = exercises.get(id)
    assert not exercises.check(id, None).answered
    if ex.kind == "function":
        assert not exercises.check(id, lambda p, q: None).passed
    if ex.kind == "verifier":
        assert not exercises.check(id, lambda p, q, n, rng: None).passed


@pytest.mark.parametrize("id", IDS)
def test_question_and_hints_in_both_languages(id):
    ex = exercises.get(id)
    for entry in (ex.question, *ex.hints):
        assert entry.get("en") and entry.get("zh"), entry
        assert any("\u4e00" <= ch <= "\u9fff" for ch in entry["zh"]), entry["zh"]
    assert len(ex.hints) >= 2
    try:
        sv.i18n.set_language("zh")
        assert "提示" in exercises.hint(id, 1)
    finally:
        sv.i18n.set_language("en")


def test_speedup_answer_is_the_best_over_a_grid():
    alpha, c = 0.75, 0.1
    grid = [(1 - alpha ** (g + 1)) / ((1 - alpha) * (g * c + 1)) for g in range(0, 40)]
    assert exercises.run_solution("11.2") == pytest.approx(max(grid), abs=1e-12)


def test_prompt_lookup_answer_by_enumeration():
    """11.3 by enumerating which of the three one-hot proposals pass."""
    probs = (0.9, 0.5, 0.8)
    expected, reach = 0.0, 1.0
    for k, pk in enumerate(probs):  # stop at proposal k: k accepted, then one repair token
        expected += reach * (1 - pk) * (k + 1)
        reach *= pk
    expected += reach * (len(probs) + 1)  # all pass: bonus
    assert exercises.run_solution("11.3") == pytest.approx(expected, abs=1e-12)
