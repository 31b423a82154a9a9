"""Navigation between the tutorials, in each language.

* every tutorial NN_*.md ends with a "next" link (en ``**Next:**``, zh ``**下一篇：**``) to the next
  tutorial of the same language, and the last one ends with a link to its language's index
  (README.md in the same folder);
* every relative link in notebooks/*.md and notebooks/zh/*.md points at a file that exists;
* a Chinese page never links to an English tutorial, and a Chinese tutorial links to the Chinese
  index, not the English one.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
ZH = NOTEBOOKS / "zh"
LANGS = {"en": (NOTEBOOKS, "**Next:**"), "zh": (ZH, "**下一篇：**")}
TUTORIAL = re.compile(r"\d\d_.*\.md$")
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")  # markdown links, not images
EXTERNAL = re.compile(r"^(https?:|mailto:|#)")


def tutorials(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.md") if TUTORIAL.match(p.name))


def relative_links(text: str) -> list[str]:
    """Targets of the relative links in text, without their #anchor."""
    return [t.split("#", 1)[0] for t in LINK.findall(text) if not EXTERNAL.match(t) and t.split("#", 1)[0]]


def last_link_line(text: str) -> str:
    lines = [ln for ln in text.rstrip().splitlines() if LINK.search(ln)]
    return lines[-1] if lines else ""


CASES = [(lang, p) for lang, (folder, _) in LANGS.items() for p in tutorials(folder)]


def test_both_languages_have_the_same_tutorials():
    en, zh = ([p.name for p in tutorials(folder)] for folder, _ in LANGS.values())
    assert en and en == zh, f"en and zh tutorials differ: {sorted(set(en) ^ set(zh))}"


@pytest.mark.parametrize("lang,path", CASES, ids=[f"{lang}/{p.stem}" for lang, p in CASES])
def test_tutorial_ends_with_a_link_to_the_next(lang, path):
    folder, marker = LANGS[lang]
    series = tutorials(folder)
    i = series.index(path)
    text = path.read_text(encoding="utf-8")
    tail = text.rstrip().splitlines()[-3:]  # the closing paragraph: the link is the page's last word
    last = last_link_line(text)
    assert last and any(last in ln or ln in last for ln in tail), f"{lang}/{path.name} does not end with a link"
    if i + 1 < len(series):
        want = series[i + 1].with_suffix(".ipynb").name
        assert marker in last, f"{lang}/{path.name}: its last link line has no {marker} ({last!r})"
    else:
        want = "README.md"
    assert want in relative_links(last), f"{lang}/{path.name} should end with a link to {want}; ends {last!r}"


PAGES = sorted([*NOTEBOOKS.glob("*.md"), *ZH.glob("*.md")])


@pytest.mark.parametrize("path", PAGES, ids=[str(p.relative_to(NOTEBOOKS)) for p in PAGES])
def test_relative_links_resolve(path):
    missing = [t for t in relative_links(path.read_text(encoding="utf-8")) if not (path.parent / t).exists()]
    assert not missing, f"{path.relative_to(ROOT)} links to files that do not exist: {missing}"


@pytest.mark.parametrize("path", sorted(ZH.glob("*.md")), ids=[p.name for p in sorted(ZH.glob("*.md"))])
def test_chinese_pages_stay_in_chinese(path):
    english_tutorials = {p.resolve() for p in NOTEBOOKS.glob("[0-9][0-9]_*")}
    english_index = (NOTEBOOKS / "README.md").resolve()
    bad = []
    for t in relative_links(path.read_text(encoding="utf-8")):
        target = (path.parent / t).resolve()
        if target in english_tutorials or (TUTORIAL.match(path.name) and target == english_index):
            bad.append(t)
    assert not bad, f"zh/{path.name} links to English pages: {bad}"


def test_the_checks_can_fail(tmp_path):
    assert relative_links("[a](x.ipynb#s) [b](https://e.org) [c](#top) ![i](p.png)") == ["x.ipynb"]
    assert last_link_line("text\n**Next:** [2](02_b.ipynb).\n") == "**Next:** [2](02_b.ipynb)."
