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
thread), and once more in a child process (`budget.MODE = "process"`, the default on Linux).

Issue 35 adds what only a child process stops (learner code that catches BaseException in a loop,
disarms or ignores SIGALRM, spends minutes in one C call, calls os._exit, or answers with a number
whose __float__ or __repr__ loops), learner code that replaces what the grade uses (np.allclose, the
audit's own tests), a kernel killed with kill -9 during a check, and `audit`'s knobs (`efficiency`,
`joint` as real bools, drafts of the wrong length refused, not skipped).
"""

from __future__ import annotations

import builtins
import contextlib
import json
import math
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from decimal import Decimal
from fractions import Fraction
from unittest import mock

import numpy as np
import pytest

import specviz as sv
from specviz import exercises
from specviz.exercises import budget, core
from specviz.foundation import child_process
from specviz.foundation.i18n import set_language

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


def use_mode(monkeypatch, mode: str) -> None:
    """Run the learner's code `mode` ("process" or "inline"); a child process is tried on Linux only, its default."""
    if mode == "process" and not sys.platform.startswith("linux"):
        pytest.skip("the child process mode is the default on Linux only (forking is unsafe on macOS)")
    monkeypatch.setattr(budget, "MODE", mode)


def use_package_budgets(monkeypatch) -> None:
    """Give back the package's own time budgets (seconds) for a test whose child processes end at once."""
    for name, seconds in DEFAULT_BUDGETS.items():
        monkeypatch.setattr(core, name, seconds, raising=False)


@pytest.fixture
def short_budget(monkeypatch):
    """The walk's time budget for the learner's code, and English messages."""
    monkeypatch.setattr(core, "FUNCTION_BUDGET_S", BUDGET_S, raising=False)
    monkeypatch.setattr(core, "VERIFIER_BUDGET_S", BUDGET_S, raising=False)
    set_language("en")
    yield
    exercises.reset_hints()


@pytest.fixture(params=["alarm", "worker", "process"])
def timer_mode(request, monkeypatch):
    """Walk as in a notebook (no real-time timer armed: `check` uses its alarm), with one armed (its worker thread),
    and with the learner's code in a child process (`budget.MODE = "process"`, the default on Linux).

    pytest-timeout arms one for every test; for the "alarm" walk it is paused, and re-armed afterwards.
    """
    use_mode(monkeypatch, "process" if request.param == "process" else "inline")
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
    seen = walk(full=timer_mode == "alarm")  # the worker and process walks: only the answers that are code
    if timer_mode == "process":  # and the answers a child process reads (objects, tensors) for one number exercise
        ex = next(ex for ex in ALL if ex.kind == "number")
        seen += [probe_check(ex.id, label, answer, False) for label, answer in hostile_answers()]
        seen += [probe_check(ex.id, f"right: {label}", answer, True) for label, answer in right_answers(ex)]
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


# ------------------------------------------------------------------------- learner code that fights the time limit (issue 35)


def fighters() -> list[tuple[str, object]]:
    """(label, function): learner code that no budget inside the kernel can stop; a child process is killed."""

    def catches_base_exception(*args):
        while True:
            try:
                time.sleep(60)
            except BaseException:  # noqa: BLE001, S110 - the point: code that swallows even OverBudget
                pass

    def disarms_the_alarm(*args):
        signal.setitimer(signal.ITIMER_REAL, 0)
        while True:
            pass

    def ignores_the_alarm(*args):
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
        while True:
            pass

    def one_long_c_call(*args):
        return sum(range(10**11))  # minutes in one C call: no signal handler runs until it returns

    return [
        ("catches BaseException in a loop", catches_base_exception),
        ("disarms SIGALRM", disarms_the_alarm),
        ("ignores SIGALRM", ignores_the_alarm),
        ("sum(range(10**11))", one_long_c_call),
    ]


class LoopingFloat(float):
    """A number whose __float__ never returns."""

    def __float__(self):
        while True:
            pass


class LoopingRepr:
    """An answer whose __repr__ never returns, and swallows even the alarm that would stop it inline."""

    def __repr__(self):
        while True:
            try:
                time.sleep(60)
            except BaseException:  # noqa: BLE001, S110 - the point: code that swallows even OverBudget
                pass


class LoopingShape:
    """An answer whose `shape` never returns (what `check` reads first of a 0-d array or a tensor)."""

    @property
    def shape(self):
        while True:
            pass


@pytest.fixture
def process_mode(monkeypatch, short_budget):
    """The learner's code in a child process (the default on Linux), with the walk's short budget."""
    use_mode(monkeypatch, "process")


def state_of_this_process() -> tuple:
    """What learner code could leave behind here: the SIGALRM handler, whether a timer is armed, child processes."""
    import multiprocessing

    armed = signal.getitimer(signal.ITIMER_REAL)[0] > 0
    return signal.getsignal(signal.SIGALRM), armed, [c.pid for c in multiprocessing.active_children()]


@pytest.mark.slow
@pytest.mark.parametrize("id", ["3.3", "10.3"], ids=["function", "verifier"])
def test_code_that_fights_the_time_limit_is_ended_in_a_child_process(process_mode, id):
    """Each fighter, which hangs the kernel inline, is refused within the budget, saying where it ran."""
    before = state_of_this_process()
    for label, f in fighters():
        feedback, error, seconds = timed(lambda f=f: exercises.check(id, f))
        assert error is None and seconds < BUDGET_S + MARGIN_S, f"{label}: {error!r} after {seconds:.1f} s"
        assert not feedback.passed and f"took longer than {BUDGET_S:g} s" in feedback.message, label
        assert "It ran in a separate process, which was ended." in feedback.message, feedback.message
        assert state_of_this_process() == before, label


@pytest.mark.slow
def test_code_that_ends_or_kills_its_process_is_told_so(process_mode, monkeypatch):
    def exits(*args):
        os._exit(3)

    def kills_itself(*args):
        os.kill(os.getpid(), signal.SIGKILL)

    # a fresh-clone CI run (2026-12-07, slow lane beside test-floor on 2 cores) saw the fork take longer than the
    # walk's 0.5 s to start, and reported a timeout instead of the exit code
    use_package_budgets(monkeypatch)
    before = state_of_this_process()
    for id in ("3.3", "10.3"):
        assert "ended without an answer (exit code 3)" in exercises.check(id, exits).message
        assert "ended without an answer (exit code -9)" in exercises.check(id, kills_itself).message
    assert state_of_this_process() == before


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["process", "inline"])
def test_an_answer_whose_float_or_repr_loops_is_read_within_the_budget(short_budget, monkeypatch, mode):
    """A number exercise's answer, or a function exercise's non-function answer, that loops when it is read."""
    use_mode(monkeypatch, mode)
    answers = [("__float__ loops", LoopingFloat(0.3)), ("shape loops", LoopingShape())]
    if mode == "process":  # inline, a __repr__ that swallows the alarm in a loop hangs: only a child is killed
        answers.append(("__repr__ loops and swallows BaseException", LoopingRepr()))
    cases = [(id, a) for id in ("1.1", "3.3") for a in answers if id == "1.1" or a[0] != "shape loops"]  # fmt: no shape
    for id, (label, answer) in cases:
        outcome, detail = judge_check(lambda id=id, answer=answer: exercises.check(id, answer), False)
        assert outcome == "OK" and "reading your answer took longer than 0.5 s" in detail, f"{id} {label}: {detail}"


