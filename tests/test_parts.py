"""The series line of every tutorial: "part N of M", in each language, and the next-links in order.

* every tutorial NN_*.md (notebooks/ and notebooks/zh/) says it is part NN of M, where M is the number of
  tutorials in its language (en ``*specviz tutorial, part 8 of 14.*``, zh ``*specviz 教程，第 8 部分（共 14 部分）。*``);
* the two languages have the same tutorials, numbered 01..M without gaps;
* the "next" link (en ``**Next:**``, zh ``**下一篇：**``) of tutorial k points at tutorial k + 1 of the same
  language, and the last tutorial has no "next" link to a tutorial.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
FOLDERS = {"en": NOTEBOOKS, "zh": NOTEBOOKS / "zh"}
PART = {
    "en": re.compile(r"\*specviz tutorial, part (\d+) of (\d+)\.\*"),
    "zh": re.compile(r"\*specviz 教程，第 (\d+) 部分（共 (\d+) 部分）。\*"),
}
NEXT = {"en": "**Next:**", "zh": "**下一篇：**"}
TUTORIAL = re.compile(r"(\d\d)_.*\.md$")
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s#]+)[^)]*\)")


def tutorials(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.md") if TUTORIAL.match(p.name))


def part_problems(text: str, name: str, lang: str, total: int) -> list[str]:
    """What is wrong with the "part N of M" line of the tutorial `name` (empty when it is right)."""
    number = int(TUTORIAL.match(name).group(1))
    found = PART[lang].findall(text)
    if len(found) != 1:
        return [f"{lang}/{name}: expected one 'part N of M' line, found {len(found)}"]
    n, m = (int(x) for x in found[0])
    problems = []
    if n != number:
        problems.append(f"{lang}/{name}: says part {n}, its number is {number}")
    if m != total:
        problems.append(f"{lang}/{name}: says 'of {m}', the series has {total} tutorials")
    return problems


def next_targets(text: str, lang: str) -> list[str]:
    """The link targets on the lines that carry the language's "next" marker."""
    return [t for line in text.splitlines() if NEXT[lang] in line for t in LINK.findall(line)]


CASES = [(lang, p) for lang, folder in FOLDERS.items() for p in tutorials(folder)]


def test_both_languages_have_the_same_numbered_tutorials():
    en, zh = ([p.name for p in tutorials(folder)] for folder in FOLDERS.values())
    assert en == zh, f"en and zh tutorials differ: {sorted(set(en) ^ set(zh))}"
    numbers = [int(name[:2]) for name in en]
    assert numbers == list(range(1, len(numbers) + 1)), f"tutorials are not numbered 01..NN without gaps: {numbers}"


@pytest.mark.parametrize("lang,path", CASES, ids=[f"{lang}/{p.stem}" for lang, p in CASES])
def test_part_n_of_m(lang, path):
    total = len(tutorials(FOLDERS[lang]))
    problems = part_problems(path.read_text(encoding="utf-8"), path.name, lang, total)
    assert not problems, "; ".join(problems)


@pytest.mark.parametrize("lang,path", CASES, ids=[f"{lang}/{p.stem}" for lang, p in CASES])
def test_next_link_follows_the_order(lang, path):
    series = tutorials(FOLDERS[lang])
    i = series.index(path)
    targets = next_targets(path.read_text(encoding="utf-8"), lang)
    if i + 1 < len(series):
        want = series[i + 1].with_suffix(".ipynb").name
        assert targets == [want], f"{lang}/{path.name}: its {NEXT[lang]} link should point at {want}, not {targets}"
    else:
        tutorial_links = [t for t in targets if TUTORIAL.match(Path(t).with_suffix(".md").name)]
        assert not tutorial_links, f"{lang}/{path.name} is the last tutorial but links on to {tutorial_links}"


def test_the_checks_can_fail():
    en = "*specviz tutorial, part 8 of 12.*"
    assert part_problems(en, "08_x.md", "en", 14) == ["en/08_x.md: says 'of 12', the series has 14 tutorials"]
    assert part_problems(en, "09_x.md", "en", 12) == ["en/09_x.md: says part 8, its number is 9"]
    assert part_problems("no line", "08_x.md", "en", 12)
    assert part_problems("*specviz 教程，第 8 部分（共 14 部分）。*", "08_x.md", "zh", 14) == []
    assert next_targets("**Next:** [9 · B](09_b.ipynb#top).\n[i](README.md)", "en") == ["09_b.ipynb"]
    assert next_targets("**下一篇：**[9](09_b.ipynb)", "zh") == ["09_b.ipynb"]
