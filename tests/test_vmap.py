"""sg.vmap: each primitive's batching rule against a Python loop over the examples (run eagerly and
compiled on both backends), in_axes/out_axes, errors, composition with grad/jvp/compile, and the
Jacobians built on it (pytrees in and out)."""
import numpy as np
import pytest

import symgrad as sg

rng = np.random.default_rng(0)
X = rng.normal(size=(5, 3))
W = rng.normal(size=(4, 3))


def _per_example(f, args, in_axes):
    axes = in_axes if isinstance(in_axes, (tuple, list)) else [in_axes] * len(args)
    size = next(np.shape(a)[ax] for a, ax in zip(args, axes) if ax is not None)
    outs = [f(*[a if ax is None else np.take(a, b, axis=ax) for a, ax in zip(args, axes)]) for b in range(size)]
    return np.stack([np.asarray(o) for o in outs])


def check(f, *args, in_axes=0, rtol=1e-12):
    want = _per_example(f, args, in_axes)
    mapped = sg.vmap(f, in_axes=in_axes)
    np.testing.assert_allclose(mapped(*args), want, rtol=rtol, atol=1e-12)
    for backend in ("llvm", "numpy"):
        np.testing.assert_allclose(sg.compile(mapped, backend=backend)(*args), want, rtol=rtol, atol=1e-12)


