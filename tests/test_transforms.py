"""Functional transforms: grad, value_and_grad, vjp, jvp, jacobian/jacfwd, hessian, composition."""
import numpy as np
import pytest

import symgrad as sg
from gradcheck import numeric_grad as args_numeric_grad

RNG = np.random.default_rng(0)


def numeric_grad(f, x):
    """Central finite differences of a scalar function of one array (see gradcheck.py)."""
    return args_numeric_grad(f, [x], 0)


def numeric_jacobian(f, x, eps=1e-6):
    x = np.array(x, dtype=np.float64)
    out = np.asarray(f(x))
    jac = np.zeros(out.shape + x.shape)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        jac[(Ellipsis,) + i] = (np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * eps)
    return jac


def rosen(x):
    return sg.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def rosen_np(x):
    return np.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def loss(w, b, x, y):
    pred = sg.tanh(x @ w + b)
    return sg.mean((pred - y) ** 2)


def loss_np(w, b, x, y):
    return np.mean((np.tanh(x @ w + b) - y) ** 2)


@pytest.fixture
def data():
    return RNG.normal(size=(3, 2)), RNG.normal(size=(2,)), RNG.normal(size=(5, 3)), RNG.normal(size=(5, 2))


# ----------------------------------------------------------------------------- grad / value_and_grad

def test_grad_single_argnum_matches_finite_differences(data):
    w, b, x, y = data
    gw = sg.grad(loss)(w, b, x, y)
    assert gw.shape == w.shape and gw.dtype == np.float64
    np.testing.assert_allclose(gw, numeric_grad(lambda w_: loss_np(w_, b, x, y), w), rtol=1e-6, atol=1e-9)


