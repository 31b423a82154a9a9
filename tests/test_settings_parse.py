"""One parse, one default (issue 40): a run reads γ and the tree's shape once, and every door agrees on the defaults.

`GenerationSettings` (specviz/lm/engine/settings.py) is where a run's γ and tree are read, by the one γ parser
(`specviz.foundation.checks.gamma_setting`) and the one tree parser (`specviz.foundation.checks.tree_setting`). These tests count
the calls to both during one `specviz run` (the CLI on the bundled pair), one `compare` and one live-view
run, by patching the parsers in every specviz module that imported them, and expect one each; a planted
second parse shows the count can fail. Then the CLI's parser, the live view's controls and the library's
signatures are read for their defaults (γ, tree, max new tokens and its bound), which must agree.
"""

from __future__ import annotations

import collections
import contextlib
import importlib
import inspect
import json
import re
import sys
from pathlib import Path

import pytest

import specviz.foundation.checks as checks
from specviz.lm.engine.models import NGramModel
from specviz.lm.engine.pair import Pair
from specviz.lm.engine.settings import (
    DEFAULT_GAMMA,
    DEFAULT_MAX_NEW_TOKENS,
    DEFAULT_TREE,
    DEFAULT_TREE_DEPTH,
    MAX_NEW_TOKENS,
    GenerationSettings,
)

REPO = Path(__file__).resolve().parent.parent
PARSERS = ("gamma_setting", "tree_setting")
FORMULAS = ("specviz.exact.gamma",)
"""Modules whose calls are not a run's setting read again: the cost-model formulas check their own γ argument when
the statistics evaluate them on a finished run (`spec_stats`), as on any caller's number."""
# every module a run goes through, imported before the parsers are patched (a lazy import would keep the real one)
RUN_MODULES = (
    "specviz.cli.command",
    "specviz.cli.run",
    "specviz.lm.stats.run",
    "specviz.lm.engine.loop",
    "specviz.lm.gamma.adaptive",
    "specviz.lm.gamma.chooser",
    "specviz.lm.trees.shape",
    "specviz.lm.trees.shape",
    "specviz.lm.engine.tree_step",
    "specviz.lm.load.loading",
    "specviz.widgets.live.app",
)


def specviz_modules() -> list:
    """The imported specviz modules, but the formulas' (`FORMULAS`)."""
    return [m for n, m in list(sys.modules.items()) if n.split(".")[0] == "specviz" and n not in FORMULAS]


def _pair() -> Pair:
    return Pair(NGramModel.random(6, seed=0, name="t"), NGramModel.random(6, seed=1, name="d"))


@contextlib.contextmanager
def counted(monkeypatch):
    """Count the calls to the γ and the tree parser, wherever they were imported: yields a Counter by parser."""
    for name in RUN_MODULES:
        importlib.import_module(name)
    calls: collections.Counter = collections.Counter()
    for parser in PARSERS:
        real = getattr(checks, parser)

        def counting(*args, _real=real, _parser=parser, **kwargs):
            calls[_parser] += 1
            return _real(*args, **kwargs)

        for module in specviz_modules():
            if getattr(module, parser, None) is real:
                monkeypatch.setattr(module, parser, counting)
    yield calls
    monkeypatch.undo()


def assert_one_parse_each(calls) -> None:
    assert dict(calls) == dict.fromkeys(PARSERS, 1), f"γ and tree parsed more (or less) than once per run: {calls}"


def cli_run(capsys, *argv) -> dict:
    from specviz.cli import main

    assert main(["run", "--max-new-tokens", "6", "--device", "cpu", "--json", "--temperature", "0", *argv]) == 0
    return json.loads(capsys.readouterr().out)


# -------------------------------------------------------------------------------- one parse


def test_the_patch_reaches_every_module_that_imported_a_parser(monkeypatch):
    """Each specviz module holding a parser gets the counting one (else a parse there would go uncounted)."""
    with counted(monkeypatch):
        held = {(m.__name__, p): getattr(m, p).__name__ for m in specviz_modules() for p in PARSERS if hasattr(m, p)}
        assert {("specviz.foundation.checks", "gamma_setting"), ("specviz.lm.engine.settings", "tree_setting")} <= set(
            held
        )
        assert set(held.values()) == {"counting"}, held