def forging(reply, times: int = 1, then_exit: bool = True):
    """A learner function that finds the child process's pipe and sends `reply` (bytes) itself, `times` times."""

    def f(*args):
        import gc
        from multiprocessing.connection import Connection

        pipe = next(o for o in gc.get_objects() if isinstance(o, Connection) and not o.closed and o.writable)
        for _ in range(times):
            pipe.send_bytes(reply)
        if then_exit:
            os._exit(0)
        return np.zeros(len(args[0]))

    return f


class RunsCode:
    """Unpickled, it would call os.getpid: the parent must never build it."""

    def __reduce__(self):
        return os.getpid, ()


@pytest.mark.slow
def test_a_child_process_that_forges_its_replies_gets_no_pass(process_mode, monkeypatch):
    """What the child sends is read as plain data only, one reply a task after "ready": forging gets no "Correct."."""
    import pickle

    # No forger here waits: each ends at once. The walk's 0.5 s is too short for the search of the child's heap
    # (gc.get_objects with torch loaded) on a busy machine (seen: "took longer than 0.5 s" beside the floor lane).
    use_package_budgets(monkeypatch)

    forged = [
        ("'ready' for every case", forging(pickle.dumps(("ready",)), times=50)),
        ("a pickle that runs code", forging(pickle.dumps(("ok", RunsCode())))),
        ("garbage", forging(b"\x80\x04garbage")),
        ("an answer of another form", forging(pickle.dumps(("ok", ("(0.2, 0, 0)", (3,)))))),
        ("a reply too many", forging(pickle.dumps(("ok", None)), times=2, then_exit=False)),
    ]
    for label, f in forged:
        feedback = exercises.check("3.3", f)
        assert not feedback.passed, f"{label}: {feedback.message}"
    short = (np.zeros(5, dtype=np.int64), np.zeros(7, dtype=np.int64))  # drafts and tokens of the wrong lengths
    feedback = exercises.check("10.3", forging(child_process.encode(("ok", short))))  # in the form the parent reads
    assert not feedback.passed and "not an array of token ids" in feedback.message, feedback.message
    feedback = exercises.check("10.3", forging(pickle.dumps(("ok", short))))  # numpy's own pickles: never built
    assert not feedback.passed and "ended without an answer" in feedback.message, feedback.message


