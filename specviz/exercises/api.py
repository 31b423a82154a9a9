"""What a notebook calls: `check(id, answer)`, `hint(id)`, `solution(id)`, `question(id)`, `exercises(notebook)`, `run_solution(id)`, `reset_hints()`."""

from __future__ import annotations

import html
from fractions import Fraction

import numpy as np

from ..i18n import t
from .core import REGISTRY, Exercise, Feedback, text

_hints_shown: dict[str, int] = {}


def get(id: str) -> Exercise:
    """The exercise `id`, or a KeyError listing the known ids."""
    try:
        return REGISTRY[str(id)]
    except KeyError:
        raise KeyError(f"no exercise {id!r}; known: {', '.join(sorted(REGISTRY))}") from None


def question(id: str) -> str:
    """The question of exercise `id` in the current language."""
    return text(get(id).question)


def check(id: str, answer) -> Feedback:
    """Check `answer` to exercise `id` (None: not answered yet). Shows ✔ or ✘ with what is wrong."""
    return get(id).grade(answer)


class Shown(str):
    """A str that a notebook displays as a block of Markdown-ish HTML."""

    def _repr_html_(self) -> str:
        return f"<div class='specviz-hint'>{html.escape(self).replace(chr(10), '<br>')}</div>"


def reset_hints(id: str | None = None) -> None:
    """Start the hints of exercise `id` (or of every exercise) again from the first."""
    if id is None:
        _hints_shown.clear()
    else:
        _hints_shown.pop(get(id).id, None)


def hint(id: str, k: int | None = None) -> Shown:
    """Hint `k` (1-based) to exercise `id`; without `k`, the next hint not yet shown."""
    ex = get(id)
    n = len(ex.hints)
    if k is None:
        k = _hints_shown.get(ex.id, 0) + 1
        _hints_shown[ex.id] = min(k, n + 1)
    if not 1 <= k <= n:
        return Shown(t("exercise.no_more_hints", id=ex.id))
    return Shown(f"{t('exercise.hint', k=k, n=n)}: {text(ex.hints[k - 1])}")


class Code(str):
    """A str that a notebook displays as a code block."""

    def _repr_html_(self) -> str:
        return f"<pre class='specviz-solution'><code>{html.escape(self)}</code></pre>"


def solution(id: str) -> Code:
    """The solution code of exercise `id` (it sets `answer`; see `run_solution`)."""
    ex = get(id)
    return Code(f"# {t('exercise.solution', id=ex.id)}\n{ex.solution}")


def run_solution(id: str):
    """Run the solution of exercise `id` and return its `answer` (the solutions notebook checks it)."""
    import specviz as sv

    namespace = {"np": np, "sv": sv, "Fraction": Fraction}
    exec(get(id).solution, namespace)  # noqa: S102 - our own solution source, shipped in the package
    return namespace["answer"]


def exercises(notebook: str | None = None) -> list[Exercise]:
    """The registered exercises (of one tutorial, e.g. "03"), in id order."""
    found = [ex for ex in REGISTRY.values() if notebook is None or ex.notebook == notebook]
    return sorted(found, key=lambda ex: [int(part) for part in ex.id.split(".")])
