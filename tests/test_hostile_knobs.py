"""Hostile walk (issue 35) of the knobs set in code or in the environment, each checked where it is given.

* every setting of `AutoGamma(...)`, the arguments of a chooser's `choose` / `observe`, and the
  choosers the engine is given (`max_gamma`, `label`, a missing `choose`);
* $SPECVIZ_LANG (any usual spelling of Chinese is Chinese; anything else is English, said once)
  and $SPECVIZ_DEFER_PNG (honoured only in the book build's folder);
* `figure_png` when Chromium cannot start: a stale BROWSER_PATH, BROWSER_PATH=/bin/true, a 4 GiB
  address-space cap, a browser that never answers. Bounded, None with the reason, no traceback;
  and the lecturer's `export_figure` in the same cases: the file, or a bounded error naming the cause.

Outcomes as in tests/test_hostile_apps.py: OK (the value works and is what was asked for), GOOD_ERROR
(a ValueError or TypeError naming the setting and, for a number out of range, its whole range),
OBSCURE (any other error, or one naming neither), SILENT (a bad value taken) or HANG (no answer in
CALL_TIMEOUT_S). `pytest -s` prints the counts.
"""

from __future__ import annotations

import collections
import copy
import json
import math
import os
import shutil
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from test_hostile_apps import run_with_timeout  # fn() in a thread for at most CALL_TIMEOUT_S (10 s)

from specviz.figures import export as EX
from specviz.figures import static as S
from specviz.foundation import i18n
from specviz.foundation.checks import MAX_GAMMA
from specviz.lm.gamma.adaptive import AutoGamma, FixedGamma, GammaChooser, as_chooser

torch = pytest.importorskip("torch")
lm = pytest.importorskip("specviz.lm")

CALL_TIMEOUT_S = 10
TOY = lm.Pair(lm.NGramModel.random(4, seed=0, name="target"), lm.NGramModel.random(4, seed=1, name="draft"))
INT_BAD = [-1, 10**6, 10**400, -(10**400), 2.5, math.nan, math.inf, "3", None, True, [], np.array([1, 2])]
REAL_BAD = [-1.0, 1e9, math.nan, math.inf, -math.inf, "0.5", None, True, [], np.array([0.5, 0.5]), 10**400]


# -------------------------------------------------------------------------------- classification


def classify(fn, names, post, must_work=False, span=None) -> tuple[str, str]:
    """OK, GOOD_ERROR, OBSCURE, SILENT or HANG, and a detail; a ValueError must also show `span` (the range)."""
    value, error, hung = run_with_timeout(fn)
    if hung:
        return "HANG", f"no answer in {CALL_TIMEOUT_S} s"
    if error is not None:
        text = f"{type(error).__name__}: {error}"
        named = isinstance(error, (ValueError, TypeError)) and any(n in str(error) for n in names)
        ranged = span is None or not isinstance(error, ValueError) or span in str(error)
        return ("GOOD_ERROR" if named and ranged and not must_work else "OBSCURE"), text
    if not must_work:
        return "SILENT", f"taken: returned {value!r}"[:200]
    try:
        ok = bool(post(value))
    except Exception as e:  # noqa: BLE001
        return "SILENT", f"postcondition raised {type(e).__name__}: {e}"
    return ("OK", "") if ok else ("SILENT", f"returned {value!r}"[:200])


def short(v) -> str:
    return repr(v)[:40]


def record(table, bad, surface, call, outcome, detail):
    table[surface][outcome] += 1
    if outcome not in ("OK", "GOOD_ERROR"):
        bad.append(f"{outcome:8} {surface}({call}): {detail[:200]}")


def report(table, bad):
    outcomes = ("OK", "GOOD_ERROR", "OBSCURE", "SILENT", "HANG")
    print("\nsurface".ljust(31) + "".join(o.rjust(11) for o in outcomes))
    for surface in sorted(table):
        print(surface.ljust(30) + "".join(str(table[surface][o]).rjust(11) for o in outcomes))
    assert not bad, "\n".join(bad)


def zero_d(good):
    """A 0-d numpy array and a 0-d tensor of a good number (they must work)."""
    return [np.array(good), torch.tensor(good)]


# -------------------------------------------------------------------------------- AutoGamma's settings

# setting -> (good value, whole number?, lo, hi, lo open?, the range as the error must show it)
SETTINGS = {
    "max_gamma": (64, True, 1, MAX_GAMMA, False, "1..1000"),
    "max_model_gamma": (16, True, 1, MAX_GAMMA, False, "1..1000"),
    "probe_max": (4, True, 1, MAX_GAMMA, False, "1..1000"),
    "probe_agreement": (3, True, 0, MAX_GAMMA, False, "0..1000"),
    "first_agreement": (2, True, 0, MAX_GAMMA, False, "0..1000"),
    "probe_after": (4, True, 1, 256, False, "1..256"),
    "explore_every": (8, True, 1, 64, False, "1..64"),
    "prior_slope": (0.05, False, 0, 100, False, "[0, 100]"),
    "shrink": (4.0, False, 0, 1000, False, "[0, 1000]"),
    "hysteresis": (0.03, False, 0, 1, False, "[0, 1]"),
    "draft_margin": (0.3, False, 0, 100, False, "[0, 100]"),
    "growth": (4.0, False, 0, 1000, False, "[0, 1000]"),
    "prior_acceptance": (0.6, False, 0, 1, False, "[0, 1]"),
    "prior_agreement": (3.0, False, 0, 1000, True, "(0, 1000]"),
    "agreement_weight": (2.0, False, 0, 1000, True, "(0, 1000]"),
    "prior_weight": (4.0, False, 0, 1000, True, "(0, 1000]"),
}
OTHER_BAD = {
    "name": [7, None, "", "  ", "4", b"auto", ["auto"]],
    "remember": ["no", 1, None, 0.0, [True]],
}
OTHER_FINE = {"name": ["my rule", "auto-2"], "remember": [True, False, np.bool_(True)]}


