"""Cited library code is checked against the installed version it names.

Notebook 09 §5 cites transformers' ConfidenceCriteria (a draft that stops after a low-confidence token)
with a version number. This test reads that number from the English and Chinese pages, requires it to be the
version installed in the project's environment, and checks the behaviour the page describes on that version:
the criterion fires when the assistant's probability of its last token is below assistant_confidence_threshold.
When transformers is upgraded the test fails until the citation is re-read and its version updated.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # it imports transformers (8-10 s on a fresh worker): the slow lane, which has it loaded

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
PAGES = [NOTEBOOKS / "09_when_lossless_breaks.md", NOTEBOOKS / "zh" / "09_when_lossless_breaks.md"]


def cited_transformers_versions(text: str) -> list[str]:
    """The versions written as 'transformers X.Y.Z' in a page.

    >>> cited_transformers_versions("(transformers 5.25.0, `candidate_generator.py`)")
    ['5.25.0']
    """
    return re.findall(r"transformers (\d+\.\d+\.\d+)", text)


@pytest.mark.parametrize("page", PAGES, ids=[f"{p.parent.name}/{p.stem}" for p in PAGES])
def test_cited_transformers_version_is_the_installed_one(page):
    transformers = pytest.importorskip("transformers")
    cited = cited_transformers_versions(page.read_text(encoding="utf-8"))
    assert cited, f"{page.name} cites no transformers version"
    assert set(cited) == {transformers.__version__}, (
        f"{page.name} cites transformers {sorted(set(cited))}, the environment holds {transformers.__version__}: "
        "re-read the cited code in the installed version and update the citation"
    )


def test_confidence_criteria_fires_below_the_threshold():
    torch = pytest.importorskip("torch")
    from transformers.generation.stopping_criteria import ConfidenceCriteria

    stop = ConfidenceCriteria(assistant_confidence_threshold=0.4)
    logits = torch.log(torch.tensor([[0.7, 0.2, 0.1]]))
    assert stop(torch.tensor([[2, 1]]), (logits,))  # last token 1 has probability 0.2 < 0.4: stop drafting
    assert not stop(torch.tensor([[2, 0]]), (logits,))  # last token 0 has 0.7: go on