def patching(*targets, returns):
    """A learner function that replaces each (owner, name) of `targets` with a yes-man, then returns `returns(...)`."""

    def yes(name):
        return lambda *a, **k: (0.0, 1.0, 1) if name == "_pooled_chisquare" else True

    def f(*args):
        for owner, name in targets:
            setattr(owner, name, yes(name))
        return returns(*args)

    return f


def cheats():
    """(label, exercise id, a wrong answer that replaces what the grade uses, the name the refusal gives inline)."""
    audit_module = sys.modules["specviz.samplers.audit"]  # the module (specviz.audit is the function)

    zeros = lambda p, q: np.zeros(len(p))  # noqa: E731 - 3.3's residual is not all zeros
    off_by_one = lambda p, q, n, rng: sv.BUGGY_VERIFIERS["off_by_one"](p, q, n, rng, with_drafts=True)  # noqa: E731
    return [
        (
            "np.allclose, np.isclose",
            "3.3",
            patching((np, "allclose"), (np, "isclose"), returns=zeros),
            "numpy.allclose",
        ),
        ("builtins.abs, .all", "3.3", patching((builtins, "abs"), (builtins, "all"), returns=zeros), "builtins.all"),
        ("the grader itself", "3.3", patching((core, "grade_case"), returns=zeros), "core.grade_case"),
        ("the audit's test", "10.3", patching((audit_module, "_pooled_chisquare"), returns=off_by_one), "_pooled_chi"),
        ("audit", "10.3", patching((audit_module, "audit"), (core, "audit"), returns=off_by_one), "core.audit"),
    ]


class SlyFloat(float):
    """A wrong number whose __float__ makes every difference look small."""

    def __float__(self):
        builtins.abs = lambda x: 0.0
        math_module = sys.modules["math"]
        math_module.isfinite = lambda x: True
        return 0.123


