"""Random programs over a broad op set (random_programs_broad.py) through every symgrad path, against NumPy's values
and float64 finite differences (JAX's gradients where installed); and the programs it once failed, minimized.
A few seeds run here; `python tests/random_programs_broad.py --count 2000` runs many more."""
import numpy as np
import pytest

import symgrad as sg
from random_programs_broad import check

SEEDS = [3, 20, 41, 77, 123]


@pytest.mark.parametrize("seed", SEEDS)
def test_random_program_on_every_path(seed):
    report = check(seed, use_jax=False)
    assert all(outcome == "ok" for outcome in report.values()), report


def test_random_program_at_special_values():
    """Inputs with 0, -0, inf, nan, 1e300, subnormals and ties: values equal NumPy's, the paths' gradients agree."""
    report = check(5005, inputs="special", use_jax=False)
    assert all(outcome == "ok" for outcome in report.values()), report


@pytest.mark.parametrize("backend", [None, "llvm", "numpy"])
def test_concatenate_axis_none_flattens(backend):
    """sg.concatenate(arrays, axis=None) joined (2, 3) arrays along axis 0, a (4, 3) result where NumPy's is (12,),
    and refused 0-d arrays, which NumPy flattens too."""
    a, b = np.arange(6.0).reshape(2, 3), np.float64(7.5)

    def f(a, b):
        return sg.concatenate([a, a * 2.0, b], axis=None)
    got = f(a, b) if backend is None else sg.compile(f, backend=backend)(a, b)
    np.testing.assert_array_equal(got, np.concatenate([a, a * 2.0, b], axis=None))
    weights = np.arange(13.0)
    grad = sg.grad(lambda a, b: sg.sum(f(a, b) * weights), argnums=(0, 1))(a, b)
    np.testing.assert_array_equal(grad[0], weights[:6].reshape(2, 3) + 2 * weights[6:12].reshape(2, 3))
    assert grad[1] == 12.0


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
def test_boolean_operators_with_a_traced_mask_on_either_side(backend):
    """A NumPy mask or a Python bool on the left of &, | or ^ with a traced mask (m & (x > 0)), and ^ itself, were
    errors (np.bitwise_and applied to a traced value; unsupported operand type for ^); NumPy gives the logical result.
    On integers they are NumPy's bitwise ops."""
    m, x = np.array([True, False, True, False]), np.array([1.0, -2.0, 3.0, -0.5])
    cases = {"m & t": lambda t: m & (t > 0), "m | t": lambda t: m | (t > 0), "t ^ m": lambda t: (t > 0) ^ m,
             "m ^ t": lambda t: m ^ (t > 0), "True ^ t": lambda t: True ^ (t > 0),
             "False | t": lambda t: False | (t > 0), "np.bitwise_xor": lambda t: np.bitwise_xor(m, t > 0)}
    for name, f in cases.items():
        got, want = sg.compile(f, backend=backend)(x), f(x)
        assert got.dtype == want.dtype and np.array_equal(got, want), name
    i = np.array([1, 2, -7])
    np.testing.assert_array_equal(sg.compile(lambda t: t ^ (t << 1), backend=backend)(i), i ^ (i << 1))


@pytest.mark.parametrize("backend", [None, "llvm", "numpy"])
def test_integer_loops_of_booleans_give_int8(backend):
    """NumPy computes b // b, b % b, fmod, square and b ** b on booleans in int8: sg refused // and % ('not supported
    on booleans, as in NumPy') and gave bool for square and b ** True."""
    b = np.array([True, False, True])
    cases = {"//": (lambda b: b // b, b // b), "%": (lambda b: b % True, b % True),
             "fmod": (lambda b: sg.fmod(b, b), np.fmod(b, b)), "square": (lambda b: sg.square(b), np.square(b)),
             "** True": (lambda b: b ** True, b ** True)}
    for name, (f, want) in cases.items():
        got = np.asarray(f(b) if backend is None else sg.compile(f, backend=backend)(b))
        assert got.dtype == np.int8 == want.dtype and np.array_equal(got, want), name


CONSTANT_PRODUCTS = {"inf": lambda x: x ** 2 * np.inf, "-inf": lambda x: x ** 3 * -np.inf,
                     "1e308 * 10": lambda x: x ** 2 * 1e308 * 10, "-1e308 * 10": lambda x: x ** 2 * -1e308 * 10}


@pytest.mark.parametrize("name", CONSTANT_PRODUCTS)
def test_numpy_backend_prints_infinite_constants(name):
    """The NumPy backend failed on the gradient of x**2 * inf, 2*oo*g*x: SymPy's cse, unevaluated, ordered the factors
    by asking `oo < 2` (TypeError: cannot determine truth value of Relational); and printed a folded infinite Float
    as `inf` (NameError: name 'inf' is not defined, for x**2 * 1e308 * 10)."""
    x, f = np.array([-1.0, 0.0, 2.0]), CONSTANT_PRODUCTS[name]
    want = sg.grad(lambda x: sg.sum(f(x)))(x)
    if "1e308" in name:  # the compiled gradient is 2e309 * x, its numbers folded exactly (functions.scaled_product):
        want = np.where(x == 0, 0.0, want)  # 0 at x = 0, where the transform's (10 * 1e308) * 2x is inf * 0 = NaN
    for backend in ("numpy", "llvm"):
        np.testing.assert_array_equal(sg.compile(sg.grad(lambda x: sg.sum(f(x))), backend=backend)(x), want)
        np.testing.assert_array_equal(sg.compile(f, backend=backend)(x), f(x))
