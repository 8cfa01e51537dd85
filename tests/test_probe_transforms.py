"""Probes of transforms and compiled functions against JAX's behaviour: caching by static values."""
import pickle

import numpy as np
import pytest

import symgrad as sg


def by_type(x, s):
    """Reads its static argument's type, as code branching on an int count or a float scale does."""
    return x * 0 + sg.sum(x[:s]) if isinstance(s, int) else x * s


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
def test_equal_static_values_of_different_types_get_their_own_trace(backend):
    """3, 3.0 and True == 1 are equal and hash alike: the cache handed 3.0 the code traced for 3 (JAX keys
    static values by type too)."""
    x = np.arange(1.0, 5.0)
    f = sg.compile(by_type, static_argnums=1, backend=backend)
    np.testing.assert_array_equal(f(x, 3), x * 0 + 6)
    np.testing.assert_array_equal(f(x, 3.0), x * 3.0)
    np.testing.assert_array_equal(f(x, 1), x * 0 + 1)
    np.testing.assert_array_equal(f(x, True), x * 0 + 1)  # bool is an int subclass: its own trace, same value
    np.testing.assert_array_equal(f(x, (2, 3.0)[1]), x * 3.0)
    nested = sg.compile(lambda x, t: x * len(t) if isinstance(t[0], int) else -x, static_argnums=1, backend=backend)
    np.testing.assert_array_equal(nested(x, (1, 2)), x * 2)
    np.testing.assert_array_equal(nested(x, (1.0, 2)), -x)
    restored = pickle.loads(pickle.dumps(f))
    np.testing.assert_array_equal(restored(x, 3.0), x * 3.0)
    np.testing.assert_array_equal(restored(x, 3), x * 0 + 6)


def test_grad_with_a_static_argument_keys_it_by_type():
    x = np.arange(1.0, 5.0)
    g = sg.grad(lambda x, s: sg.sum(by_type(x, s)), static_argnums=1)
    np.testing.assert_array_equal(g(x, 2), [4.0, 4.0, 0.0, 0.0])  # 4 * sum(x[:2])
    np.testing.assert_array_equal(g(x, 2.0), np.full(4, 2.0))


def test_python_values_a_trace_reads_are_cached_by_type_too():
    """A Python int the trace needs as a value is bound like a static argument: True was handed 1's code."""
    f = sg.compile(lambda x, n: x * 2 if isinstance(n, bool) else x[:n])
    x = np.arange(4.0)
    np.testing.assert_array_equal(f(x, 1), [0.0])
    np.testing.assert_array_equal(f(x, True), x * 2)
    restored = pickle.loads(pickle.dumps(f))
    np.testing.assert_array_equal(restored(x, True), x * 2)
    np.testing.assert_array_equal(restored(x, 1), [0.0])
