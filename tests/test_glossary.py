"""One Chinese term per concept: notebooks/zh/GLOSSARY.md names the chosen term and the banned variants.

The test reads the glossary's table (concept | chosen term | banned variants in backticks) and fails
when a Chinese tutorial (notebooks/zh/NN_*.md) or the Chinese side of specviz/foundation/messages.py uses a
banned variant. A variant written as a gloss right after the chosen term, in full-width
parentheses (`质量分解图（money diagram）`), is allowed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import source_index

from specviz.foundation.messages import MESSAGES

ROOT = Path(__file__).resolve().parents[1]
ZH_DIR = ROOT / "notebooks" / "zh"
GLOSSARY = ZH_DIR / "GLOSSARY.md"
ZH_TUTORIALS = sorted(p for p in ZH_DIR.glob("*.md") if re.match(r"\d\d_", p.name)) + [
    ZH_DIR / "README.md",
    ZH_DIR / "solutions.md",
]
CJK = re.compile(r"[\u4e00-\u9fff]")
CODE_CELL = re.compile(r"^```.*?^```", re.S | re.M)


def load_glossary(path: Path = GLOSSARY) -> list[tuple[str, str, list[str]]]:
    """(concept, chosen term, banned variants) for each row of the glossary's table."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.lstrip().startswith("|") else []
        if len(cells) != 3 or set(cells[0]) <= set("-: ") or cells[0].startswith("Concept"):
            continue
        concept, term, banned = cells
        rows.append((concept, term, re.findall(r"`([^`]+)`", banned)))
    return rows


def fixed_compounds(path: Path = GLOSSARY) -> list[str]:
    """The compounds that hold a banned character without being the banned word (the line `固定搭配：...`)."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("固定搭配"):
            return re.findall(r"`([^`]+)`", line)
    return []


def glossed(term: str) -> list[str]:
    """The chosen term's spellings that may carry a gloss: the whole cell and each word before （."""
    words = [term] + re.split(r"[（）、/ ]+", term)
    return [w for w in dict.fromkeys(words) if w]


def violations(text: str, rows) -> list[tuple[str, str]]:
    """(banned variant, context) for each banned variant found in text, glosses excepted."""
    found = []
    compounds = fixed_compounds()
    for _concept, term, banned in rows:
        for variant in banned:
            clean = text
            for w in glossed(term):
                # the gloss: （variant） right after the term (or after *term*), or （variant，source…）
                clean = re.sub(re.escape(w) + r"(\*?)（" + re.escape(variant) + r"(?=[）,，；])", w + r"\1（", clean)
            if not any(c in variant for c in compounds):  # a variant holding one (提示词查找) is looked for as is
                for compound in compounds:
                    clean = clean.replace(compound, "·")
            for m in re.finditer(re.escape(variant), clean):
                found.append((variant, clean[max(0, m.start() - 15) : m.end() + 15].replace("\n", " ")))
    return found


def test_glossary_has_the_concepts_the_series_uses():
    rows = load_glossary()
    concepts = " ".join(c for c, _, _ in rows)
    for needed in (
        "speculative",
        "draft",
        "target",
        "verify",
        "accept",
        "reject",
        "residual",
        "repair",
        "acceptance rate",
        "money diagram",
        "lossless",
    ):
        assert needed in concepts, f"the glossary has no row for {needed!r}"
    assert sum(len(b) for _, _, b in rows) >= 10, "the glossary lists almost no banned variants"
    for concept, term, banned in rows:
        assert term and term not in banned, f"{concept}: the chosen term {term!r} is also banned"


def test_the_check_catches_a_variant_and_allows_a_gloss():
    rows = load_glossary()
    assert violations("这是一次推测解码。", rows), "推测 must be caught"
    assert violations("画成 money diagram。", rows)
    assert not violations("质量分解图（money diagram）是同一张图。", rows)
    assert not violations("投机解码的一步。", rows)
    assert violations("被拒绝的词用残差分布替换。", rows), "词 for a token must be caught"
    assert violations("草稿词元", rows)
    assert not violations("词表里有三个 token；分词器和提示词都一样。", rows)
    assert violations("KV cache 的精度", rows) and not violations("KV 缓存（KV cache）的精度", rows)
    assert violations("默认的 typical acceptance 是有损的", rows)
    assert not violations("典型接受（typical acceptance）", rows)
    assert not violations("Medusa 的*典型接受*（typical acceptance，Cai 等，2024）", rows)
    assert violations("每一步决定草拟多少个 token", rows) and not violations("每一步决定起草多少个 token", rows)
    assert violations("共有 2,000 次起草", rows) and not violations("草稿次数为 2,000", rows)
    assert violations("配合 prompt lookup", rows) and not violations("提示词查找（prompt lookup；第 8 篇）", rows)


@pytest.mark.parametrize("path", ZH_TUTORIALS, ids=[p.stem for p in ZH_TUTORIALS])
def test_zh_tutorial_uses_the_glossary_terms(path):
    assert ZH_TUTORIALS, "no Chinese tutorials found"
    prose = CODE_CELL.sub("", path.read_text(encoding="utf-8"))  # code cells are the English twin's, by rule
    bad = violations(prose, load_glossary())
    assert not bad, f"{path.name} uses banned variants (see notebooks/zh/GLOSSARY.md): {bad[:10]}"


def test_zh_messages_use_the_glossary_terms():
    rows = load_glossary()
    bad = [(key, v, ctx) for key, entry in MESSAGES.items() for v, ctx in violations(entry["zh"], rows)]
    assert not bad, (
        f"specviz/foundation/messages.py (zh) uses banned variants (see notebooks/zh/GLOSSARY.md): {bad[:10]}"
    )


def book_texts() -> dict:
    """tools/book.py's TEXTS (the book's title, intro and headings per language), read without running the tool."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_specviz_book", ROOT / "tools" / "book.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.TEXTS


def test_zh_book_texts_use_the_glossary_terms():
    """The zh book's title is every zh page's html_title (docs/book/conf.py), so it is read like the tutorials."""
    rows = load_glossary()
    zh = book_texts()["zh"]
    bad = [(key, v, ctx) for key, text in zh.items() for v, ctx in violations(text, rows)]
    assert not bad, f"tools/book.py (zh) uses banned variants (see notebooks/zh/GLOSSARY.md): {bad}"
    planted = dict(zh, title=zh["title"].replace("投机", "推测"))
    assert [v for text in planted.values() for v, _ in violations(text, rows)] == ["推测"]


def package_zh_strings() -> list[tuple[str, str]]:
    """(file:line, text) of every string literal in specviz/ that holds Chinese: messages, exercises, app texts."""
    import ast

    found = []
    for path in source_index.python_files(ROOT / "specviz"):
        if "notebooks" in path.parts:
            continue
        for node in source_index.nodes(source_index.text(path)):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and CJK.search(node.value):
                found.append((f"{path.relative_to(ROOT)}:{node.lineno}", node.value))
    return found


def test_every_zh_string_in_the_package_uses_the_glossary_terms():
    """Exercises, hints, app labels: every Chinese text a reader of the apps or exercises meets."""
    rows = load_glossary()
    strings = package_zh_strings()
    assert len(strings) > 300, f"only {len(strings)} Chinese strings found in specviz/"
    bad = [(where, v, ctx) for where, text in strings for v, ctx in violations(text, rows)]
    assert not bad, f"specviz/ (zh strings) uses banned variants (see notebooks/zh/GLOSSARY.md): {bad[:10]}"
