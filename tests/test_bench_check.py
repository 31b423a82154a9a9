"""benchmarks/bench_check.py (make bench-check), without benchmarking: its goals table and its verdicts."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_check.py"
spec = importlib.util.spec_from_file_location("bench_check", PATH)
bc = importlib.util.module_from_spec(spec)
sys.modules.setdefault("bench_check", bc)  # dataclasses look their module up there
spec.loader.exec_module(bc)

GUARDED = {
    "numpy-sampler",
    "torch-sampler",
    "auto-vs-plain",
    "prompt-lookup",
    "learned-head",
    "test-fast",
    "first-plot",
}


def test_the_goals_table_covers_exactly_the_guarded_figures():
    assert [g.name for g in bc.GOALS] == list(bc.BY_NAME)  # no name twice
    assert set(bc.BY_NAME) == GUARDED
    assert set(bc.MEASURES) == GUARDED


@pytest.mark.parametrize("g", bc.GOALS, ids=lambda g: g.name)
def test_each_fail_line_lies_beyond_its_goal_on_the_worse_side(g):
    assert g.direction in ("higher", "lower") and g.unit in ("x", "s") and g.source
    if g.direction == "higher":
        assert g.fail < g.goal
    else:
        assert g.fail > g.goal


def test_the_brief_s_goals_and_fail_lines():
    want = {
        "torch-sampler": (2.5, 3.75, "lower"),
        "auto-vs-plain": (0.97, 0.90, "higher"),
        "prompt-lookup": (1.1, 0.75, "higher"),
        "learned-head": (1.2, 0.85, "higher"),  # issue 41's greedy goal; a generous fail line
        "test-fast": (60.0, 90.0, "lower"),
        "first-plot": (8.0, 12.0, "lower"),
        "numpy-sampler": (1.03, 1.55, "lower"),  # recorded 1.03x (bench_core), x 1.5
    }
    for name, (goal, fail, direction) in want.items():
        g = bc.BY_NAME[name]
        assert (g.goal, g.fail, g.direction) == (goal, fail, direction), name


def test_lower_is_better_passes_up_to_the_fail_line_and_fails_beyond_it():
    g = bc.BY_NAME["torch-sampler"]  # goal <= 2.5x, fail above 3.75x
    assert bc.passes(g, 1.2) and bc.passes(g, 3.0) and bc.passes(g, 3.75)
    assert not bc.passes(g, 3.7501) and not bc.passes(g, 10.0)
    assert bc.goal_status(g, 2.5) == "met" and bc.goal_status(g, 2.51) == "missed"
    assert bc.verdict(g, 1.3) == "PASS (goal met)"
    assert bc.verdict(g, 3.0) == "PASS (goal missed, within the fail line)"
    assert bc.verdict(g, 3.8) == "FAIL"
    t = bc.BY_NAME["test-fast"]  # seconds: goal <= 60 s, fail above 90 s
    assert bc.verdict(t, 58.6).startswith("PASS") and bc.verdict(t, 89.9).startswith("PASS")
    assert bc.verdict(t, 90.1) == "FAIL"


def test_higher_is_better_passes_down_to_the_fail_line_and_fails_below_it():
    g = bc.BY_NAME["prompt-lookup"]  # goal >= 1.1x, fail below 0.75x
    assert bc.passes(g, 1.3) and bc.passes(g, 0.9) and bc.passes(g, 0.75)
    assert not bc.passes(g, 0.7499) and not bc.passes(g, 0.1)
    assert bc.goal_status(g, 1.1) == "met" and bc.goal_status(g, 1.09) == "missed"
    assert bc.verdict(g, 1.21) == "PASS (goal met)"
    assert bc.verdict(g, 0.8) == "PASS (goal missed, within the fail line)"
    assert bc.verdict(g, 0.7) == "FAIL"


def test_the_control_s_bias_counts_in_the_figure_s_favour_as_row_verdict_reads_it():
    g = bc.BY_NAME["auto-vs-plain"]  # goal >= 0.97x, fail below 0.90x
    assert bc.passes(g, 0.88, slack=0.03) and not bc.passes(g, 0.88, slack=0.01)
    assert bc.goal_status(g, 0.98, slack=0.004) == "met"  # row_verdict(0.98, 1.004): met
    assert bc.goal_status(g, 0.975, slack=0.01) == "not measurable"  # row_verdict(0.975, 0.99)
    assert bc.goal_status(g, 0.95, slack=0.0) == "missed"  # row_verdict(0.95, 1.0): NOT met
    assert bc.verdict(g, 0.975, slack=0.01) == "PASS (goal not measurable, within the fail line)"
    lower = bc.BY_NAME["torch-sampler"]
    assert bc.passes(lower, 3.8, slack=0.1) and not bc.passes(lower, 3.8, slack=0.01)


def test_a_figure_that_could_not_be_measured_fails():
    assert bc.verdict(bc.BY_NAME["prompt-lookup"], None) == "FAIL"


def test_the_printed_bounds_name_the_direction():
    assert bc.bound(bc.BY_NAME["torch-sampler"], 3.75, fail=True) == "fail > 3.75x"
    assert bc.bound(bc.BY_NAME["auto-vs-plain"], 0.97, fail=False) == ">= 0.97x"
    assert bc.bound(bc.BY_NAME["first-plot"], 12.0, fail=True) == "fail > 12.0 s"
    assert "| `test-fast` |" in bc.goals_table()


def test_only_refuses_an_unknown_figure(capsys):
    with pytest.raises(SystemExit) as e:
        bc.main(["--only", "torch-sampler,nope"])
    assert e.value.code == 2 and "nope" in capsys.readouterr().err


def test_its_docstring_examples():
    import doctest

    assert doctest.testmod(bc).failed == 0


def test_docs_benchmarks_md_prints_the_goals_table_as_it_is():
    text = (PATH.parents[1] / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    block = f"<!-- {bc.MARK} -->\n{bc.goals_table()}\n<!-- /{bc.MARK} -->"
    assert block in text, "docs/benchmarks.md: paste `python benchmarks/bench_check.py --goals` over its goals table"
