"""A hostile walk over the exercises surface (issue 18): `check`, `hint`, `exercises`, `get`, `question`,
`solution`, `run_solution` and `reset_hints`, called with values a hostile user might pass.

Each call is classified as

* OK: a sound result: a hostile answer gets feedback and is refused, a right answer in another form
  (numpy or torch scalar, 0-d array, Fraction, Decimal, list, tensor) is accepted, a valid argument works;
* GOOD_ERROR: a bad argument (id, hint number k, notebook) ends in a ValueError or TypeError whose
  message names the parameter;
* OBSCURE: any other exception (an answer, however odd, must get feedback, not an exception), an
  error that does not name the parameter, or a right answer refused;
* SILENT: a wrong answer accepted, a bad argument accepted (e.g. `exercises(15)` giving []), or a
  message longer than `CAP` characters;
* HANG: a call that took longer than the time budget plus `MARGIN_S`.

The walk asserts 0 OBSCURE, 0 SILENT and 0 HANG, and prints the counts per outcome (run with -s).
Every answer of the fixed hostile list goes to every registered exercise; the answers that take
time (a sleep, an endless loop, a loop that swallows exceptions) go to one exercise per kind. The
walk runs as in a notebook (no timer armed, so `check` stops the learner's code with its alarm), and
once more, for the exercises whose answers are code, with a timer armed (so `check` uses its worker
thread).
"""

from __future__ import annotations

import contextlib
import signal
import sys
import time
from collections import Counter
from decimal import Decimal
from fractions import Fraction
from unittest import mock

import numpy as np
import pytest

from specviz import exercises
from specviz.exercises import core
from specviz.i18n import set_language

BUDGET_S = 0.5  # the time budget of the learner's code during the walk (the defaults are seconds)
MARGIN_S = 2.0  # a call may take the budget plus this before it counts as a HANG (a shared, busy CPU)
CAP = 1000  # no message (feedback, hint, error) may be longer
DEFAULT_BUDGETS = {  # the package's, read before `short_budget` shortens them
    "FUNCTION_BUDGET_S": core.FUNCTION_BUDGET_S,
    "VERIFIER_BUDGET_S": core.VERIFIER_BUDGET_S,
}

ALL = exercises.exercises()


class BadRepr:
    """An answer whose repr, str, len and float all raise."""

    def __repr__(self):
        raise RuntimeError("no repr")

    __str__ = __repr__

    def __len__(self):
        raise RuntimeError("no len")


class BadArray:
    """A return value whose conversion to an array raises."""

    def __array__(self, *args, **kwargs):
        raise RuntimeError("no array")


class BadError(Exception):
    """An exception that cannot print itself."""

    def __str__(self):
        raise RuntimeError("no str")


def self_nested() -> list:
    """A list that contains itself."""
    lst = [0.1]
    lst.append(lst)
    return lst


def hostile_answers() -> list[tuple[str, object]]:
    """(label, answer): values no exercise may accept (numbers, containers, text, objects)."""
    import torch

    return [
        ("10**400", 10**400),
        ("-10**400", -(10**400)),
        ("10**5000", 10**5000),
        ("list of text", ["a", "b"]),
        ("text number", "0.1"),
        ("text", "cat"),
        ("bytes", b"0.1"),
        ("huge text", "x" * 10**6),
        ("complex", 0.1 + 0j),
        ("imaginary", 1j),
        ("numpy complex", np.complex128(0.2)),
        ("0-d complex array", np.array(0.2 + 0j)),
        ("1e7 zeros", np.zeros(10**7)),
        ("1e6 list", [0.0] * 10**6),
        ("nested list", [[0.2]]),
        ("deep list", [[[[[]]]]]),
        ("self-nested list", self_nested()),
        ("empty list", []),
        ("empty array", np.array([])),
        ("2-d array", np.array([[0.2]])),
        ("text array", np.array(["0.2"])),
        ("dict", {"a": 1}),
        ("huge set", set(range(10**5))),
        ("nan", float("nan")),
        ("inf", float("inf")),
        ("-inf", float("-inf")),
        ("True", True),
        ("False", False),
        ("numpy bool", np.bool_(True)),
        ("object", object()),
        ("bad repr", BadRepr()),
        ("Ellipsis", ...),
        ("a type", float),
        ("huge Fraction", Fraction(10**400, 3)),
        ("Decimal sNaN", Decimal("sNaN")),
        ("Decimal NaN", Decimal("NaN")),
        ("Decimal 1e400", Decimal("1e400")),
        ("torch vector", torch.tensor([0.2, 0.3])),
        ("torch nan", torch.tensor(float("nan"))),
        ("torch complex", torch.tensor(0.2 + 0j)),
    ]


