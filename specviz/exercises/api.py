"""What a notebook calls: `check(id, answer)`, `hint(id)`, `solution(id)`, `question(id)`, `exercises(notebook)`, `run_solution(id)`, `reset_hints()`.

Wrong arguments end in a TypeError or ValueError that names the parameter and what it accepts:

>>> hint("1.1", 1.5)
Traceback (most recent call last):
...
TypeError: hint number k must be a whole number from 1 to 2 (or its digits as text, e.g. "2"), got 1.5
>>> [ex.id for ex in exercises(3)] == [ex.id for ex in exercises("03")]
True
"""

from __future__ import annotations

import html
import sys
from fractions import Fraction

import numpy as np

from ..foundation.i18n import t
from .core import REGISTRY, Exercise, Feedback, fmt, text

_hints_shown: dict[str, int] = {}


class UnknownExercise(KeyError, ValueError):
    """No exercise has this id (a KeyError for code written before, and a ValueError: it is a bad argument)."""

    def __str__(self) -> str:
        return str(self.args[0])  # KeyError would show the message in quotes


def known_ids() -> list[str]:
    """The registered exercise ids, in order ("1.1", "1.2", ..., "12.2")."""
    return [ex.id for ex in exercises()]


def get(id: str) -> Exercise:
    """The exercise `id` (e.g. "3.1"), or an UnknownExercise (a KeyError and a ValueError) listing the known ids."""
    key = id.strip() if isinstance(id, str) else fmt(id)
    if key not in REGISTRY:
        raise UnknownExercise(f"no exercise id={fmt(id)}; known: {', '.join(known_ids())}")
    return REGISTRY[key]


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


def hint_number(k, n: int) -> int:
    """`k` as a hint number 1..n (an int, or its digits as text); a TypeError or ValueError naming `k` otherwise."""
    if isinstance(k, str) and k.strip().isdecimal():
        k = int(k)
    if isinstance(k, bool) or not isinstance(k, int | np.integer):
        raise TypeError(
            f'hint number k must be a whole number from 1 to {n} (or its digits as text, e.g. "{n}"), got {fmt(k)}'
        )
    if not 1 <= k <= n:
        raise ValueError(f"hint number k={fmt(k)} is out of range: this exercise has hints 1 to {n}")
    return int(k)


def hint(id: str, k: int | str | None = None) -> Shown:
    """Hint `k` (1-based; 2 or "2") to exercise `id`; without `k`, the next hint not yet shown."""
    ex = get(id)
    n = len(ex.hints)
    if k is None:
        k = _hints_shown.get(ex.id, 0) + 1
        _hints_shown[ex.id] = min(k, n + 1)
        if k > n:
            return Shown(t("exercise.no_more_hints", id=ex.id))
    k = hint_number(k, n)
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
    # `sv` is the package this one lives in: Python loads a package before its subpackages, so it is there
    # already (taken from sys.modules, not imported: no import edge back up from specviz.exercises to specviz)
    sv = sys.modules[__name__.split(".")[0]]
    namespace = {"np": np, "sv": sv, "Fraction": Fraction}
    exec(get(id).solution, namespace)  # noqa: S102 - our own solution source, shipped in the package
    return namespace["answer"]


def notebooks() -> list[str]:
    """The tutorials that have exercises, as the registry names them ("01", "02", ...)."""
    return sorted({ex.notebook for ex in REGISTRY.values()})


def notebook_name(notebook) -> str:
    """The registry's name ("03") of tutorial `notebook` (3, "3" or "03"); a TypeError or ValueError otherwise."""
    valid = notebooks()
    if isinstance(notebook, str) and notebook.strip().isdecimal():
        notebook = int(notebook)
    if isinstance(notebook, bool) or not isinstance(notebook, int | np.integer):
        raise TypeError(f'notebook must be a tutorial number such as 3 or "03", got {fmt(notebook)}')
    name = f"{int(notebook):02d}" if 0 <= notebook < 1000 else None
    if name not in valid:
        choices = ", ".join(str(int(v)) for v in valid)
        raise ValueError(f"no exercises for notebook={fmt(notebook)}: the tutorials with exercises are {choices}")
    return name


def exercises(notebook: int | str | None = None) -> list[Exercise]:
    """The registered exercises (all, or of one tutorial: 3, "3" or "03"), in id order."""
    name = None if notebook is None else notebook_name(notebook)
    found = [ex for ex in REGISTRY.values() if name is None or ex.notebook == name]
    return sorted(found, key=lambda ex: [int(part) for part in ex.id.split(".")])