def setting_cases():
    """(setting, value, must_work, the range an error must show) for every AutoGamma setting."""
    for key, (good, whole, lo, hi, lo_open, span) in SETTINGS.items():
        bad = list(INT_BAD if whole else REAL_BAD)
        bad += [lo - 1, hi + 1] if whole else [lo - 0.5, hi * 2 + 1]
        bad += [lo] if lo_open else []
        for v in bad:
            yield key, v, False, span
        fine = [hi, good] + ([] if lo_open else [lo]) + zero_d(good)
        fine += [np.int64(good)] if whole else [np.float64(good), np.float32(good)]
        fine += [float(good)] if whole else []
        for v in fine:
            yield key, v, True, None
    for key, values in OTHER_BAD.items():
        for v in values:
            yield key, v, False, None
    for key, values in OTHER_FINE.items():
        for v in values:
            yield key, v, True, None


def drives(a: AutoGamma) -> bool:
    """A chooser works: after some plain and drafting steps (a model draft, then a lookup) it picks a γ in range."""
    look = copy.deepcopy(a)
    for _ in range(3):
        a.observe(0, 0, 0.0, 0.010)
    for i in range(12):
        g = a.choose(10)
        if not (isinstance(g, int) and 0 <= g <= 10):
            return False
        a.observe(max(g, 1), min(i % 3, max(g, 1)), 0.004, 0.013)
    look.observe(0, 0, 0.0, 0.010)
    for i in range(12):
        g = look.choose(50, run=list(range(30)), match=3 + i)
        if not (isinstance(g, int) and 0 <= g <= 30):
            return False
        look.observe(max(g, 1), min(2, max(g, 1)), 0.0001, 0.014, match=3 + i)
    return True


def holds(a: AutoGamma, key, value) -> bool:
    """The chooser holds exactly the value asked for (as a plain number), and works."""
    plain = value.item() if hasattr(value, "item") else value
    got = getattr(a, key)
    return got == plain and type(got) in (int, float, bool, str) and drives(a)


def walk_settings(table, bad):
    for key, value, must_work, span in setting_cases():
        outcome, detail = classify(
            lambda key=key, value=value: AutoGamma(**{key: value}),
            [key],
            lambda a, key=key, value=value: holds(a, key, value),
            must_work,
            span,
        )
        record(table, bad, "AutoGamma", f"{key}={short(value)}", outcome, detail)
    for key in ("verify", "line", "mode", "longest"):  # what a run measures is no argument
        outcome, detail = classify(lambda key=key: AutoGamma(**{key: 1}), [key], None)
        record(table, bad, "AutoGamma", f"{key}=1", outcome, detail)


# -------------------------------------------------------------------------------- choose() and observe()

STEP_GOOD = {
    "choose": dict(room=10, run=None, match=None),
    "choose(lookup)": dict(room=10, run=[1, 2, 3, 4], match=3),
    "observe": dict(gamma=4, accepted=2, draft_s=0.004, verify_s=0.013, match=None),
}
STEP_BAD = {
    "room": [-1, 2.5, math.nan, math.inf, "3", None, True, np.array([1, 2]), -(10**400)],
    "match": [-1, 2.5, "2", True, math.nan],
    "gamma": [-1, 2.5, math.nan, "2", None, True, MAX_GAMMA + 1, 10**400],
    "accepted": [-1, 5, 2.5, None, "1", True],
    "draft_s": [-0.1, math.nan, math.inf, "0.1", None, True],
    "verify_s": [-0.1, math.nan, math.inf, "0.1", None, True],
}
STEP_FINE = {
    "room": [0, 10**6, np.int64(5), 5.0],
    "match": [0, np.int64(3)],
    "gamma": [2, np.int64(4), MAX_GAMMA],
    "accepted": [0, 4, np.int64(1)],
    "draft_s": [0, 0.0, np.float32(0.004), 1e6],
    "verify_s": [0.0, np.float64(0.013), 3],
}


def primed() -> AutoGamma:
    """An AutoGamma that has measured enough to choose by its cost model."""
    a = AutoGamma()
    for _ in range(3):
        a.observe(0, 0, 0.0, 0.010)
    for _ in range(6):
        a.observe(4, 2, 0.004, 0.013)
    return a


def step_ok(method, kw, before, after) -> bool:
    """choose: a whole number 0..room (and no more than the run); observe: the step was counted."""
    if method.startswith("choose"):
        room = int(kw["room"])
        top = room if kw["run"] is None else min(room, len(kw["run"]))
        return isinstance(after, int) and 0 <= after <= top
    return after is None and sum(m.n for m in before.verify.values()) == 10


def walk_steps(table, bad):
    for method, good in STEP_GOOD.items():
        name = method.split("(")[0]
        for key in good:
            for value, must_work in [(v, False) for v in STEP_BAD.get(key, [])] + [
                (v, True) for v in STEP_FINE.get(key, [])
            ]:
                a = primed()
                kw = {**good, key: value}
                outcome, detail = classify(
                    lambda a=a, kw=kw, name=name: getattr(a, name)(**kw),
                    [key],
                    lambda out, a=a, kw=kw, method=method: step_ok(method, kw, a, out),
                    must_work,
                )
                record(table, bad, f"AutoGamma.{method}", f"{key}={short(value)}", outcome, detail)
    for value, must_work in [(2.5, False), (-1, False), ("3", False), (3, True), (np.int64(3), True)]:
        outcome, detail = classify(
            lambda value=value: FixedGamma(4).choose(value), ["room"], lambda g: g == 3, must_work
        )
        record(table, bad, "FixedGamma.choose", f"room={short(value)}", outcome, detail)


# -------------------------------------------------------------------------------- the choosers the engine is given


class Rule(GammaChooser):
    """A chooser of a learner's own: two drafts a step; max_gamma / name / label set per case."""

    def __init__(self, **attrs):
        for k, v in attrs.items():
            setattr(self, k, v)

    def choose(self, room, run=None, match=None):
        return min(2, room)


class Labelled(Rule):
    def __init__(self, label):
        self._label = label

    @property
    def label(self):
        return self._label


class NoChoose(GammaChooser):
    pass


