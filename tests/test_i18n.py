"""The message catalogue (specviz.foundation.i18n / specviz.foundation.messages) and the Chinese dashboard, apps and figures.

* every message has non-empty English and Chinese text with the same `str.format` fields, and
  Chinese text uses full-width punctuation after Chinese characters;
* every `t("...")` in specviz/ names a message that exists, and every message is used (a
  static scan of the source, with a self-test that it finds a missing key);
* built with the language set to "zh", every figure builder (of specviz.figures and of the
  real-model views of specviz.figures) and every app (the live view on the bundled pair and
  the vLLM view included) shows no stray
  English: titles, subtitles, axis titles, legend names, annotations, hover labels, control
  descriptions, options, tooltips and HTML text hold only Chinese, symbols, numbers, token
  names and the technical words in `ALLOWED_WORDS` (the check fails on an English figure:
  see `test_stray_english_check_can_fail`);
* the dashboard's toggle rebuilds it in the other language; `specviz dashboard --lang zh`
  hands the language to Voila's kernels through $SPECVIZ_LANG.
"""

from __future__ import annotations

import ast
import html
import os
import re
import string
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import source_index

import specviz
from specviz import cli
from specviz.cli import servers
from specviz.foundation.i18n import CATALOGUE, LANGUAGES, language, set_language, t

SPECVIZ_DIR = Path(specviz.__file__).resolve().parent
P, Q = (0.6, 0.3, 0.1), (0.4, 0.5, 0.1)

# Keys built at run time from a fixed prefix (f"pitfalls.rule.{name}", f"editor.preset.{key}", f"coupling.{kind}").
DYNAMIC_PREFIXES = ("pitfalls.rule.", "editor.preset.", "coupling.")

CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")

# ASCII words allowed in Chinese text: mathematical and technical names, the tutorial's token
# names, rule names (identifiers shown as they are), dtype names, and the two language labels.
ALLOWED_WORDS = {
    "min", "max", "exp", "TV", "IS", "E_p", "E_q", "id", "one-hot", "top-k", "top-p", "dtype", "p_dtype",
    "logit", "fp64", "float64", "float32", "float16", "bfloat16", "SpecInfer", "Medusa", "EAGLE-2", "token", "specviz",
    "lab", "cat", "dog", "fish", "English", "Language",
    # names shown as they are: inputs a user types (bundled, .gguf), devices, a product, a cited paper
    "bundled", "gguf", "cpu", "cuda", "vLLM", "Leviathan", "arXiv",
}  # fmt: skip
ALLOWED_WORDS |= set(specviz.RULES)


@pytest.fixture
def zh():
    """The language set to Chinese for one test (and restored after it)."""
    before = language()
    set_language("zh")
    yield
    set_language(before)


# ----------------------------------------------------------------------------- the catalogue


def format_fields(text: str) -> set[tuple]:
    """The (name, conversion, format spec) of every `str.format` field in `text`."""
    return {(name, conv, spec) for _, name, spec, conv in string.Formatter().parse(text) if name is not None}


def test_every_message_has_both_languages_with_the_same_fields():
    assert len(CATALOGUE) >= 250
    for key, entry in CATALOGUE.items():
        assert set(entry) == set(LANGUAGES), f"{key}: languages {sorted(entry)}"
        for lang in LANGUAGES:
            assert isinstance(entry[lang], str) and entry[lang].strip(), f"{key} has no {lang} text"
        assert format_fields(entry["en"]) == format_fields(entry["zh"]), f"{key}: fields differ between en and zh"
        assert re.fullmatch(r"[a-z_]+(\.[a-z0-9_]+)+", key), f"{key}: keys are area.name"


def test_chinese_text_is_chinese_with_full_width_punctuation():
    """A zh message holds Chinese (or is a symbol-only label), and no ASCII , ; : ? ! right after a Chinese character."""
    for key, entry in CATALOGUE.items():
        zh_text = entry["zh"]
        prose = re.sub(r"\([^()]*\)", "", zh_text)  # argument lists of formulas, e.g. TV(输出, p), keep ASCII commas
        assert not re.search(r"[\u3400-\u9fff][,;:?!]", prose), f"{key}: half-width punctuation in {zh_text!r}"
        if entry["zh"] != entry["en"]:
            continue
        # identical texts are only allowed for labels made of symbols (e.g. "TV(p_dtype, p)")
        assert not stray_english(zh_text), f"{key}: zh is the English text {zh_text!r}"


