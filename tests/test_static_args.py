"""static_argnums / static_argnames on sg.compile, sg.grad and sg.value_and_grad: Python values in the
trace (an int driving a slice or %, a mode string), compiled once per value, keyword arguments too."""
import numpy as np
import pytest

import symgrad as sg


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