class Duck:
    """choose and observe, but no GammaChooser."""

    def choose(self, room, run=None, match=None):
        return 1

    def observe(self, *args, **kwargs):
        pass


CHOOSERS_BAD = [  # (what, chooser, a word the error must name)
    *[(f"max_gamma={short(v)}", Rule(max_gamma=v), "max_gamma") for v in [-5, 2.5, math.nan, "3", None, 10**400, 1001]],
    *[(f"name={short(v)}", Rule(name=v), "label") for v in [123, "", "4", None, 1.5]],
    *[(f"label={short(v)}", Labelled(v), "label") for v in [123, np.int64(4), "", " 7 ", None]],
    ("no choose()", NoChoose(), "choose"),
    ("a duck", Duck(), "GammaChooser"),
    ("FixedGamma whose gamma became -1", FixedGamma(3), "label"),
]
CHOOSERS_BAD[-1][1].gamma = -1
CHOOSERS_FINE = [  # (what, chooser, the γ setting the result must record)
    ("max_gamma=0", Rule(max_gamma=0), "chooser"),
    ("max_gamma=1000", Rule(max_gamma=1000), "chooser"),
    ("name='my rule'", Rule(name="my rule"), "my rule"),
    ("label='peek-free'", Labelled("peek-free"), "peek-free"),
    ("FixedGamma(3)", FixedGamma(3), 3),
    ("AutoGamma(name='mine')", AutoGamma(name="mine"), "mine"),
]


def walk_choosers(table, bad):
    for what, chooser, word in CHOOSERS_BAD:
        outcome, detail = classify(lambda c=chooser: lm.speculative_generate(TOY, [0], 6, c, seed=0), [word], None)
        record(table, bad, "engine(gamma=chooser)", what, outcome, detail)
    for what, chooser, label in CHOOSERS_FINE:
        outcome, detail = classify(
            lambda c=chooser: lm.speculative_generate(TOY, [0], 6, c, seed=0),
            [],
            lambda r, label=label: len(r.new_ids) == 6 and r.gamma == label and type(r.gamma) is type(label),
            must_work=True,
        )
        record(table, bad, "engine(gamma=chooser)", what, outcome, detail)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_hostile_walk_of_autogamma_and_the_choosers_the_engine_is_given():
    table, bad = collections.defaultdict(collections.Counter), []
    walk_settings(table, bad)
    walk_steps(table, bad)
    walk_choosers(table, bad)
    report(table, bad)


def test_the_cases_of_the_issue_name_their_setting_and_range():
    """The issue's own cases, word for word (the walk above holds the rest)."""
    for kw, words in [
        (dict(explore_every=0), ["explore_every", "1..64"]),
        (dict(growth=math.nan), ["growth", "[0, 1000]"]),
        (dict(prior_slope=-1), ["prior_slope", "[0, 100]"]),
        (dict(prior_acceptance=2), ["prior_acceptance", "[0, 1]"]),
        (dict(hysteresis=math.nan), ["hysteresis", "[0, 1]"]),
        (dict(draft_margin=-5), ["draft_margin", "[0, 100]"]),
        (dict(probe_after=0), ["probe_after", "1..256"]),
        (dict(prior_weight=0), ["prior_weight", "(0, 1000]"]),
        (dict(shrink=-4), ["shrink", "[0, 1000]"]),
        (dict(agreement_weight=0), ["agreement_weight", "(0, 1000]"]),
        (dict(prior_agreement=-3), ["prior_agreement", "(0, 1000]"]),
    ]:
        with pytest.raises(ValueError) as e:
            AutoGamma(**kw)
        assert all(w in str(e.value) for w in words), str(e.value)
    for kw, word in [(dict(remember="no"), "remember"), (dict(name=7), "name"), (dict(prior_slope="x"), "prior_slope")]:
        with pytest.raises(TypeError, match=word):
            AutoGamma(**kw)
    with pytest.raises(ValueError, match="room must be a whole number"):
        AutoGamma().choose(room=2.5)
    with pytest.raises(ValueError, match="gamma must be an integer >= 0"):
        AutoGamma().observe(gamma=-1, accepted=0, draft_s=0.0, verify_s=0.01)
    with pytest.raises(ValueError, match=r"C\.max_gamma must be a whole number in 0\.\.1000, got -5"):
        as_chooser(type("C", (Rule,), {})(max_gamma=-5))
    with pytest.raises(ValueError, match=r"max_gamma must be a whole number in 0\.\.1000, got 2\.5"):
        as_chooser(Rule(max_gamma=2.5))
    with pytest.raises(TypeError, match=r"label must be a non-empty string .*got 123"):
        lm.speculative_generate(TOY, [0], 4, Labelled(123))


def test_a_warm_start_takes_only_an_earlier_autogamma():
    with pytest.raises(TypeError, match="last must be an AutoGamma"):
        AutoGamma().warm_start(FixedGamma(3))
    with pytest.raises(ValueError, match="cap must be > 0"):
        AutoGamma().warm_start(primed(), cap=0)
    a = AutoGamma()
    a.warm_start(primed(), cap=np.float64(8))
    assert a.verify and a.choose(10) in range(11)


def test_the_per_step_checks_cost_little():
    """choose/observe are called every step: their checks must not slow the loop (a plain int passes at once)."""
    a = primed()
    start = time.perf_counter()
    for _ in range(2000):
        a.observe(4, 2, 0.004, 0.013)
    per_call = (time.perf_counter() - start) / 2000
    assert per_call < 200e-6, f"observe takes {per_call * 1e6:.0f} µs"


# -------------------------------------------------------------------------------- $SPECVIZ_LANG


@pytest.mark.parametrize(
    ("value", "lang"),
    [("zh", "zh"), ("ZH", "zh"), ("zh-CN", "zh"), ("zh_CN.UTF-8", "zh"), (" zh", "zh"), ("zh\n", "zh"),
     ("zh_TW", "zh"), ("zh-Hans", "zh"), ("zh CN", "zh"), ("Chinese", "zh"), ("中文", "zh"), ("en", "en"),
     ("EN_us.utf8", "en"), ("English", "en"), ("", "en"), ("  ", "en"), (None, "en")],
)  # fmt: skip
def test_specviz_lang_reads_every_usual_spelling_without_a_word(value, lang, monkeypatch, recwarn):
    monkeypatch.setattr(i18n, "_warned", set())
    assert i18n.env_language(value) == lang
    assert not recwarn.list