def test_every_message_formats_in_both_languages():
    """Each message fills its own fields (numbers for format specs, text otherwise)."""
    for key, entry in CATALOGUE.items():
        fields = {}
        for name, _conv, spec in format_fields(entry["en"]):
            fields[name] = 1234.5 if spec and spec[-1] in "fegG%," else (3 if spec and spec[-1] == "d" else "x")
            if spec == ",":
                fields[name] = 12345
        for lang in LANGUAGES:
            assert t(key, lang=lang, **fields) if fields else t(key, lang=lang)


# ----------------------------------------------------------------------------- static scan of the source


def scan_source(source: str) -> tuple[list[str], list[str], set[str]]:
    """(literal keys of t("...") calls, f-string prefixes of t(f"...") calls, every string constant) in `source`."""
    keys, prefixes, constants = [], [], set()
    for node in source_index.nodes(source):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            constants.add(node.value)
        if not (isinstance(node, ast.Call) and node.args):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        if name != "t":
            continue
        arg = node.args[0]
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            keys.append(arg.value)
        elif isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
            prefixes.append(arg.values[0].value)
    return keys, prefixes, constants


def missing_keys(source: str) -> list[str]:
    """The keys that `t("...")` calls in `source` name but the catalogue lacks."""
    keys, prefixes, _ = scan_source(source)
    return [k for k in keys if k not in CATALOGUE] + [p for p in prefixes if not p.startswith(DYNAMIC_PREFIXES)]


def package_sources() -> dict[Path, str]:
    return {p: source_index.text(p) for p in source_index.python_files(SPECVIZ_DIR) if p.name != "messages.py"}


def test_the_scan_finds_a_missing_key():
    """Self-test: the scan reports unknown keys and unknown dynamic prefixes, and accepts known ones."""
    assert missing_keys('from specviz.foundation.i18n import t\nt("no.such.key")') == ["no.such.key"]
    assert missing_keys('i18n.t("money.title"); t(f"pitfalls.rule.{x}")') == []
    assert missing_keys('t(f"nowhere.{x}")') == ["nowhere."]


def test_every_t_call_names_an_existing_message():
    problems = {str(p.relative_to(SPECVIZ_DIR)): m for p, src in package_sources().items() if (m := missing_keys(src))}
    assert not problems, f"t() calls naming messages that do not exist: {problems}"


def test_every_message_is_used():
    """Each key appears as a string literal in specviz/ (or starts with a dynamic prefix)."""
    used: set[str] = set()
    for src in package_sources().values():
        used |= scan_source(src)[2]
    unused = [k for k in CATALOGUE if k not in used and not k.startswith(DYNAMIC_PREFIXES)]
    assert not unused, f"messages nothing uses: {unused}"
    # the dynamic ones: one message per built-in rule and per preset
    from specviz.widgets import PRESETS

    for prefix, names in (("pitfalls.rule.", specviz.RULES), ("editor.preset.", PRESETS)):
        assert {k[len(prefix) :] for k in CATALOGUE if k.startswith(prefix)} == set(names), prefix


# ----------------------------------------------------------------------------- no stray English under zh


def stray_english(text: str) -> list[str]:
    """ASCII words in `text` (HTML and plotly placeholders removed) that are not symbols, numbers or allowed names."""
    s = re.sub(r"<extra>.*?</extra>", " ", str(text))
    s = re.sub(r"%\{[^}]*\}", " ", s)
    s = re.sub(r"<[^>]*>", " ", s)
    s = html.unescape(s)
    words = re.findall(r"[A-Za-z][A-Za-z0-9_\-]*", s)
    return [
        w
        for w in words
        if len(w) > 1 and w not in ALLOWED_WORDS and not re.fullmatch(r"(t\d+|e[-+]?\d+|[A-Za-z]\d*)", w)
    ]


