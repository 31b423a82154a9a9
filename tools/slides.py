"""Give the tutorial text sources (NN_*.md, MyST) slide metadata for JupyterLab RISE; idempotent.

    python tools/slides.py notebooks/0*.md notebooks/1*.md notebooks/zh/*.md   (`make notebooks` runs it)

The deck follows the headings:

- a markdown cell is split before every ``#``/``##``/``###`` heading that is not its first line
  (outside code fences and ``<details>`` blocks), so each heading starts its own cell;
- a cell that starts with ``# `` (the title) or ``## `` opens a new slide ("slide");
- a cell that starts with ``### `` opens a subslide below it ("subslide");
- every other cell continues the current slide: no ``slideshow`` key, which RISE reads as "-".
  Figures therefore appear together with the text that introduces them, and the .md sources
  carry no metadata on their ordinary cells.

The notebook gets ``rise: {scroll: true}`` so that a long section scrolls instead of being cut off.
A file is rewritten only when its text changes; run it again and nothing changes.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import jupytext
import nbformat
from jupytext.config import load_jupytext_config

HEADING = re.compile(r"^(#{1,3}) \S")
FENCE = re.compile(r"^\s*(```|~~~)")
SLIDE_TYPES = {1: "slide", 2: "slide", 3: "subslide"}
RISE_SETTINGS = {"scroll": True}


def split_at_headings(source: str) -> list[str]:
    """The markdown `source` cut before each heading line that is not its first line.

    >>> split_at_headings("# Title\\ntext\\n## A\\nmore")
    ['# Title\\ntext', '## A\\nmore']
    >>> split_at_headings("```\\n# a comment\\n```")
    ['```\\n# a comment\\n```']
    """
    parts: list[list[str]] = [[]]
    fenced, details = False, 0
    for line in source.split("\n"):
        if FENCE.match(line):
            fenced = not fenced
        details += line.count("<details") - line.count("</details>")
        if HEADING.match(line) and not fenced and details <= 0 and any(s.strip() for s in parts[-1]):
            parts.append([])
        parts[-1].append(line)
    return ["\n".join(p).strip("\n") for p in parts if any(s.strip() for s in p)]


def slide_type(cell) -> str | None:
    """The RISE slide type a cell gets: "slide", "subslide", or None (continue the slide).

    >>> slide_type(nbformat.v4.new_markdown_cell("### 3a · Z"))
    'subslide'
    >>> slide_type(nbformat.v4.new_code_cell("## not a heading")) is None
    True
    """
    if cell.cell_type != "markdown":
        return None
    match = HEADING.match(cell.source.lstrip("\n"))
    return SLIDE_TYPES[len(match.group(1))] if match else None


def add_slides(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of `nb` with markdown cells split at headings and the slide metadata set."""
    nb = nbformat.from_dict(nb)
    cells = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            pieces = split_at_headings(cell.source)
            for i, piece in enumerate(pieces):
                new = nbformat.from_dict({**cell, "source": piece, "metadata": dict(cell.metadata)})
                if i and "id" in new:
                    new["id"] = f"{cell['id']}-{i}"[:64]  # nbformat: unique, 1-64 of [a-zA-Z0-9-_]
                cells.append(new)
        else:
            cells.append(cell)
    for cell in cells:
        kind = slide_type(cell)
        if kind:
            cell.metadata["slideshow"] = {"slide_type": kind}
        else:
            cell.metadata.pop("slideshow", None)
    nb.cells = cells
    nb.metadata["rise"] = {**nb.metadata.get("rise", {}), **RISE_SETTINGS}
    return nb


def apply(path: Path) -> bool:
    """Write the slide metadata into the MyST text source `path`; True when the file changed."""
    before = path.read_text(encoding="utf-8")
    nb = jupytext.reads(before, fmt="md:myst")
    config = load_jupytext_config(str(path.resolve()))  # notebooks/jupytext.toml: its metadata filter
    after = jupytext.writes(add_slides(nb), fmt="md:myst", config=config)
    if after == before:
        return False
    path.write_text(after, encoding="utf-8")
    return True


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv if re.match(r"\d\d_", Path(a).name)]  # tutorials only, not dashboard.md
    changed = [p for p in paths if apply(p)]
    print(f"slides: {len(changed)} of {len(paths)} text sources updated" + "".join(f"\n  {p}" for p in changed))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
