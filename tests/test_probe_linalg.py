"""Probes of sg.linalg at singular and degenerate inputs against NumPy, on every path."""
import numpy as np
import pytest

import symgrad as sg


@pytest.mark.parametrize("p", [None, 2, -2])
def test_cond_of_a_zero_matrix_is_inf(p):
    """The ratio of the extreme singular values is 0/0 for a zero matrix: NumPy says inf, sg said NaN."""
    m = np.zeros((3, 2, 2))
    m[1] = np.eye(2)
    want = np.linalg.cond(m, p)
    f = lambda a: sg.linalg.cond(a, p)  # noqa: E731
    for got in (f(m), sg.compile(f)(m), sg.compile(f, backend="numpy")(m)):
        np.testing.assert_array_equal(got, want)
