"""Exercises for the tutorials, checked by code: `check(id, answer)`, `hint(id)`, `solution(id)`.

>>> from specviz import exercises
>>> exercises.check("1.1", None).answered       # None: not answered yet
False
"""

import importlib
import pkgutil

from ..foundation import budget  # where learner code runs (budget.MODE), as `sv.exercises.budget`
from .api import UnknownExercise, check, exercises, get, hint, notebooks, question, reset_hints, run_solution, solution
from .core import REGISTRY, Exercise, Feedback, function_exercise, number_exercise, verifier_exercise

for _module in sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name.startswith("nb")):
    importlib.import_module(f"{__name__}.{_module}")  # each tutorial's module registers its exercises

__all__ = [
    "budget",
    "check",
    "exercises",
    "get",
    "hint",
    "notebooks",
    "question",
    "reset_hints",
    "run_solution",
    "solution",
    "REGISTRY",
    "Exercise",
    "Feedback",
    "UnknownExercise",
    "function_exercise",
    "number_exercise",
    "verifier_exercise",
]
