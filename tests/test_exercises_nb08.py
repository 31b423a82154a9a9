"""Exercises of tutorial 08: answers checked against independent hand computations.

The generic checks (solutions pass, wrong answers fail, hints in both languages) are in tests/test_exercises.py.
"""

from fractions import Fraction

import pytest

from specviz import exercises


def test_tokens_per_step_answer_by_hand():
    """8.1: α = min(.7,.2) + min(.2,.5) + min(.1,.3) = 1/2, then 1 + α + α² + α³."""
    a = Fraction(1, 2)
    assert exercises.run_solution("8.1") == pytest.approx(float(1 + a + a**2 + a**3), abs=1e-12)


def test_one_hot_answer_by_hand():
    """8.2 against plain arithmetic: p4 without its second token, renormalised."""
    assert exercises.run_solution("8.2") == pytest.approx(0.5 / (1 - 0.3), abs=1e-12)


def test_two_draft_acceptance_by_hand():
    """8.3: first draft kept w.p. 4/5; after a rejection R = (1, 0, 0), so the second is kept w.p. q(cat) = 2/5."""
    expected = Fraction(4, 5) + Fraction(1, 5) * Fraction(2, 5)
    assert exercises.run_solution("8.3") == pytest.approx(float(expected), abs=1e-12)
