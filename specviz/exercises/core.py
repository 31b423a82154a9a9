"""Exercises with answers that code checks: numbers, functions graded by tests, verifiers graded by `audit`.

An exercise is registered once (in the module of its tutorial, e.g. `nb03.py`) and used from
the notebook in three calls: `check(id, answer)`, `hint(id)` and `solution(id)`. Feedback and
hints come in the current language (`specviz.foundation.i18n`).

Whatever the answer, `check` gives feedback, never an exception: an answer of the wrong kind
(text, a complex number, a list where one number is asked for, an int too large for a float) is
refused with a message naming what was expected; a huge answer is shown by its first entries and
its shape (no message is longer than MAX_MESSAGE_CHARS); a learner's code (a function, an answer's
__float__ or __repr__) runs under a time budget (FUNCTION_BUDGET_S per call, VERIFIER_BUDGET_S per
pair) where `budget.MODE` says (on Linux a child process, killed at the limit, that cannot touch the grade).

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
from contextlib import closing
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from functools import partial
from numbers import Real
from typing import Any

import numpy as np

from ..foundation.budget import run_tasks
from ..foundation.i18n import language, t
from ..foundation.palette import STATUS
from ..samplers.audit import EFFICIENCY_Z, audit, draw_function

REGISTRY: dict[str, Exercise] = {}
"""id -> Exercise, filled by the tutorial modules (nb01.py, nb02.py, ...) on import."""

MAX_MESSAGE_CHARS = 1000  # no feedback message is longer: what it shows of an answer is cut to size
SHOWN_ITEMS = 8  # at most this many entries of an array or list are shown (then "…" and its shape or length)
SHOWN_CHARS = 120  # at most this many characters of one shown value (a repr, an error message)

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
    body += "," * (len(items) == 1 and brackets == "()")
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
    try:
        return x.item() if getattr(x, "shape", None) == () and callable(getattr(x, "item", None)) else x
    except Exception:  # noqa: BLE001 - not a real scalar after all
        return x


def real_number(x) -> float | None:
    """`x` as a float if it is one real number (int, float, Fraction, Decimal, numpy, torch, 0-d array; a huge int:
    ±inf), else None (complex numbers, bools, text, arrays of any length)."""
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
    grader: Callable[[Any, str | None], Feedback] = field(repr=False)  # (answer, mode)
    hints: tuple[dict[str, str], ...] = ()
    solution: str = ""  # Python source that sets `answer` (runs with np, sv and Fraction imported)
    wrong: tuple = ()  # answers the grader must refuse (the tests check it)

    def grade(self, answer, mode: str | None = None) -> Feedback:
        """Check `answer` (None: not answered yet), running its code where `mode` says (None: `budget.MODE`)."""
        return unanswered(self.id) if answer is None else self.grader(answer, mode)


def add(ex: Exercise, register_it: bool = True) -> Exercise:
    """Put `ex` in the registry (an id may be registered once)."""
    if register_it:
        if ex.id in REGISTRY:
            raise ValueError(f"exercise {ex.id!r} is registered twice")
        REGISTRY[ex.id] = ex
    return ex


def refuse(key: str, then: str = "", **fields) -> Feedback:
    """A failed check: "Not yet: ", the message `key` filled with `fields`, and `then`."""
    return Feedback(False, t("exercise.wrong", detail=t(key, **fields) + then))


_PLAIN = (type(None), bool, int, float, complex, str, bytes, Decimal, object, type(...))
_NUMPY_SCALARS = tuple({*np.sctypeDict.values()} - {np.object_, np.void})
_SUBTRACT, _ABSOLUTE, _LESS_EQUAL, _ALL = np.subtract, np.absolute, np.less_equal, np.logical_and.reduce


def plain(x, depth: int = 0) -> bool:
    """Whether reading `x` (`real_number`, `fmt`) runs no learner code: built-in values, numeric arrays, lists."""
    kind = type(x)  # `is` only: an isinstance or a hash may run a learner's __class__ or __hash__
    if any(kind is k for k in _PLAIN) or (kind is Fraction and type(x.numerator) is type(x.denominator) is int):
        return True
    if kind is np.ndarray or any(kind is k for k in _NUMPY_SCALARS):
        return x.dtype.kind in "biufcSU"
    return (kind is list or kind is tuple) and (depth > 2 or all(plain(v, depth + 1) for v in x[:SHOWN_ITEMS]))


def trouble(outcome, limit: float, **shown) -> Feedback:
    """The refusal of code that ran too long, raised, died or changed what the check uses (a `run_tasks` outcome)."""
    kind, value, how = outcome
    ran = {"process": "exercise.ran_process", "alarm": "exercise.ran_alarm", "thread": "exercise.ran_thread"}.get(how)
    key, where = {
        "timeout": ("exercise.case_timeout" if shown else "exercise.answer_timeout", ran),
        "raised": ("exercise.case_raised" if shown else "exercise.answer_raised", None),
        "changed": ("exercise.changed", "exercise.ran_inline"),
        "died": ("exercise.died", None),
    }[kind]
    names = clip(", ".join(value), 300) if kind == "changed" else ""  # kind "died": value is the exit code
    return refuse(key, " " + t(where) if where else "", limit=limit, error=value, code=value, names=names, **shown)


def look(answer, read: Callable, mode: str | None, key: str = ""):
    """`read()` of a learner's answer, here when `plain`, else where `mode` says (its __repr__ may loop); a refusal
    if that goes wrong; with `key`, the refusal `key` showing what it read."""
    outcome = ("ok", read(), "") if plain(answer) else next(run_tasks([read], FUNCTION_BUDGET_S, mode, error_text))
    if outcome[0] != "ok":
        return trouble(outcome, FUNCTION_BUDGET_S)
    return refuse(key, got=outcome[1]) if key else outcome[1]


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

    def grader(got, mode=None) -> Feedback:
        if isinstance(read := look(got, lambda: (real_number(got), fmt(got)), mode), Feedback):
            return read
        value, shown = read
        if value is None:
            return refuse("exercise.not_number", got=shown)
        if math.isfinite(value) and abs(value - float(answer())) <= tol:
            return Feedback(True, t("exercise.correct"))
        return refuse("exercise.number_off", got=shown, tol=tol)

    return add(Exercise(id, notebook, "number", question, grader, tuple(hints), solution, tuple(wrong)), register_it)


def call_case(f: Callable, p, q):
    """`f(p, q)` as a float array (over 10,000 entries: its first ones and its shape), None, or a str showing it."""
    raw = f(np.array(p, dtype=float), np.array(q, dtype=float))
    got = None if raw is None else real_array(raw)
    if got is None:
        return None if raw is None else fmt(raw)
    return got if got.size <= 10_000 else (_fmt_array(got, with_shape=False), got.shape)


def grade_case(id: str, outcome, p, q, want: np.ndarray, atol: float, budget_s: float) -> Feedback | None:
    """The failed check of one case (p, q) of exercise `id` from its `run_tasks` outcome, or None if it got `want`."""
    shown, got = {"p": fmt(p), "q": fmt(q)}, outcome[1]
    if outcome[0] != "ok":
        return trouble(outcome, budget_s, **shown)
    if got is None:  # the notebook's `return None` placeholder: not answered yet
        return unanswered(id)
    if isinstance(got, str):
        return refuse("exercise.case_not_real", got=got, want=fmt(want), **shown)
    if not isinstance(got, np.ndarray) and not (isinstance(got, tuple) and len(got) == 2):
        return refuse("exercise.case_not_real", got=fmt(got), want=fmt(want), **shown)  # from a tampered child
    entries, got_shape = got if isinstance(got, tuple) else (_fmt_array(got, with_shape=False), got.shape)
    if isinstance(got, tuple) or got_shape != want.shape:
        return refuse("exercise.case_shape", got=entries, got_shape=got_shape, want_shape=want.shape, **shown)
    with np.errstate(invalid="ignore"):  # ufuncs taken at import: np.allclose replaced by the learner changes nothing
        if not _ALL(_LESS_EQUAL(_ABSOLUTE(_SUBTRACT(got, want)), atol), axis=None):  # NaN, inf: never close
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
    """An exercise 'implement f(p, q)': graded against `reference` on every (p, q) in `cases()`, each call of the
    learner's function within `budget_s` seconds (default FUNCTION_BUDGET_S, read at check time)."""

    def grader(f, mode=None) -> Feedback:
        if not callable(f):
            return look(f, lambda: fmt(f), mode, "exercise.not_callable")
        limit = FUNCTION_BUDGET_S if budget_s is None else budget_s
        todo = [(p, q, np.asarray(reference(p, q), dtype=float)) for p, q in cases()]  # all before f runs
        with closing(run_tasks([partial(call_case, f, p, q) for p, q, _ in todo], limit, mode, error_text)) as runs:
            for (p, q, want), outcome in zip(todo, runs):
                if (failed := grade_case(id, outcome, p, q, want, atol, limit)) is not None:
                    return failed
        return Feedback(True, t("exercise.correct"))

    return add(Exercise(id, notebook, "function", question, grader, tuple(hints), solution, tuple(wrong)), register_it)


