"""Probes of what compiled functions hand back: arrays of their own on both backends, so writing into a
result changes neither an argument nor what later calls return."""
import numpy as np
import pytest

import symgrad as sg

BACKENDS = ["llvm", "numpy"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_views_of_an_input_are_copies(backend):
    """The NumPy backend returned x.T, reshape(x) and x[0] as NumPy views of x: writing into them wrote
    into the caller's x (and into each other)."""
    x = np.arange(6.0).reshape(2, 3)
    f = sg.compile(lambda x: (x, x.T, sg.reshape(x, (6,)), x[0], x[::-1, 1:]), backend=backend)
    outs = f(x)
    for out in outs:
        out[...] = -1.0
    np.testing.assert_array_equal(x, np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(f(x)[2], np.arange(6.0))


@pytest.mark.parametrize("backend", BACKENDS)
def test_constants_are_copies(backend):
    """The NumPy backend returned its module-level constant itself: a write into the result was what every
    later call returned."""
    x = np.arange(3.0)
    f = sg.compile(lambda x: (x * 2, sg.asarray(np.array([1.0, 2.0])), sg.reshape(sg.arange(4.0), (2, 2))),
                   backend=backend)
    first = f(x)
    first[1][0] = 99.0
    first[2][0, 0] = 97.0
    again = f(x)
    np.testing.assert_array_equal(again[1], [1.0, 2.0])
    np.testing.assert_array_equal(again[2], [[0.0, 1.0], [2.0, 3.0]])


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_value_returned_twice_is_two_arrays(backend):
    x = np.arange(3.0)
    a, b = sg.compile(lambda x: (x[1:] * 2, x[1:] * 2), backend=backend)(x)
    a[0] = -1.0
    np.testing.assert_array_equal(b, [2.0, 4.0])


def test_the_numpy_modules_of_aot_artifacts_copy_too(tmp_path):
    x = np.arange(6.0).reshape(2, 3)
    sg.aot.compile(lambda x: (x.T, sg.asarray(np.array([1.0, 2.0]))), (x,), out=str(tmp_path / "views"),
                   backend="numpy")
    loaded = sg.load(str(tmp_path / "views"))
    transposed, constant = loaded(x)
    transposed[...] = 0.0
    constant[...] = 0.0
    np.testing.assert_array_equal(x, np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(loaded(x)[1], [1.0, 2.0])