def test_grad_tuple_argnums(data):
    w, b, x, y = data
    gw, gb = sg.grad(loss, argnums=(0, 1))(w, b, x, y)
    np.testing.assert_allclose(gw, numeric_grad(lambda w_: loss_np(w_, b, x, y), w), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(gb, numeric_grad(lambda b_: loss_np(w, b_, x, y), b), rtol=1e-6, atol=1e-9)
    (gx,) = sg.grad(loss, argnums=(2,))(w, b, x, y)
    np.testing.assert_allclose(gx, numeric_grad(lambda x_: loss_np(w, b, x_, y), x), rtol=1e-6, atol=1e-9)


def test_negative_argnums(data):
    w, b, x, y = data
    gy = sg.grad(loss, argnums=-1)(w, b, x, y)
    np.testing.assert_allclose(gy, numeric_grad(lambda y_: loss_np(w, b, x, y_), y), rtol=1e-6, atol=1e-9)


def test_value_and_grad(data):
    w, b, x, y = data
    value, (gw, gb) = sg.value_and_grad(loss, argnums=(0, 1))(w, b, x, y)
    assert np.isclose(value, loss_np(w, b, x, y))
    np.testing.assert_allclose(gb, numeric_grad(lambda b_: loss_np(w, b_, x, y), b), rtol=1e-6, atol=1e-9)


def test_has_aux():
    def f(x):
        return sg.sum(x ** 2), {"mean": sg.mean(x), "double": 2 * x}

    x = np.array([1.0, 2.0, 3.0])
    g, aux = sg.grad(f, has_aux=True)(x)
    np.testing.assert_allclose(g, 2 * x)
    assert np.isclose(aux["mean"], 2.0)
    np.testing.assert_allclose(aux["double"], 2 * x)
    (value, aux2), g2 = sg.value_and_grad(f, has_aux=True)(x)
    assert np.isclose(value, 14.0)
    np.testing.assert_allclose(g2, 2 * x)
    np.testing.assert_allclose(aux2["double"], 2 * x)


def test_pytree_arguments():
    def f(params, xs):
        w, b = params["w"], params["b"]
        return sg.sum((xs[0] @ w + b) ** 2) + sg.sum(xs[1])

    params = {"w": RNG.normal(size=(3, 2)), "b": RNG.normal(size=2)}
    xs = [RNG.normal(size=(4, 3)), RNG.normal(size=(2,))]
    g = sg.grad(f)(params, xs)
    assert set(g) == {"w", "b"}

    def f_np(w, b):
        return np.sum((xs[0] @ w + b) ** 2) + np.sum(xs[1])

    np.testing.assert_allclose(g["w"], numeric_grad(lambda w: f_np(w, params["b"]), params["w"]), rtol=1e-6)
    np.testing.assert_allclose(g["b"], numeric_grad(lambda b: f_np(params["w"], b), params["b"]), rtol=1e-6)
    gxs = sg.grad(f, argnums=1)(params, xs)
    assert isinstance(gxs, list) and len(gxs) == 2
    np.testing.assert_allclose(gxs[1], np.ones(2))

    def g_tuple(pair):
        a, b = pair
        return sg.sum(a * b)

    ga, gb = sg.grad(g_tuple)((np.array([1.0, 2.0]), np.array([3.0, 4.0])))
    np.testing.assert_allclose(ga, [3.0, 4.0])
    np.testing.assert_allclose(gb, [1.0, 2.0])


def test_python_scalar_arguments():
    g = sg.grad(lambda x, y: x * x * y, argnums=(0, 1))(3.0, 2.0)
    assert np.isclose(g[0], 12.0) and np.isclose(g[1], 9.0)
    assert np.asarray(g[0]).dtype == np.float64


def test_float32_end_to_end():
    x = RNG.normal(size=(4, 3)).astype(np.float32)
    w = RNG.normal(size=(3, 2)).astype(np.float32)

    def f(x, w):
        return sg.sum(sg.tanh(x @ w))

    value, (gx, gw) = sg.value_and_grad(f, argnums=(0, 1))(x, w)
    assert np.asarray(value).dtype == np.float32
    assert gx.dtype == np.float32 and gw.dtype == np.float32
    ref = numeric_grad(lambda w_: np.sum(np.tanh(x.astype(np.float64) @ w_)), w.astype(np.float64))
    np.testing.assert_allclose(gw, ref, rtol=1e-4, atol=1e-5)
    out, pullback = sg.vjp(lambda x: sg.sin(x), x)
    assert out.dtype == np.float32 and pullback(np.ones_like(x))[0].dtype == np.float32
    _, t = sg.jvp(lambda x: sg.exp(x), (x,), (np.ones_like(x),))
    assert t.dtype == np.float32


def test_unused_argument_gets_zeros():
    def f(x, y):
        return sg.sum(x ** 2)

    gx, gy = sg.grad(f, argnums=(0, 1))(np.ones(3), np.ones((2, 2)))
    np.testing.assert_allclose(gx, 2 * np.ones(3))
    np.testing.assert_array_equal(gy, np.zeros((2, 2)))
    assert gy.shape == (2, 2)


# ----------------------------------------------------------------------------- higher order

def test_grad_of_grad():
    f = lambda x: x ** 3 + sg.sin(x)  # noqa: E731
    assert np.isclose(sg.grad(sg.grad(f))(0.7), 6 * 0.7 - np.sin(0.7))


def test_third_derivative_of_sin_at_zero():
    assert np.isclose(sg.grad(sg.grad(sg.grad(sg.sin)))(0.0), -1.0)


def test_closure_over_traced_value():
    def outer(x):
        inner = sg.grad(lambda y: x * y)  # d/dy (x*y) = x, closing over the traced x
        return x * inner(1.5)

    for x in (0.5, 2.0, -3.0):
        assert np.isclose(sg.grad(outer)(x), 2 * x)


def test_hessian_of_rosenbrock_matches_hand_derivation():
    x = np.array([0.3, -1.2, 0.7, 1.1])
    h = sg.hessian(rosen)(x)
    n = len(x)
    expected = np.zeros((n, n))
    for i in range(n - 1):
        expected[i, i] += 1200 * x[i] ** 2 - 400 * x[i + 1] + 2
        expected[i + 1, i + 1] += 200
        expected[i, i + 1] += -400 * x[i]
        expected[i + 1, i] += -400 * x[i]
    np.testing.assert_allclose(h, expected, rtol=1e-10, atol=1e-8)


def test_hessian_argnums():
    def f(a, b):
        return sg.sum(a ** 2 * b)

    a, b = np.array([1.0, 2.0]), np.array([3.0, 5.0])
    np.testing.assert_allclose(sg.hessian(f, argnums=0)(a, b), np.diag(2 * b))
    np.testing.assert_allclose(sg.hessian(f, argnums=1)(a, b), np.zeros((2, 2)))


# ----------------------------------------------------------------------------- jacobians, vjp, jvp

def vec_fn(x):
    return sg.stack([x[0] * x[1], sg.sin(x[2]) + x[0] ** 2, sg.exp(x[1]) * x[2]])


def vec_fn_np(x):
    return np.stack([x[0] * x[1], np.sin(x[2]) + x[0] ** 2, np.exp(x[1]) * x[2]])


def test_jacobian_matches_finite_differences():
    x = np.array([0.4, -0.3, 1.2])
    expected = numeric_jacobian(vec_fn_np, x)
    np.testing.assert_allclose(sg.jacobian(vec_fn)(x), expected, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(sg.jacrev(vec_fn)(x), expected, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(sg.jacfwd(vec_fn)(x), expected, rtol=1e-6, atol=1e-9)


def test_jacobian_tuple_argnums_shapes():
    def f(a, b):
        return a[:, None] * b[None, :]

    a, b = np.array([1.0, 2.0]), np.array([3.0, 4.0, 5.0])
    ja, jb = sg.jacobian(f, argnums=(0, 1))(a, b)
    assert ja.shape == (2, 3, 2) and jb.shape == (2, 3, 3)
    np.testing.assert_allclose(ja, numeric_jacobian(lambda a_: np.outer(a_, b), a), atol=1e-8)
    ja2, jb2 = sg.jacfwd(f, argnums=(0, 1))(a, b)
    np.testing.assert_allclose(ja2, ja, atol=1e-12)
    np.testing.assert_allclose(jb2, jb, atol=1e-12)


def test_jvp_equals_jacobian_times_tangent():
    x = np.array([0.4, -0.3, 1.2])
    t = np.array([1.0, -2.0, 0.5])
    out, tangent_out = sg.jvp(vec_fn, (x,), (t,))
    np.testing.assert_allclose(out, vec_fn_np(x))
    np.testing.assert_allclose(tangent_out, sg.jacobian(vec_fn)(x) @ t, rtol=1e-12)


def test_vjp_equals_jacobian_transpose_times_cotangent():
    x = np.array([0.4, -0.3, 1.2])
    ct = np.array([0.5, 1.5, -1.0])
    out, pullback = sg.vjp(vec_fn, x)
    np.testing.assert_allclose(out, vec_fn_np(x))
    (gx,) = pullback(ct)
    np.testing.assert_allclose(gx, sg.jacobian(vec_fn)(x).T @ ct, rtol=1e-12)


def test_vjp_pytree_inputs_and_outputs():
    def f(params, x):
        return {"y": params[0] * x, "s": sg.sum(params[1] * x)}

    params, x = (np.array([1.0, 2.0]), np.array([3.0, 4.0])), np.array([0.5, -1.0])
    out, pullback = sg.vjp(f, params, x)
    np.testing.assert_allclose(out["y"], params[0] * x)
    gparams, gx = pullback({"y": np.array([1.0, 1.0]), "s": np.array(2.0)})
    np.testing.assert_allclose(gparams[0], x)
    np.testing.assert_allclose(gparams[1], 2 * x)
    np.testing.assert_allclose(gx, params[0] + 2 * params[1])


def test_derivatives_to_second_and_third_order_pass_check_grads(data):
    sg.check_grads(loss, data, order=2)
    sg.check_grads(rosen, (np.array([-1.2, 1.0, 0.5, 0.3]),), order=3, modes=("rev",))
    sg.check_grads(vec_fn, (np.array([0.4, -0.3, 1.2]),), order=2)


def test_vjp_sums_the_cotangents_of_a_value_that_fills_several_outputs():
    (gx,) = sg.vjp(lambda x: (x, x), 1.0)[1]((1.0, 2.0))
    assert gx == 3.0
    x = np.array([0.5, -2.0])
    y_ct, z_ct = np.array([1.0, 10.0]), np.array([3.0, -4.0])
    def f(x):
        y = sg.sin(x)
        return {"a": y, "b": y, "c": x}

    (gx,) = sg.vjp(f, x)[1]({"a": y_ct, "b": z_ct, "c": y_ct})
    np.testing.assert_allclose(gx, np.cos(x) * (y_ct + z_ct) + y_ct, rtol=1e-14)
    jac = sg.jacobian(lambda x: sg.sum(sg.stack(list(f(x).values())), axis=0))(x)
    np.testing.assert_allclose(jac, np.diag(2 * np.cos(x) + 1), rtol=1e-14)
    y = x * 3  # one traced value in three slots, inside a trace and through the compiled pullback
    g = sg.grad(lambda x: sg.sum(sg.vjp(lambda x: [x * 3] * 3, x)[1]([x, x * x, sg.ones_like(x)])[0]))(x)
    np.testing.assert_allclose(g, 3 * (1 + 2 * x), rtol=1e-14)
    np.testing.assert_allclose(sg.vjp(lambda x: [x * 3] * 3, x)[1]([y, y, y])[0], 27 * x, rtol=1e-14)


def test_grad_of_a_size_one_output_seeds_ones_of_its_shape():
    """As PyTorch's backward() and autograd accept it: a (1,) or (1, 1) output is a scalar."""
    x = np.array([0.3, -1.2])
    for shape in [(1,), (1, 1)]:
        f = lambda x: sg.reshape(sg.sum(x ** 3), shape)  # noqa: E731
        value, g = sg.value_and_grad(f)(x)
        assert value.shape == shape
        np.testing.assert_allclose(g, 3 * x ** 2, rtol=1e-14)
        np.testing.assert_allclose(sg.grad(lambda x: sg.sum(sg.grad(f)(x)))(x), 6 * x, rtol=1e-14)
    with pytest.raises(TypeError, match="one element"):
        sg.grad(lambda x: x * 2)(np.ones(2))


def test_jvp_pytree_and_multiple_primals():
    def f(a, b):
        return (a * b, sg.sum(a))

    a, b = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    ta, tb = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    (p, s), (tp, ts) = sg.jvp(f, (a, b), (ta, tb))
    np.testing.assert_allclose(tp, ta * b + a * tb)
    assert np.isclose(ts, 1.0)


def test_transforms_compose_with_vjp_inside_grad():
    def f(x):
        _, pullback = sg.vjp(lambda z: sg.sin(z) * z, x)
        return sg.sum(pullback(sg.ones_like(x))[0])

    x = np.array([0.3, 1.1])
    expected = numeric_grad(lambda x_: np.sum(np.cos(x_) * x_ + np.sin(x_)), x)
    np.testing.assert_allclose(sg.grad(f)(x), expected, rtol=1e-6)


# ----------------------------------------------------------------------------- scipy

def test_value_and_grad_drives_scipy_minimize():
    optimize = pytest.importorskip("scipy.optimize")
    fun = sg.value_and_grad(rosen)
    result = optimize.minimize(fun, np.array([-1.2, 1.0, 0.5, 0.0]), jac=True, method="BFGS")
    assert result.success
    np.testing.assert_allclose(result.x, np.ones(4), atol=1e-4)


@pytest.mark.parametrize("shape", [(0,), (0, 2)])
def test_jacobians_and_hessian_of_an_empty_argument_have_numpy_shapes(shape):
    x = np.ones(shape)
    assert sg.jacfwd(lambda a: a * 2)(x).shape == shape + shape
    assert sg.jacrev(lambda a: a * 2)(x).shape == shape + shape
    assert sg.jacfwd(lambda a: sg.sum(a) * np.ones(3))(x).shape == (3,) + shape
    assert sg.hessian(lambda a: sg.sum(a ** 2))(x).shape == shape + shape


def _largest_constant(lowered) -> int:
    """Elements of the largest array a compiled signature holds: its const nodes and its lifted constants."""
    held = [node.params["value"].array for node in lowered.graph.nodes if node.prim.name == "const"]
    return max((np.size(a) for a in [*held, *lowered.constants]), default=0)


@pytest.mark.parametrize("transform", [sg.jacrev, sg.jacfwd, sg.hessian])
def test_jacobians_hold_no_constant_of_the_jacobian_size(transform):
    """The identity a Jacobian maps over is built in the program, not baked as an n x n constant that the batched
    pass evaluates at trace time (compile time grew as n**2, ~3 s at n = 3200); values against finite differences."""
    n = 40
    x = np.linspace(-1.0, 1.0, n)
    if transform is sg.hessian:
        f = lambda x: sg.sum(sg.sin(x) * x + sg.cumsum(x) ** 2)  # noqa: E731
        reference = numeric_jacobian(sg.grad(f), x)
    else:
        f = lambda x: sg.sin(x) * x + sg.cumsum(x) ** 2  # noqa: E731
        reference = numeric_jacobian(f, x)
    compiled = sg.compile(transform(f))
    np.testing.assert_allclose(compiled(x), reference, rtol=1e-6, atol=1e-6)
    assert _largest_constant(compiled.lower(x)) < n * n