@pytest.mark.parametrize("value", ["xx", "fr", "zhx", "z h", "de_DE.UTF-8", "\x00", "1"])
def test_an_unknown_specviz_lang_is_english_said_once(value, monkeypatch):
    monkeypatch.setattr(i18n, "_warned", set())
    with pytest.warns(UserWarning, match=r"SPECVIZ_LANG=.* is not a language specviz has: English is used") as w:
        assert i18n.env_language(value) == "en"
        assert i18n.env_language(value) == "en"
    assert len([x for x in w.list if "SPECVIZ_LANG" in str(x.message)]) == 1


@pytest.mark.slow
def test_specviz_lang_sets_the_language_at_import_and_says_once_when_unknown():
    code = "import specviz.foundation.i18n as i; import specviz; print(i.language(), i.t('predict.submit'))"
    for value, want, warned in (
        ("zh_CN.UTF-8", "zh 揭晓", False),
        (" ZH", "zh 揭晓", False),
        ("xx", "en Reveal", True),
        ("", "en Reveal", False),
    ):
        env = dict(os.environ, SPECVIZ_LANG=value)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0 and out.stdout.strip() == want, (value, out.stdout, out.stderr)
        lines = [line for line in out.stderr.splitlines() if "SPECVIZ_LANG" in line]
        assert len(lines) == (1 if warned else 0), (value, out.stderr)
        assert "Traceback" not in out.stderr


# -------------------------------------------------------------------------------- $SPECVIZ_DEFER_PNG


@pytest.fixture
def drawn(monkeypatch):
    """figure_png draws b'\\x89PNG drawn' without a browser; the DEFER warning may be given again."""
    import plotly.io as pio

    monkeypatch.setattr(S, "find_browser", lambda: "/usr/bin/chromium")
    monkeypatch.setattr(S, "_start_server", lambda: None)
    monkeypatch.setattr(EX, "_failed", {})
    monkeypatch.setattr(S, "_warned_defer", False)
    monkeypatch.setattr(S, "_problem", S.static_image_problem())
    monkeypatch.setattr(pio, "to_image", lambda fig, **kw: b"\x89PNG drawn")


def test_a_hand_set_defer_png_is_ignored_with_one_warning(tmp_path, monkeypatch, drawn):
    """A user's session with SPECVIZ_DEFER_PNG set gets its pictures, not placeholders, and is told once."""
    import plotly.graph_objects as go

    for value in (str(tmp_path), str(tmp_path / "new"), "1", "/nonexistent"):
        monkeypatch.setattr(S, "_warned_defer", False)
        monkeypatch.setenv(S.DEFER_ENV, value)
        with pytest.warns(UserWarning, match="SPECVIZ_DEFER_PNG=.* is ignored: it is an internal switch of the book"):
            assert S.figure_png(go.Figure()) == b"\x89PNG drawn"
        with warnings_as_errors():
            assert S.figure_png(go.Figure()) == b"\x89PNG drawn"  # said once
    assert not list(tmp_path.rglob("*.json")) and not (tmp_path / "new").exists()


def test_the_book_builds_folder_still_defers(tmp_path, monkeypatch, drawn):
    import plotly.graph_objects as go

    monkeypatch.setenv(S.DEFER_ENV, S.defer_into(tmp_path / "png"))
    with warnings_as_errors():
        held = S.figure_png(go.Figure())
    assert held.startswith(S.PLACEHOLDER) and len(list((tmp_path / "png").glob("*.json"))) == 1


def test_the_book_build_marks_its_folder():
    """tools/book.py sets DEFER_ENV only through defer_into (else its kernels would draw every picture themselves)."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "tools" / "book.py").read_text(encoding="utf-8")
    sets = [line.strip() for line in text.splitlines() if "os.environ[DEFER_ENV] =" in line]
    assert sets and all("defer_into(" in line for line in sets), sets


class warnings_as_errors:
    """A context in which any warning fails the test."""

    def __enter__(self):
        import warnings

        self._ctx = warnings.catch_warnings()
        self._ctx.__enter__()
        warnings.simplefilter("error")

    def __exit__(self, *exc):
        return self._ctx.__exit__(*exc)


# -------------------------------------------------------------------------------- figure_png without a working browser

PNG_SCRIPT = textwrap.dedent(
    """
    import json, sys, time
    import plotly.graph_objects as go
    from specviz.figures import export, static as S
    export.WAIT_S = float(sys.argv[1])
    out = []
    for _ in range(2):  # the second figure must not wait again for the same broken browser
        start = time.monotonic()
        png = S.figure_png(go.Figure(go.Bar(y=[1, 2])))
        out.append({"png": png is not None and png.startswith(b"\\x89PNG"), "problem": S.static_image_problem(),
                    "seconds": time.monotonic() - start})
    print(json.dumps(out))
    """
)


def run_png(env_extra: dict, wait_s: float = 60, limit_as: int | None = None, timeout: float = 150):
    """(the two figures' outcomes, stderr, seconds) of PNG_SCRIPT in a fresh process; pytest.fail on a hang."""
    env = {k: v for k, v in os.environ.items() if k not in ("BROWSER_PATH", S.DEFER_ENV)}
    env.update(env_extra)

    def cap():
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (limit_as, limit_as))

    start = time.monotonic()
    try:
        out = subprocess.run(
            [sys.executable, "-c", PNG_SCRIPT, str(wait_s)],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            preexec_fn=cap if limit_as else None,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"HANG: figure_png with {env_extra} gave no answer in {timeout} s")
    seconds = time.monotonic() - start
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1]), out.stderr, seconds


def a_browser() -> str | None:
    """A working Chrome/Chromium here, BROWSER_PATH left aside."""
    saved = os.environ.pop("BROWSER_PATH", None)
    try:
        from specviz.figures.export import find_browser

        return find_browser()
    finally:
        if saved is not None:
            os.environ["BROWSER_PATH"] = saved