@pytest.mark.slow  # the bundled pair, loaded
def test_one_specviz_run_parses_gamma_and_the_tree_once(monkeypatch, capsys):
    """`specviz run --gamma 2 --tree 2` on the bundled pair: the CLI, the settings, compare's warm-up and both runs."""
    with counted(monkeypatch) as calls:
        out = cli_run(capsys, "--gamma", "2", "--tree", "2")
    assert out["gamma"] == 2 and out["tree"] == 2 and len(out["ids"]) == 6
    assert_one_parse_each(calls)


def test_one_compare_parses_once_and_a_planted_second_parse_is_caught(monkeypatch):
    import specviz.lm.stats.run as run

    pair = _pair()
    with counted(monkeypatch) as calls:
        run.compare(pair, [0], max_new_tokens=5, gamma=2, tree=(2, 1), seed=0, warmup_tokens=2)
    assert_one_parse_each(calls)

    real_replace = GenerationSettings.replace

    def replace_that_reads_again(self, **changes):  # as dataclasses.replace did: every field read again
        checks.gamma_setting(self.gamma, auto=True)
        return real_replace(self, **changes)

    with counted(monkeypatch) as calls:
        monkeypatch.setattr(GenerationSettings, "replace", replace_that_reads_again)
        run.compare(pair, [0], settings=GenerationSettings(max_new_tokens=5, gamma=2, tree=(2, 1), seed=0))
    with pytest.raises(AssertionError, match="parsed more"):
        assert_one_parse_each(calls)
    assert calls["gamma_setting"] == 2


@pytest.mark.slow  # the bundled pair, loaded
def test_a_planted_second_parse_in_the_cli_is_caught(monkeypatch, capsys):
    import specviz.cli.run as cli

    real = cli.settings_from_args

    def reads_twice(args):  # what the CLI did before: its own --tree reader, then the settings' again
        checks.tree_setting(args.tree, text=True)
        return real(args)

    with counted(monkeypatch) as calls:
        monkeypatch.setattr(cli, "settings_from_args", reads_twice)
        cli_run(capsys, "--gamma", "2", "--tree", "2")
    assert calls == {"gamma_setting": 1, "tree_setting": 2}
    with pytest.raises(AssertionError):
        assert_one_parse_each(calls)


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
def test_one_live_view_run_parses_once(monkeypatch):
    from specviz.widgets.live import app as L

    app = L.live_app(_pair(), prompt="0", max_new_tokens=6, ar_baseline=False)
    app.gamma.value, app.tree.value = 2, "2"
    with counted(monkeypatch) as calls:
        r = app.generate(blocking=True)
    assert r.gamma == 2 and len(r.new_ids) == 6 and all(s.tree is not None for s in r.steps if s.gamma > 1)
    assert_one_parse_each(calls)


# -------------------------------------------------------------------------------- one default


def cli_settings(*argv) -> GenerationSettings:
    from specviz.cli.command import build_parser
    from specviz.cli.run import settings_from_args

    return settings_from_args(build_parser().parse_args(["run", *argv]))


