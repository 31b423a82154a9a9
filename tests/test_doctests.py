"""The worked examples in the core modules' docstrings run and give what they claim."""

import doctest
import importlib

import pytest

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
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0, f"{name} has no worked example"
    assert result.failed == 0
