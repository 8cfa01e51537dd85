"""static_argnums / static_argnames on sg.compile, sg.grad and sg.value_and_grad: Python values in the
trace (an int driving a slice or %, a mode string), compiled once per value, keyword arguments too; and
Python values passed without being declared (strings, None, functions always; ints once the trace needs
their value), as autograd users expect."""
import numpy as np
import pytest

import symgrad as sg

from gradcheck import assert_grads_match_finite_differences


def head(x, n, mode="sum"):
    y = x[:n] * (n % 3)
    return sg.sum(y) if mode == "sum" else sg.max(y)


X = np.arange(6.0)


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
def test_compile_with_static_arguments_by_position_and_by_name(backend):
    f = sg.compile(head, backend=backend, static_argnums=(1,), static_argnames=("mode",))
    for args, kwargs in [((X, 4), {}), ((X, 5), {"mode": "max"}), ((X,), {"n": 2}), ((), {"x": X, "n": 3})]:
        assert f(*args, **kwargs) == head(*args, **kwargs)
    assert f(X * 2, 4) == head(X * 2, 4)  # a new array for a value already compiled


def test_grad_and_value_and_grad_with_static_arguments():
    g = sg.grad(head, static_argnums=1, static_argnames="mode")
    np.testing.assert_allclose(g(X, 4), [1, 1, 1, 1, 0, 0])
    np.testing.assert_allclose(g(X, 5, mode="max"), [0, 0, 0, 0, 2, 0])
    value, grad = sg.value_and_grad(lambda n, x: sg.sum(x[:n] ** 2), argnums=1, static_argnums=0)(3, X)
    assert value == 5.0
    np.testing.assert_allclose(grad, [0, 2, 4, 0, 0, 0])


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
def test_static_argnums_among_star_args(backend):
    """A static position taken by *args (sg.compile(lambda *a: ..., static_argnums=2), as jax.jit takes it) was
    refused: 'out of range for <lambda>'s 0 positional parameter(s)'."""
    f = sg.compile(lambda x, *rest: x[:rest[1]] * rest[0], static_argnums=2, backend=backend)
    np.testing.assert_array_equal(f(X, 2.0, 3), X[:3] * 2.0)
    np.testing.assert_array_equal(f(X, 3.0, 4), X[:4] * 3.0)
    np.testing.assert_array_equal(f(X, np.float64(-1.0), 3), -X[:3])  # the dynamic *args entry is traced
    star = sg.compile(lambda *a: a[0] * a[1] if isinstance(a[1], int) else -a[0], static_argnums=1, backend=backend)
    np.testing.assert_array_equal(star(X, 2), X * 2)
    np.testing.assert_array_equal(star(X, 2.0), -X)  # 2 and 2.0: code of their own
    with pytest.raises(TypeError, match="needs 3 positional arguments, got 2"):
        f(X, 2.0)
    with pytest.raises(TypeError, match="must be hashable"):
        f(X, 2.0, np.array([1]))


def test_static_argument_errors_name_the_argument():
    with pytest.raises(TypeError, match="static argument 'n' must be hashable"):
        sg.compile(head, static_argnums=1)(X, np.array([1, 2]))
    with pytest.raises(ValueError, match="both differentiated"):
        sg.grad(head, argnums=1, static_argnums=1)
    with pytest.raises(ValueError, match="out of range"):
        sg.compile(head, static_argnums=5)
    with pytest.raises(ValueError, match="not parameters"):
        sg.compile(head, static_argnames="size")
    with pytest.raises(TypeError, match="head"):
        sg.compile(head, static_argnums=1)(X)  # n missing


def test_keyword_arguments_to_grad_and_value_and_grad():
    def loss(w, x, scale=1.0):
        return sg.sum((x @ w) ** 2) * scale
    w, x = np.ones(3), np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(sg.grad(loss)(w, x, scale=2.0), 2 * sg.grad(loss)(w, x))
    value, (dw, dx) = sg.value_and_grad(loss, argnums=(0, 1))(w=w, x=x)
    assert value == loss(w, x)
    np.testing.assert_allclose(dw, sg.grad(loss)(w, x))
    np.testing.assert_allclose(dx, sg.grad(loss, argnums=1)(w, x))


