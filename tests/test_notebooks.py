"""The notebooks: text sources in step, committed clean, structured as tutorials, and executable top to bottom.

Every notebook is a jupytext pair (notebooks/jupytext.toml): NAME.md, MyST markdown, is the text a
person reads, reviews and edits; NAME.ipynb is what Jupyter, Voila and Binder open, committed without
outputs. The two must hold the same cells (`make notebooks` = `jupytext --sync` brings them in step).
Every notebooks/*.ipynb (the tutorial series NN_*.ipynb and dashboard.ipynb) is run headlessly with
nbclient in the kernel "python3" of the running environment (the project's .venv under `make test`),
with notebooks/ as the working directory; any cell error fails the test.
"""

from __future__ import annotations

import re
from pathlib import Path

import jupytext
import nbformat
import pytest
from jupytext.config import load_jupytext_config

REPO_ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_DIR = REPO_ROOT / "notebooks"
INDEX = NOTEBOOK_DIR / "README.md"  # the map of the tutorial, not a notebook
CELL_TIMEOUT_S = 120
SYNC_HINT = "run `make notebooks` (= .venv/bin/jupytext --sync notebooks/*.md, then clear outputs)"
CELL_METADATA_COMPARED = ("tags", "slideshow")  # the cell metadata that changes how a notebook reads

ALL_NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
TUTORIALS = [p for p in ALL_NOTEBOOKS if re.match(r"\d\d_", p.name)]
TEXT_SOURCES = sorted(p for p in NOTEBOOK_DIR.glob("*.md") if p != INDEX)


def _ids(paths):
    return [p.stem for p in paths]


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
    assert len(TUTORIALS) >= 9, f"expected the tutorial series in {NOTEBOOK_DIR}, found {[p.name for p in TUTORIALS]}"
    numbers = [int(p.name[:2]) for p in TUTORIALS]
    assert numbers == list(range(1, len(numbers) + 1)), f"tutorials are not numbered 01..NN without gaps: {numbers}"


def test_notebooks_are_paired_with_myst_markdown():
    """notebooks/jupytext.toml pairs every .ipynb with a MyST .md, so JupyterLab saves both."""
    config = load_jupytext_config(str(NOTEBOOK_DIR / "dashboard.ipynb"))
    assert config is not None, "no jupytext configuration found for notebooks/ (expected notebooks/jupytext.toml)"
    pairings = [set(f.split(",")) for f in config.formats]
    assert {"ipynb", "md:myst"} in pairings, f"notebooks/jupytext.toml must pair ipynb,md:myst; has {config.formats}"


def test_every_notebook_has_its_text_source():
    notebooks, texts = {p.stem for p in ALL_NOTEBOOKS}, {p.stem for p in TEXT_SOURCES}
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
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# "), "first cell: the title"
    assert "What you will learn" in text
    check = [c.source for c in nb.cells if c.cell_type == "markdown" and "Check yourself" in c.source]
    assert check, f"{path.name} has no 'Check yourself' section"
    assert any("<details>" in s and "</details>" in s and "<summary>" in s for s in check), (
        f"{path.name}: the check-yourself answer must be hidden in a <details> block"
    )
    assert "## Summary" in text or "| **Central result** |" in text


def test_index_lists_every_tutorial():
    index = INDEX.read_text(encoding="utf-8")
    missing = [p.name for p in TUTORIALS if f"({p.name})" not in index]
    assert not missing, f"notebooks/README.md does not link {missing}"


@pytest.mark.slow
@pytest.mark.parametrize("path", ALL_NOTEBOOKS, ids=_ids(ALL_NOTEBOOKS))
def test_notebook_executes(path):
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    nb = _read(path)
    client = NotebookClient(
        nb, timeout=CELL_TIMEOUT_S, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOK_DIR)}}
    )
    try:
        client.execute()
    except CellExecutionError as e:  # the message already holds the cell source and the traceback
        pytest.fail(f"{path.name} failed to execute:\n{e}", pytrace=False)
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors, f"{path.name}: {errors[0].ename}: {errors[0].evalue}"