WATCHED_HERE = [(np, "allclose"), (np, "isclose"), (builtins, "abs"), (builtins, "all"), (core, "grade_case")]


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["process", "inline"])
def test_code_that_replaces_what_the_grade_uses_changes_no_grade(short_budget, monkeypatch, mode):
    """Inline, what it replaced is put back and the check refused, naming it; in a child process it reaches nothing."""
    audit_module = sys.modules["specviz.samplers.audit"]  # the module (specviz.audit is the function)

    use_mode(monkeypatch, mode)
    originals = [getattr(owner, name) for owner, name in WATCHED_HERE] + [audit_module._pooled_chisquare, core.audit]
    for label, id, f, named in [*cheats(), ("__float__ replaces abs", "1.1", SlyFloat(0.9), "builtins.abs")]:
        with mock.patch.multiple(core, **DEFAULT_BUDGETS):  # a full audit may take seconds
            feedback = exercises.check(id, f)
        now = [getattr(owner, name) for owner, name in WATCHED_HERE] + [audit_module._pooled_chisquare, core.audit]
        assert all(a is b for a, b in zip(now, originals)), f"{label}: left replaced"
        assert not feedback.passed, f"{label}: accepted"
        assert (named in feedback.message) == (mode == "inline"), f"{label}: {feedback.message}"


@pytest.mark.parametrize("mode", ["process", "inline"])
def test_np_allclose_replaced_in_the_notebook_changes_no_grade(monkeypatch, mode):
    """The comparison uses ufuncs taken at import: a notebook that replaced np.allclose and np.isclose gets no pass."""
    use_mode(monkeypatch, mode)
    monkeypatch.setattr(np, "allclose", lambda *a, **k: True)
    monkeypatch.setattr(np, "isclose", lambda *a, **k: np.array(True))
    feedback = exercises.check("3.3", lambda p, q: np.zeros(len(p)))
    assert not feedback.passed and "expected (0.2, 0, 0)" in feedback.message, feedback.message


def test_the_mode_is_named_checked_and_a_child_process_on_linux(monkeypatch):
    if sys.platform.startswith("linux"):
        assert budget.mode_in_use() == budget.mode_in_use("auto") == "process"
    sol = exercises.run_solution("3.3")
    for mode in ("process", "inline", "auto", None)[0 if sys.platform.startswith("linux") else 1 :]:
        assert exercises.get("3.3").grade(sol, mode).passed, mode
    for bad in ("fast", "", "PROCESS", 1, True):
        with pytest.raises(ValueError, match="mode must be one of 'auto', 'process', 'inline', got"):
            exercises.get("3.3").grade(sol, bad)
    monkeypatch.setattr(budget, "MODE", "sandbox")
    with pytest.raises(ValueError, match="got 'sandbox'"):
        exercises.check("3.3", sol)


KERNEL = """
import os, sys, time
from specviz import exercises
from specviz.foundation import child_process
from specviz.exercises import budget, core
budget.MODE, core.FUNCTION_BUDGET_S = "process", 600.0
def spins(p, q):
    while True:
        pass
print(os.getpid(), flush=True)
exercises.check("3.3", spins)
"""


def children_of(pid: int) -> list[int]:
    """The pids of the live processes whose parent is `pid` (from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if entry.isdigit() and int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(entry))
    return found


def alive(pid: int) -> bool:
    """Whether process `pid` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the child process mode is Linux's default")
