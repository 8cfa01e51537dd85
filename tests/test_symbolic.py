"""sg.symbolic: closed-form SymPy output and gradient, checked symbolically and numerically."""
import numpy as np
import pytest
import sympy as sp

import symgrad as sg


def rosen(x):
    return sg.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def test_symbols_are_named_after_the_arguments():
    result = sg.symbolic(lambda x, y: x * sg.sum(y), 1.0, np.zeros(3))
    x, y = result.symbols
    assert x == sp.Symbol("x", real=True)
    assert list(y) == [sp.Symbol(f"y_{i}", real=True) for i in range(3)]


def test_rosenbrock_gradient_matches_hand_derivation():
    result = sg.symbolic(rosen, np.zeros(3))
    (x,) = result.symbols
    x0, x1, x2 = x
    expected_out = 100 * (x1 - x0 ** 2) ** 2 + (1 - x0) ** 2 + 100 * (x2 - x1 ** 2) ** 2 + (1 - x1) ** 2
    assert sp.simplify(result.output - expected_out) == 0
    hand = [
        -400 * x0 * (x1 - x0 ** 2) - 2 * (1 - x0),
        200 * (x1 - x0 ** 2) - 400 * x1 * (x2 - x1 ** 2) - 2 * (1 - x1),
        200 * (x2 - x1 ** 2),
    ]
    (gradient,) = result.gradient
    assert gradient.shape == (3,)
    for a, b in zip(gradient, hand):
        assert sp.simplify(a - b) == 0


def test_rosenbrock_numeric_substitution_matches_sg_grad():
    result = sg.symbolic(rosen, np.zeros(3))
    (x,) = result.symbols
    point = np.array([0.3, -1.2, 0.7])
    subs = dict(zip(x, point))
    numeric = np.array([float(g.subs(subs)) for g in result.gradient[0]])
    np.testing.assert_allclose(numeric, sg.grad(rosen)(point), rtol=1e-12)
    expected = np.sum(100 * (point[1:] - point[:-1] ** 2) ** 2 + (1 - point[:-1]) ** 2)
    assert np.isclose(float(result.output.subs(subs)), expected, rtol=1e-12)


def test_tanh_scalar():
    result = sg.symbolic(lambda x: sg.tanh(x), 0.5)
    (x,) = result.symbols
    assert sp.simplify(result.output - sp.tanh(x)) == 0
    assert sp.simplify(result.gradient[0] - (1 - sp.tanh(x) ** 2)) == 0
    value = float(result.gradient[0].subs(x, 0.5))
    assert np.isclose(value, sg.grad(lambda x: sg.tanh(x))(0.5))


def test_sigmoid_scalar():
    result = sg.symbolic(lambda x: sg.sigmoid(x), 0.5)
    (x,) = result.symbols
    logistic = 1 / (1 + sp.exp(-x))
    out = result.output
    assert sp.simplify(out.rewrite(sp.exp) - logistic) == 0 or all(
        np.isclose(float(out.subs(x, v)), float(logistic.subs(x, v))) for v in (-2.0, 0.1, 3.0))
    for v in (-2.0, 0.1, 3.0):
        symbolic_grad = float(sp.N(result.gradient[0].subs(x, v)))
        hand = float(sp.N(sp.diff(logistic, x).subs(x, v)))
        assert np.isclose(symbolic_grad, hand, rtol=1e-12)
        assert np.isclose(symbolic_grad, sg.grad(lambda x: sg.sigmoid(x))(v), rtol=1e-12)


def test_two_scalar_arguments_and_constants():
    def f(a, b):
        return sg.sin(a) * b ** 2 + 3.0 * a
    result = sg.symbolic(f, 1.0, 2.0)
    a, b = result.symbols
    assert sp.simplify(result.output - (sp.sin(a) * b ** 2 + 3 * a)) == 0
    ga, gb = result.gradient
    assert sp.simplify(ga - (sp.cos(a) * b ** 2 + 3)) == 0
    assert sp.simplify(gb - 2 * sp.sin(a) * b) == 0