@pytest.mark.slow
def test_a_stale_browser_path_is_passed_over_for_the_browser_found():
    """BROWSER_PATH=/nonexistent used to be kept (os.environ.setdefault) and hang every figure."""
    figures, _, seconds = run_png({"BROWSER_PATH": "/nonexistent"})
    if a_browser() is None:
        assert not figures[0]["png"] and "no Chrome/Chromium found" in figures[0]["problem"]
    else:
        assert figures[0]["png"] and figures[1]["png"] and figures[0]["problem"] is None, figures
    assert seconds < 100


EXIT_ORDER_SCRIPT = textwrap.dedent(
    """
    import os, sys, tempfile
    from pathlib import Path
    import plotly.graph_objects as go
    from specviz.figures import static as S

    rmtree = tempfile.TemporaryDirectory._rmtree.__func__

    def browser_alive():
        me = str(os.getpid())
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                if stat.read_text().rsplit(")", 1)[1].split()[1] == me:
                    return True
            except (OSError, IndexError):
                continue
        return False

    @classmethod
    def watched(cls, name, *args, **kwargs):
        if os.path.isdir(os.path.join(name, "Default")) and browser_alive():
            sys.stderr.write("PROFILE REMOVED UNDER A LIVE BROWSER\\n")
        return rmtree(cls, name, *args, **kwargs)

    tempfile.TemporaryDirectory._rmtree = watched
    print(S.figure_png(go.Figure(go.Bar(y=[1, 2]))) is not None)
    """
)


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the process table in /proc")
def test_the_browser_profile_is_removed_after_the_browser_ends():
    """A small script used to remove kaleido's browser profile at exit while the browser still wrote into it
    (Python's finalizers ran before kaleido's exit hook); now and then that printed "Directory not empty"."""
    if a_browser() is None:
        pytest.skip("no Chrome/Chromium here to start")
    env = {k: v for k, v in os.environ.items() if k not in ("BROWSER_PATH", S.DEFER_ENV)}
    cmd = [sys.executable, "-c", EXIT_ORDER_SCRIPT]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=150)
    tail = out.stderr[-2000:]
    assert out.returncode == 0 and out.stdout.strip() == "True", tail
    assert "PROFILE REMOVED UNDER A LIVE BROWSER" not in out.stderr and "Traceback" not in out.stderr, tail


@pytest.mark.slow
def test_a_browser_that_exits_at_once_gives_no_picture_and_the_reason():
    true = shutil.which("true") or "/bin/true"
    figures, _, seconds = run_png({"BROWSER_PATH": true})
    first, second = figures
    assert not first["png"] and f"the browser {true} did not start" in first["problem"], figures
    assert "BROWSER_PATH" in first["problem"] and "\n" not in first["problem"]
    assert not second["png"] and second["problem"] == first["problem"] and second["seconds"] < 1, figures
    assert first["seconds"] < 60, figures


@pytest.mark.slow
def test_a_4_gib_address_space_cap_gives_a_picture_or_the_reason():
    if a_browser() is None:
        pytest.skip("no Chrome/Chromium here to start under the cap")
    figures, _, seconds = run_png({}, limit_as=4 * 2**30)
    for f in figures:
        assert f["png"] or ("did not start" in f["problem"] and "BROWSER_PATH" in f["problem"]), figures
    assert figures[0]["seconds"] < 60 and figures[1]["seconds"] < 5, figures


@pytest.mark.slow
def test_a_browser_that_never_answers_is_given_up_and_ended(tmp_path):
    """A browser that starts and never speaks: None after WAIT_S, the process ends, the browser is gone."""
    pid_file = tmp_path / "pid"
    fake = tmp_path / "chrome"
    fake.write_text(f"#!/bin/sh\necho $$ > {pid_file}\nexec sleep 600\n")
    fake.chmod(0o755)
    figures, _, seconds = run_png({"BROWSER_PATH": str(fake)}, wait_s=4)
    first, second = figures
    assert not first["png"] and f"the browser {fake} gave no picture in 4 s" in first["problem"], figures
    assert not second["png"] and second["seconds"] < 1, figures
    assert seconds < 60
    pid = int(pid_file.read_text())
    for _ in range(50):  # the wrapper ends it on SIGTERM (at most ~5 s)
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.2)
    else:
        os.kill(pid, 9)
        pytest.fail("the browser that never answered was left running")


# -------------------------------------------------------------------------------- export_figure without a working browser

EXPORT_SCRIPT = textwrap.dedent(
    """
    import json, sys, time
    import plotly.graph_objects as go
    from specviz.figures import export
    export.WAIT_S = float(sys.argv[1])
    out = []
    for name in ("a.png", "b.svg"):  # the second must not wait again for the same broken browser
        start = time.monotonic()
        try:
            path = export.export_figure(go.Figure(go.Bar(y=[1, 2])), sys.argv[2] + "/" + name)
            made, error = path.stat().st_size > 0, None
        except Exception as e:
            made, error = False, f"{type(e).__name__}: {e}"
        out.append({"made": made, "error": error, "seconds": time.monotonic() - start})
    print(json.dumps(out))
    """
)


def run_export(tmp_path, env_extra: dict, wait_s: float = 60, limit_as: int | None = None, timeout: float = 150):
    """(the two exports' outcomes, seconds) of EXPORT_SCRIPT in a fresh process; pytest.fail on a hang."""
    env = {k: v for k, v in os.environ.items() if k not in ("BROWSER_PATH", S.DEFER_ENV)}
    env.update(env_extra)

    def cap():
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (limit_as, limit_as))

    start = time.monotonic()
    try:
        out = subprocess.run(
            [sys.executable, "-c", EXPORT_SCRIPT, str(wait_s), str(tmp_path)],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            preexec_fn=cap if limit_as else None,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"HANG: export_figure with {env_extra} gave no answer in {timeout} s")
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1]), time.monotonic() - start


def one_line_cause(export: dict, *words: str) -> bool:
    """Whether a failed export's error is one line naming each of `words`."""
    error = export["error"] or ""
    return not export["made"] and "\n" not in error and all(w in error for w in words)


