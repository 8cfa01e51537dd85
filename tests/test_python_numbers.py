"""Python numbers passed to compiled and transformed functions are weakly typed, as NumPy (NEP 50), JAX and
PyTorch treat them: float32 data times a Python float stays float32, whatever the order of calls."""
import numpy as np
import pytest

import symgrad as sg

BACKENDS = ["llvm", "numpy"]
X32 = np.linspace(-1.0, 1.0, 5, dtype=np.float32)
I32 = np.arange(5, dtype=np.int32)
FLAGS = np.array([True, False, True])


def scale(x, s):
    return x * s + s


def reference(x, s):
    return x * s + s  # NumPy's own result for these operands


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("x, s", [(X32, 2.5), (X32, 3), (I32, 3), (FLAGS, 3), (X32, np.float64(2.5)),
                                  (X32, np.array(2.5)), (I32, 2.5), (X32, float("inf")), (X32, -0.0),
                                  (I32, -2**40), (FLAGS, 2**62),
                                  (np.zeros(0, np.float32), 2.5), (np.float32(1.5), 2.0)])
def test_a_python_number_yields_to_the_array_dtype_as_in_numpy(backend, x, s):
    result = sg.compile(scale, backend=backend)(x, s)
    if type(s) is int and np.asarray(x).dtype.kind in "iu":
        # NumPy gives the array's dtype, or OverflowError for an int it cannot hold, a check a traced int
        # cannot make: it stays int64, a wider result and never a wrapped one
        assert result.dtype == np.int64
        np.testing.assert_array_equal(result, reference(x.astype(np.int64), s))
        return
    expected = reference(x, s)
    assert result.dtype == expected.dtype
    np.testing.assert_array_equal(result, expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_result_dtype_does_not_depend_on_earlier_calls(backend):
    f = sg.compile(scale, backend=backend)
    calls = [(X32, np.array(2.5)), (X32, 2.5), (X32, np.float64(2.5)), (X32, 0.5), (X32, 3), (X32, np.int64(3))]
    for _ in range(2):  # the second round takes the cached (native) entries
        for x, s in calls:
            result = f(x, s)
            assert result.dtype == reference(x, s).dtype, (type(s), result.dtype)
            np.testing.assert_array_equal(result, reference(x, s))


def test_numbers_computed_from_python_numbers_stay_weak():
    f = sg.compile(lambda x, a, b: x * (a * b + 1.0) + sg.sin(a))
    result = f(X32, 2.0, 3)
    assert result.dtype == np.float32
    np.testing.assert_allclose(result, X32 * 7.0 + np.sin(2.0), rtol=1e-6)
    both = sg.compile(lambda a, b: a * b)(2, 3.5)  # no array: NumPy's result for two Python numbers
    assert both.dtype == np.float64 and both == 7.0
    assert sg.compile(lambda x, a: (x > a))(X32, 0.5).dtype == np.bool_


def test_gradients_with_python_number_arguments_keep_the_data_dtype():
    loss = lambda w, lr: sg.sum((w * lr) ** 2)  # noqa: E731
    value, grad = sg.value_and_grad(loss)(X32, 0.5)
    assert value.dtype == np.float32 and grad.dtype == np.float32
    np.testing.assert_allclose(grad, 2 * X32 * 0.25, rtol=1e-6)
    step = sg.compile(lambda w, lr: w - lr * sg.grad(loss)(w, 1.0))
    w = X32
    for lr in (0.1, 0.05, 0.01):  # a float32 parameter stays float32 through a changing learning rate
        w = step(w, lr)
        assert w.dtype == np.float32
    assert len(step.cache_info()) == 1


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [lambda x: x * 2**40, lambda x: x.astype(np.int64) * 2**70,
                                lambda x: x.astype(float) * 10**400, lambda x: sg.maximum(x, 2**31)])
def test_a_python_int_literal_the_dtype_cannot_hold_is_numpys_overflow_error(backend, fn):
    x = np.arange(3, dtype=np.int32)
    with pytest.raises(OverflowError):
        fn(x)  # NumPy's own
    with pytest.raises(OverflowError, match="Python integer"):  # compiled code wrapped it to 0 silently
        sg.compile(fn, backend=backend)(x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_most_negative_int32_literal_is_added_as_numpy_adds_it(backend):
    x = np.arange(3, dtype=np.int32)
    fn = lambda x: (x + (-2**31)) * 2 + 1  # noqa: E731  (x - 2147483648 would overflow where this does not)
    expected = fn(x)
    for result in (sg.compile(fn, backend=backend)(x), fn(sg.tensor(x)).numpy()):
        assert result.dtype == np.int32
        np.testing.assert_array_equal(result, expected)


@pytest.mark.parametrize("data", [X32, np.array([1.5, -2.0]), I32])
def test_a_python_bool_among_numbers_is_0_or_1_as_in_numpy(data):
    """x * True raised SymPy's 'BooleanAtom not allowed in this context' (compiled and eager alike)."""
    def program(x):
        return x * True + (x < True) - False + sg.where(x > 1, True, 2)
    expected = program(data)
    for backend in BACKENDS:
        got = sg.compile(program, backend=backend)(data)
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(program(sg.tensor(data)).numpy(), expected)
    if data.dtype.kind == "f":
        t = sg.tensor(data, requires_grad=True)
        (t * True + t * False).sum().backward()
        np.testing.assert_array_equal(t.grad.numpy(), np.ones_like(data))
        np.testing.assert_array_equal(sg.grad(lambda x: sg.sum(x * True))(data), np.ones_like(data))


@pytest.mark.parametrize("compare", ["greater", "less", "greater_equal", "less_equal", "equal", "not_equal"])
def test_booleans_compared_with_a_python_bool_are_ordered_as_numpy_orders_them(compare):
    """flags > True and sg.less(False, flags) raised SymPy's 'A Boolean argument can only be used in Eq and Ne'
    (compiled and eager): they compare as 0 and 1, False < True, as NumPy does."""
    for bound in (False, True, 0, 2):
        for order in (lambda f, x: f(x, bound), lambda f, x: f(bound, x)):
            expected = order(getattr(np, compare), FLAGS)
            for backend in BACKENDS:
                got = sg.compile(lambda x: order(getattr(sg, compare), x), backend=backend)(FLAGS)
                assert got.dtype == expected.dtype
                np.testing.assert_array_equal(got, expected, err_msg=f"{backend} {bound}")
            np.testing.assert_array_equal(order(getattr(sg, compare), sg.tensor(FLAGS)).numpy(), expected)
