"""Exercises with answers that code checks: numbers, functions graded by tests, verifiers graded by `audit`.

An exercise is registered once (in the module of its tutorial, e.g. `nb03.py`) and used from
the notebook in three calls: `check(id, answer)`, `hint(id)` and `solution(id)`. Feedback and
hints come in the current language (`specviz.i18n`).

Whatever the answer, `check` gives feedback, never an exception: an answer of the wrong kind
(text, a complex number, a list where one number is asked for, an int too large for a float) is
refused with a message naming what was expected; a huge answer is shown by its first entries and
its shape (no message is longer than MAX_MESSAGE_CHARS); a learner's function runs under a time
budget (FUNCTION_BUDGET_S per call, VERIFIER_BUDGET_S per audited pair; see `budget` for how it is
stopped) and one that raises, loops or returns something other than real numbers is told so.

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
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from numbers import Real
from typing import Any

import numpy as np

from ..i18n import language, t
from ..palette import STATUS
from .budget import OverBudget, run_with_budget

REGISTRY: dict[str, Exercise] = {}
"""id -> Exercise, filled by the tutorial modules (nb01.py, nb02.py, ...) on import."""

MAX_MESSAGE_CHARS = 1000
"""No feedback message is longer: whatever the answer, what the feedback shows of it is cut to size."""

SHOWN_ITEMS = 8
"""At most this many entries of an array or list are shown in feedback (then "…" and its shape or length)."""

SHOWN_CHARS = 120
"""At most this many characters of one shown value (a repr, an error message)."""

FUNCTION_BUDGET_S = 5.0
"""Seconds one call of a learner's function may take (its cases have a handful of tokens: microseconds)."""

VERIFIER_BUDGET_S = 30.0
"""Seconds a learner's verifier may take on one pair, audit included (100,000 draws; a plain Python loop is slow)."""


def text(entry: dict[str, str] | str) -> str:
    """`entry` ({"en": ..., "zh": ...}) in the current language (a plain str is returned as is)."""
    return entry if isinstance(entry, str) else entry.get(language()) or entry["en"]


def clip(s: str, limit: int = SHOWN_CHARS) -> str:
    """`s` cut to at most `limit` characters, ending in "…" when cut."""
    return s if len(s) <= limit else s[: limit - 1] + "…"


def fmt(x, depth: int = 0) -> str:
    """A short printable form of a number, array or anything else, for feedback: never long, never raises.

    >>> fmt(0.1), fmt(10**400), fmt([0.5, 0.5]), fmt(np.zeros(10**6))
    ('0.1', '~1e+400', '[0.5, 0.5]', '(0, 0, 0, 0, 0, 0, 0, 0, …) shape=(1000000,)')
    """
    try:
        shown = _fmt(x, depth)
    except Exception:  # noqa: BLE001 - a learner's object may have a __repr__ or __len__ that raises
        shown = f"<{type(x).__name__}>"
    return clip(shown)


def _fmt(x, depth: int) -> str:
    """`fmt` without its guard."""
    if isinstance(x, bool | np.bool_):
        return repr(bool(x))
    if isinstance(x, Real | np.floating | np.integer):
        return _fmt_real(x)
    if isinstance(x, np.ndarray):
        return _fmt_array(x)
    if isinstance(x, list | tuple):
        return _fmt_items(x, depth, "[]" if isinstance(x, list) else "()")
    if isinstance(x, str | bytes):
        return clip(repr(x[: SHOWN_CHARS + 2]))
    if hasattr(x, "__len__") and not callable(getattr(x, "__array__", None)) and len(x) > SHOWN_ITEMS:
        return f"{type(x).__name__}(len={len(x)})"  # a huge dict or set: its repr alone could take seconds
    return repr(x)


def _fmt_real(x) -> str:
    """A real number in 6 significant digits; a huge int or Fraction as its order of magnitude."""
    try:
        return f"{float(x):.6g}"
    except OverflowError:  # log10 of an int of any size is exact enough; a Fraction is numerator / denominator
        exponent = math.log10(abs(x.numerator)) - math.log10(x.denominator)
        return f"{'-' if x < 0 else ''}~1e+{int(exponent)}"


def _fmt_array(a: np.ndarray, with_shape: bool = True) -> str:
    """The first entries of `a`, and its shape unless it is short and one-dimensional (or `with_shape` is False)."""
    if a.ndim == 0:
        return _fmt(a.item(), 1)
    items = _fmt_items(a.ravel()[: SHOWN_ITEMS + 1].tolist(), 1, "()", show_len=False)
    short = a.ndim == 1 and a.size <= SHOWN_ITEMS
    return items if short or not with_shape else f"{items} shape={a.shape}"


def _fmt_items(items: Sequence, depth: int, brackets: str, show_len: bool = True) -> str:
    """The first `SHOWN_ITEMS` of `items`, each shown by `fmt`, and the length if more (nesting past 2: "…")."""
    if depth > 2:
        return "…"
    more = len(items) > SHOWN_ITEMS
    body = ", ".join([fmt(v, depth + 1) for v in items[:SHOWN_ITEMS]] + ["…"] * more)
    if len(items) == 1 and brackets == "()":
        body += ","
    return f"{brackets[0]}{body}{brackets[1]}" + (f" len={len(items)}" if more and show_len else "")


