"""The worked examples in the modules' docstrings: each listed module has some, and pytest runs them all once.

The examples run once per suite, as pytest's doctest items (`--doctest-modules` over the `specviz`
testpath, pyproject.toml), not again from test files. This file guards the two ways that could go
quiet: a module whose examples were deleted (it must still have one: `MODULES`), and a pytest
configuration that stops collecting them (the option and the testpath must be there).
"""

import doctest
import importlib
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

MODULES = [
    "specviz",
    "specviz.validate",
    "specviz.checks",
    "specviz.theory",
    "specviz.rules",
    "specviz.stopping",
    "specviz.gamma",
    "specviz.multidraft",
    "specviz.standardize",
    "specviz.sampling",
    "specviz.chain",
    "specviz.audit",
    "specviz.budget",
    "specviz.child_process",
    "specviz.startup",
    "specviz.verifiers",
    "specviz.torch_sampling",
    "specviz.torch_rows",
    "specviz.htmlkit",
    "specviz.palette",
    "specviz.lm",
    "specviz.lm.engine",
    "specviz.lm.tree_attention",
    "specviz.lm.tree_verify",
    "specviz.lm.tree_step",
    "specviz.lm.tree_plan",
    "specviz.lm.tree_auto",
    "specviz.lm.tree_fit",
    "specviz.lm.lookup_trie",
    "specviz.lm.logits",
    "specviz.lm.inputs",
    "specviz.lm.readout",
    "specviz.lm.settings",
    "specviz.lm.pair",
    "specviz.lm.results",
    "specviz.lm.stats",
    "specviz.lm.run",
    "specviz.lm.models",
    "specviz.lm.peeking",
    "specviz.lm.vllm",
    "specviz.lm.vllm_counters",
    "specviz.lm.http_get",
    "specviz.lm.devices",
    "specviz.lm.hub",
    "specviz.lm.model_files",
    "specviz.lm.fates",
    "specviz.lm.payoff",
    "specviz.lm.card",
    # the live views' parts that have worked examples (the rest are driven by tests/test_lm_live.py)
    "specviz.widgets.live.settings",
    "specviz.widgets.live.jobs",
    "specviz.widgets.live.sweep",
    "specviz.widgets.live.pair_info",
    "specviz.widgets.live.render",
    "specviz.widgets.live.tree_panel",
    "specviz.widgets.live.vllm",
    # modules whose examples other test files used to run a second time
    "specviz.coupling",
    "specviz.figures.coupling",
    "specviz.numerics",
    "specviz.exercises",
    "specviz.exercises.api",
    "specviz.exercises.core",
    "specviz.figures",
    "specviz.widgets",
    "specviz.widgets.prediction",
    "specviz.lm.catalog",
    "specviz.lm.loading",
    "specviz.lm.prompt_lookup",
    "specviz.lm.payoff",
    "specviz.widgets.live.app",
    "specviz.widgets.live.controls",
    "specviz.widgets.live.models",
    "specviz.widgets.live.closeup",
]


def examples(module) -> int:
    """How many worked examples (>>> lines) the docstrings of `module` hold (found, not run)."""
    finder = doctest.DocTestFinder()
    return sum(len(t.examples) for t in finder.find(module, module.__name__))


@pytest.mark.parametrize("name", sorted(set(MODULES)))
def test_the_module_has_worked_examples(name):
    assert examples(importlib.import_module(name)) > 0, f"{name} has no worked example"


def test_pytest_collects_every_docstring_example_of_the_package():
    text = (REPO / "pyproject.toml").read_text()
    ini = text[text.index("[tool.pytest.ini_options]") :]
    addopts = re.search(r'^addopts = "([^"]*)"', ini, re.M).group(1)
    testpaths = re.search(r"^testpaths = \[([^\]]*)\]", ini, re.M).group(1)
    assert "--doctest-modules" in addopts.split()
    assert '"specviz"' in testpaths


def test_a_module_without_examples_is_caught():
    """The counter can fail: a module with a docstring but no example counts 0."""
    import types

    bare = types.ModuleType("bare", "A module that says what it is, and shows nothing.")
    assert examples(bare) == 0 and examples(importlib.import_module("specviz.theory")) > 0