@pytest.mark.slow
def test_export_passes_over_a_stale_browser_path(tmp_path):
    """BROWSER_PATH=/nonexistent with a browser installed: exported (kaleido used to be told the stale path, and the
    error said no browser was found); with none installed, the error names the variable it passed over."""
    exports, seconds = run_export(tmp_path, {"BROWSER_PATH": "/nonexistent"})
    if a_browser() is None:
        assert all(one_line_cause(e, "BROWSER_PATH='/nonexistent' names no executable file") for e in exports)
    else:
        assert all(e["made"] for e in exports), exports
    assert seconds < 100


@pytest.mark.slow
def test_export_with_a_browser_that_exits_at_once_names_it(tmp_path):
    true = shutil.which("true") or "/bin/true"
    (first, second), _ = run_export(tmp_path, {"BROWSER_PATH": true})
    assert one_line_cause(first, "BrowserFailed", f"the browser {true} did not start", "BROWSER_PATH"), first
    assert second["error"] == first["error"] and second["seconds"] < 1, second
    assert first["seconds"] < 60 and not list(tmp_path.iterdir())


@pytest.mark.slow
def test_export_under_a_4_gib_address_space_cap_makes_the_file_or_names_the_cause(tmp_path):
    if a_browser() is None:
        pytest.skip("no Chrome/Chromium here to start under the cap")
    exports, _ = run_export(tmp_path, {}, limit_as=4 * 2**30)
    for e in exports:
        assert e["made"] or one_line_cause(e, "did not start", "BROWSER_PATH"), exports
    assert exports[0]["seconds"] < 60 and exports[1]["seconds"] < 5, exports


@pytest.mark.slow
def test_export_with_a_browser_that_never_answers_ends_bounded(tmp_path):
    """A browser that starts and never speaks: the export ends after WAIT_S with the reason (it used to wait for
    ever), the second at once, and the browser is ended."""
    pid_file = tmp_path / "pid"
    fake = tmp_path / "chrome"
    fake.write_text(f"#!/bin/sh\necho $$ > {pid_file}\nexec sleep 600\n")
    fake.chmod(0o755)
    (first, second), seconds = run_export(tmp_path, {"BROWSER_PATH": str(fake)}, wait_s=4)
    assert one_line_cause(first, f"the browser {fake} gave no picture in 4 s"), first
    assert second["error"] == first["error"] and second["seconds"] < 1, second
    assert seconds < 60
    pid = int(pid_file.read_text())
    for _ in range(50):  # the wrapper ends it on SIGTERM (at most ~5 s)
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.2)
    else:
        os.kill(pid, 9)
        pytest.fail("the browser that never answered was left running")


def test_a_broken_piece_off_the_browser_pipe_prints_no_traceback(capfd):
    """choreographer logs a piece of the browser's pipe that is not JSON with a whole traceback (seen once in CI
    while every picture was still drawn); export drops that log line, counts it, and keeps the good messages."""
    from choreographer.channels.pipe import Pipe

    from specviz.figures import export

    export.quiet_ignored_messages()
    before = len(export.ignored_messages)
    pipe = Pipe()
    pipe.open()
    try:
        os.write(pipe._write_from_browser, b'{"id": 1, "result": {}}\0' + b"{'broken': 1}\0")
        messages, _ = pipe.read_jsons(blocking=True)
    finally:
        pipe.close()
    assert messages == [{"id": 1, "result": {}}]
    assert len(export.ignored_messages) == before + 1
    assert "Traceback" not in capfd.readouterr().err


# -------------------------------------------------------------------------------- hardening v4 (issue 43)
# The tree verifier, the tree layouts, the settings, the audit and the learned head, tried as a hostile user would.
# One row a case: (name, the call, what must come of it). "error: WORDS" (or WORDS alone): an exception whose
# "Type: message" holds WORDS; "ok: WORDS": a return whose repr holds WORDS. Each call runs in a forked child process (`call_within`, mode
# "process"), ended after CALL_TIMEOUT_S: a hang is a failure, not a stuck suite; slow rows (a model loaded) are marked.


def _tree_tables(dtype=torch.float64):
    """P and Q for a root with two children (tokens 0, 2), node 0 with one child (token 1): rows 0..3, V = 3."""
    P = torch.tensor([[0.6, 0.3, 0.1], [0.2, 0.2, 0.6], [0.5, 0.5, 0.0], [1.0, 0.0, 0.0]], dtype=dtype)
    Q = torch.tensor([[0.4, 0.5, 0.1], [0.3, 0.3, 0.4], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], dtype=dtype)
    return P, Q


TREE_TOKENS, TREE_PARENTS = [0, 2, 1], [-1, -1, 0]


def _verify(edit_p=None, edit_q=None, tokens=TREE_TOKENS, greedy=False, check=True, one_hot=False):
    """verify_tree_torch on `_tree_tables` changed by edit_p / edit_q (each: a function of the tensor, in place)."""
    from specviz.lm.trees.verify import verify_tree_torch

    P, Q = _tree_tables()
    for edit, t in ((edit_p, P), (edit_q, Q)):
        if edit is not None:
            edit(t)
    gen = torch.Generator().manual_seed(0)
    v = verify_tree_torch(P, None if one_hot else Q, torch.tensor(tokens), TREE_PARENTS, gen, greedy, one_hot, check)
    return v.path.tolist()


def _set(r, c, v):
    return lambda t: t.__setitem__((r, c), v)


def _scale(r, k):
    return lambda t: t[r].mul_(k)


def _layout(name, *args):
    import specviz.lm.trees.attention as A

    return getattr(A, name)(*args)


def _settings(**kw):
    from specviz.lm import GenerationSettings

    return GenerationSettings(**kw)


def _compare(prompt=(0,), **kw):
    from specviz.lm.stats.run import compare

    out = compare(TOY, list(prompt) if isinstance(prompt, tuple) else prompt, max_new_tokens=3, warmup_tokens=0, **kw)
    return out["ids"]