def raises(error: BaseException):
    """A function that raises `error` whatever it is given."""

    def f(*args):
        raise error

    return f


def recurse(*args):
    """A function that never ends its recursion."""
    return recurse(*args)


def hostile_functions(ex) -> list[tuple[str, object]]:
    """(label, function): learner functions that are wrong, raise, or return garbage (all fast)."""
    sol = exercises.run_solution(ex.id)
    return [
        ("returns text", lambda *a: "cat"),
        ("returns [[None]]", lambda *a: [[None]]),
        ("returns complex", lambda *a: np.asarray(sol(*a)) + 0j),
        ("returns bools", lambda *a: np.asarray(sol(*a)) > 0),
        ("returns 2-d", lambda *a: np.asarray(sol(*a))[None]),
        ("returns NaN", lambda *a: np.full(np.shape(sol(*a)), np.nan)),
        ("returns inf", lambda *a: np.full(np.shape(sol(*a)), np.inf)),
        ("returns 1e7 zeros", lambda *a: np.zeros(10**7)),
        ("returns one too few", lambda *a: np.asarray(sol(*a))[:-1]),
        ("returns huge ints", lambda *a: [10**400] * len(a[0])),
        ("returns a dict", lambda *a: {"a": 1}),
        ("returns bad __array__", lambda *a: BadArray()),
        ("returns a generator", lambda *a: (x for x in a[0])),
        ("raises ValueError", raises(ValueError("nope"))),
        ("raises a huge message", raises(ValueError("x" * 10**7))),
        ("raises an unprintable error", raises(BadError())),
        ("raises SystemExit", raises(SystemExit(3))),
        ("recursion", recurse),
        ("takes no arguments", lambda: 0.2),
        ("a class", float),
    ]


def slow_functions() -> list[tuple[str, object]]:
    """(label, function): learner functions that never end in time."""

    def sleeper(*args):
        time.sleep(60)

    def busy(*args):
        while True:
            pass

    def swallower(*args):
        while True:
            try:
                time.sleep(60)
            except Exception:  # noqa: BLE001, S112 - the point: code that swallows exceptions
                continue

    return [("sleeps", sleeper), ("loops", busy), ("swallows Exception in a loop", swallower)]


def right_answers(ex) -> list[tuple[str, object]]:
    """(label, answer): the right answer of `ex` in the forms a learner may give it."""
    import torch

    sol = exercises.run_solution(ex.id)
    if ex.kind == "number":
        v = float(sol)
        return [
            ("float", v),
            ("numpy float", np.float64(v)),
            ("0-d array", np.array(v)),
            ("torch scalar", torch.tensor(v, dtype=torch.float64)),
            ("Fraction", Fraction(v)),
            ("Decimal", Decimal(v)),
        ]
    if ex.kind == "function":
        return [
            ("function", sol),
            ("returns a list", lambda p, q: np.asarray(sol(p, q)).tolist()),
            ("returns a tensor", lambda p, q: __import__("torch").from_numpy(np.asarray(sol(p, q), dtype=float))),
            ("returns a tensor with grad", lambda p, q: torch.tensor(sol(p, q), requires_grad=True)),
        ]
    return [("function", sol), ("returns a list", lambda *a: np.asarray(sol(*a)).tolist())]


def timed(call):
    """(result, error, seconds) of `call()`; any exception but KeyboardInterrupt is caught."""
    start = time.perf_counter()
    try:
        result, error = call(), None
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # noqa: BLE001 - a leaked OverBudget or SystemExit is an outcome too
        result, error = None, e
    return result, error, time.perf_counter() - start


def judge_check(call, should_pass: bool) -> tuple[str, str]:
    """(outcome, detail) of a `check` call, which must give feedback, refuse or accept as `should_pass` says."""
    result, error, seconds = timed(call)
    if seconds > BUDGET_S + MARGIN_S:
        return "HANG", f"{seconds:.1f} s"
    if error is not None:
        return "OBSCURE", f"raised {type(error).__name__}"
    if not isinstance(result, exercises.Feedback) or not result.message.strip():
        return "OBSCURE", f"gave {type(result).__name__}, not feedback with a message"
    if len(result.message) > CAP:
        return "SILENT", f"a message of {len(result.message)} characters"
    if should_pass and not result.passed:
        return "OBSCURE", f"a right answer refused: {result.message[:200]}"
    if result.passed and not should_pass:
        return "SILENT", "a wrong answer accepted"
    return "OK", result.message[:100]