PROGRAMS = {
    "elementwise with an unmapped operand": lambda x: sg.tanh(x) * W[0] + 1.0,
    "broadcast": lambda x: sg.broadcast_to(x, (2, 3)) * sg.reshape(x, (1, 3)),
    "reductions": lambda x: sg.stack([sg.sum(x), sg.max(x), sg.min(x), sg.prod(x)]),
    "reshape and transpose": lambda x: sg.transpose(sg.reshape(sg.concatenate([x, x * 2]), (2, 3))),
    "concatenate with an unmapped part": lambda x: sg.concatenate([x, W[1]]),
    "roll, cumsum, cumprod": lambda x: sg.roll(x, 1) + sg.cumsum(x) + sg.cumprod(x)[::-1],
    "slices": lambda x: x[1:] * x[:-1] + x[::2][0],
    "unmapped index": lambda x: x[np.array([2, 0, 0])],
    "matmul, mapped vector": lambda x: W @ x,
    "matmul, mapped matrix": lambda x: sg.outer(x, x) @ W.T,
    "convert": lambda x: sg.astype(x > 0, np.float64) * x,
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_a_primitive_batched_equals_a_loop_over_examples(name):
    check(PROGRAMS[name], X)


def test_gathers_and_scatters_with_mapped_indices():
    index = np.array([[0, 2], [1, 1], [2, 0], [0, 0], [-1, 2]])
    check(lambda x, i: x[i] * 2, X, index)
    check(lambda w, i: w[i], W[0], index, in_axes=(None, 0))  # one array gathered at mapped indices
    # the gradient of a gather is a scatter: mapped updates and indices
    check(sg.grad(lambda x, i: sg.sum(sg.sin(x[i]))), X, index)
    check(lambda x: W @ x[np.array([1, 2, 0])], X)


def test_in_axes_and_out_axes():
    Y = rng.normal(size=(3, 5))
    check(lambda x, y: x * y + sg.sum(x), X, Y, in_axes=(0, 1))
    check(lambda x, w: w @ x, X, W, in_axes=(0, None))
    check(lambda x: x * 2, Y, in_axes=-1)
    out = sg.vmap(lambda x: (x * 2, sg.sum(x)), out_axes=(1, 0))(X)
    np.testing.assert_allclose(out[0], (X * 2).T)
    np.testing.assert_allclose(out[1], X.sum(axis=1))
    tree = sg.vmap(lambda p: p["a"] * p["b"], in_axes=({"a": 0, "b": None},))({"a": X, "b": W[0]})
    np.testing.assert_allclose(tree, X * W[0])
    constant = sg.vmap(lambda x: W[0], in_axes=0, out_axes=0)(X)  # an output not depending on x is broadcast
    np.testing.assert_allclose(constant, np.broadcast_to(W[0], (5, 3)))


def test_scalar_examples_and_a_single_example():
    check(lambda x: sg.sin(x) * x, np.linspace(-1, 1, 7))
    check(lambda x: sg.sum(x ** 2), X[:1])


def test_errors_name_the_problem():
    with pytest.raises(ValueError, match="different sizes"):
        sg.vmap(lambda x, y: x + y)(X, W)
    with pytest.raises(ValueError, match="no argument is mapped"):
        sg.vmap(lambda x: x, in_axes=None)(X)
    with pytest.raises(ValueError, match="out of range"):
        sg.vmap(lambda x: x, in_axes=2)(X)
    with pytest.raises(ValueError, match="out_axes is None"):
        sg.vmap(lambda x: x, out_axes=None)(X)


def test_composes_with_grad_jvp_and_itself():
    f = lambda x: sg.sum(sg.tanh(W @ x) ** 2)  # noqa: E731
    check(sg.grad(f), X)
    batched_grad = sg.grad(lambda X: sg.sum(sg.vmap(f)(X)))(X)
    np.testing.assert_allclose(batched_grad, _per_example(sg.grad(f), (X,), 0), rtol=1e-12)
    _, tangents = sg.jvp(sg.vmap(f), (X,), (np.ones_like(X),))
    np.testing.assert_allclose(tangents, [sg.jvp(f, (x,), (np.ones(3),))[1] for x in X], rtol=1e-12)
    nested = sg.vmap(sg.vmap(lambda a, b: a * b + sg.sin(a)), in_axes=(0, None))(X, W[0])
    np.testing.assert_allclose(nested, X * W[0] + np.sin(X))


def test_loops_and_branches():
    k = np.linspace(0.5, 1.5, 3)
    check(lambda x: sg.fori_loop(0, 10, lambda i, x: x + 0.01 * (-k * x + sg.sin(x)), x), X)
    check(lambda x: sg.scan(lambda c, xi: (c * xi + 1.0, c), 0.5, x)[1], X)
    check(lambda x: sg.cond(x[0] > 0, lambda x: x * 2, lambda x: -x, x), X)  # a mapped predicate
    check(lambda i, x: sg.switch(i, [lambda x: x * 2, lambda x: x - 1, lambda x: sg.sin(x)], x),
          np.array([0, 1, 2, 5, -1]), X)
    check(lambda x: sg.switch(1, [lambda x: x * 2, lambda x: x - 1], x), X)

    def newton(a):  # each example stops after its own number of steps
        x, steps = sg.while_loop(lambda c: sg.abs(c[0] * c[0] - a) > 1e-10,
                                 lambda c: ((c[0] + a / c[0]) / 2, c[1] + 1), (a, 0))
        return x + 0 * steps
    a = np.array([2.0, 9.0, 100.0, 1.0])
    check(newton, a)
    gradient = sg.grad(lambda a: sg.sum(sg.vmap(newton)(a)))(a)  # reverse mode through the batched loop
    np.testing.assert_allclose(gradient, [sg.grad(newton)(ai) for ai in a], rtol=1e-12)
    np.testing.assert_allclose(gradient[:3], 0.5 / np.sqrt(a[:3]), rtol=1e-9)  # a = 1 runs no step: x = a


def test_examples_of_a_while_loop_or_a_switch_run_apart():
    """An example never runs a step or a branch it would not run alone (here an index out of range)."""
    def last_entries(x, n):  # the sum of the last n entries of x
        body = lambda s: (s[0] + 1, s[1] + x[s[0] + 4 - n])  # noqa: E731
        return sg.while_loop(lambda s: s[0] < n, body, (0, 0.0))[1]
    check(last_entries, np.arange(12.0).reshape(3, 4), np.array([1, 4, 2]))
    pick = lambda i, x, j: sg.switch(i, [lambda x, j: x[j], lambda x, j: x[0] * 2.0], x, j)  # noqa: E731
    check(pick, np.array([0, 1]), np.arange(6.0).reshape(2, 3), np.array([2, 7]))


def test_the_gradient_of_a_while_loop_is_mapped_and_its_jacobian_batched():
    def root(a):
        return sg.while_loop(lambda c: sg.abs(c * c - a[0]) > 1e-12, lambda c: (c + a[0] / c) / 2, a[0]) * a
    A = np.array([[2.0, 1.0], [9.0, 2.0], [1.0, 3.0]])
    check(sg.grad(lambda a: sg.sum(root(a))), A, rtol=1e-9)
    a = np.array([4.0, 3.0])
    jacobian = sg.jacrev(root)(a)
    np.testing.assert_allclose(jacobian, sg.jacfwd(root)(a), rtol=1e-9)
    np.testing.assert_allclose(jacobian, [[1.5 * 2.0, 0.0], [3.0 / 4.0, 2.0]], rtol=1e-9)  # sqrt(a0) * a


def test_jacobians_need_float_arguments_and_outputs():
    for jac in (sg.jacrev, sg.jacfwd):
        with pytest.raises(TypeError, match="argument of dtype int64 has no derivative"):
            jac(lambda a: a * 2.0)(np.arange(3))
        with pytest.raises(TypeError, match="output of dtype int64 has no derivative"):
            jac(lambda a: sg.astype(a > 0, np.int64))(np.ones(3))


def test_raw_gathers_with_negative_mapped_indices_stay_in_their_example():
    from symgrad.ops.indexing import take_p
    x = np.arange(9.0).reshape(3, 3)
    np.testing.assert_allclose(sg.vmap(lambda x, i: take_p(x, i, axis=0))(x, np.array([-1, -1, -1])), [2, 5, 8])


def test_jacobians_of_pytrees():
    def f(params):
        return {"y": sg.tanh(params["w"] @ params["x"]), "s": sg.sum(params["x"] ** 2)}
    params = {"w": W, "x": X[0]}
    for jac in (sg.jacrev, sg.jacfwd):
        J = jac(f)(params)
        assert set(J) == {"y", "s"} and set(J["y"]) == {"w", "x"}
        assert J["y"]["w"].shape == (4, 4, 3) and J["y"]["x"].shape == (4, 3) and J["s"]["x"].shape == (3,)
        np.testing.assert_allclose(J["s"]["x"], 2 * X[0], rtol=1e-12)
        d = 1 - np.tanh(W @ X[0]) ** 2
        np.testing.assert_allclose(J["y"]["x"], d[:, None] * W, rtol=1e-12)
        np.testing.assert_allclose(J["y"]["w"], np.einsum("i,ij,k->ijk", d, np.eye(4), X[0]), rtol=1e-12)
    two = sg.jacrev(lambda a, b: a * b, argnums=(0, 1))(X[0], X[1])
    np.testing.assert_allclose(two[0], np.diag(X[1]))
    np.testing.assert_allclose(two[1], np.diag(X[0]))


def test_a_jacobian_is_one_batched_program_not_one_pass_per_row():
    f = lambda x: sg.tanh(W @ x) * sg.sum(x)  # noqa: E731
    graph = sg.compile(sg.jacrev(f)).lower(X[0]).graph
    assert sum(node.prim.name == "matmul" for node in graph.nodes) <= 4  # not one backward pass per output
    np.testing.assert_allclose(sg.jacrev(f)(X[0]), sg.jacfwd(f)(X[0]), rtol=1e-12)
    hessian = sg.hessian(lambda x: sg.sum(sg.sin(x) * x[0]))(X[0])
    want = np.diag(-np.sin(X[0]) * X[0][0])
    want[0, :] += np.cos(X[0])
    want[:, 0] += np.cos(X[0])
    np.testing.assert_allclose(hessian, want, rtol=1e-12, atol=1e-14)


def test_linearize_and_hessian_vector_products():
    f = lambda x, y: sg.sum(sg.sin(x) * y ** 2)  # noqa: E731
    x, y = X[0], X[1]
    out, f_jvp = sg.linearize(f, x, y)
    np.testing.assert_allclose(out, np.sum(np.sin(x) * y ** 2), rtol=1e-12)
    tx, ty = np.ones(3), np.arange(3.0)
    np.testing.assert_allclose(f_jvp(tx, ty), sg.jvp(f, (x, y), (tx, ty))[1], rtol=1e-12)
    np.testing.assert_allclose(f_jvp(2 * tx, 2 * ty), 2 * f_jvp(tx, ty), rtol=1e-12)  # linear
    hx, hy = sg.hvp(f, (x, y), (tx, ty))
    full = sg.hessian(lambda v: f(v[:3], v[3:]))(np.concatenate([x, y]))
    np.testing.assert_allclose(np.concatenate([hx, hy]), full @ np.concatenate([tx, ty]), rtol=1e-12)
    with pytest.raises(TypeError, match="one tangent per primal"):
        f_jvp(tx)


def test_a_concrete_pullback_can_be_used_inside_a_later_trace():
    out, pullback = sg.vjp(lambda x: sg.tanh(W @ x), X[0])  # evaluated now, residuals kept
    later = sg.compile(lambda g: pullback(g)[0] * 2.0)
    g = np.arange(4.0)
    np.testing.assert_allclose(later(g), 2 * pullback(g)[0], rtol=1e-12)
    rows = sg.vmap(lambda g: pullback(g)[0])(np.eye(4))
    np.testing.assert_allclose(rows, (1 - np.tanh(W @ X[0])[:, None] ** 2) * W, rtol=1e-12)