def figure_texts(fig) -> list[tuple[str, str]]:
    """(where, text) of every piece of text a reader sees in a plotly figure."""
    d = fig.to_plotly_json() if hasattr(fig, "to_plotly_json") else fig
    lay = d.get("layout", {})
    out = []
    title = lay.get("title", {})
    out += [("title", title.get("text")), ("subtitle", (title.get("subtitle") or {}).get("text"))]
    for k, v in lay.items():
        if re.fullmatch(r"[xy]axis\d*", k):
            out.append((k, ((v or {}).get("title") or {}).get("text")))
    out += [("annotation", a.get("text")) for a in lay.get("annotations", ())]
    for tr in d.get("data", ()):
        meta = tr.get("meta")
        out += [(f"name:{meta}", tr.get("name")), (f"hover:{meta}", tr.get("hovertemplate"))]
        out.append((f"colorbar:{meta}", ((tr.get("colorbar") or {}).get("title") or {}).get("text")))
        if tr.get("type") == "table":
            out += [("table header", v) for v in tr["header"]["values"]]
            out += [("table cell", v) for v in tr["cells"]["values"][0]]
        if tr.get("type") == "scatter" and "text" in (tr.get("mode") or ""):
            out += [(f"text:{meta}", v) for v in np.atleast_1d(tr.get("text"))]
    return [(w, str(x)) for w, x in out if x not in (None, "")]


def widget_texts(widget) -> list[tuple[str, str]]:
    """(where, text) of the text of every widget inside `widget`, and of the figures it shows."""
    import ipywidgets as W
    import plotly.graph_objects as go

    out = []

    def walk(w):
        kind = type(w).__name__
        if "specviz-language" in getattr(w, "_dom_classes", ()):
            return  # the language toggle is bilingual on purpose: "English | 中文", "Language / 语言"
        if isinstance(w, go.FigureWidget):
            out.extend((f"{kind} {where}", text) for where, text in figure_texts(w))
            return
        for attr in ("description", "tooltip", "placeholder"):
            value = getattr(w, attr, None)
            if isinstance(value, str) and value:
                out.append((f"{kind}.{attr}", value))
        if isinstance(w, (W.HTML, W.Label, W.HTMLMath)):
            out.append((f"{kind}.value", w.value))
        for label in getattr(w, "_options_labels", ()) or ():
            out.append((f"{kind}.option", label))
        for tip in getattr(w, "tooltips", ()) or ():
            out.append((f"{kind}.tooltip", tip))
        if isinstance(w, W.Tab):
            out.extend(("Tab.title", x) for x in w.titles)
        for child in getattr(w, "children", ()) or ():
            walk(child)

    walk(widget)
    return [(w, x) for w, x in out if x]


def problems_in(texts) -> list[str]:
    return [f"{where}: {text!r} -> {bad}" for where, text in texts if (bad := stray_english(text))]


def test_stray_english_check_can_fail():
    """Self-test: English text is reported, Chinese with symbols is not; an English figure and app fail."""
    assert stray_english("Step 3 of 3") == ["Step", "of"]
    assert stray_english("第 3 步 · min(p, q) + (p − q)⁺ = p，t0 与 cat") == []
    assert stray_english("%{x}: accept with %{y:.4f}<extra>out_tv</extra>") == ["accept", "with"]
    assert stray_english("<b style='color:#1a7f37'>无损</b> 1.2e-05") == []
    set_language("en")
    fig = specviz.figures.money_diagram(P, Q)
    assert problems_in(figure_texts(fig)), "an English money diagram must fail the check"
    assert any("title" in p for p in problems_in(figure_texts(fig)))
    app = specviz.widgets.gamma_app()
    assert any("description" in p for p in problems_in(widget_texts(app)))


RUN_VIEWS = (
    "per_position",
    "accepted_hist",
    "throughput",
    "gamma_sweep",
    "gamma_per_step",
    "payoff",
    "position_money",
    "real_tree",
    "acceptance_panels",
    "live_panels",
)
"""The modules of specviz.figures that show a real model's run."""


