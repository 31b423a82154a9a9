"""Scalar inputs of the public API: every hostile value ends in a result or an error naming the parameter."""

import math

import numpy as np
import pytest

import specviz as sv
from specviz.foundation.checks import integer, real

torch = pytest.importorskip("torch")

HOSTILE = [float("nan"), float("inf"), -float("inf"), None, "0.5", True, np.array([0.5, 0.5])]


@pytest.mark.parametrize("x", HOSTILE, ids=repr)
def test_real_refuses_with_the_name(x):
    with pytest.raises((ValueError, TypeError), match="alpha"):
        real(x, "alpha", lo=0, hi=1)


@pytest.mark.parametrize("x", [np.array(0.3), torch.tensor(0.3), np.float32(0.3), 0.3])
def test_zero_d_arrays_and_tensors_are_scalars(x):
    assert real(x, "alpha", lo=0, hi=1) == pytest.approx(0.3)
    assert integer(np.array(3) if isinstance(x, np.ndarray) else 3, "gamma", lo=0) == 3


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: sv.expected_tokens(np.array(-3.0), 4), "alpha"),  # returned 61
        (lambda: sv.expected_tokens(torch.tensor(1.5), 4), "alpha"),
        (lambda: sv.speedup(0.8, 0, c=math.inf), "c"),  # returned NaN
        (lambda: sv.best_gamma(0.8, 0.1, max_gamma=2.5), "max_gamma"),  # returned 3
        (lambda: sv.cost_model_speedup(0.8, 4, -1.0, 1.0, 1.0), "draft_step_s"),  # accepted
        (lambda: sv.cost_model_speedup(0.8, 4, 0.1, 0.0, 1.0), "verify_step_s"),
        (lambda: sv.expected_tokens(0.8, 2.5), "gamma"),
        (lambda: sv.expected_tokens(0.8, None), "gamma"),
        (lambda: sv.accepted_length_dist(float("nan"), 3), "alpha"),
        (lambda: sv.output_dist(sv.TUTORIAL_P, sv.TUTORIAL_Q, rule="typical", eps=-1), "eps"),  # returned q
        (lambda: sv.output_dist(sv.TUTORIAL_P, sv.TUTORIAL_Q, rule="lenient", l=math.inf), "l"),
        (lambda: sv.output_dist(sv.TUTORIAL_P, sv.TUTORIAL_Q, rule="lenient", l=0), "l"),
    ],
)
def test_the_silent_cases_now_name_their_parameter(call, name):
    with pytest.raises((ValueError, TypeError), match=rf"\b{name}\b"):
        call()


def test_the_formulas_still_take_numpy_scalars_and_0d_tensors():
    assert sv.expected_tokens(np.float32(0.8), np.int64(4)) == pytest.approx(3.3616, abs=1e-6)
    assert sv.speedup(torch.tensor(0.8), 4, np.array(0.1)) == pytest.approx(2.4011, abs=1e-4)
    assert sv.best_gamma(0.8, 0.1, max_gamma=np.int64(8)) == 6


def test_the_lenient_rule_says_it_is_lossy_on_both_sides_of_one():
    p, q = sv.TUTORIAL_P, sv.TUTORIAL_Q
    for l_value in (0.5, 2.0):
        assert sv.tv_distance(sv.output_dist(p, q, rule="lenient", l=l_value), p) > 0.05
    assert sv.tv_distance(sv.output_dist(p, q, rule="lenient", l=1.0), p) < 1e-12
    assert "every l != 1" in sv.get_rule("lenient").description


def test_specviz_lab_refuses_an_open_unauthenticated_server(capsys):
    from specviz.cli import main

    with pytest.raises(SystemExit) as e:
        main(["lab", "--ip", "0.0.0.0", "--token", ""])
    assert e.value.code == 2 and "--allow-remote" in capsys.readouterr().err
