"""The planted bugs in one place (docs/planted-bugs.md): every source plant still applies, the list is complete.

`tools/plant.py` writes each bug of `PLANTS` into a worktree and runs its tests (`make planted`,
about a minute here); this file checks what keeps that list honest without running it all: each
plant's text is found exactly once in its file and its tests exist; the doc names every plant and
every test that plants a bug itself; and, in the slow lane, the tool end to end on two plants and on
a harmless edit, which it must report as missed (so "caught" can be false).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))
import plant  # noqa: E402

DOC = REPO / "docs" / "planted-bugs.md"
PLANTING_TEST = re.compile(r"^def (test_\w*(?:planted|caught|buggy)\w*)", re.M)


@pytest.mark.parametrize("p", plant.PLANTS, ids=[p.name for p in plant.PLANTS])
def test_each_plant_applies_to_the_source_and_names_real_tests(p, tmp_path):
    copy = tmp_path / p.file
    copy.parent.mkdir(parents=True)
    copy.write_text((REPO / p.file).read_text(encoding="utf-8"), encoding="utf-8")
    plant.apply(p, tmp_path)  # raises unless its text is there exactly once
    assert copy.read_text(encoding="utf-8") != (REPO / p.file).read_text(encoding="utf-8")
    for t in p.tests:
        path, _, name = t.partition("::")
        assert (REPO / path).is_file(), t
        assert not name or f"def {name}(" in (REPO / path).read_text(encoding="utf-8"), t


def test_the_doc_lists_every_plant_and_every_test_that_plants_a_bug():
    doc = DOC.read_text(encoding="utf-8")
    missing = [f"plant {p.name}" for p in plant.PLANTS if f"`{p.name}`" not in doc]
    for path in sorted((REPO / "tests").glob("test_*.py")):
        for name in PLANTING_TEST.findall(path.read_text(encoding="utf-8")):
            if f"`tests/{path.name}::{name}`" not in doc:
                missing.append(f"tests/{path.name}::{name}")
    assert not missing, "docs/planted-bugs.md does not list: " + ", ".join(missing)


def test_a_plant_whose_text_is_gone_is_named(tmp_path):
    (tmp_path / "specviz" / "exact").mkdir(parents=True)
    (tmp_path / "specviz" / "exact" / "theory.py").write_text("x = 1\n")
    with pytest.raises(ValueError, match="acceptance-inverted: specviz/exact/theory.py holds its text 0 times"):
        plant.apply(plant.PLANTS[0], tmp_path)


@pytest.mark.slow  # a worktree and three pytest runs
def test_the_tool_catches_two_plants_and_reports_a_harmless_edit_as_missed(monkeypatch):
    harmless = plant.Plant(
        "a-comment",
        "a comment added",
        "specviz/exact/theory.py",
        plant.PLANTS[0].old,
        plant.PLANTS[0].old + "    # hi\n",
        ("tests/test_theory.py",),
    )
    monkeypatch.setattr(plant, "PLANTS", (*plant.PLANTS[:2], harmless))
    out = subprocess.run([sys.executable, str(REPO / "tools" / "plant.py"), "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "planted" in out.stdout
    assert plant.main(["acceptance-inverted", "repair-unnormalised"]) == 0
    assert plant.main(["a-comment"]) == 1
