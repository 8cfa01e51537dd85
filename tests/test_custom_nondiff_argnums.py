"""sg.custom_vjp / sg.custom_jvp with nondiff_argnums, JAX's semantics: the nondiff arguments (a function, a
mode string, an int) are Python values given first to bwd and to the jvp rule; checked against JAX and float64
central differences, under grad, jvp, vmap, hessian and compile, with clear errors for arrays and unhashables."""
import copy
from functools import partial

import numpy as np
import pytest

import symgrad as sg

X = np.array([0.3, -1.2, 2.0, 0.0])
Y = np.array([1.5, 0.5, -2.0, 3.0])


def _rules(lib, np_):
    """The same rules for symgrad and JAX: apply(fn, x, mode, y) with fn and mode nondiff, power(x, n) with n."""

    @partial(lib.custom_vjp, nondiff_argnums=(0, 2))
    def apply(fn, x, mode, y):
        return fn(x) * y if mode == "mul" else fn(x) + y

    def apply_fwd(fn, x, mode, y):
        return apply(fn, x, mode, y), (x, y)

    def apply_bwd(fn, mode, residuals, g):
        x, y = residuals
        slope = np_.cos(x)  # fn is sin in these tests: its derivative, written by hand
        return (g * slope * y, g * fn(x)) if mode == "mul" else (g * slope, g)

    apply.defvjp(apply_fwd, apply_bwd)

    @partial(lib.custom_jvp, nondiff_argnums=(1,))
    def power(x, n):
        return x ** n

    @power.defjvp
    def power_jvp(n, primals, tangents):
        (x,), (t,) = primals, tangents
        return power(x, n), n * x ** (n - 1) * t

    return apply, power


def _results(lib, np_, grad):
    apply, power = _rules(lib, np_)
    out = []
    for mode in ("mul", "add"):
        out += list(grad(lambda x, y: np_.sum(apply(np_.sin, x, mode, y) ** 2), argnums=(0, 1))(X, Y))
    out.append(grad(lambda x: np_.sum(power(x, 3)))(X))
    out.append(lib.jvp(lambda x: power(x, 3), (X,), (Y,))[1])
    out.append(lib.vmap(grad(lambda x: power(x, 4)))(X))
    out.append(lib.hessian(lambda x: np_.sum(power(x, 3) * x))(X))
    return [np.asarray(a) for a in out]


def test_as_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    for ours, theirs in zip(_results(sg, sg, sg.grad), _results(jax, jax.numpy, jax.grad)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=1e-15)


def test_against_finite_differences():
    apply, power = _rules(sg, sg)

    def loss(x, y):
        return sg.sum(apply(sg.sin, x, "mul", y) * power(x + y, 3))

    grads = sg.grad(loss, argnums=(0, 1))(X, Y)
    eps = 1e-6
    for j, g in enumerate(grads):
        numeric = []
        for e in np.eye(X.size):
            plus = [X, Y]
            minus = [X, Y]
            plus[j], minus[j] = plus[j] + eps * e, minus[j] - eps * e
            numeric.append((loss(*plus) - loss(*minus)) / (2 * eps))
        np.testing.assert_allclose(g, numeric, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
def test_compiled(backend):
    apply, power = _rules(sg, sg)

    def loss(x, y, mode, n):
        return sg.sum(apply(sg.sin, x, mode, y) * power(x, n))

    compiled = sg.compile(sg.value_and_grad(loss, argnums=(0, 1)), static_argnums=(2, 3), backend=backend)
    for mode, n in (("mul", 2), ("add", 3), ("mul", 2)):  # a new value of a static argument: other code
        value, grads = compiled(X, Y, mode, n)
        expected_value, expected = sg.value_and_grad(loss, argnums=(0, 1))(X, Y, mode, n)
        np.testing.assert_allclose(value, expected_value, rtol=1e-14)
        for a, b in zip(grads, expected):
            np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)


def test_outside_transforms_the_function_runs():
    apply, power = _rules(sg, sg)
    np.testing.assert_array_equal(power(X, 2), X ** 2)
    np.testing.assert_allclose(apply(np.sin, X, "add", Y), np.sin(X) + Y)


def test_edge_values():
    _, power = _rules(sg, sg)
    np.testing.assert_array_equal(sg.grad(lambda x: sg.sum(power(x, 2)))(np.array([0.0, -0.0, np.inf])),
                                  [0.0, -0.0, np.inf])
    assert sg.grad(lambda x: power(x, 3))(np.float64(2.0)) == 12.0
    assert sg.grad(lambda x: sg.sum(power(x, 3)))(np.zeros(0)).shape == (0,)


