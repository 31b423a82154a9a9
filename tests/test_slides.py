"""Slides for lecturers: the tutorials carry RISE slide metadata (tools/slides.py), and a deck opens and advances.

The metadata test reads the text sources (NN_*.md, both languages): the title and every ``## `` cell
open a slide, every ``### `` cell a subslide. `make notebooks` keeps it applied. The browser test
starts JupyterLab with jupyterlab-rise on a temporary copy of a tutorial given its slides by
tools/slides.py (so it does not depend on the committed files), opens the deck at /rise/<path>,
and presses the right arrow: reveal.js must move from slide 1 to slide 2.
"""

from __future__ import annotations

import doctest
import json
import os
import re
import sys
import time

import jupytext
import nbformat
import pytest
from conftest import CHROMIUM_ARGS, REPO_ROOT, free_port

sys.path.insert(0, str(REPO_ROOT / "tools"))
import slides  # noqa: E402

NOTEBOOKS = REPO_ROOT / "notebooks"
TEXTS = sorted(p for d in (NOTEBOOKS, NOTEBOOKS / "zh") for p in d.glob("*.md") if re.match(r"\d\d_", p.name))
DECK = NOTEBOOKS / "05_the_proof_in_three_steps.md"
EXPECTED = {"# ": "slide", "## ": "slide", "### ": "subslide"}
HINT = "run `make notebooks` (tools/slides.py sets the slide metadata)"


def expected_type(cell) -> str | None:
    """The slide type a cell must have by its first line (None: any)."""
    first = cell.source.lstrip("\n")
    if cell.cell_type != "markdown":
        return None
    return next((kind for prefix, kind in EXPECTED.items() if first.startswith(prefix)), None)


@pytest.mark.parametrize("path", TEXTS, ids=[f"{p.parent.name}/{p.stem}" for p in TEXTS])
def test_tutorial_has_slide_metadata(path):
    nb = jupytext.read(path)
    headed = [c for c in nb.cells if expected_type(c)]
    assert headed and nb.cells[0].source.startswith("# "), f"{path.name}: the first cell is the title"
    wrong = [
        f"{c.source.splitlines()[0][:60]!r}: {c.metadata.get('slideshow', {}).get('slide_type')}"
        for c in headed
        if c.metadata.get("slideshow", {}).get("slide_type") != expected_type(c)
    ]
    assert not wrong, (
        f"{path.relative_to(REPO_ROOT)}: {len(wrong)} heading cells without their slide type ({HINT}): {wrong[:4]}"
    )
    buried = [
        c.source.splitlines()[0][:60] for c in nb.cells if c.cell_type == "markdown" and re.search(r"\n## ", c.source)
    ]
    assert not buried, f"{path.name}: a '## ' heading inside a cell, not starting one ({HINT}): {buried}"


def test_slides_script_docstring_examples():
    result = doctest.testmod(slides)
    assert result.attempted > 0 and result.failed == 0


def test_slides_script_splits_at_headings_keeps_the_text_and_is_idempotent(tmp_path):
    copy = tmp_path / DECK.name
    copy.write_text(DECK.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "jupytext.toml").write_text((NOTEBOOKS / "jupytext.toml").read_text(encoding="utf-8"))
    before = jupytext.read(copy)
    slides.apply(copy)
    after = jupytext.read(copy)
    assert not slides.apply(copy), "a second run changed the file"
    code = [[c.source for c in nb.cells if c.cell_type == "code"] for nb in (before, after)]
    assert code[0] == code[1], "the code cells changed"
    words = [" ".join(c.source for c in nb.cells if c.cell_type == "markdown").split() for nb in (before, after)]
    assert words[0] == words[1], "the prose changed"
    kinds = [expected_type(c) for c in after.cells]
    assert [c.metadata.get("slideshow", {}).get("slide_type") for c in after.cells] == kinds
    assert kinds.count("slide") >= 5 and "subslide" in kinds
    assert after.metadata["rise"] == {"scroll": True}


@pytest.mark.slow
@pytest.mark.browser
def test_rise_deck_opens_and_advances(chromium_executable, tmp_path):
    from playwright.sync_api import sync_playwright
    from test_browser import Server, lab_command

    root = tmp_path / "root"
    root.mkdir()
    deck = slides.add_slides(jupytext.read(DECK))
    nbformat.write(deck, str(root / "deck.ipynb"))
    token = "specviz-slides-test"
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(tmp_path / "config"), JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "ws"))
    settings = tmp_path / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False})
    )
    env["JUPYTERLAB_SETTINGS_DIR"] = str(tmp_path / "settings")
    env.pop("JUPYTER_TOKEN", None)
    port = free_port()
    lab = Server("jupyterlab-rise", lab_command(port, root, token), root, tmp_path, env=env)
    errors: list[str] = []
    try:
        lab.wait_http(f"http://127.0.0.1:{port}/api/status?token={token}")
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium_executable, args=CHROMIUM_ARGS, headless=True)
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.on("pageerror", lambda e: errors.append(str(e)))
            start = time.monotonic()
            page.goto(f"http://127.0.0.1:{port}/rise/deck.ipynb?token={token}", timeout=120_000)
            present = ".reveal .slides > section.present"
            page.wait_for_selector(present, timeout=120_000)
            first = page.locator(present).inner_text()
            index = "() => [...document.querySelectorAll('.reveal .slides > section')].findIndex(s => s.classList.contains('present'))"
            assert page.evaluate(index) == 0, "the deck does not open on its first slide"
            assert "The proof in three steps" in first
            page.evaluate("() => document.activeElement && document.activeElement.blur()")  # not in an editor
            page.keyboard.press("ArrowRight")
            page.wait_for_function(f"() => ({index})() === 1", timeout=30_000)
            second = page.locator(present).inner_text()
            assert "The strategy" in second, second[:200]
            page.wait_for_timeout(1500)  # the slide transition
            page.screenshot(path=str(tmp_path / "slide-2.png"))  # for a look: pytest --basetemp=DIR
            count = page.locator(".reveal .slides > section").count()
            print(f"\nRISE deck: {count} slides, opened and advanced in {time.monotonic() - start:.1f} s")
            browser.close()
    finally:
        lab.stop()
    assert not errors, f"page errors in the deck: {errors}"
