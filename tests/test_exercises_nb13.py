"""Exercises of tutorial 13: answers checked against independent hand computations.

The generic checks (solutions pass, wrong answers fail, hints in both languages) are in tests/test_exercises.py.
"""

from fractions import Fraction

import pytest

import specviz as sv
from specviz import exercises


def test_tree_answer_is_the_chain_formula_with_beta():
    beta = sv.multi_draft_acceptance_rate((0.5, 0.3, 0.15, 0.05), (0.1, 0.2, 0.3, 0.4), 3)
    assert exercises.run_solution("13.1") == pytest.approx(1 + beta + beta**2, abs=1e-12)


def test_running_example_tree_by_hand():
    """13.2: β = 4/5 + 1/5 · 2/5 = 22/25 (after a rejection R is all on cat), then 1 + β + β²."""
    beta = Fraction(22, 25)
    assert exercises.run_solution("13.2") == pytest.approx(float(1 + beta + beta**2), abs=1e-12)