def test_a_kernel_killed_during_a_check_takes_its_child_process_with_it():
    """kill -9 of the kernel while the learner's code spins in the child: the child ends too, never an orphan."""
    kernel = subprocess.Popen([sys.executable, "-c", textwrap.dedent(KERNEL)], stdout=subprocess.PIPE, text=True)
    try:
        pid = int(kernel.stdout.readline())
        deadline = time.monotonic() + 60
        while not (spinning := children_of(pid)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert spinning, "no child process started"
        time.sleep(0.3)  # the child is past its start, running the learner's loop
        kernel.send_signal(signal.SIGKILL)
        kernel.wait(10)
        deadline = time.monotonic() + 10
        while any(alive(c) for c in spinning) and time.monotonic() < deadline:
            time.sleep(0.05)
        orphans = [c for c in spinning if alive(c)]
        for c in orphans:
            os.kill(c, signal.SIGKILL)
        assert not orphans, f"the child process {orphans} outlived its killed kernel"
    finally:
        kernel.kill()


# ---------------------------------------------------------------------------------------- audit's knobs (issue 35)


P, Q = sv.TUTORIAL_P, sv.TUTORIAL_Q


def with_drafts(p, q, n, rng):
    """The correct verifier, with its drafts."""
    return sv.correct_verifier(p, q, n, rng, with_drafts=True)


@pytest.mark.parametrize(
    "kwargs,says",
    [
        ({"efficiency": "yes"}, "efficiency must be True, False or None"),
        ({"efficiency": "no"}, "efficiency must be True, False or None"),
        ({"efficiency": 1}, "efficiency must be True, False or None"),
        ({"efficiency": 0.0}, "efficiency must be True, False or None"),
        ({"joint": "no"}, "joint must be True or False, got 'no'"),
        ({"joint": None}, "joint must be True or False, got None"),
        ({"joint": 1}, "joint must be True or False, got 1"),
    ],
)
def test_audit_takes_real_bools_only(kwargs, says):
    with pytest.raises(TypeError, match=says):
        sv.audit(with_drafts, P, Q, n=1000, **kwargs)


def test_audit_takes_numpy_bools_as_bools():
    assert sv.audit(with_drafts, P, Q, n=2000, efficiency=np.False_).efficient is None  # skipped, as False says
    report = sv.audit(with_drafts, P, Q, n=2000, efficiency=np.True_, joint=np.True_)
    assert report.efficient is True and report.joint_ok is True


def cut_drafts(kind: str):
    """A correct verifier whose drafts (or tokens) come one short, in the form `kind`."""
    from dataclasses import replace

    def f(p, q, n, rng):
        drafts, tokens = with_drafts(p, q, n, rng)
        if kind == "object":
            return type("Out", (), {"tokens": tokens, "drafts": drafts[:-1]})()
        if kind == "SpecSample":
            return replace(sv.spec_sample(p, q, n, seed=0), drafts=drafts[:-1])
        return (drafts[:-1], tokens) if kind == "pair, drafts short" else [drafts, tokens[:-1]]

    return f


@pytest.mark.parametrize("kind", ["object", "SpecSample", "pair, drafts short", "list, tokens short"])
def test_drafts_of_the_wrong_length_are_refused_not_skipped(kind):
    """Before: an object's .drafts of the wrong length passed, with the efficiency check skipped."""
    with pytest.raises(ValueError, match=r"n = 2000 (drafts|ids)"):
        sv.audit(cut_drafts(kind), P, Q, n=2000)
    feedback = exercises.check("10.3", cut_drafts(kind))
    assert not feedback.passed and "n = 100000" in feedback.message, feedback.message


def test_audit_refuses_what_a_function_sampler_would_ignore():
    with pytest.raises(TypeError, match="l: options of a rule name; a function sampler"):
        sv.audit(sv.correct_verifier, P, Q, n=1000, l=0.9)
    with pytest.raises(ValueError, match="joint=True needs the drafts"):
        sv.audit(sv.correct_verifier, P, Q, n=1000, joint=True)
    assert sv.audit("lossless", P, Q, n=2000, joint=True).joint_ok is True  # a rule name shows its drafts for it


# ------------------------------------------------------------------ sv.audit called directly (gap a of issue 35)


AUDIT_FIGHTERS = """
import json, signal, sys, time
import specviz as sv
from test_hostile_exercises import fighters
out = []
for label, f in fighters():
    start = time.monotonic()
    try:
        sv.audit(f, sv.TUTORIAL_P, sv.TUTORIAL_Q, n=1000, time_limit=float(sys.argv[1]), mode="process")
        error = None
    except Exception as e:
        error = f"{type(e).__name__}: {e}"
    out.append((label, error, time.monotonic() - start))
print(json.dumps(out))
"""


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the child process is the default on Linux only")
def test_audit_ends_code_that_fights_the_time_limit_in_a_child_process():
    """`sv.audit(sampler, ...)` called directly ran the learner's sampler with no limit at all: each fighter hung the
    kernel. With mode="process" it runs in a child process ended at `time_limit`, and the TimeoutError says so.
    Run as a notebook would, in a process of its own (a fighter that is not ended is a HANG, not a stuck suite)."""
    tests = os.path.dirname(os.path.abspath(__file__))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [tests, os.environ.get("PYTHONPATH")]))}
    try:
        done = subprocess.run(
            [sys.executable, "-c", AUDIT_FIGHTERS, str(BUDGET_S)], env=env, capture_output=True, text=True, timeout=120
        )
    except subprocess.TimeoutExpired:
        pytest.fail("HANG: a sampler that fights the time limit was not ended")
    assert done.returncode == 0, done.stderr[-2000:]
    outcomes = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(outcomes) == 4
    for label, error, seconds in outcomes:
        said = f"TimeoutError: the sampler took longer than {BUDGET_S:g} s; it ran in a child process, ended at the "
        said += "limit (time_limit=None runs it without a limit)"
        assert error == said and seconds < BUDGET_S + MARGIN_S, f"{label}: {error!r} after {seconds:.1f} s"