def _bypassed_settings_run(via):
    """max_new_tokens set to 0 past the frozen dataclass, then run: `compare` checks the settings it is given."""
    from specviz.lm import GenerationSettings

    s = GenerationSettings(max_new_tokens=3)
    object.__setattr__(s, "max_new_tokens", 0)
    if via == "compare":
        from specviz.lm.stats.run import compare

        return compare(TOY, [0], settings=s, warmup_tokens=0)["ids"]
    return lm.speculative_generate(TOY, [0], settings=s).new_ids


def _audit(sampler, p=(0.5, 0.5), q=(0.5, 0.5), **kw):
    import specviz as sv

    return sv.audit(sampler, list(p), list(q), n=2_000, **kw).passed


def _swallows_everything(p, q, n, rng):
    while True:
        try:
            time.sleep(0.01)
        except BaseException:  # noqa: BLE001, S110 - the hostile sampler: nothing stops it but the end of its process
            pass


def _interrupts(p, q, n, rng):
    raise KeyboardInterrupt("stop")


def _exits(p, q, n, rng):
    os._exit(0)


def _head_copy(damage):
    """The bundled head's folder copied to a temporary folder and damaged, then loaded by `load_head`."""
    import tempfile

    from specviz.lm.drafts.learned import HEAD_DIR, load_head

    folder = os.path.join(tempfile.mkdtemp(), "head")
    shutil.copytree(HEAD_DIR, folder)
    weights = os.path.join(folder, "head.safetensors")
    with open(weights, "rb") as f:
        data = f.read()
    damaged = {"truncated": data[: len(data) // 2], "emptied": b"", "flipped": data[:-1] + bytes([data[-1] ^ 1])}
    if damage == "missing":
        os.remove(weights)
    elif damage is not None:
        with open(weights, "wb") as f:
            f.write(damaged[damage])
    return load_head(folder).hidden


def own_child(fn):
    """A row whose call runs its own child process (the audit's mode="process"): run here, bounded by that child."""
    fn.own_child = True
    return fn


def _nan(t):
    t[1, 0] = math.nan


V4_ROWS = [
    # 1. the tree verifier believes no numbers by default (check=False is the engine's, below)
    ("verify: P with a NaN", lambda: _verify(edit_p=_nan), "error: P row 1 contains nan at token 0"),
    ("verify: P with a zero row", lambda: _verify(edit_p=_scale(2, 0)), "error: P row 2 sums to 0, not 1"),
    ("verify: P negative", lambda: _verify(edit_p=_set(1, 0, -0.2)), "error: P row 1 has a negative entry -0.2"),
    ("verify: P unnormalised", lambda: _verify(edit_p=_scale(0, 2)), "error: P row 0 sums to 2, not 1"),
    ("verify: P unnormalised, greedy", lambda: _verify(edit_p=_scale(3, 3), greedy=True), "error: P row 3 sums to 3"),
    ("verify: Q with a NaN", lambda: _verify(edit_q=_nan), "error: Q row 1 contains nan at token 0"),
    ("verify: Q with a zero row (it has children)", lambda: _verify(edit_q=_scale(1, 0)), "error: Q row 1 sums to 0"),
    ("verify: Q with an inf", lambda: _verify(edit_q=_set(0, 1, math.inf)), "error: Q row 0 contains inf at token 1"),
    ("verify: Q with a NaN, greedy", lambda: _verify(edit_q=_nan, greedy=True), "error: Q row 1 contains nan"),
    ("verify: a leaf's Q row of zeros is unused", lambda: _verify(), "ok: [0, "),
    ("verify: a token past the vocabulary, greedy", lambda: _verify(tokens=[0, 3, 1], greedy=True),
     "error: tokens[1] is 3: a drafted token id must be in 0..2"),
    ("verify: a negative token, greedy", lambda: _verify(tokens=[-1, 2, 1], greedy=True), "error: tokens[0] is -1"),
    ("verify: a token past the vocabulary, one-hot", lambda: _verify(tokens=[0, 7, 1], one_hot=True),
     "error: tokens[1] is 7"),
    ("verify: check=False believes P (the engine's path)", lambda: _verify(edit_p=_scale(0, 2), check=False), "ok: ["),
    # 2. the tree layouts: parents name earlier nodes only, so no walk can cycle
    ("path_to([1, 0], 0)", lambda: _layout("path_to", [1, 0], 0), "error: tree node 0 has parent 1: give -1"),
    ("path_to([0], 0)", lambda: _layout("path_to", [0], 0), "would make a cycle"),
    ("check_path([0, 1], [1, 0])", lambda: _layout("check_path", [0, 1], [1, 0]), "would make a cycle"),
    ("tree_mask([1, 0], ...)", lambda: _layout("tree_mask", [1, 0], 2, 3, torch.float32, "cpu"), "would make a cycle"),
    ("tree_depths([0])", lambda: _layout("tree_depths", [0]), "would make a cycle"),
    ("tree_positions([1, 0], ...)", lambda: _layout("tree_positions", [1, 0], 2, 0, "cpu"), "would make a cycle"),
    ("check_tree([1.7, 2], ...)", lambda: _layout("check_tree", [1.7, 2], [-1, 0], 0),
     "error: TypeError: feed_tree's ids[0] (a token id) must be an integer, got 1.7"),
    ("check_tree parents 0.5", lambda: _layout("check_tree", [1, 2], [-1, 0.5], 0), "parents[1] must be an integer"),
    ("tree_paths([[1, 2]], [-1, 0], 5)", lambda: _layout("tree_paths", [[1, 2]], [-1, 0], 5),
     "error: n_new (the nodes just read) must be in 0..2, got 5"),
    ("tree_paths: 3 ids for 2 nodes", lambda: _layout("tree_paths", [[1, 2, 3]], [-1, 0], 2), "3 token ids"),
    ("path_to on a good tree", lambda: _layout("path_to", [-1, -1, 0, 2], 3), "ok: [0, 2, 3]"),
    # 3. the settings
    ("GenerationSettings(top_k=2**70)", lambda: _settings(top_k=2**70), "error: top_k must be an integer <= 16777216"),
    ("compare(top_k=2**70)", lambda: _compare(top_k=2**70), "None or 0 is off"),
    ("compare(chat=1)", lambda: _compare(chat=1), "error: TypeError: chat must be 'auto', True or False, got 1"),
    ("compare(chat=0)", lambda: _compare(chat=0), "chat must be 'auto', True or False, got 0"),
    ("compare(ignore_eos='no')", lambda: _compare(ignore_eos="no"), "error: TypeError: ignore_eos must be True or"),
    ("compare(b'a bytes prompt')", lambda: _compare(b"ROMEO"), "got bytes: decode it first"),
    ("compare(settings bypassed to 0 tokens)", lambda: _bypassed_settings_run("compare"),
     "error: ValueError: max_new_tokens must be an integer >= 1, got 0"),
    # 4. the audit
    ("audit(p sums to 1.1)", lambda: _audit("lossless", p=(0.5, 0.6)), "error: p sums to 1.1"),
    ("audit's docstring: inline runs in your process", lambda: "os._exit` ends your" in lm_audit_doc(), "ok: True"),
    ("audit's docstring: a swallowing loop outlasts inline", lambda: "runs past `time_limit`" in lm_audit_doc(), "ok: True"),
    ("audit(swallows BaseException, process)", own_child(lambda: _audit(_swallows_everything, mode="process", time_limit=0.3)),
     "the sampler took longer than 0.3 s; it ran in a child process, ended at the limit"),
    ("audit(KeyboardInterrupt, process)", own_child(lambda: _audit(_interrupts, mode="process")), "raised KeyboardInterrupt: stop"),
    ("audit(os._exit, process)", own_child(lambda: _audit(_exits, mode="process")), "ended the child process it ran in"),
]  # fmt: skip

V4_SLOW_ROWS = [  # 6. the learned head's surfaces, through the public API (a model loads: seconds)
    ("the head for another target", lambda: lm.load_pair("bundled", draft="smollm2-head").draft.name,
     "error: the smollm2-head draft reads features of width 576 (SmolLM2-135M's); the target bundled-target has"),
    ("the head over an n-gram target", lambda: lm.load_pair(TOY.target, draft="smollm2-head").draft.name,
     "reads a Hugging Face target's features"),
    ("the head's weights truncated", lambda: _head_copy("truncated"), "head.safetensors is damaged: its sha256"),
    ("the head's weights emptied", lambda: _head_copy("emptied"), "head.safetensors is damaged"),
    ("the head's weights, one bit flipped", lambda: _head_copy("flipped"), "head.safetensors is damaged"),
    ("the head's weights missing", lambda: _head_copy("missing"), "has no head.safetensors"),
    ("the bundled head loads", lambda: _head_copy(None), "ok: 576"),
    ("audit(p sums to 1 + 1e-7)", lambda: _audit("lossless", p=(0.5, 0.5000001)), "ok: True"),  # scipy's first import
]  # fmt: skip

V4_ENGINE_ROWS = [  # 3. the same cases at the engine's own entry (settings.py, pair.py, inputs.py)
    ("GenerationSettings(chat=1)", lambda: _settings(chat=1), "chat must be 'auto', True or False, got 1"),
    ("speculative_generate(b'a bytes prompt')", lambda: lm.speculative_generate(TOY, b"\x00\x01", max_new_tokens=2),
     "got bytes: decode it first"),
    ("speculative_generate(settings bypassed to 0 tokens)", lambda: _bypassed_settings_run("engine"),
     "max_new_tokens must be an integer >= 1, got 0"),
]  # fmt: skip


def lm_audit_doc() -> str:
    import specviz as sv

    return " ".join(sv.audit.__doc__.split())


def v4_outcome(fn) -> str:
    """'ok: REPR' or 'error: Type: message' of fn() in a forked child process, or 'hang' after CALL_TIMEOUT_S."""
    from specviz.foundation.budget import call_within

    try:
        if getattr(fn, "own_child", False):  # its TimeoutError is the child's limit, an answer
            try:
                return "ok: " + repr(fn())[:300]
            except Exception as e:  # noqa: BLE001 - every outcome is judged against the row
                return f"error: {type(e).__name__}: {e}"
        return "ok: " + call_within(lambda: repr(fn())[:300], CALL_TIMEOUT_S, mode="process", what="the sampler")
    except TimeoutError:
        return f"hang: no answer in {CALL_TIMEOUT_S} s"
    except Exception as e:  # noqa: BLE001 - every outcome is judged against the row
        return f"error: {type(e).__name__}: {e}"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forks a child process per row")
@pytest.mark.parametrize(
    "name,fn,want",
    [
        *V4_ROWS,
        *(pytest.param(*row, marks=pytest.mark.slow) for row in V4_SLOW_ROWS),
        *V4_ENGINE_ROWS,
    ],
    ids=[row[0] for row in (*V4_ROWS, *V4_SLOW_ROWS, *V4_ENGINE_ROWS)],
)
def test_hardening_v4_each_case_ends_clear_or_sound(name, fn, want):
    got = v4_outcome(fn)
    kind, _, words = want.partition(": ") if want.startswith(("ok: ", "error: ")) else ("error", "", want)
    assert got.startswith(kind + ":") and words in got, f"{name}: want {want!r}, got {got!r}"


def test_the_unchecked_tree_verifier_is_used_only_by_the_engines_tree_step():
    """`verify_tree_torch(..., check=False)` trusts its numbers: its one caller is specviz/lm/engine/tree_step.py,
    whose P comes from logits the engine has checked (`NonFiniteLogitsError`) and whose Q is the draft's rows."""
    import re
    from pathlib import Path

    package = Path(lm.__file__).resolve().parents[1]  # specviz/: every caller the project has
    root = package.parent
    unchecked = []
    for path in sorted(package.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for call in re.finditer(r"verify_tree_torch\((?:[^()]|\([^()]*\))*\)", text):
            if re.search(r"\bcheck\s*=\s*False", call.group()):
                unchecked.append(str(path.relative_to(root)))
    assert unchecked == ["specviz/lm/engine/tree_step.py"], unchecked