def figure_calls():
    """Every figure builder with arguments that reach all its texts (several calls where texts depend on input)."""
    from specviz import Sampling
    from specviz.exact.gamma import simulate_accepted_lengths

    sample = specviz.spec_sample(P, Q, 500, seed=0)
    return {
        "money_diagram": [((P, Q), {}), ((P, P), {"step": 3}), ((P, Q), {"step": 1})],
        "joint_table": [((P, Q), {}), ((P, Q), {"rule": "resample_target"})],
        "importance_figure": [((P, Q), {"n": 50}), (((0.5, 0.5, 0.0), (0.0, 0.5, 0.5)), {"n": 50, "f": [0, 0, 1]})],
        "rejection_figure": [((P, Q), {}), ((P, Q), {"M": 1.1}), (((0.5, 0.5, 0.0), (0.0, 0.5, 0.5)), {})],
        "acceptance_figure": [((P, Q), {}), (((0.5, 0.5, 0.0), (0.0, 0.5, 0.5)), {})],
        "empirical_figure": [((P, [60, 30, 10]), {}), ((P, [10, 10, 80]), {})],
        "convergence_figure": [((P, Q), {"ns": (10, 100), "rule": ["lossless", "lenient"]})],
        "monte_carlo_figure": [((P, Q), {}), ((P, Q), {"sample": sample})],
        "rule_figure": [((P, Q), {}), ((P, Q), {"rule": "lenient", "l": 0.5})],
        "rules_figure": [((P, Q), {})],
        "tradeoff_figure": [((P, Q), {})],
        "standardization_figure": [
            (([2.0, 1.0, 0.0], [0.0, 1.0, 2.0], 0.7), {}),
            (([2.0, 1.0, 0.0], [0.0, 1.0, 2.0], Sampling(0.0)), {"target_used": Sampling(1.0, top_k=2)}),
        ],
        "expected_tokens_figure": [((), {})],
        "speedup_heatmap": [((), {})],
        "accepted_length_figure": [((simulate_accepted_lengths(0.8, 4, 100), 0.8, 4), {})],
        "gamma_figure": [((0.8, 4), {}), ((0.8, 4), {"accepted_counts": simulate_accepted_lengths(0.8, 4, 100)})],
        "multidraft_figure": [(((0.5, 0.3, 0.15, 0.05), (0.1, 0.2, 0.3, 0.4)), {"k_max": 2})],
        "draft_tree_figure": [
            ((__import__("specviz.samplers.tree").samplers.tree.draft_tree(P, Q, 2, 2, seed=0),), {})
        ],
        "numerics_figure": [((), {"dtypes": ("float64", "float16")})],
        "coupling_figure": [((P, Q), {"n": 50})],
    }


def builder_names() -> list[str]:
    """The public figure builders of specviz.figures (names ending in _figure, _diagram, _heatmap, _table).

    Those of a real run's views (`RUN_VIEWS`) need a run: `lm_figure_calls` lists them.
    """
    import importlib

    F = specviz.figures
    run_views = {n for m in RUN_VIEWS for n in importlib.import_module(f"specviz.figures.{m}").__all__}
    return sorted(
        n
        for n in F.__all__
        if re.search(r"(_figure|_diagram|_heatmap|_table)$", n) and n != "export_figure" and n not in run_views
    )


@pytest.mark.parametrize("name", builder_names())
def test_figure_builders_show_no_english_in_chinese(name, zh):
    calls = figure_calls()[name]  # every builder has calls (test_the_listed_calls_cover_every_builder)
    if name == "numerics_figure":
        pytest.importorskip("torch")
    builder = getattr(specviz.figures, name)
    for args, kwargs in calls:
        texts = figure_texts(builder(*args, **kwargs))
        assert texts, f"{name}: no text found"
        assert not problems_in(texts), f"{name}{args!r:.60}: English left under zh:\n" + "\n".join(problems_in(texts))


def test_the_listed_calls_cover_every_builder():
    """Every public figure builder of specviz.figures has calls in figure_calls (a new one must be added)."""
    missing = [name for name in builder_names() if name not in figure_calls()]
    assert not missing, f"figure builders without a call in figure_calls: {missing}"
    assert len(builder_names()) >= 20


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
def test_apps_show_no_english_in_chinese(zh):
    W = specviz.widgets
    apps = [
        W.money_diagram_app(),
        W.monte_carlo_app(n=1000),
        W.pitfall_app(audit_n=1000),
        W.gamma_app(),
        W.multidraft_app(),
        W.standardization_app(),
        W.draft_tree_app(),
    ]
    mc, pitfalls = apps[1], apps[2]
    mc.run()  # the sampled histogram and the audit's verdict
    pitfalls.rule.value = "lossless"  # a PASS verdict
    pitfalls.rule.value = "lenient"  # the lenience slider
    apps[0].play_button.click()  # "Pause"
    apps[0].set_frame(apps[0].frames - 1)  # the morph label at its end
    problems = [p for app in apps for p in problems_in(widget_texts(app))]
    assert not problems, "English left in the apps under zh:\n" + "\n".join(problems)
    assert "通过" in mc.verdict.value or "未通过" in mc.verdict.value


