"""specviz.exercises: every solution passes its checker, every known-wrong answer fails, hints in both languages."""

from __future__ import annotations

import time
from fractions import Fraction

import numpy as np
import pytest

import specviz as sv
from specviz import exercises
from specviz.exercises import core
from specviz.exercises.core import number_exercise
from specviz.foundation.i18n import LANGUAGES, set_language

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


# ----------------------------------------------------------------------------- hostile answers and arguments (issue 18)


@pytest.fixture
def short_budget(monkeypatch):
    """The learner's code gets 0.3 s per call (the defaults are seconds)."""
    monkeypatch.setattr(core, "FUNCTION_BUDGET_S", 0.3, raising=False)
    monkeypatch.setattr(core, "VERIFIER_BUDGET_S", 0.3, raising=False)


@pytest.fixture
def no_outer_timer(monkeypatch):
    """pytest-timeout's real-time timer paused for the test, so that `check` may use its own alarm (as in a notebook),
    and the learner's code run inline (in this process: the alarm or the worker thread, not a child process)."""
    import signal

    from specviz.exercises import budget

    monkeypatch.setattr(budget, "MODE", "inline")
    remaining, interval = signal.setitimer(signal.ITIMER_REAL, 0)
    start = time.monotonic()
    yield
    if remaining:
        signal.setitimer(signal.ITIMER_REAL, max(remaining - (time.monotonic() - start), 0.01), interval)


def test_an_answer_of_the_wrong_kind_gets_feedback_naming_what_was_expected():
    for answer in (10**400, -(10**400), ["a", "b"], "0.2", {"p": 0.2}, Fraction(10**400, 3)):
        feedback = exercises.check("1.1", answer)
        assert not feedback.passed and feedback.answered, answer
    assert "1e+400" in exercises.check("1.1", 10**400).message  # its size, not an OverflowError
    assert "expected one real number, got ['a', 'b']" in exercises.check("1.1", ["a", "b"]).message


def test_a_huge_answer_gets_a_short_message_with_its_shape():
    number = exercises.check("1.1", np.zeros(10**7)).message
    assert len(number) < 300 and "shape=(10000000,)" in number, number
    function = exercises.check("3.3", lambda p, q: np.zeros(10**7)).message
    assert len(function) < 300 and "shape (10000000,)" in function and "expected shape (3,)" in function, function
    raised = exercises.check("3.3", lambda p, q: exec("raise ValueError('x' * 10**7)")).message
    assert len(raised) < 300 and "ValueError: xxx" in raised
    assert len(exercises.Feedback(False, "x" * 10**6).message) <= core.MAX_MESSAGE_CHARS


@pytest.mark.parametrize("in_thread", [False, True], ids=["main thread (alarm)", "other thread (worker)"])
@pytest.mark.parametrize("id", ["3.3", "10.3"])
def test_a_function_that_sleeps_or_loops_is_stopped_and_told(short_budget, no_outer_timer, id, in_thread):
    import threading

    def forever(*args):
        while True:
            time.sleep(0.01)

    got = []
    start = time.perf_counter()
    if in_thread:
        worker = threading.Thread(target=lambda: got.append(exercises.check(id, forever)))
        worker.start()
        worker.join(10)
    else:
        got.append(exercises.check(id, forever))
    assert time.perf_counter() - start < 3
    assert not got[0].passed and "took longer than 0.3 s" in got[0].message, got[0].message


def test_the_alarm_leaves_no_timer_and_restores_the_handler(short_budget, no_outer_timer):
    import signal

    def mine(signum, frame):
        raise AssertionError("the previous handler ran")

    before = signal.signal(signal.SIGALRM, mine)
    try:
        assert "took longer" in exercises.check("3.3", lambda p, q: time.sleep(5)).message
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
        assert signal.getsignal(signal.SIGALRM) is mine
    finally:
        signal.signal(signal.SIGALRM, before)


def test_an_armed_timer_is_left_alone_and_the_worker_thread_is_used(short_budget, no_outer_timer):
    import signal

    before = signal.signal(signal.SIGALRM, lambda *a: None)
    signal.setitimer(signal.ITIMER_REAL, 60)
    try:
        assert "took longer" in exercises.check("3.3", lambda p, q: time.sleep(1)).message
        remaining, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 55 < remaining <= 60  # someone else's timer (e.g. pytest-timeout's) still runs
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)


def test_a_complex_answer_is_refused():
    right = float(exercises.run_solution("1.1"))
    for answer in (complex(right, 0), np.complex128(right), np.array(right + 0j)):
        feedback = exercises.check("1.1", answer)
        assert not feedback.passed and "real number" in feedback.message, answer
    residual = exercises.run_solution("3.3")
    assert not exercises.check("3.3", lambda p, q: residual(p, q) + 0j).passed


def test_a_right_answer_in_another_form_is_accepted():
    from decimal import Decimal

    import torch

    right = float(exercises.run_solution("1.1"))
    for answer in (Decimal(right), torch.tensor(right, dtype=torch.float64), np.float32(right)):
        assert exercises.check("1.1", answer).passed, answer
    residual = exercises.run_solution("3.3")
    assert exercises.check("3.3", lambda p, q: torch.tensor(residual(p, q), requires_grad=True)).passed


