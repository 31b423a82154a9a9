"""Exercises of tutorial 08: every solution passes, every listed wrong answer fails, hints exist in en and zh."""

import pytest

import specviz as sv
from specviz import exercises

IDS = [ex.id for ex in exercises.exercises("08")]


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


def test_one_hot_answer_by_hand():
    """8.2 against plain arithmetic: p without dog, renormalised."""
    p = sv.TUTORIAL_P
    assert exercises.run_solution("8.2") == pytest.approx(p[0] / (1 - p[1]), abs=1e-12)


def test_tree_answer_is_the_chain_formula_with_beta():
    beta = sv.multi_draft_acceptance_rate((0.5, 0.3, 0.15, 0.05), (0.1, 0.2, 0.3, 0.4), 2)
    assert exercises.run_solution("8.3") == pytest.approx(sv.expected_tokens(beta, 3), abs=1e-12)
