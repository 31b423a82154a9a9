"""Exercises with answers that code checks: numbers, functions graded by tests, verifiers graded by `audit`.

An exercise is registered once (in the module of its tutorial, e.g. `nb03.py`) and used from
the notebook in three calls: `check(id, answer)`, `hint(id)` and `solution(id)`. Feedback and
hints come in the current language (`specviz.i18n`).

>>> ex = number_exercise(
...     "0.1", "00",
...     {"en": "Acceptance rate of p = (0.6, 0.3, 0.1), q = (0.4, 0.5, 0.1)?", "zh": "接受率是多少?"},
...     answer=lambda: 0.8, hints=[{"en": "Add up min(p, q).", "zh": "把 min(p, q) 加起来。"}],
...     solution="answer = sv.acceptance_rate([0.6, 0.3, 0.1], [0.4, 0.5, 0.1])", wrong=[0.52],
...     register_it=False)
>>> bool(ex.grade(0.8)), bool(ex.grade(0.52)), bool(ex.grade(None))
(True, False, False)
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from numbers import Real
from typing import Any

import numpy as np

from ..i18n import language, t

REGISTRY: dict[str, Exercise] = {}
"""id -> Exercise, filled by the tutorial modules (nb01.py, nb02.py, ...) on import."""


def text(entry: dict[str, str] | str) -> str:
    """`entry` ({"en": ..., "zh": ...}) in the current language (a plain str is returned as is)."""
    return entry if isinstance(entry, str) else entry.get(language()) or entry["en"]


def fmt(x) -> str:
    """A short printable form of a number or array for feedback."""
    if isinstance(x, np.ndarray | list | tuple):
        return "(" + ", ".join(fmt(v) for v in np.asarray(x, dtype=float).ravel()) + ")"
    if isinstance(x, Real | np.floating | np.integer):
        return f"{float(x):.6g}"
    return repr(x)[:80]


@dataclass(frozen=True)
class Feedback:
    """The result of checking an answer: `passed` (also its truth value) and a message."""

    passed: bool
    message: str
    answered: bool = True

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        return ("✔ " if self.passed else "✘ " if self.answered else "… ") + self.message

    def _repr_html_(self) -> str:
        colour = "#1a7f37" if self.passed else "#cf222e" if self.answered else "#0550ae"
        mark = "✔" if self.passed else "✘" if self.answered else "…"
        return f"<div class='specviz-feedback' style='color:{colour}'><b>{mark}</b> {html.escape(self.message)}</div>"


@dataclass(frozen=True)
class Exercise:
    """One exercise: its id ("3.1"), tutorial ("03"), kind, question, hints, grader, solution and wrong answers."""

    id: str
    notebook: str
    kind: str  # "number", "function" or "verifier"
    question: dict[str, str]
    grader: Callable[[Any], Feedback] = field(repr=False)
    hints: tuple[dict[str, str], ...] = ()
    solution: str = ""  # Python source that sets `answer` (runs with np, sv and Fraction imported)
    wrong: tuple = ()  # answers the grader must refuse (the tests check it)

    def grade(self, answer) -> Feedback:
        """Check `answer`; None means 'not answered yet'."""
        if answer is None:
            return Feedback(False, t("exercise.unanswered", id=self.id), answered=False)
        return self.grader(answer)


def add(ex: Exercise, register_it: bool = True) -> Exercise:
    """Put `ex` in the registry (an id may be registered once)."""
    if register_it:
        if ex.id in REGISTRY:
            raise ValueError(f"exercise {ex.id!r} is registered twice")
        REGISTRY[ex.id] = ex
    return ex


def number_exercise(
    id: str,
    notebook: str,
    question: dict[str, str],
    answer: Callable[[], float],
    hints: Sequence[dict[str, str]] = (),
    solution: str = "",
    wrong: Sequence = (),
    tol: float = 1e-6,
    register_it: bool = True,
) -> Exercise:
    """An exercise whose answer is a number, compared with `answer()` (computed, never typed) within `tol`."""

    def grader(got) -> Feedback:
        if isinstance(got, np.ndarray) and got.ndim == 0:
            got = got.item()
        if isinstance(got, bool) or not isinstance(got, Real):  # numpy scalars and Fractions are Real
            return Feedback(False, t("exercise.wrong", detail=t("exercise.not_number", got=fmt(got))))
        want = float(answer())
        if np.isfinite(float(got)) and abs(float(got) - want) <= tol:
            return Feedback(True, t("exercise.correct"))
        return Feedback(False, t("exercise.wrong", detail=t("exercise.number_off", got=fmt(got), tol=tol)))

    return add(Exercise(id, notebook, "number", question, grader, tuple(hints), solution, tuple(wrong)), register_it)


def function_exercise(
    id: str,
    notebook: str,
    question: dict[str, str],
    reference: Callable,
    cases: Callable[[], list[tuple]],
    hints: Sequence[dict[str, str]] = (),
    solution: str = "",
    wrong: Sequence = (),
    atol: float = 1e-9,
    register_it: bool = True,
) -> Exercise:
    """An exercise 'implement f(p, q)': graded against `reference` on every (p, q) in `cases()`."""

    def grader(f) -> Feedback:
        if not callable(f):
            return Feedback(False, t("exercise.wrong", detail=t("exercise.not_callable", got=fmt(f))))
        for p, q in cases():
            want = np.asarray(reference(p, q), dtype=float)
            try:
                raw = f(np.array(p, dtype=float), np.array(q, dtype=float))
                if raw is None:  # the notebook's `return None` placeholder: not answered yet
                    return Feedback(False, t("exercise.unanswered", id=id), answered=False)
                got = np.asarray(raw, dtype=float)
            except Exception as e:  # noqa: BLE001 - the learner's code may raise anything
                detail = t("exercise.case_raised", p=fmt(p), q=fmt(q), error=f"{type(e).__name__}: {e}")
                return Feedback(False, t("exercise.wrong", detail=detail))
            if got.shape != want.shape or not np.allclose(got, want, atol=atol, rtol=0):
                detail = t("exercise.case_failed", p=fmt(p), q=fmt(q), got=fmt(got), want=fmt(want))
                return Feedback(False, t("exercise.wrong", detail=detail))
        return Feedback(True, t("exercise.correct"))

    return add(Exercise(id, notebook, "function", question, grader, tuple(hints), solution, tuple(wrong)), register_it)


def verifier_exercise(
    id: str,
    notebook: str,
    question: dict[str, str],
    pairs: Callable[[], list[tuple]],
    hints: Sequence[dict[str, str]] = (),
    solution: str = "",
    wrong: Sequence = (),
    n: int = 100_000,
    register_it: bool = True,
) -> Exercise:
    """An exercise 'write a verifier f(p, q, n, rng) -> n tokens': graded by `specviz.audit` on each pair.

    Each audit has a false-alarm rate of 1e-3 (its default significance) with a fixed seed, so a
    correct verifier passes deterministically; see `specviz.audit`.
    """
    from ..audit import audit

    def grader(f) -> Feedback:
        if not callable(f):
            return Feedback(False, t("exercise.wrong", detail=t("exercise.not_callable", got=fmt(f))))
        for p, q in pairs():
            try:
                if f(np.asarray(p, dtype=float), np.asarray(q, dtype=float), 1, np.random.default_rng(0)) is None:
                    return Feedback(False, t("exercise.unanswered", id=id), answered=False)
                report = audit(f, p, q, n=n, seed=0)
            except Exception as e:  # noqa: BLE001 - the learner's code may raise anything
                detail = t("exercise.case_raised", p=fmt(p), q=fmt(q), error=f"{type(e).__name__}: {e}")
                return Feedback(False, t("exercise.wrong", detail=detail))
            if not report.passed:
                detail = t("exercise.audit_failed", p=fmt(p), q=fmt(q), why=report.explanation)
                return Feedback(False, t("exercise.wrong", detail=detail))
        return Feedback(True, t("exercise.correct"))

    return add(Exercise(id, notebook, "verifier", question, grader, tuple(hints), solution, tuple(wrong)), register_it)
