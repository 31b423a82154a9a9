"""Exercises of tutorial 14: answers checked against independent hand computations.

The generic checks (solutions pass, wrong answers fail, hints in both languages) are in tests/test_exercises.py.
"""

import pytest

from specviz import exercises


def test_speedup_answer_is_the_best_over_a_grid():
    alpha, c = 0.75, 0.1
    grid = [(1 - alpha ** (g + 1)) / ((1 - alpha) * (g * c + 1)) for g in range(0, 40)]
    assert exercises.run_solution("14.1") == pytest.approx(max(grid), abs=1e-12)


def test_mean_acceptance_length_by_hand():
    """14.2: 2,000 verify steps emit 5,200 accepted drafts and one target token each."""
    assert exercises.run_solution("14.2") == pytest.approx((5200 + 2000) / 2000, abs=1e-12)
