"""The claims register (notebooks/CLAIMS.md): every row quotes a notebook sentence and points at what shows it.

A row is `| "quoted words" | pointers | kind | how |`:

- the quote must occur in the English notebook of its section (compared without Markdown emphasis, backticks and
  line breaks), so a row goes stale, and fails here, as soon as the sentence it checks is rewritten;
- the pointers hold at least one `NN_name.ipynb#anchor` link to a heading that exists (the anchor rules of
  tests/test_fidelity_pointers.py), and any `tests/test_file.py::test_name` named there must exist;
- kind is one of computed (a cell prints it), test (a test checks it), cited (a primary source says it),
  derived (a few lines of algebra on the page);
- how says how the pointer shows the claim and what the check is independent of; a check that is computed by the
  code it claims to confirm must say so (the word "circular"), never pass as evidence.

Every tutorial 01-14 has a section `## NN · ...` with at least MIN_ROWS rows.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import source_index
from test_fidelity_pointers import LINK, anchors, split_row

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = REPO / "notebooks"
REGISTER = NOTEBOOKS / "CLAIMS.md"
KINDS = {"computed", "test", "cited", "derived"}
MIN_ROWS = 4
TEST_ID = re.compile(r"(tests/[\w/]+\.py)::(\w+)")
QUOTE = re.compile(r'^"(.+)"')


def flat(text: str) -> str:
    """Text as compared: no emphasis stars, backticks or escaped bars, whitespace collapsed."""
    text = text.replace("\\|", "|")
    return re.sub(r"\s+", " ", re.sub(r"[*`]", "", text)).strip()


def sections(text: str) -> dict[str, list[str]]:
    """{notebook number "01".."14": its raw table rows} of the register."""
    found: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        head = re.match(r"## (\d\d) · ", line)
        if head:
            current = found.setdefault(head.group(1), [])
        elif line.startswith("## "):
            current = None
        elif current is not None and line.startswith("|") and not re.match(r"\|\s*-", line):
            current.append(line)
    return {k: rows[1:] for k, rows in found.items()}  # drop each table's header row


def notebook_of(number: str) -> Path:
    (path,) = NOTEBOOKS.glob(f"{number}_*.md")
    return path


def row_problems(number: str, line: str, cache: dict) -> list[str]:
    """What is wrong with one register row of notebook `number`."""
    cells = split_row(line)
    where = f"{number}: {line[:70]}"
    if len(cells) != 4:
        return [f"{len(cells)} columns, not 4 (an unescaped |?): {where}"]
    claim, pointers, kind, how = cells
    problems = []
    quote = QUOTE.match(claim)
    if not quote:
        problems.append(f'the claim does not start with the quoted words "...": {where}')
    else:
        source = cache.setdefault(number, flat(notebook_of(number).read_text(encoding="utf-8")))
        if flat(quote.group(1)) not in source:
            problems.append(f"quote not found in {notebook_of(number).name}: {quote.group(1)[:80]!r}")
    links = [t for t in LINK.findall(pointers) if ".ipynb#" in t]
    if not links:
        problems.append(f"no notebook#section link among the pointers: {where}")
    for target in links:
        name, _, anchor = target.partition("#")
        nb = NOTEBOOKS / name
        if not nb.exists():
            problems.append(f"{target}: no notebook {name}")
        elif anchor not in cache.setdefault(nb, anchors(nb)):
            problems.append(f"{target}: no heading with anchor #{anchor} in {name}")
    for path, name in TEST_ID.findall(pointers):
        file = REPO / path
        if not file.exists() or not re.search(rf"^\s*def {name}\b", source_index.text(file), re.M):
            problems.append(f"{path}::{name} does not exist: {where}")
    if kind.strip("* ") not in KINDS:
        problems.append(f"kind {kind!r} is not one of {sorted(KINDS)}: {where}")
    if len(how) < 20:
        problems.append(f"the how column says almost nothing: {where}")
    return problems


def register_problems(text: str) -> list[str]:
    found = sections(text)
    problems = [f"no section for notebook {n:02d}" for n in range(1, 15) if f"{n:02d}" not in found]
    cache: dict = {}
    for number, rows in found.items():
        if len(rows) < MIN_ROWS:
            problems.append(f"notebook {number} has {len(rows)} rows, fewer than {MIN_ROWS}")
        for line in rows:
            problems += row_problems(number, line, cache)
    return problems


def test_every_row_of_the_register_resolves():
    problems = register_problems(REGISTER.read_text(encoding="utf-8"))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    "broken",
    [
        '| "words no notebook has ever printed" | [01](01_why_lossless_and_notation.ipynb#notation-every-later-notebook-uses-these-names) | computed | a cell prints the number, independent of X |',
        '| "{quote}" | [01](01_why_lossless_and_notation.ipynb#no-such-heading) | computed | a cell prints the number, independent of X |',
        '| "{quote}" | [01](01_why_lossless_and_notation.ipynb#notation-every-later-notebook-uses-these-names) · `tests/test_claims.py::test_nothing_here` | test | a test checks it, independent of X |',
        '| "{quote}" | [01](01_why_lossless_and_notation.ipynb#notation-every-later-notebook-uses-these-names) | believed | a cell prints the number, independent of X |',
        '| "{quote}" | 01, somewhere | computed | a cell prints the number, independent of X |',
    ],
)
def test_the_check_can_fail(broken):
    text = REGISTER.read_text(encoding="utf-8")
    found = sections(text)
    assert found["01"], "the register has no rows for 01"
    quote = QUOTE.match(split_row(found["01"][0])[0]).group(1)
    row = broken.replace("{quote}", quote)
    assert row_problems("01", row, {}), row
