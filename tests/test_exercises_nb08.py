"""Exercises of tutorial 08: answers checked against independent hand computations.

The generic checks (solutions pass, wrong answers fail, hints in both languages) are in tests/test_exercises.py.
"""

import pytest

import specviz as sv
from specviz import exercises


def test_one_hot_answer_by_hand():
    """8.2 against plain arithmetic: p without dog, renormalised."""
    p = sv.TUTORIAL_P
    assert exercises.run_solution("8.2") == pytest.approx(p[0] / (1 - p[1]), abs=1e-12)


def test_tree_answer_is_the_chain_formula_with_beta():
    beta = sv.multi_draft_acceptance_rate((0.5, 0.3, 0.15, 0.05), (0.1, 0.2, 0.3, 0.4), 2)
    assert exercises.run_solution("8.3") == pytest.approx(sv.expected_tokens(beta, 3), abs=1e-12)