NO_DRAFTS = "no drafts"
"""What `draw_verifier` returns for a verifier that returns its output tokens alone (the grade needs the drafts)."""


def draw_verifier(f: Callable, p, q, n: int):
    """(drafts, tokens) that verifier `f` returns on (p, q) with n draws, as `specviz.samplers.audit` calls it (seed 0); None
    if `f` is the placeholder (returns None for n = 1); NO_DRAFTS if it returns tokens without their drafts."""
    if f(np.asarray(p, dtype=float), np.asarray(q, dtype=float), 1, np.random.default_rng(0)) is None:
        return None
    tokens, drafts = draw_function(f, p, q, n, seed=0)
    return NO_DRAFTS if drafts is None else (drafts, tokens)


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
    Its draws on each pair get `budget_s` seconds (default VERIFIER_BUDGET_S); the audit runs after, here.
    """

    def grader(f, mode=None) -> Feedback:
        if not callable(f):
            return look(f, lambda: fmt(f), mode, "exercise.not_callable")
        limit = VERIFIER_BUDGET_S if budget_s is None else budget_s
        todo = pairs()
        with closing(run_tasks([partial(draw_verifier, f, p, q, n) for p, q in todo], limit, mode, error_text)) as runs:
            for (p, q), outcome in zip(todo, runs):
                shown, got = {"p": fmt(p), "q": fmt(q)}, outcome[1]
                if outcome[0] != "ok":
                    return trouble(outcome, limit, **shown)
                if got is None or isinstance(got, str):  # the placeholder, or NO_DRAFTS
                    return unanswered(id) if got is None else refuse("exercise.verifier_no_drafts")
                try:
                    drawn = lambda *args, got=got: got  # its draws, made under the limit already
                    report = audit(drawn, p, q, n=n, seed=0, efficiency=True, joint=True, time_limit=None)
                except (ValueError, TypeError) as e:  # draws that code in the child process tampered with
                    return refuse("exercise.case_raised", error=error_text(e), **shown)
                if report.lossless and report.acceptance_z is not None and report.acceptance_z < -EFFICIENCY_Z:
                    kept, best, z = f"{report.acceptance:.4f}", f"{report.optimum:.4f}", f"{report.acceptance_z:.1f}"
                    bar = f"{EFFICIENCY_Z:.2f}"
                    return refuse("exercise.verifier_inefficient", kept=kept, optimum=best, z=z, limit=bar, **shown)
                if not report.passed:
                    return refuse("exercise.audit_failed", why=clip(report.explanation, 300), **shown)
        return Feedback(True, t("exercise.correct"))

    return add(Exercise(id, notebook, "verifier", question, grader, tuple(hints), solution, tuple(wrong)), register_it)