def test_numerics_app_shows_no_english_in_chinese(zh):
    pytest.importorskip("torch")
    app = specviz.widgets.numerics_app(V=16)
    assert not problems_in(widget_texts(app)), "\n".join(problems_in(widget_texts(app)))


def test_app_messages_are_chinese(zh):
    """Errors the apps raise themselves (typed weights) and the hint after a core error are in Chinese."""
    app = specviz.widgets.money_diagram_app()
    app.editor.text_p.value = "abc"
    app.editor.apply_text()
    assert CJK.search(app.message_text) and "abc" in app.message_text
    app.editor.mode.value = "free"
    app.sliders_p[0].value = 0.9  # p no longer sums to 1: the core's (English) error + the hint in Chinese
    assert "归一化" in app.message_text


# ----------------------------------------------------------------------------- the real-model view under zh


def without_data(text: str, *names: str) -> str:
    """`text` without what is data, not UI text: token names in “quotes”, elements of class specviz-data
    (generated text, commands and model names as typed) and the given `names` (models, URLs)."""
    text = re.sub(r"“[^”]*”", " ", str(text))
    text = re.sub(r"<(\w+) class='[^']*specviz-data[^']*'[^>]*>.*?</\1>", " ", text, flags=re.S)
    for name in names:
        text = text.replace(html.escape(name), " ").replace(name, " ")
    return text


@pytest.fixture(scope="module")
def bundled_run():
    """The bundled pair and one speculative run on it (statistics, the tokens of every fate), built in Chinese."""
    pytest.importorskip("torch")
    from specviz.lm import load_pair, speculative_generate
    from specviz.lm.stats.stats import spec_stats

    pair = load_pair(progress=False, hf_progress=False)
    ids = pair.tokenizer.encode("ROMEO:\n", add_special_tokens=False)
    result = speculative_generate(pair, ids, max_new_tokens=60, gamma=4, seed=0)
    return pair, result, spec_stats(result)


def lm_figure_calls(pair, result, stats):
    """name -> (builder, calls): every figure builder of a real run's views (specviz.figures), the vLLM view's too."""
    from specviz import figures as LF
    from specviz.figures.position_money import token_label
    from specviz.figures.run_data import other_label
    from specviz.lm import speculative_generate
    from specviz.widgets.live.closeup import token_closeup

    fates = result.fates()
    closeups = [token_closeup(pair, result, fates.index(f)) for f in ("accepted", "resampled", "bonus")]
    p, q = (0.7, 0.2, 0.1), (0.3, 0.3, 0.4)
    sweep = ((1, 2, 3), (1.2, 1.4, 1.3), (1.3, 1.5, 1.6), (1.1, 1.3, 1.2))
    tree_run = speculative_generate(pair, result.prompt_ids, max_new_tokens=40, gamma=3, tree=(3, 2, 1), seed=0)
    trees = [s for s in tree_run.steps if s.tree is not None]
    kinds = {s.kind: s for s in trees}  # a resampled step and a bonus step, where the run has both
    calls = {
        "per_position_figure": [((stats,), {}), ((None,), {"gamma": 3})],
        "accepted_hist_figure": [((stats,), {}), ((None,), {"gamma": 3})],
        "throughput_figure": [((), {}), ((120.0,), {}), ((120.0, 80.0, 110.0), {})],
        "gamma_sweep_figure": [((), {}), (sweep, {}), (sweep, {"auto": 1.25})],
        "gamma_steps_figure": [((), {}), (([4, 0, 2], [4, 0, 1], "auto"), {}), (([3, 3], [1, 3], 3), {})],
        "payoff_figure": [((0.7,), {})],
        "position_money_diagram": [((p, q, ["a", other_label(), "b"]), {})]
        + [((c["p"], c["q"], c["names"], c["title"], c["subtitle"]), {}) for c in closeups if c["q"] is not None],
        "target_only_figure": [((c["p"], c["names"], c["title"], c["subtitle"]), {}) for c in closeups[2:]]
        + [(((0.5, 0.5), ["a", "b"]), {})],
        "live_figure": [
            ((None,), {}),
            ((stats, 4, (120.0, 80.0, 110.0), sweep, closeups[1]["patch"]), {}),
            ((stats, 4, (120.0, 80.0, 110.0), sweep, closeups[2]["patch"]), {}),
            ((stats, 4), {"gamma_steps": ([4, 0, 2], [4, 0, 1], "auto")}),
        ],
        "acceptance_panels_figure": [((stats,), {}), ((None,), {})],
        "real_tree_figure": [((s,), {"token_text": lambda i: token_label(pair.tokenizer, i)}) for s in kinds.values()],
    }
    return {name: (getattr(LF, name), args) for name, args in calls.items()}