def test_exercises_takes_the_notebook_as_a_number_or_text_and_refuses_unknown_ones():
    third = [ex.id for ex in exercises.exercises("03")]
    assert third == ["3.1", "3.2", "3.3"]
    assert [ex.id for ex in exercises.exercises(3)] == [ex.id for ex in exercises.exercises("3")] == third
    with pytest.raises(ValueError, match=r"notebook=15: the tutorials with exercises are 1, 2, 3, .* 14"):
        exercises.exercises(15)
    with pytest.raises(TypeError, match="notebook must be a tutorial number"):
        exercises.exercises(1.5)
    assert exercises.notebooks()[0] == "01"


def test_hint_takes_its_number_as_text_and_refuses_others_naming_k():
    assert exercises.hint("1.1", "2") == exercises.hint("1.1", 2) and "Hint 2 of 2" in exercises.hint("1.1", "2")
    for k in (1.5, True, "two", [1]):
        with pytest.raises(TypeError, match="hint number k must be a whole number from 1 to 2"):
            exercises.hint("1.1", k)
    for k in (0, -1, 3, 10**400):
        with pytest.raises(ValueError, match="hint number k=.* is out of range: this exercise has hints 1 to 2"):
            exercises.hint("1.1", k)


def test_an_unknown_id_is_a_value_error_too():
    with pytest.raises(ValueError, match=r"no exercise id='99.9'; known: 1.1, 1.2"):
        exercises.get("99.9")
    assert exercises.get(" 1.1 ") is exercises.get("1.1") is exercises.get(1.1)


# ---------------------------------------------------------------- tutorials 2, 3, 6, 7: hand fractions and tolerances

HAND_ANSWERED = ["2.1", "2.2", "2.3", "3.1", "3.2", "6.1", "6.2", "7.1", "7.2"]


def test_hand_fractions_agree_with_specviz():
    """The checkers' answers are hand fractions, computed apart from specviz; specviz gives the same numbers."""
    from specviz.exercises import nb02, nb03, nb06, nb07

    p, q = sv.TUTORIAL_P, sv.TUTORIAL_Q
    q6 = (0.2, 0.2, 0.6)
    pairs = {
        "2.1": (nb02.answer_2_1(), sv.importance_weights(p, (0.25, 0.5, 0.25))[2], Fraction(2, 5)),
        "2.2": (nb02.answer_2_2(), np.dot(q, sv.importance_weights(p, q) * np.array([1.0, 0.0, 2.0])), Fraction(4, 5)),
        "2.3": (nb02.answer_2_3(), 1 - sv.importance_bias_mass(p, (0.5, 0.0, 0.5)), Fraction(7, 10)),
        "3.1": (nb03.answer_3_1(), sv.envelope_constant(p, (0.2, 0.5, 0.3)), Fraction(3)),
        "3.2": (nb03.answer_3_2(), sv.rejection_output_dist(p, q, M=1.25)[0], Fraction(5, 9)),
        "6.1": (nb06.answer_6_1(), sv.expected_tokens(float(sv.acceptance_rate(p, q)), 3), Fraction(369, 125)),
        "6.2": (nb06.answer_6_2(), sv.joint(p, q6).reject[1], Fraction(1, 10)),
        "7.1": (
            nb07.output_resample_from_p(p, q6)[0],
            sv.output_dist(p, q6, rule="resample_target")[0],
            Fraction(1, 2),
        ),
        "7.2": (nb07.output_abs_residual(p, q6)[2], sv.output_dist(p, q6, rule="abs_residual")[2], Fraction(7, 20)),
    }
    assert sorted(pairs) == sorted(HAND_ANSWERED)
    for id, (hand, computed, fraction) in pairs.items():
        assert isinstance(hand, Fraction) and hand == fraction, id
        assert float(computed) == pytest.approx(float(fraction), abs=1e-12), id
        assert exercises.check(id, fraction).passed and not exercises.check(id, float(fraction) + 2e-6).passed, id


def test_lenient_reference_is_exact_and_agrees_with_specviz():
    from specviz.exercises import nb07

    assert nb07.lenient_output(sv.TUTORIAL_P, sv.TUTORIAL_Q) == [Fraction(21, 40), Fraction(3, 8), Fraction(1, 10)]
    for p, q in nb07.lenient_cases():
        np.testing.assert_allclose(
            nb07.lenient_reference(p, q), sv.output_dist(p, q, rule="lenient", l=0.8), atol=1e-12
        )
        assert sum(nb07.lenient_output(p, q)) == 1
    assert not exercises.check("7.4", lambda p, q: sv.output_dist(p, q, rule="lenient", l=0.5)).passed


@pytest.mark.parametrize("id", HAND_ANSWERED + ["3.3", "7.4"])
def test_question_states_its_tolerance_in_both_languages(id):
    ex = exercises.get(id)
    for lang in LANGUAGES:
        assert "1e-6" in ex.question[lang] or "1e-9" in ex.question[lang], f"{id} ({lang}) never states its tolerance"