def live(pair, **kwargs):
    from specviz.widgets.live import app as L

    return L.live_app(pair, prompt="0", ar_baseline=False, **kwargs)


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
def test_the_cli_the_live_view_and_the_library_agree_on_every_default():
    from specviz.lm.engine.loop import speculative_generate
    from specviz.lm.engine.settings import keyword_settings
    from specviz.lm.stats.run import compare
    from specviz.widgets.live.settings import tree_words

    pair = _pair()
    app = live(pair)
    cli = cli_settings()
    library = GenerationSettings()
    keywords, _ = keyword_settings(speculative_generate, pair, [0])
    shown = app.controls.settings()
    compared = GenerationSettings(
        **{k: inspect.signature(compare).parameters[k].default for k in ("gamma", "max_new_tokens", "tree")}
    )
    for name, want in (("gamma", DEFAULT_GAMMA), ("tree", DEFAULT_TREE), ("max_new_tokens", DEFAULT_MAX_NEW_TOKENS)):
        seen = {
            "cli": getattr(cli, name),
            "library": getattr(library, name),
            "speculative_generate": getattr(keywords, name),
            "compare": getattr(compared, name),
            "live view": getattr(shown, name),
        }
        assert seen == dict.fromkeys(seen, want), (name, seen)
    assert (app.gamma.value, tree_words(app.tree.value), app.max_new_tokens.value) == (
        DEFAULT_GAMMA,
        DEFAULT_TREE,
        DEFAULT_MAX_NEW_TOKENS,
    )
    assert DEFAULT_GAMMA == "auto"  # the decision: γ chosen per step, wherever a run starts


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
def test_one_bound_on_new_tokens_with_one_home():
    """MAX_NEW_TOKENS: defined once (specviz/lm/engine/settings.py), enforced by the library, the CLI and the live view."""
    from specviz.widgets.live import settings as live_settings_module

    homes = [
        str(p.relative_to(REPO))
        for p in (REPO / "specviz").rglob("*.py")
        if re.search(r"^\s*MAX_NEW_TOKENS\s*[:=]", p.read_text(encoding="utf-8"), re.M)
    ]
    assert homes == ["specviz/lm/engine/settings.py"]
    assert live_settings_module.MAX_NEW_TOKENS is MAX_NEW_TOKENS
    assert live(_pair()).max_new_tokens.max == MAX_NEW_TOKENS  # a pair without a context limit: the bound itself
    GenerationSettings(max_new_tokens=MAX_NEW_TOKENS)
    for refuse in (
        lambda: GenerationSettings(max_new_tokens=MAX_NEW_TOKENS + 1),
        lambda: cli_settings("--max-new-tokens", str(MAX_NEW_TOKENS + 1)),
        lambda: live(_pair(), max_new_tokens=MAX_NEW_TOKENS + 1),
    ):
        with pytest.raises(ValueError, match=f"max_new_tokens.*{MAX_NEW_TOKENS}"):
            refuse()


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
def test_a_tree_of_one_number_means_the_same_everywhere():
    """ "3" is k = 3 drafts per node at every depth, up to γ; without a γ, DEFAULT_TREE_DEPTH depths (the CLI's reading).

    The live view's γ control always holds a γ ("auto" unless set), so there "3" is "3 with --gamma auto".
    """
    from specviz.lm.engine.loop import speculative_generate
    from specviz.lm.engine.settings import keyword_settings
    from specviz.widgets.live.settings import read_tree, tree_words

    pair = _pair()
    keywords, _ = keyword_settings(speculative_generate, pair, [0], tree=3)
    without_gamma = {
        "cli": cli_settings("--tree", "3"),
        "library": GenerationSettings(tree=3),
        "text": GenerationSettings.from_text(tree="3"),
        "speculative_generate": keywords,
    }
    assert {k: (s.tree, s.gamma) for k, s in without_gamma.items()} == dict.fromkeys(
        without_gamma, (3, DEFAULT_TREE_DEPTH)
    )
    app = live(pair)
    app.tree.value = " 3 "  # typed in the box, the γ control at its default, "auto"
    auto_gamma = {
        "cli": cli_settings("--tree", "3", "--gamma", "auto"),
        "library": GenerationSettings(tree=3, gamma="auto"),
        "live view, given": live(pair, tree=3).controls.settings(),
        "live view, typed": app.controls.settings(),
    }
    assert {k: (s.tree, s.gamma) for k, s in auto_gamma.items()} == dict.fromkeys(auto_gamma, (3, "auto"))
    app.gamma.value = 2
    assert (app.controls.settings().tree, app.controls.settings().gamma) == (
        cli_settings("--tree", "3", "--gamma", "2").tree,
        2,
    )
    assert tree_words(" 3 ") == "3" and read_tree("3") == checks.tree_setting("3", text=True) == 3
