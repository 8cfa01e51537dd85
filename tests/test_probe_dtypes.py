"""Probes of result dtypes against NumPy and PyTorch."""
import numpy as np
import pytest

import symgrad as sg


@pytest.mark.parametrize("fill", [3, True, 2.5, np.float32(1.5), np.int32(4)])
def test_full_takes_the_fill_values_dtype(fill):
    """sg.full((2,), 3) was float64; NumPy's (and torch.full's) is int64, a bool fill gives bool."""
    want = np.full((2,), fill)
    got = sg.full((2,), fill)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    traced = sg.compile(lambda x: sg.full((2,), fill))(np.zeros(1))
    assert traced.dtype == want.dtype
    assert sg.full(2, fill, dtype=np.float32).dtype == np.float32