def error_text(e: BaseException) -> str:
    """ "TypeError: ..." for an exception the learner's code raised, cut to size."""
    try:
        said = str(e)
    except Exception:  # noqa: BLE001 - a learner's exception may fail to print itself
        said = ""
    return clip(f"{type(e).__name__}: {said}" if said else type(e).__name__)


def as_scalar(x):
    """A 0-d array, numpy scalar or torch tensor as its Python value; anything else as it is."""
    if getattr(x, "shape", None) == () and callable(getattr(x, "item", None)):
        try:
            return x.item()
        except Exception:  # noqa: BLE001 - not a real scalar after all
            return x
    return x


def real_number(x) -> float | None:
    """`x` as a float if it is one real number (int, float, Fraction, Decimal, numpy, torch, 0-d array), else None.

    A huge int becomes ±inf; complex numbers, bools, text and arrays of any length are None.
    """
    x = as_scalar(x)
    if isinstance(x, bool) or not isinstance(x, Real | Decimal):
        return None
    try:
        return float(x)
    except OverflowError:
        return math.inf if x > 0 else -math.inf
    except Exception:  # noqa: BLE001 - e.g. Decimal("sNaN"), or a Real whose __float__ fails
        return None


def real_array(x) -> np.ndarray | None:
    """`x` as a float64 array if it holds only real numbers (lists, numpy, torch), else None (text, complex, bool)."""
    try:
        if callable(getattr(x, "detach", None)):  # a torch tensor, maybe with requires_grad or on a GPU
            x = x.detach().cpu()
        a = np.asarray(x)
    except Exception:  # noqa: BLE001 - ragged lists, objects whose __array__ raises
        return None
    if a.dtype.kind == "O" and a.size <= 10_000:  # e.g. Fractions, or a mix with huge ints
        values = [real_number(v) for v in a.ravel()]
        return None if any(v is None for v in values) else np.array(values, dtype=float).reshape(a.shape)
    if a.dtype.kind not in "iuf":
        return None
    with np.errstate(over="ignore"):
        return a.astype(float)


@dataclass(frozen=True)
class Feedback:
    """The result of checking an answer: `passed` (also its truth value) and a message of at most MAX_MESSAGE_CHARS."""

    passed: bool
    message: str
    answered: bool = True

    def __post_init__(self):
        object.__setattr__(self, "message", clip(str(self.message), MAX_MESSAGE_CHARS))

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        return ("✔ " if self.passed else "✘ " if self.answered else "… ") + self.message

    def _repr_html_(self) -> str:
        colour = STATUS["pass" if self.passed else "fail" if self.answered else "info"]
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
            return unanswered(self.id)
        return self.grader(answer)


def add(ex: Exercise, register_it: bool = True) -> Exercise:
    """Put `ex` in the registry (an id may be registered once)."""
    if register_it:
        if ex.id in REGISTRY:
            raise ValueError(f"exercise {ex.id!r} is registered twice")
        REGISTRY[ex.id] = ex
    return ex


def refuse(key: str, **fields) -> Feedback:
    """A failed check: "Not yet: " and the message `key` filled with `fields`."""
    return Feedback(False, t("exercise.wrong", detail=t(key, **fields)))


def unanswered(id: str) -> Feedback:
    """The check of a placeholder answer (None, or a function that returns None): not answered yet."""
    return Feedback(False, t("exercise.unanswered", id=id), answered=False)


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
    """An exercise whose answer is one real number, compared with `answer()` (computed, never typed) within `tol`."""

    def grader(got) -> Feedback:
        value = real_number(got)
        if value is None:
            return refuse("exercise.not_number", got=fmt(got))
        if math.isfinite(value) and abs(value - float(answer())) <= tol:
            return Feedback(True, t("exercise.correct"))
        return refuse("exercise.number_off", got=fmt(got), tol=tol)

    return add(Exercise(id, notebook, "number", question, grader, tuple(hints), solution, tuple(wrong)), register_it)


def call_case(f: Callable, p, q):
    """`f(p, q)` as a float array; None if it returned None; a str showing what it returned if not real numbers."""
    raw = f(np.array(p, dtype=float), np.array(q, dtype=float))
    if raw is None:
        return None
    got = real_array(raw)
    return fmt(raw) if got is None else got