@pytest.mark.slow
def test_lm_figures_show_no_english_in_chinese(zh, bundled_run):
    import importlib

    from specviz import figures as LF

    calls = lm_figure_calls(*bundled_run)
    views = [importlib.import_module(f"specviz.figures.{m}") for m in RUN_VIEWS]
    builders = sorted(n for v in views for n in v.__all__ if re.search(r"(_figure|_diagram)$", n))
    assert not [n for n in builders if n not in calls], "a figure builder of a real run's views has no call listed"
    problems = []
    for name, (builder, arg_list) in calls.items():
        for args, kwargs in arg_list:
            texts = [(w, without_data(x)) for w, x in figure_texts(builder(*args, **kwargs))]
            assert texts, f"{name}: no text found"
            problems += [f"{name}: {p}" for p in problems_in(texts)]
    assert not problems, "English left in the real-model figures under zh:\n" + "\n".join(problems)
    set_language("en")  # the same check fails on the English figures (the fixture restores the language)
    assert problems_in(figure_texts(LF.live_figure(None))) and problems_in(figure_texts(LF.payoff_figure(0.7)))


@pytest.mark.slow
def test_live_app_on_the_bundled_pair_shows_no_english_in_chinese(zh, bundled_run, monkeypatch, tmp_path):
    """The live view after a run with its baseline, a close-up of each fate, a γ sweep, the formatted prompt,
    a γ-auto run and sweep, an unfetched model and a bad prompt."""
    from specviz.lm.load import catalog
    from specviz.widgets.live import live_app

    pair = bundled_run[0]
    app = live_app(pair, max_new_tokens=40, gamma=4, ar_baseline=True, refresh_s=0.05)
    seen = widget_texts(app)  # before any run: placeholders, empty panels
    result = app.generate(blocking=True)
    assert result is not None and not app.message_text, app.message_text
    for fate in ("accepted", "resampled", "bonus"):
        if fate in app.token_fates:
            app.select_token(app.token_fates.index(fate))
            seen += widget_texts(app)
    assert app.gamma_sweep(blocking=True, gammas=(1, 2)) is not None
    seen += widget_texts(app)
    app.show_prompt.value = True  # what the model reads
    assert "specviz-formatted-prompt" in app.controls.formatted_prompt.value
    app.gamma.value = "auto"
    assert app.generate(blocking=True) is not None and not app.message_text, app.message_text
    assert app.gamma_sweep(blocking=True, gammas=(1,)) is not None and app.sweep_data["auto"] is not None
    seen += widget_texts(app)
    monkeypatch.setenv("SPECVIZ_CACHE", str(tmp_path))  # nothing fetched here
    app.load("smollm2-135m", "prompt-lookup")
    assert app.pair is pair and CJK.search(app.message_text) and "尚未下载" in app.pair_choice.label
    seen += widget_texts(app)
    app.prompt.value = ""
    assert app.generate(blocking=True) is None and CJK.search(app.message_text)
    seen += widget_texts(app)
    names = (pair.target.name, pair.draft.name, *catalog.MODELS)  # model names are shown as they are typed
    generated = "<div class='specviz-text'"  # the prompt and the generated text are data (Shakespeare), not UI text
    problems = problems_in([(w, without_data(x, *names)) for w, x in seen if not x.startswith(generated)])
    assert not problems, "English left in the live view under zh:\n" + "\n".join(sorted(set(problems)))
    assert "完成" in app.status.value or "γ 扫描" in app.status.value
    assert all(CJK.search(t_) for t_ in (app.legend.value, app.stats_html.value, app.payoff_html.value))
    assert all(CJK.search(t_) for t_ in (app.steps_html.value, app.models_hint.value))