def judge_argument(call, param: str, valid: bool) -> tuple[str, str]:
    """(outcome, detail) of a call whose argument `param` is `valid` or not: a result, or an error naming it."""
    result, error, seconds = timed(call)
    if seconds > BUDGET_S + MARGIN_S:
        return "HANG", f"{seconds:.1f} s"
    if error is not None:
        said = str(error) if isinstance(error, ValueError | TypeError) else ""
        if valid or param not in said:
            return "OBSCURE", f"raised {type(error).__name__}: {said[:200]}"
        return ("GOOD_ERROR", said[:100]) if len(said) <= CAP else ("SILENT", f"an error of {len(said)} characters")
    if not valid:
        return "SILENT", f"accepted, gave {str(result)[:100]!r}"
    if isinstance(result, list) and not result:
        return "SILENT", "an empty list"
    if isinstance(result, str) and len(result) > CAP:
        return "SILENT", f"a text of {len(result)} characters"
    return "OK", str(result)[:100]


VALID_IDS = [("1.1", "1.1"), ("id with spaces", " 1.1 "), ("float id", 1.1), ("float id 10.2", 10.2)]
BAD_IDS = [
    ("unknown", "99.9"),
    ("empty", ""),
    ("None", None),
    ("int", 3),
    ("list", ["1.1"]),
    ("huge int", 10**400),
    ("nan", float("nan")),
    ("huge text", "x" * 10**6),
    ("object", object()),
    ("bytes", b"1.1"),
    ("bad repr", BadRepr()),
]
VALID_K = [("None", None), ("1", 1), ("'2'", "2"), ("' 2 '", " 2 "), ("numpy int", np.int64(2))]
BAD_K = [
    ("1.5", 1.5),
    ("2.0", 2.0),
    ("0", 0),
    ("-1", -1),
    ("3 (of 2)", 3),
    ("10**400", 10**400),
    ("True", True),
    ("'two'", "two"),
    ("'1.0'", "1.0"),
    ("'²'", "²"),
    ("[1]", [1]),
    ("nan", float("nan")),
]
VALID_NOTEBOOKS = [("3", 3), ("'3'", "3"), ("'03'", "03"), ("' 3 '", " 3 "), ("numpy int", np.int64(3)), ("None", None)]
BAD_NOTEBOOKS = [
    ("0", 0),
    ("15", 15),
    ("-1", -1),
    ("10**400", 10**400),
    ("'abc'", "abc"),
    ("1.5", 1.5),
    ("3.0", 3.0),
    ("True", True),
    ("[3]", [3]),
    ("nan", float("nan")),
    ("'x' * 10**6", "x" * 10**6),
]


def probe_check(id: str, label: str, answer, should_pass: bool) -> tuple[str, str, str]:
    """(call, outcome, detail) of `check(id, answer)`.

    A right answer (`should_pass`) is checked with the package's own time budgets, not the walk's short one:
    a fast right answer (7.3's verifier returning lists: 0.02 s a pair) once took over 0.5 s with both cores
    busy, and was refused as too slow. It still counts as a HANG after BUDGET_S + MARGIN_S."""
    budgets = mock.patch.multiple(core, **DEFAULT_BUDGETS) if should_pass else contextlib.nullcontext()
    with budgets:
        return (f"check({id}, {label})", *judge_check(lambda: exercises.check(id, answer), should_pass))


def probe_argument(name: str, call, label: str, value, param: str, valid: bool) -> tuple[str, str, str]:
    """(call, outcome, detail) of `call(value)`, whose argument `param` is `valid` or not."""
    return (f"{name}({label})", *judge_argument(lambda: call(value), param, valid))


def walk(full: bool = True) -> list[tuple[str, str, str]]:
    """(call, outcome, detail) of every probe; not `full`: only the exercises whose answers are code that runs."""
    seen = []
    answers = hostile_answers()
    for ex in ALL if full else [ex for ex in ALL if ex.kind != "number"]:
        seen += [probe_check(ex.id, label, answer, False) for label, answer in answers]
        seen += [probe_check(ex.id, f"right: {label}", answer, True) for label, answer in right_answers(ex)]
        if ex.kind != "number":
            seen += [probe_check(ex.id, label, f, False) for label, f in hostile_functions(ex)]
    first_of_kind = {ex.kind: ex for ex in reversed(ALL)}
    for ex in first_of_kind.values():
        seen += [probe_check(ex.id, label, f, False) for label, f in slow_functions()]
    return seen + walk_arguments() if full else seen


