"""Hypothesis-generated hostile scalars for every numeric parameter of the walked public API.

The deterministic walk (tests/test_hostile_walk.py) covers the categories (NaN, ±inf, negatives,
None, strings, 0-d arrays and tensors, huge sizes, bad distributions) with fixed values; this
test lets hypothesis pick arbitrary floats, integers and 0-d arrays for the scalar parameters and
holds the same contract: a result whose numbers are finite, or a ValueError / TypeError that names
the parameter. Derandomized, so a run is reproducible.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_hostile_walk import GOOD, KIND, _finite, _names_param, kind_of, public_functions

_ODD = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=64).filter(lambda x: not np.isfinite(x) or abs(x) > 1e15),
    st.none(),
    st.text(max_size=3),
)
REALS = st.one_of(st.floats(allow_nan=True, allow_infinity=True, width=64), st.floats(-1e6, 1e6).map(np.array), _ODD)
# counts: small ones run, huge ones must be refused by the function's own bound (never a long run)
COUNTS = st.one_of(
    st.integers(-5, 12), st.integers(10**10, 10**20), st.floats(-5, 12), st.integers(0, 12).map(np.array), _ODD
)


# (function, numeric parameter) pairs of the walk's good calls; counts are kept small by the functions' own caps
CASES = [
    (name, param)
    for name, fn in public_functions().items()
    for param, good in GOOD[name].items()
    if kind_of(param, good) in ("real", "count") and KIND.get(param) != "values"
]


@pytest.mark.slow
@pytest.mark.parametrize("name,param", CASES, ids=[f"{n}:{p}" for n, p in CASES])
@settings(max_examples=15, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_scalars_give_a_finite_result_or_an_error_naming_the_parameter(name, param, data):
    fn = public_functions()[name]
    value = data.draw(COUNTS if kind_of(param, GOOD[name][param]) == "count" else REALS, label=param)
    kwargs = {**GOOD[name], param: value}
    try:
        result = fn(**kwargs)
    except (ValueError, TypeError) as e:
        assert _names_param(str(e), param, "real"), f"{name}({param}={value!r}): {e}"
        return
    assert _finite(result), f"{name}({param}={value!r}) returned non-finite numbers"