def test_live_jobs_and_fates_speak_chinese(zh):
    """The "busy" error names the job in Chinese; the token fates and the prompt errors are Chinese."""
    import threading

    pytest.importorskip("torch")
    from specviz.lm.stats.fates import FATE_LABELS
    from specviz.widgets.live.jobs import JobRunner
    from specviz.widgets.live.sweep import prompt_ids_for

    errors, release = [], threading.Event()
    jobs = JobRunner(on_error=errors.append)
    jobs.start("generate", release.wait, blocking=False)
    jobs.start("sweep", lambda: None, blocking=True)
    release.set()
    assert jobs.wait(5)
    assert errors == [t("live.busy", job="生成")] and "正忙" in errors[0]
    assert [FATE_LABELS[f] for f in ("accepted", "resampled")] == ["被接受的草稿", "拒绝后重采样"]
    assert FATE_LABELS["bonus"] == t("live.fate_bonus", lang="zh") != t("live.fate_bonus", lang="en")

    class NoTokenizerPair:
        tokenizer = None
        target = type("M", (), {"vocab_size": 4})()

    for text in ("", "abc", "9"):
        with pytest.raises(ValueError) as exc:
            prompt_ids_for(NoTokenizerPair(), text)
        assert CJK.search(str(exc.value)) and not stray_english(without_data(str(exc.value).replace("'abc'", "")))


def test_vllm_app_shows_no_english_in_chinese(zh):
    import dataclasses

    pytest.importorskip("torch")
    from specviz.lm.serve.vllm import parse_vllm_metrics
    from specviz.widgets.live.vllm import vllm_live_app

    counts = {"drafts": [10.0], "draft_tokens": [30.0], "accepted_tokens": [15.0], "accepted_tokens_per_pos": [8, 5, 2]}
    page = ""  # a Prometheus page with vLLM's four counters (as in specviz.lm.serve.vllm's doctest)
    for name, values in counts.items():
        page += f"# TYPE vllm:spec_decode_num_{name}_total counter\n"
        for i, v in enumerate(values):
            pos = f',position="{i}"' if name.endswith("per_pos") else ""
            page += f'vllm:spec_decode_num_{name}_total{{engine="0"{pos}}} {float(v)}\n'
    url = "http://127.0.0.1:9"
    app = vllm_live_app(url, timeout=0.5)
    seen = widget_texts(app)
    totals = parse_vllm_metrics(page, url)
    for counters in (totals, dataclasses.replace(totals, seconds=5.0, restarted=True)):
        app.show(counters)
        seen += widget_texts(app)
    problems = problems_in([(w, without_data(x, totals.url, url)) for w, x in seen])
    assert not problems, "English left in the vLLM view under zh:\n" + "\n".join(sorted(set(problems)))
    assert "服务器重启过" in app.stats_html.value and CJK.search(app.status.value)


# ----------------------------------------------------------------------------- the dashboard's language


EN_TITLES = ["Money diagram", "Sampling check", "Pitfalls", "γ-steps & trees", "Numerics"]


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
def test_dashboard_toggle_rebuilds_in_the_other_language():
    before = language()
    try:
        d = specviz.dashboard_app(lang="en", real_models=lambda: specviz.widgets.gamma_app())
        assert d.titles == EN_TITLES + ["Real models"] and d.language.value == "en"
        d.tabs.selected_index = 1
        old = d.apps["Sampling check"]
        d.language.value = "zh"  # what a click on 中文 does
        assert language() == "zh"
        assert all(CJK.search(x) for x in d.titles), d.titles
        assert tuple(d.tabs.titles) == tuple(d.titles)
        assert d.tabs.selected_index == 1 and set(d.apps) == {"采样检验"}  # the open tab, rebuilt at once
        assert isinstance(d.apps["采样检验"], specviz.widgets.MonteCarloApp) and d.apps["采样检验"] is not old
        assert old.comm is None  # the replaced app was closed
        body = d.tabs.children[1]
        assert CJK.search(body.children[0].value) and body.children[1] is d.apps["采样检验"]
        assert CJK.search(d.heading.value) and CJK.search(d.intro.value) and d.a11y.lang == "zh-CN"
        assert not problems_in(widget_texts(d)), "\n".join(problems_in(widget_texts(d)))
        d.tabs.selected_index = 0  # other tabs are built in Chinese on first view
        assert isinstance(d.apps["质量分解图"], specviz.widgets.MoneyDiagramApp)
        d.set_language("en")
        assert d.language.value == "en" and d.titles == EN_TITLES + ["Real models"]
        assert set(d.apps) == {"Money diagram"} and "whole proof" in d.tabs.children[0].children[0].value
        assert d.apps["Money diagram"].figure.layout.title.text.startswith("The money diagram")
    finally:
        set_language(before)


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
def test_dashboard_in_chinese_builds_every_tab_and_keeps_fixed_titles():
    import ipywidgets as W

    before = language()
    try:
        fixed = W.HTML("kept")
        d = specviz.dashboard_app(lang="zh", lazy=False, extra_tabs=[("Extra", fixed, "dashboard.pitfalls_text")])
        assert d.titles[-1] == "Extra" and d.apps["Extra"] is fixed  # a fixed title stays; a key is translated
        assert CJK.search(d.tabs.children[-1].children[0].value)
        assert not [x for x in d.titles[:-1] if not CJK.search(x)]
        d.set_language("en")
        assert d.apps == {"Money diagram": d.apps["Money diagram"]} and fixed.comm is not None  # fixed: not closed
        with pytest.raises(ValueError, match="unknown language"):
            d.set_language("fr")
    finally:
        set_language(before)


