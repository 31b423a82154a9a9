"""Exercises of tutorial 11: answers checked against independent hand computations.

The generic checks (solutions pass, wrong answers fail, hints in both languages) are in tests/test_exercises.py.
"""

import pytest

from specviz import exercises


def test_prompt_lookup_answer_by_enumeration():
    """11.2 by enumerating which of the three one-hot proposals pass."""
    probs = (0.9, 0.5, 0.8)
    expected, reach = 0.0, 1.0
    for k, pk in enumerate(probs):  # stop at proposal k: k accepted, then one repair token
        expected += reach * (1 - pk) * (k + 1)
        reach *= pk
    expected += reach * (len(probs) + 1)  # all pass: bonus
    assert exercises.run_solution("11.2") == pytest.approx(expected, abs=1e-12)
