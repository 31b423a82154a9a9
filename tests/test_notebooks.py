"""The notebooks: text sources in step, committed clean, structured as tutorials, and executable top to bottom.

Every notebook is a jupytext pair (notebooks/jupytext.toml): NAME.md, MyST markdown, is the text a
person reads, reviews and edits; NAME.ipynb is what Jupyter, Voila and Binder open, committed without
outputs. The two must hold the same cells (`make notebooks` = `jupytext --sync` brings them in step).
Every English notebook (the tutorial series NN_*, solutions and dashboard) and one Chinese twin
(`book.SUITE_ZH`; the other twins' code equals the English, checked here) is run headlessly in
the kernel "python3" of the running environment (the project's .venv under `make test`), with
notebooks/ as the working directory; any cell error fails the test. The runs go through tools/book.py:
each text source is executed once, as myst-nb reads it, into the jupyter-cache the book (`make site`,
tests/test_site.py) is built from, so the book shows the outputs checked here and nothing runs twice.
The cache is keyed by the specviz sources and the installed packages' versions besides each
notebook's code: any change to either executes the notebook again.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import jupytext
import nbformat
import pytest
from jupytext.config import load_jupytext_config

from specviz.figures.static import PLACEHOLDER_B64 as DEFERRED_B64  # a placeholder PNG, encoded

REPO_ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_DIR = REPO_ROOT / "notebooks"
INDEX = NOTEBOOK_DIR / "README.md"  # the map of the tutorial, not a notebook
sys.path.insert(0, str(REPO_ROOT / "tools"))
import book  # noqa: E402

SYNC_HINT = "run `make notebooks` (= .venv/bin/jupytext --sync notebooks/*.md, then clear outputs)"
CELL_METADATA_COMPARED = ("tags", "slideshow")  # the cell metadata that changes how a notebook reads

ZH_DIR = NOTEBOOK_DIR / "zh"  # the Chinese twins: same file names, same code cells, Chinese prose
ALL_NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb")) + sorted(ZH_DIR.glob("*.ipynb"))
TUTORIALS = [p for p in ALL_NOTEBOOKS if re.match(r"\d\d_", p.name)]
EN_TUTORIALS = [p for p in TUTORIALS if p.parent == NOTEBOOK_DIR]
TEXT_SOURCES = sorted(
    p for p in [*NOTEBOOK_DIR.glob("*.md"), *ZH_DIR.glob("*.md")] if p.name not in ("README.md", "CLAIMS.md")
)
SETUP_CALL = re.compile(r"""sv\.notebook_setup\(lang=["'](en|zh)["']\)""")
MARKERS = {  # what every tutorial's prose holds, per language
    "en": {"goals": "What you will learn", "check": "Check yourself", "summary": "## Summary"},
    "zh": {"goals": "你将学到", "check": "自我检验", "summary": "## 小结"},
}


def _ids(paths):
    return [("zh/" if p.parent == ZH_DIR else "") + p.stem for p in paths]


def _lang(path: Path) -> str:
    return "zh" if path.parent == ZH_DIR else "en"


def _read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(str(path), as_version=4)


def _markdown(nb) -> str:
    return "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def _cell_summary(cell) -> tuple:
    """What must agree between a notebook and its text source: the kind, the source, tags and slide type."""
    meta = {k: cell.metadata[k] for k in CELL_METADATA_COMPARED if k in cell.metadata}
    return cell.cell_type, cell.source, meta


def pair_differences(ipynb: Path, text: Path) -> list[str]:
    """Where the notebook `ipynb` and its MyST text source `text` disagree (empty when in step)."""
    nb, src = _read(ipynb), jupytext.read(text)
    problems = []
    fmt = src.metadata.get("jupytext", {}).get("text_representation", {}).get("format_name")
    if fmt != "myst":
        problems.append(f"{text.name} is not MyST markdown (its header says format_name: {fmt!r})")
    for name, meta in ((ipynb.name, nb.metadata), (text.name, src.metadata)):
        if meta.get("kernelspec", {}).get("name") != "python3":
            problems.append(f"{name}: kernelspec must be python3")
    a, b = [_cell_summary(c) for c in nb.cells], [_cell_summary(c) for c in src.cells]
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            what = "type" if x[0] != y[0] else "source" if x[1] != y[1] else "metadata"
            first_line = (y[1].splitlines() or [""])[0][:70]
            problems.append(f"cell {i} differs ({what}); in {text.name} it starts {first_line!r}")
            break
    if len(a) != len(b):
        problems.append(f"{ipynb.name} has {len(a)} cells, {text.name} has {len(b)}")
    return problems


def test_tutorial_series_exists():
    assert len(EN_TUTORIALS) >= 9, (
        f"expected the tutorial series in {NOTEBOOK_DIR}, found {[p.name for p in TUTORIALS]}"
    )
    numbers = [int(p.name[:2]) for p in EN_TUTORIALS]
    assert numbers == list(range(1, len(numbers) + 1)), f"tutorials are not numbered 01..NN without gaps: {numbers}"


def test_notebooks_are_paired_with_myst_markdown():
    """notebooks/jupytext.toml pairs every .ipynb with a MyST .md, so JupyterLab saves both."""
    config = load_jupytext_config(str(NOTEBOOK_DIR / "dashboard.ipynb"))
    assert config is not None, "no jupytext configuration found for notebooks/ (expected notebooks/jupytext.toml)"
    pairings = [set(f.split(",")) for f in config.formats]
    assert {"ipynb", "md:myst"} in pairings, f"notebooks/jupytext.toml must pair ipynb,md:myst; has {config.formats}"


def test_every_notebook_has_its_text_source():
    notebooks, texts = {p.with_suffix("") for p in ALL_NOTEBOOKS}, {p.with_suffix("") for p in TEXT_SOURCES}
    assert notebooks - texts == set(), f"notebooks without a .md text source ({SYNC_HINT}): {sorted(notebooks - texts)}"
    assert texts - notebooks == set(), f"text sources without a .ipynb ({SYNC_HINT}): {sorted(texts - notebooks)}"


@pytest.mark.parametrize("path", ALL_NOTEBOOKS, ids=_ids(ALL_NOTEBOOKS))
def test_notebook_in_step_with_its_text_source(path):
    text = path.with_suffix(".md")
    if not text.exists():
        pytest.fail(f"{text.name} is missing; {SYNC_HINT}", pytrace=False)
    problems = pair_differences(path, text)
    assert not problems, f"{path.name} and {text.name} are out of step; {SYNC_HINT}:\n  " + "\n  ".join(problems)


def test_pair_check_catches_an_edit(tmp_path):
    """The in-step check fails on an edited cell, a changed cell type, an added cell and a lost tag."""
    source = NOTEBOOK_DIR / "10_recap.md"
    nb = jupytext.read(source)
    ipynb = tmp_path / "10_recap.ipynb"
    nbformat.write(nb, str(ipynb))
    assert pair_differences(ipynb, source) == []

    def edited(change) -> list[str]:
        copy = jupytext.read(source)
        change(copy)
        text = tmp_path / "10_recap.md"
        jupytext.write(copy, str(text), fmt="md:myst")
        return pair_differences(ipynb, text)

    def edit_prose(n):
        n.cells[0].source += "\nOne more sentence."

    def make_code(n):
        n.cells[0] = nbformat.v4.new_code_cell(n.cells[0].source)

    def tag(n):
        n.cells[1].metadata["tags"] = ["hide-input"]

    assert "differs (source)" in " ".join(edited(edit_prose))
    assert "differs (type)" in " ".join(edited(make_code))
    added = edited(lambda n: n.cells.append(nbformat.v4.new_markdown_cell("New.")))
    assert f"has {len(nb.cells) + 1}" in " ".join(added), added
    assert "differs (metadata)" in " ".join(edited(tag))


@pytest.mark.parametrize("path", ALL_NOTEBOOKS, ids=_ids(ALL_NOTEBOOKS))
def test_committed_without_outputs(path):
    nb = _read(path)
    nbformat.validate(nb)
    assert nb.nbformat == 4
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3", "kernelspec must be python3"
    assert "widgets" not in nb.metadata, f"{path.name} holds saved widget state: {SYNC_HINT}"
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            assert not cell.outputs, f"cell {i} of {path.name} has outputs: {SYNC_HINT}"
            assert cell.execution_count is None, f"cell {i} of {path.name} has an execution count: {SYNC_HINT}"


@pytest.mark.parametrize("path", TUTORIALS, ids=_ids(TUTORIALS))
def test_tutorial_structure(path):
    """Learning goals first, a 'Check yourself' question with a folded <details> answer, a summary."""
    nb = _read(path)
    text = _markdown(nb)
    marks = MARKERS[_lang(path)]
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# "), "first cell: the title"
    assert marks["goals"] in text
    check = [c.source for c in nb.cells if c.cell_type == "markdown" and marks["check"] in c.source]
    assert check, f"{path.name} has no {marks['check']!r} section"
    assert any("<details>" in s and "</details>" in s and "<summary>" in s for s in check), (
        f"{path.name}: the check-yourself answer must be hidden in a <details> block"
    )
    assert marks["summary"] in text or "| **Central result** |" in text


@pytest.mark.parametrize("path", TUTORIALS, ids=_ids(TUTORIALS))
def test_tutorial_sets_up_its_language_first(path):
    """The first code cell calls sv.notebook_setup(lang=...) with the notebook's own language."""
    code = [c.source for c in _read(path).cells if c.cell_type == "code"]
    found = SETUP_CALL.findall(code[0]) if code else []
    assert found == [_lang(path)], f"{path.name}: first code cell must call sv.notebook_setup(lang={_lang(path)!r})"


def code_differences(en: Path, zh: Path) -> list[str]:
    """Where the code cells of a tutorial and its Chinese twin differ, beyond the language of notebook_setup."""

    def code(path):
        return [
            SETUP_CALL.sub('sv.notebook_setup(lang="en")', c.source) for c in _read(path).cells if c.cell_type == "code"
        ]

    a, b = code(en), code(zh)
    problems = [
        f"code cell {i} differs: {x.splitlines()[:1]} vs {y.splitlines()[:1]}"
        for i, (x, y) in enumerate(zip(a, b))
        if x != y
    ]
    if len(a) != len(b):
        problems.append(f"{len(a)} code cells in English, {len(b)} in Chinese")
    return problems


def english_twins():
    return [p for p in ALL_NOTEBOOKS if p.parent == NOTEBOOK_DIR and p.name != "dashboard.ipynb"]


@pytest.mark.parametrize("path", english_twins(), ids=_ids(english_twins()))
def test_chinese_twin_has_the_same_code(path):
    """Every tutorial (and the solutions notebook) exists in Chinese with identical code cells."""
    twin = ZH_DIR / path.name
    assert twin.exists(), f"{path.name} has no Chinese twin at notebooks/zh/{path.name}"
    problems = code_differences(path, twin)
    assert not problems, f"{path.name} and zh/{path.name}: " + "; ".join(problems[:3])
    assert re.search(r"[\u4e00-\u9fff]", _markdown(_read(twin))), f"zh/{path.name} has no Chinese prose"


def test_twin_check_catches_a_code_edit(tmp_path):
    """The code comparison fails when a code cell of the twin changes, and ignores only the setup language."""
    en = NOTEBOOK_DIR / "10_recap.ipynb"
    nb = _read(en)
    first = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
    nb.cells[first].source = nb.cells[first].source.replace('lang="en"', 'lang="zh"')
    twin = tmp_path / "10_recap.ipynb"
    nbformat.write(nb, str(twin))
    assert code_differences(en, twin) == []
    last = max(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
    nb.cells[last].source += "\nprint('extra')"
    nbformat.write(nb, str(twin))
    assert "differs" in " ".join(code_differences(en, twin))


@pytest.mark.parametrize("path", EN_TUTORIALS, ids=_ids(EN_TUTORIALS))
def test_tutorial_has_checked_exercises(path):
    """2-4 exercises per tutorial in specviz.exercises, each checked by a code cell of the notebook."""
    from specviz import exercises

    number = path.name[:2]
    found = [ex.id for ex in exercises.exercises(number)]
    assert 2 <= len(found) <= 4, f"{path.name}: {len(found)} exercises registered for tutorial {number} (want 2-4)"
    code = "\n".join(c.source for c in _read(path).cells if c.cell_type == "code")
    unchecked = [i for i in found if not re.search(rf"""exercises\.check\(["']{re.escape(i)}["']""", code)]
    assert not unchecked, f"{path.name} never calls sv.exercises.check on {unchecked}"


def test_index_lists_every_tutorial():
    index = INDEX.read_text(encoding="utf-8")
    missing = [p.name for p in EN_TUTORIALS if f"({p.name})" not in index]
    zh_index = (ZH_DIR / "README.md").read_text(encoding="utf-8")
    missing += [f"zh/{p.name}" for p in TUTORIALS if p.parent == ZH_DIR and f"({p.name})" not in zh_index]
    assert not missing, f"notebooks/README.md does not link {missing}"


@pytest.fixture(scope="session")
def executed_notebooks(request, notebook_jobs) -> dict[Path, dict]:
    """The text source of every notebook this session's test_notebook_executes selected (`-k 07_pitfalls`:
    that one) executed (`notebook_jobs` at a time), or its outputs from the cache of an earlier run of this very tree
    and environment; keyed by the text source's path."""
    selected = {
        item.callspec.params["path"].with_suffix(".md")
        for item in request.session.items
        if getattr(item, "originalname", "") == "test_notebook_executes"
    }
    return book.execute_all([p for p in TEXT_SOURCES if p in selected], jobs=notebook_jobs)


def test_the_runs_cover_every_notebook():
    assert sorted(book.sources()) == TEXT_SOURCES


def test_cache_key_ignores_sys_path(tmp_path, monkeypatch):
    """`make test` (pytest's sys.path) and `make site` (tools/ first) find the same executed notebooks:
    a distribution that sys.path adds (a checkout's specviz.egg-info) does not change the key."""
    before = book.environment_digest()
    extra = tmp_path / "extra_pkg-1.0.dist-info"
    extra.mkdir()
    (extra / "METADATA").write_text("Metadata-Version: 2.1\nName: extra-pkg\nVersion: 1.0\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert book.environment_digest() == before


def test_cache_lock_makes_a_second_process_wait(tmp_path):
    """Two pytest-xdist workers (or `make site` beside `make test`) never fill the notebook cache at once:
    while one holds book.cache_lock, another process cannot take it."""
    import subprocess

    probe = (
        "import fcntl, sys; h = open(sys.argv[1], 'w')\n"
        "try: fcntl.flock(h, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
        "except BlockingIOError: sys.exit(3)\n"
    )
    lock_file = str(tmp_path / ".lock")
    with book.cache_lock(tmp_path):
        held = subprocess.run([sys.executable, "-c", probe, lock_file]).returncode
    free = subprocess.run([sys.executable, "-c", probe, lock_file]).returncode
    assert (held, free) == (3, 0)


# Executed in the suite: every English notebook and one Chinese twin whole (figures, apps and exercise
# feedback in Chinese). The other twins' code cells equal the English (test_chinese_twin_has_the_same_code)
# and their bilingual strings agree with the English ones (test_bilingual_strings_agree); `make site`
# executes them all.
SUITE_UNEXECUTED = {p.with_suffix(".ipynb") for p in book.suite_unexecuted()}
SUITE_RUNS = [p for p in ALL_NOTEBOOKS if p not in SUITE_UNEXECUTED]


def test_the_suite_runs_one_chinese_twin_whole_and_skips_only_twins():
    assert ZH_DIR / book.SUITE_ZH.replace(".md", ".ipynb") in SUITE_RUNS
    assert all(p.parent == ZH_DIR and (NOTEBOOK_DIR / p.name).exists() for p in SUITE_UNEXECUTED)
    assert {p for p in ALL_NOTEBOOKS if p.parent == NOTEBOOK_DIR} <= set(SUITE_RUNS)


def bilingual_problems(source: str) -> list[str]:
    """Where a dict of {"en": ..., "zh": ...} in notebook code holds values of another shape in the two
    languages: another type, tuple length, or set of format fields ({a1}, {tv:.3f}), which only a run in
    that language would show."""
    import ast
    import string

    def shape(value):
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            fields = sorted({f for _, f, _, _ in string.Formatter().parse(value.value) if f is not None})
            return ("str", tuple(fields))
        if isinstance(value, (ast.Tuple, ast.List)):
            return (type(value).__name__, tuple(shape(v) for v in value.elts))
        return (type(value).__name__,)

    problems = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Dict):
            continue
        keys = [k.value if isinstance(k, ast.Constant) else None for k in node.keys]
        if sorted(k for k in keys if k is not None) != ["en", "zh"]:
            continue
        en, zh = (shape(node.values[keys.index(lang)]) for lang in ("en", "zh"))
        if en != zh:
            problems.append(f"line {node.lineno}: en {en} vs zh {zh}")
    return problems


@pytest.mark.parametrize("path", EN_TUTORIALS, ids=_ids(EN_TUTORIALS))
def test_bilingual_strings_agree(path):
    """The strings a notebook shows in each language take the same format fields (the code is one)."""
    problems = [
        f"code cell {i}: {x}"
        for i, c in enumerate(_read(path).cells)
        if c.cell_type == "code"
        for x in bilingual_problems(c.source)
    ]
    assert not problems, f"{path.name}: {problems}"


def test_bilingual_check_catches_a_missing_field():
    good = 'says = {"en": ("a {x:.2f}", "b"), "zh": ("甲 {x:.3f}", "乙")}'
    assert bilingual_problems(good) == []
    assert bilingual_problems(good.replace("甲 {x:.3f}", "甲 {y}")) == [
        "line 1: en ('Tuple', (('str', ('x',)), ('str', ()))) vs zh ('Tuple', (('str', ('y',)), ('str', ())))"
    ]
    assert len(bilingual_problems('d = {"en": ("a", "b"), "zh": ("甲",)}')) == 1
    assert bilingual_problems('d = {"en": "a", "fr": "b {x}"}') == []


@pytest.mark.slow
@pytest.mark.timeout(1800)  # the first test waits for the whole run (about two minutes on two cores)
@pytest.mark.parametrize("path", SUITE_RUNS, ids=_ids(SUITE_RUNS))
def test_notebook_executes(path, executed_notebooks):
    run = executed_notebooks[path.with_suffix(".md")]
    if run["error"]:  # the traceback holds the cell source
        pytest.fail(f"{path.name} failed to execute:\n{run['error']}", pytrace=False)
    nb = run["nb"]
    code = [c for c in nb.cells if c.cell_type == "code" and c.source.strip()]
    assert all(c.execution_count for c in code), f"{path.name}: not every code cell ran"
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors, f"{path.name}: {errors[0].ename}: {errors[0].evalue}"
    if path.name != "dashboard.ipynb":
        assert_static_pictures(nb, path.name)


def static_picture_problems(nb) -> list[str]:
    """Outputs a reader without a kernel would see as nothing: plotly figures without a PNG, apps without a snapshot."""
    problems = []
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "application/vnd.plotly.v1+json" in data and "image/png" not in data:
                problems.append(f"cell {i}: a plotly figure without a static PNG")
            html = data.get("text/html", "")
            if DEFERRED_B64 in str(data.get("image/png", "")) + str(html):
                problems.append(f"cell {i}: a deferred PNG that was never drawn (tools/book.py _execute)")
            static = "<img" in html or "specviz-predict-static" in html  # a predict box's snapshot is text only
            if "application/vnd.jupyter.widget-view+json" in data and not static:
                problems.append(f"cell {i}: a widget without a static snapshot")
    return problems


def assert_static_pictures(nb, name: str) -> None:
    """Every figure and app output carries its static picture (needs Chromium for kaleido; CI has it)."""
    from specviz.figures.export import find_browser

    if find_browser() is None and os.environ.get("CI") != "true":
        return  # no browser here: kaleido cannot draw; CI installs Chromium, so this never skips there
    problems = static_picture_problems(nb)
    assert not problems, f"{name}: " + "; ".join(problems[:5])


def test_static_picture_check_can_fail():
    cell = nbformat.v4.new_code_cell("fig")
    cell.outputs = [nbformat.v4.new_output("display_data", data={"application/vnd.plotly.v1+json": {}})]
    widget = nbformat.v4.new_code_cell("app")
    view = {"application/vnd.jupyter.widget-view+json": {}, "text/html": "<div></div>"}
    widget.outputs = [nbformat.v4.new_output("display_data", data=view)]
    nb = nbformat.v4.new_notebook(cells=[cell, widget])
    assert len(static_picture_problems(nb)) == 2
    cell.outputs[0].data["image/png"] = "iVBOR"
    widget.outputs[0].data["text/html"] = "<img src='data:image/png;base64,iVBOR'>"
    assert static_picture_problems(nb) == []
    cell.outputs[0].data["image/png"] = DEFERRED_B64 + "MTIz"  # a placeholder nobody drew
    assert len(static_picture_problems(nb)) == 1