def test_structural_ops_matmul_transpose_reductions():
    def f(w, x):
        return sg.sum((w @ x) ** 2) + sg.max(x) + sg.prod(x) + sg.mean(sg.transpose(w))
    w0, x0 = np.arange(6.0).reshape(2, 3) / 7, np.array([0.3, -0.2, 0.9])
    result = sg.symbolic(f, w0, x0)
    w, x = result.symbols
    subs = {**{w[i, j]: w0[i, j] for i in range(2) for j in range(3)}, **{x[i]: x0[i] for i in range(3)}}
    assert np.isclose(float(result.output.subs(subs)), np.sum((w0 @ x0) ** 2) + x0.max() + x0.prod() + w0.mean())
    gw, gx = sg.grad(f, argnums=(0, 1))(w0, x0)
    sym_gw = np.array([[float(result.gradient[0][i, j].subs(subs)) for j in range(3)] for i in range(2)])
    np.testing.assert_allclose(sym_gw, gw, rtol=1e-12)
    sym_gx = np.array([float(sp.N(result.gradient[1][i].subs(subs))) for i in range(3)])
    np.testing.assert_allclose(sym_gx, gx, rtol=1e-12)


def test_array_output_has_no_gradient():
    result = sg.symbolic(lambda x: sg.exp(x) * 2.0, np.zeros(2))
    (x,) = result.symbols
    assert result.gradient is None
    assert result.output.shape == (2,)
    assert sp.simplify(result.output[1] - 2 * sp.exp(x[1])) == 0


def test_too_large_raises_value_error():
    with pytest.raises(ValueError, match="small arrays"):
        sg.symbolic(lambda x: sg.sum(x), np.zeros(2000))


def test_pytree_argument_symbols_and_gradient():
    result = sg.symbolic(lambda p: p["a"] * sg.sum(p["b"]), {"a": 1.0, "b": np.ones(2)})
    (symbols,) = result.symbols
    a, b = symbols["a"], symbols["b"]
    assert a == sp.Symbol("p_a", real=True)
    (gradient,) = result.gradient
    assert sp.simplify(gradient["a"] - (b[0] + b[1])) == 0
    assert list(gradient["b"]) == [a, a]


def test_where_and_indexing_are_piecewise_and_exact():
    def f(x):
        return sg.sum(sg.where(x > 0, x, -x)) + sg.sum(x[np.array([0, 2])] ** 2)

    result = sg.symbolic(f, np.zeros(3))
    (x,) = result.symbols
    point = {x[0]: 0.5, x[1]: -2.0, x[2]: 1.5}
    assert np.isclose(float(result.output.subs(point)), 0.5 + 2.0 + 1.5 + 0.25 + 2.25)
    numeric = [float(g.subs(point)) for g in result.gradient[0]]
    np.testing.assert_allclose(numeric, sg.grad(f)(np.array([0.5, -2.0, 1.5])))


def test_integer_argument_has_no_gradient():
    result = sg.symbolic(lambda x, n: x * n, 1.0, 3)
    x, n = result.symbols
    assert result.gradient[0] == n
    assert result.gradient[1] is None


def test_loops_and_branches_have_closed_forms_when_their_decisions_are_concrete():
    x = sp.Symbol("x", real=True)
    result = sg.symbolic(lambda x: sg.fori_loop(0, 3, lambda i, v: v * v + i, x), 1.0)
    assert sp.simplify(result.output - ((x ** 4 + 1) ** 2 + 2)) == 0
    assert sp.simplify(result.gradient[0] - sp.diff((x ** 4 + 1) ** 2 + 2, x)) == 0
    counted = sg.symbolic(lambda x: sg.while_loop(lambda c: c[1] < 2, lambda c: (c[0] * 2, c[1] + 1), (x, 0))[0], 1.0)
    assert counted.output == 4 * x
    assert sg.symbolic(lambda x: sg.switch(5, [lambda v: v, lambda v: sg.sin(v)], x), 1.0).output == sp.sin(x)
    with pytest.raises(sg.TracerError, match="depends on the symbols"):
        sg.symbolic(lambda x: sg.cond(x > 0, lambda v: sg.sin(v), lambda v: v, x), 1.0)
    cubed = lambda x: sg.while_loop(lambda c: c[1] < 3, lambda c: (c[0] * x, c[1] + 1), (1.0, 0))[0]  # noqa: E731
    assert sp.simplify(sg.symbolic(sg.grad(cubed), 1.0).output - 3 * x ** 2) == 0  # through while_vjp