def test_decorator_forms():
    @sg.custom_jvp(nondiff_argnums=(0,))
    def scaled(k, x):
        return k * sg.sin(x)

    @scaled.defjvp
    def scaled_jvp(k, primals, tangents):
        (x,), (t,) = primals, tangents
        return scaled(k, x), k * sg.cos(x) * t

    np.testing.assert_allclose(sg.grad(lambda x: sg.sum(scaled(3, x)))(X), 3 * np.cos(X), rtol=1e-15)
    assert sg.custom_vjp(lambda x: x, nondiff_argnums=1).nondiff_argnums == (1,)
    copied = copy.copy(scaled)  # copy makes an instance (cls.__new__(cls)), not the decorator
    np.testing.assert_allclose(sg.grad(lambda x: sg.sum(copied(2, x)))(X), 2 * np.cos(X), rtol=1e-15)


def test_errors():
    apply, power = _rules(sg, sg)
    with pytest.raises(TypeError, match="power: argument 1 is in nondiff_argnums but is an array or a traced value"):
        sg.grad(lambda x, n: sg.sum(power(x, n)))(X, 3.0)  # a float argument of grad is traced
    with pytest.raises(TypeError, match="argument 1 is in nondiff_argnums but is an array"):
        sg.grad(lambda x: sg.sum(power(x, np.array(3.0))))(X)
    with pytest.raises(TypeError, match="argument 1 is in nondiff_argnums but is not hashable \\(list\\)"):
        sg.grad(lambda x: sg.sum(power(x, [3])))(X)
    with pytest.raises(ValueError, match="nondiff_argnums \\(0, 2\\) is out of range for 2 argument"):
        sg.grad(lambda x: sg.sum(apply(sg.sin, x)))(X)

    @partial(sg.custom_vjp, nondiff_argnums=(1,))
    def f(x, k):
        return x * k

    f.defvjp(lambda x, k: (f(x, k), None), lambda k, res, g: (g * k, None))  # one cotangent too many
    with pytest.raises(TypeError, match="one cotangent per differentiable argument \\(those not in nondiff_argnums\\)"):
        sg.grad(lambda x: sg.sum(f(x, 2.0)))(X)


def _defjvps(lib, np_):
    @lib.custom_jvp
    def scaled_sin(x, y):
        return np_.sin(x) * y

    scaled_sin.defjvps(lambda t, out, x, y: np_.cos(x) * y * t, lambda t, out, x, y: np_.sin(x) * t)

    @lib.custom_jvp
    def first(x, k):
        return x * 2.0

    first.defjvps(lambda t, out, x, k: 2.0 * t, None)
    return scaled_sin, first


def test_defjvps_as_jax():
    """jax.custom_jvp's defjvps: one rule per argument, their terms summed (None: no dependence)."""
    scaled_sin, first = _defjvps(sg, sg)
    ours = [sg.grad(lambda x, y: sg.sum(scaled_sin(x, y) ** 2), argnums=(0, 1))(X, Y),
            sg.jvp(scaled_sin, (X, Y), (Y, X))[1], sg.grad(lambda x: sg.sum(first(x, Y)))(X),
            sg.hessian(lambda x: sg.sum(scaled_sin(x, Y)))(X)]
    np.testing.assert_allclose(ours[0][0], 2 * np.sin(X) * Y * np.cos(X) * Y, rtol=1e-14)
    np.testing.assert_allclose(ours[1], np.cos(X) * Y * Y + np.sin(X) * X, rtol=1e-14)
    np.testing.assert_array_equal(ours[2], 2.0 * np.ones(4))
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    scaled_sin, first = _defjvps(jax, jax.numpy)
    theirs = [jax.grad(lambda x, y: jax.numpy.sum(scaled_sin(x, y) ** 2), argnums=(0, 1))(X, Y),
              jax.jvp(scaled_sin, (X, Y), (Y, X))[1], jax.grad(lambda x: jax.numpy.sum(first(x, Y)))(X),
              jax.hessian(lambda x: jax.numpy.sum(scaled_sin(x, Y)))(X)]
    for a, b in zip(ours[0] + tuple(ours[1:]), tuple(theirs[0]) + tuple(theirs[1:])):
        np.testing.assert_allclose(a, np.asarray(b), rtol=1e-13, atol=1e-15)
    with pytest.raises(TypeError, match="defjvps cannot be used with nondiff_argnums"):
        sg.custom_jvp(lambda x, k: x, nondiff_argnums=(1,)).defjvps(lambda t, out, x: t)