def chained(x, n, mode, activation=None):
    """A program autograd users write: a Python int drives a slice and a loop, a string picks a branch."""
    calls.append(n)
    y = x[:n] if mode == "head" else x[n:]
    for _ in range(n):
        y = (activation or sg.sin)(y)
    return sg.sum(y * y)


calls = []
Y = np.linspace(-1.0, 1.0, 7)


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
def test_undeclared_strings_functions_and_value_driving_ints_are_python_values(backend):
    f = sg.compile(chained, backend=backend)
    for n, mode, activation in [(2, "head", None), (3, "tail", None), (2, "head", sg.tanh), (4, "tail", np.tanh)]:
        np.testing.assert_allclose(f(Y, n, mode, activation), chained(Y, n, mode, activation), rtol=1e-12)
    calls.clear()
    f(Y, 2, "head", None)
    f(Y * 2, 3, "tail", None)
    assert calls == []  # both values already compiled: no retrace


def test_gradients_with_undeclared_python_values_match_finite_differences():
    for n, mode in [(2, "head"), (3, "tail"), (0, "head")]:
        assert_grads_match_finite_differences(lambda x: chained(x, n, mode), (Y,))
        np.testing.assert_allclose(sg.grad(chained)(Y, n, mode), sg.grad(lambda x: chained(x, n, mode))(Y),
                                   rtol=1e-12)
        value, grad = sg.value_and_grad(chained)(Y, n, mode=mode)
        np.testing.assert_allclose(value, chained(Y, n, mode), rtol=1e-12)
        np.testing.assert_allclose(grad, sg.grad(chained)(Y, n, mode), rtol=1e-12)
    inner = sg.compile(lambda x: sg.grad(chained)(x, 2, "head"))  # the same inside an enclosing trace
    np.testing.assert_allclose(inner(Y), sg.grad(chained)(Y, 2, "head"), rtol=1e-12)


def test_an_int_used_only_as_a_number_stays_traced():
    scaled = sg.compile(lambda x, k: x * k + k % 3)
    traces = []
    counted = sg.compile(lambda x, k: traces.append(k) or x * k)
    for k in range(4):
        np.testing.assert_allclose(scaled(Y, k), Y * k + k % 3)
        np.testing.assert_allclose(counted(Y, k), Y * k)
    assert len(traces) == 1  # one trace serves every k


def test_keyword_arguments_to_a_compiled_function():
    f = sg.compile(chained)
    np.testing.assert_allclose(f(Y, n=3, mode="tail"), chained(Y, 3, "tail"), rtol=1e-12)
    np.testing.assert_allclose(f(x=Y, n=2, mode="head", activation=sg.cos), chained(Y, 2, "head", sg.cos),
                               rtol=1e-12)
    with pytest.raises(TypeError, match="chained"):
        f(Y, mode="head")  # n missing


def test_python_value_errors_name_the_argument():
    with pytest.raises(TypeError, match="argument n of chained, a Python int"):
        sg.grad(chained, argnums=1)(Y, 2, "head")
    with pytest.raises(TypeError, match="argument w = 'hello' \\(a str\\)"):
        sg.compile(lambda x, w: sg.sum(x * w))(Y, "hello")
    with pytest.raises(sg.TracerError, match="not known while tracing"):  # a traced array still cannot drive a loop
        sg.compile(chained)(Y, np.int64(2), "head")


def test_a_static_zero_of_the_other_sign_is_compiled_for_itself():
    """-0.0 == 0.0 and they hash alike, but x / s tells them apart: the code traced for 0.0 answered for -0.0."""
    x = np.array([1.0, -2.0])
    for first, second in ((0.0, -0.0), (-0.0, 0.0)):
        f = sg.compile(lambda x, s: x / s, static_argnums=1)
        with np.errstate(divide="ignore"):
            for s in (first, second, first):
                np.testing.assert_array_equal(f(x, s), x / s)