def test_real_models_tab_without_its_extra_shows_a_message():
    def no_torch():
        raise ImportError("No module named 'torch'")

    d = specviz.dashboard_app(lang="en", real_models=no_torch)
    d.tabs.selected_index = len(d.titles) - 1
    assert "not available in this installation" in d.apps["Real models"].value
    assert "specviz-error" in d.apps["Real models"].value


# ----------------------------------------------------------------------------- command line and environment


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
def test_specviz_lang_sets_the_initial_language():
    code = "import specviz.foundation.i18n as i; print(i.language(), i.t('dashboard.money'))"
    for value, want in (("zh", "zh 质量分解图"), ("en", "en Money diagram"), ("fr", "en Money diagram")):
        env = dict(os.environ, SPECVIZ_LANG=value)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        assert out.stdout.strip() == want


def test_dashboard_lang_reaches_voila_through_the_environment(tmp_path, monkeypatch, capsys):
    (tmp_path / "dashboard.ipynb").write_text("{}")
    started = {}
    monkeypatch.setattr(servers, "exec_server", lambda cmd, cwd: started.update(cmd=cmd, env=dict(os.environ)) or 0)
    monkeypatch.delenv("SPECVIZ_LANG", raising=False)
    assert cli.main(["dashboard", "--notebooks", str(tmp_path), "--lang", "zh"]) == 0
    assert started["env"]["SPECVIZ_LANG"] == "zh"
    assert "(language: zh)" in capsys.readouterr().out
    monkeypatch.delenv("SPECVIZ_LANG", raising=False)
    assert cli.main(["dashboard", "--notebooks", str(tmp_path)]) == 0
    assert "SPECVIZ_LANG" not in started["env"] and "(language: en)" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        cli.main(["dashboard", "--notebooks", str(tmp_path), "--lang", "fr"])
    assert exc.value.code == 2 and "invalid choice: 'fr'" in capsys.readouterr().err


# ----------------------------------------------------------------------------- fonts for static images


@pytest.mark.slow
def test_static_images_of_chinese_text_show_glyphs_not_boxes():
    """Two different 5-character Chinese titles must give different PNGs (without a CJK font both are 5 equal boxes).

    Needs a CJK font that Chromium finds (fonts-wqy-microhei, in tools/system-packages.txt: make test and .ci/run install it).
    """
    import plotly.graph_objects as go

    from specviz.figures.static import figure_png, static_image_problem

    def png(text):
        fig = go.Figure()
        fig.update_layout(title=dict(text=text, font=dict(size=28)), width=320, height=120, margin=dict(t=50, b=10))
        fig.update_xaxes(visible=False)
        fig.update_yaxes(visible=False)
        return figure_png(fig)

    first, other, again = png("质量分解图"), png("常见的陷阱"), png("质量分解图")
    if first is None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"no static images under CI=true: {static_image_problem()}")
        pytest.skip(f"no static image export here: {static_image_problem()}")
    assert first == again, "static export is not deterministic: the comparison below would mean nothing"
    assert first != other, "Chinese glyphs render as identical boxes: install a CJK font (fonts-wqy-microhei)"