def raises_here(kind):
    """A sampler that raises `kind` with the id of the process it ran in."""

    def f(p, q, n, rng):
        raise kind(f"pid {os.getpid()}")

    return f


@pytest.mark.slow
def test_audit_says_where_the_sampler_ran_and_passes_its_errors_on():
    """Its own errors keep their type (a built-in one) and say where they were raised; a child that dies, a sampler
    that exits, a bad `mode` or `time_limit`, and the in-process modes each end in one clear error."""
    here = f"pid {os.getpid()}"
    with pytest.raises(
        ValueError, match=r"pid \d+ \(the sampler raised it at test_hostile_exercises.py:\d+, in a child"
    ):
        sv.audit(raises_here(ValueError), P, Q, n=1000, mode="process")
    with pytest.raises(ValueError, match=f"^{here}$"):  # inline and time_limit=None: here, the error as it is
        sv.audit(raises_here(ValueError), P, Q, n=1000, mode="inline")
    with pytest.raises(ValueError, match=f"^{here}$"):
        sv.audit(raises_here(ValueError), P, Q, n=1000, time_limit=None)
    seen = []  # the default runs here, under its time limit: a verifier's own state (counters, stats) stays the caller's
    sv.audit(lambda p, q, n, rng: seen.append(os.getpid()) or rng.choice(len(p), n, p=p), P, Q, n=1000)
    assert seen == [os.getpid()]
    with pytest.raises(RuntimeError, match=r"the sampler raised KeyError: .*pid"):
        sv.audit(raises_here(KeyError), P, Q, n=1000, mode="process")
    with pytest.raises(RuntimeError, match=r"the sampler raised SystemExit: 4"):
        sv.audit(lambda *a: sys.exit(4), P, Q, n=1000, mode="process")
    with pytest.raises(RuntimeError, match=r"ended the child process it ran in without an answer \(exit code 3"):
        sv.audit(lambda *a: os._exit(3), P, Q, n=1000, mode="process")
    with pytest.raises(TimeoutError, match=r"took longer than 0.3 s; it ran in (this process|a worker thread)"):
        sv.audit(lambda *a: time.sleep(3), P, Q, n=1000, mode="inline", time_limit=0.3)
    for kwargs, error, says in [
        ({"mode": "sandbox"}, ValueError, "mode must be one of 'auto', 'process', 'inline', got 'sandbox'"),
        ({"time_limit": 0}, ValueError, r"time_limit \(seconds, or None\) must be > 0"),
        ({"time_limit": "5"}, TypeError, r"time_limit \(seconds, or None\) must be a number"),
        ({"time_limit": math.inf}, ValueError, r"time_limit \(seconds, or None\) must be a finite number"),
    ]:
        with pytest.raises(error, match=says):
            sv.audit("lossless", P, Q, n=1000, **kwargs)  # checked even where no learner code runs
    report = sv.audit(with_drafts, P, Q, n=2000, mode="process")
    assert report.passed and report.efficient, report
