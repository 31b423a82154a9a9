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
    "specviz.foundation.validate",
    "specviz.foundation.checks",
    "specviz.exact.theory",
    "specviz.exact.rules",
    "specviz.exact.stopping",
    "specviz.exact.gamma",
    "specviz.exact.multidraft",
    "specviz.exact.standardize",
    "specviz.samplers.sampling",
    "specviz.samplers.chain",
    "specviz.samplers.audit",
    "specviz.foundation.budget",
    "specviz.foundation.child_process",
    "specviz.startup",
    "specviz.samplers.verifiers",
    "specviz.samplers.torch_sampling",
    "specviz.samplers.torch_rows",
    "specviz.htmlkit",
    "specviz.foundation.palette",
    "specviz.lm",
    "specviz.lm.engine.loop",
    "specviz.lm.trees.attention",
    "specviz.lm.trees.verify",
    "specviz.lm.engine.tree_step",
    "specviz.lm.trees.shape",
    "specviz.lm.trees.shape",
    "specviz.lm.trees.shape",
    "specviz.lm.drafts.lookup_trie",
    "specviz.lm.engine.logits",
    "specviz.lm.engine.inputs",
    "specviz.lm.engine.readout",
    "specviz.lm.engine.settings",
    "specviz.lm.engine.pair",
    "specviz.lm.engine.results",
    "specviz.lm.stats.stats",
    "specviz.lm.stats.run",
    "specviz.lm.engine.models",
    "specviz.lm.gamma.peeking",
    "specviz.lm.serve.vllm",
    "specviz.lm.serve.vllm_counters",
    "specviz.lm.serve.http_get",
    "specviz.lm.load.devices",
    "specviz.lm.load.hub",
    "specviz.lm.load.model_files",
    "specviz.lm.stats.fates",
    "specviz.lm.gamma.payoff",
    "specviz.lm.load.card",
    # the live views' parts that have worked examples (the rest are driven by tests/test_lm_live.py)
    "specviz.widgets.live.settings",
    "specviz.widgets.live.jobs",
    "specviz.widgets.live.sweep",
    "specviz.widgets.live.pair_info",
    "specviz.widgets.live.render",
    "specviz.widgets.live.tree_panel",
    "specviz.widgets.live.vllm",
    # modules whose examples other test files used to run a second time
    "specviz.samplers.coupling",
    "specviz.figures.coupling",
    "specviz.exact.numerics",
    "specviz.exercises",
    "specviz.exercises.api",
    "specviz.exercises.core",
    "specviz.figures",
    "specviz.widgets",
    "specviz.widgets.prediction",
    "specviz.lm.load.catalog",
    "specviz.lm.load.loading",
    "specviz.lm.drafts.prompt_lookup",
    "specviz.lm.gamma.payoff",
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
    assert examples(bare) == 0 and examples(importlib.import_module("specviz.exact.theory")) > 0