def grade_case(id: str, f: Callable, p, q, want: np.ndarray, atol: float, budget_s: float) -> Feedback | None:
    """The failed check of `f` on one case (p, q) of exercise `id`, or None when it returns `want` in time."""
    shown = {"p": fmt(p), "q": fmt(q)}
    try:
        got = run_with_budget(lambda: call_case(f, p, q), budget_s)
    except OverBudget:
        return refuse("exercise.case_timeout", limit=budget_s, **shown)
    except (Exception, SystemExit) as e:  # noqa: BLE001 - the learner's code may raise anything
        return refuse("exercise.case_raised", error=error_text(e), **shown)
    if got is None:  # the notebook's `return None` placeholder: not answered yet
        return unanswered(id)
    if isinstance(got, str):
        return refuse("exercise.case_not_real", got=got, want=fmt(want), **shown)
    if got.shape != want.shape:
        entries = _fmt_array(got, with_shape=False)
        return refuse("exercise.case_shape", got=entries, got_shape=got.shape, want_shape=want.shape, **shown)
    if not np.allclose(got, want, atol=atol, rtol=0):  # NaN or inf anywhere fails too
        return refuse("exercise.case_failed", got=fmt(got), want=fmt(want), **shown)
    return None


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
    budget_s: float | None = None,
    register_it: bool = True,
) -> Exercise:
    """An exercise 'implement f(p, q)': graded against `reference` on every (p, q) in `cases()`.

    Each call of the learner's function gets `budget_s` seconds (default FUNCTION_BUDGET_S, read at check time).
    """

    def grader(f) -> Feedback:
        if not callable(f):
            return refuse("exercise.not_callable", got=fmt(f))
        limit = FUNCTION_BUDGET_S if budget_s is None else budget_s
        for p, q in cases():
            want = np.asarray(reference(p, q), dtype=float)
            failed = grade_case(id, f, p, q, want, atol, limit)
            if failed is not None:
                return failed
        return Feedback(True, t("exercise.correct"))

    return add(Exercise(id, notebook, "function", question, grader, tuple(hints), solution, tuple(wrong)), register_it)


NO_DRAFTS = "no drafts"
"""What `audit_pair` returns for a verifier that returns its output tokens alone (the grade needs the drafts)."""


def audit_pair(f: Callable, p, q, n: int):
    """`specviz.audit` of verifier `f` on (p, q) with n draws, drafts and joint law included; None if `f` is the
    placeholder (returns None); NO_DRAFTS if it returns tokens without their drafts."""
    from ..audit import audit, split_drafts

    probe = f(np.asarray(p, dtype=float), np.asarray(q, dtype=float), 1, np.random.default_rng(0))
    if probe is None:
        return None
    if split_drafts(probe, 1)[0] is None:
        return NO_DRAFTS
    return audit(f, p, q, n=n, seed=0, efficiency=True, joint=True)


def verifier_exercise(
    id: str,
    notebook: str,
    question: dict[str, str],
    pairs: Callable[[], list[tuple]],
    hints: Sequence[dict[str, str]] = (),
    solution: str = "",
    wrong: Sequence = (),
    n: int = 100_000,
    budget_s: float | None = None,
    register_it: bool = True,
) -> Exercise:
    """An exercise 'write a verifier f(p, q, n, rng) -> (drafts, out)': graded by `audit` on each pair.

    The verifier returns its n drafts and its n outputs, so the grade sees what the rule does with the
    draft, not only the output law: on each pair (a) the outputs must follow p (chi-square, false-alarm
    rate 1e-3, audit's default significance), (b) the drafts must follow q and the fraction of outputs
    equal to their draft must match Σ min(p, q) (binomial z-test, false-alarm rate 1e-6), and (c) the
    pairs (draft, output) must follow the textbook rule's joint law: a kept draft is output as is, a
    rejected one is replaced from (p − q)⁺ / Z (chi-square, 1e-6). So a verifier that ignores its draft
    and samples p directly is refused, with its acceptance beside the optimum. The seed is fixed, so the
    verdict is deterministic. A verifier that returns the outputs alone is told to return the drafts too.
    Each pair gets `budget_s` seconds, audit included (default VERIFIER_BUDGET_S, read at check time).
    """

    def grader(f) -> Feedback:
        from ..audit import EFFICIENCY_Z

        if not callable(f):
            return refuse("exercise.not_callable", got=fmt(f))
        limit = VERIFIER_BUDGET_S if budget_s is None else budget_s
        for p, q in pairs():
            shown = {"p": fmt(p), "q": fmt(q)}
            try:
                report = run_with_budget(lambda p=p, q=q: audit_pair(f, p, q, n), limit)
            except OverBudget:
                return refuse("exercise.case_timeout", limit=limit, **shown)
            except (Exception, SystemExit) as e:  # noqa: BLE001 - the learner's code may raise anything
                return refuse("exercise.case_raised", error=error_text(e), **shown)
            if report is None:
                return unanswered(id)
            if report is NO_DRAFTS:
                return refuse("exercise.verifier_no_drafts")
            if report.lossless and report.acceptance_z is not None and report.acceptance_z < -EFFICIENCY_Z:
                kept, best, z = f"{report.acceptance:.4f}", f"{report.optimum:.4f}", f"{report.acceptance_z:.1f}"
                return refuse(
                    "exercise.verifier_inefficient", kept=kept, optimum=best, z=z, limit=f"{EFFICIENCY_Z:.2f}", **shown
                )
            if not report.passed:
                return refuse("exercise.audit_failed", why=clip(report.explanation, 300), **shown)
        return Feedback(True, t("exercise.correct"))

    return add(Exercise(id, notebook, "verifier", question, grader, tuple(hints), solution, tuple(wrong)), register_it)
