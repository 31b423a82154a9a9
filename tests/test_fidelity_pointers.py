"""The fidelity table of notebooks/README.md: a well-formed Markdown table whose pointers name real notebook sections.

Each row of "Fidelity to the source tutorial" points at the notebook section that covers a source item, as a link
`NN_name.ipynb#anchor`. Cell numbers go stale whenever a cell is added; a heading anchor is checked here instead.

Anchors are computed the way GitHub slugifies a heading (github-slugger, which GitHub uses for rendered Markdown and
notebooks): lower-case; drop every character that is not a letter, digit, mark, `_`, `-` or space (so `·`, `$`, `:`,
`(`, `"` go); each space becomes `-` (two spaces give `--`); a repeated heading gets `-1`, `-2`, ... JupyterLab's own
heading anchors keep case and punctuation, so a link is only guaranteed to jump in GitHub/nbviewer-style renderers.
Every `.ipynb#anchor` link in both READMEs (English and Chinese) is checked the same way.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
READMES = [NOTEBOOKS / "README.md", NOTEBOOKS / "zh" / "README.md"]
FIDELITY_HEADING = "## Fidelity to the source tutorial"
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
STALE = re.compile(r"\bcells? \d|\bcode cells? \d|\brow \d", re.IGNORECASE)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading text (github-slugger, without the duplicate suffix)."""
    kept = []
    for ch in heading.strip().lower():
        cat = unicodedata.category(ch)
        if ch in "-_ " or cat[0] in "LNM":
            kept.append(ch)
    return "".join(kept).replace(" ", "-")


def heading_text(line: str) -> str:
    """The text of a Markdown heading line, without markup GitHub does not show (backticks, emphasis stars)."""
    return re.sub(r"[`*]", "", line.lstrip("#").strip())


def anchors(notebook: Path) -> set[str]:
    """Every heading anchor of a notebook's Markdown cells (duplicates get -1, -2, ... as on GitHub)."""
    seen: dict[str, int] = {}
    found = set()
    for cell in nbformat.read(str(notebook), as_version=4).cells:
        if cell.cell_type != "markdown":
            continue
        in_fence = False
        for line in cell.source.splitlines():
            if line.lstrip().startswith("```"):
                in_fence = not in_fence
            if in_fence or not re.match(r"#{1,6} ", line):
                continue
            base = slug(heading_text(line))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
    return found


def split_row(line: str) -> list[str]:
    """The cells of a Markdown table row; `\\|` is a literal bar, not a separator."""
    body = line.strip()
    assert body.startswith("|") and body.endswith("|"), f"not a table row: {line!r}"
    return [c.strip() for c in re.split(r"(?<!\\)\|", body[1:-1])]


def fidelity_rows(text: str) -> tuple[list[str], list[str]]:
    """(header cells, raw row lines) of the fidelity table."""
    after = text.split(FIDELITY_HEADING, 1)[1]
    lines = [ln for ln in after.splitlines() if ln.startswith("|")]
    return split_row(lines[0]), lines[2:]


def pointer_problems(readme: Path, pointers: list[str]) -> list[str]:
    """What is wrong with the `.ipynb#anchor` links in `pointers` (a missing notebook or heading)."""
    problems = []
    cache: dict[Path, set[str]] = {}
    for target in pointers:
        if ".ipynb" not in target or target.startswith("http"):
            continue
        name, _, anchor = target.partition("#")
        notebook = (readme.parent / name).resolve()
        if not notebook.exists():
            problems.append(f"{target}: no notebook {name}")
            continue
        if anchor:
            known = cache.setdefault(notebook, anchors(notebook))
            if anchor not in known:
                problems.append(f"{target}: no heading with anchor #{anchor} in {name}")
    return problems


def table_problems(text: str, readme: Path) -> list[str]:
    """Every problem of the fidelity table in `text`: column count, rows without a link, stale cell numbers."""
    header, rows = fidelity_rows(text)
    problems = []
    for line in rows:
        cells = split_row(line)
        where = line[:60]
        if len(cells) != len(header):
            problems.append(f"{len(cells)} columns, not {len(header)} (an unescaped |?): {where}")
            continue
        pointer = cells[1]
        links = LINK.findall(pointer)
        if not any(".ipynb#" in target for target in links):
            problems.append(f"no notebook#section link in the pointer column: {where}")
        if STALE.search(pointer):
            problems.append(f"a cell or row number in the pointer column: {pointer[:80]}")
        problems += pointer_problems(readme, links)
    return problems


def test_slug_follows_github():
    assert slug("Step 1 · The accept part") == "step-1--the-accept-part"
    assert slug("Step 3 · The reject part, and why $Z$ cancels") == "step-3--the-reject-part-and-why-z-cancels"
    assert slug('How close is "close"? Sampling noise versus bias') == "how-close-is-close-sampling-noise-versus-bias"
    assert slug("2 · 标准化采样：温度、top-k") == "2--标准化采样温度top-k"


def test_fidelity_table_is_well_formed_and_every_pointer_resolves():
    readme = NOTEBOOKS / "README.md"
    problems = table_problems(readme.read_text(encoding="utf-8"), readme)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("readme", READMES, ids=["en", "zh"])
def test_every_section_link_in_the_index_resolves(readme):
    text = readme.read_text(encoding="utf-8")
    problems = pointer_problems(readme, LINK.findall(text))
    assert not problems, "\n".join(problems)


def test_the_check_can_fail():
    readme = NOTEBOOKS / "README.md"
    good = "| source | notebook | kind | note |\n|---|---|---|---|\n"
    text = f"{FIDELITY_HEADING}\n\n{good}"
    ok = "| x | [01](01_why_lossless_and_notation.ipynb#the-idea-in-one-paragraph) | prose | |\n"
    assert table_problems(text + ok, readme) == []
    broken = [
        "| §8 |p − q| | [01](01_why_lossless_and_notation.ipynb#the-idea-in-one-paragraph) | prose | |\n",
        "| x | [01](01_why_lossless_and_notation.ipynb#no-such-heading) | prose | |\n",
        "| x | [99](99_missing.ipynb#summary) | prose | |\n",
        "| x | 01 · code cell 6 | computed | |\n",
    ]
    for row in broken:
        assert table_problems(text + row, readme), row