def walk_arguments() -> list[tuple[str, str, str]]:
    """(call, outcome, detail) of every probe of the arguments: exercise ids, hint numbers, notebooks."""
    seen = []
    for name, call in (
        ("get", exercises.get),
        ("question", exercises.question),
        ("hint", exercises.hint),
        ("solution", exercises.solution),
        ("run_solution", exercises.run_solution),
        ("reset_hints", exercises.reset_hints),
        ("check", lambda id: exercises.check(id, None)),
    ):
        seen += [probe_argument(name, call, label, id, "id", True) for label, id in VALID_IDS]
        for label, id in BAD_IDS:
            valid = name == "reset_hints" and id is None  # reset_hints(None) starts every exercise's hints again
            seen.append(probe_argument(name, call, label, id, "id", valid))
    hint_1_1 = lambda k: exercises.hint("1.1", k)  # noqa: E731 - a one-line adapter
    seen += [probe_argument("hint(1.1, k)", hint_1_1, label, k, "k", True) for label, k in VALID_K]
    seen += [probe_argument("hint(1.1, k)", hint_1_1, label, k, "k", False) for label, k in BAD_K]
    nb = exercises.exercises
    seen += [probe_argument("exercises", nb, label, v, "notebook", True) for label, v in VALID_NOTEBOOKS]
    seen += [probe_argument("exercises", nb, label, v, "notebook", False) for label, v in BAD_NOTEBOOKS]
    return seen


@pytest.fixture
def short_budget(monkeypatch):
    """The walk's time budget for the learner's code, and English messages."""
    monkeypatch.setattr(core, "FUNCTION_BUDGET_S", BUDGET_S, raising=False)
    monkeypatch.setattr(core, "VERIFIER_BUDGET_S", BUDGET_S, raising=False)
    set_language("en")
    yield
    exercises.reset_hints()


@pytest.fixture(params=["alarm", "worker"])
def timer_mode(request):
    """Walk as in a notebook (no real-time timer armed: `check` uses its alarm) and with one armed (its worker thread).

    pytest-timeout arms one for every test; for the "alarm" walk it is paused, and re-armed afterwards.
    """
    remaining, interval = signal.getitimer(signal.ITIMER_REAL)
    if request.param == "alarm":
        signal.setitimer(signal.ITIMER_REAL, 0)
    elif not remaining:
        signal.setitimer(signal.ITIMER_REAL, 600)
    start = time.monotonic()
    yield request.param
    signal.setitimer(
        signal.ITIMER_REAL, max(remaining - (time.monotonic() - start), 0.01) if remaining else 0, interval
    )


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # audit of a NaN-returning verifier
def test_the_hostile_walk_finds_nothing_obscure_silent_or_hanging(short_budget, timer_mode):
    import specviz

    specviz.audit(specviz.correct_verifier, (0.5, 0.5), (0.5, 0.5), n=1000)  # scipy loaded before the timed calls
    seen = walk(full=timer_mode == "alarm")  # the worker walk: only the answers that are code
    counts = Counter(outcome for _, outcome, _ in seen)
    summary = ", ".join(f"{k} {counts[k]}" for k in sorted(counts))
    print(f"\nexercises walk ({timer_mode}): {len(seen)} probes, {summary}")
    bad = [
        f"{outcome}: {label}: {detail}" for label, outcome, detail in seen if outcome in ("OBSCURE", "SILENT", "HANG")
    ]
    assert not bad, "\n".join(bad[:40])
    assert counts["OK"] > 300  # the walk walked


def test_the_judges_can_fail(monkeypatch):
    """Self-test: each judge reports the outcomes it exists for."""
    assert judge_check(lambda: exercises.Feedback(True, "ok"), False)[0] == "SILENT"
    assert judge_check(lambda: exercises.Feedback(False, "no"), True)[0] == "OBSCURE"
    assert judge_check(lambda: 1 / 0, False)[0] == "OBSCURE"
    assert judge_check(lambda: "✘ Not yet", False)[0] == "OBSCURE"
    monkeypatch.setattr(sys.modules[__name__], "MARGIN_S", 0.01 - BUDGET_S)
    assert judge_check(lambda: time.sleep(0.05), False)[0] == "HANG"
    monkeypatch.undo()
    assert judge_argument(lambda: [], "notebook", True)[0] == "SILENT"
    assert judge_argument(lambda: [1], "notebook", False)[0] == "SILENT"
    assert judge_argument(raises(TypeError("unsupported operand")), "k", False)[0] == "OBSCURE"
    assert judge_argument(raises(ValueError("k=0 is out of range")), "k", False)[0] == "GOOD_ERROR"
