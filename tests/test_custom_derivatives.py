"""sg.custom_vjp and sg.custom_jvp: the user's rules are what grad, jvp, vmap and compile use (on both
backends), not the autodiff of the function; reverse mode of a custom_jvp is its rule transposed;
errors for rules that do not fit the function."""
import numpy as np
import pytest

import symgrad as sg


@sg.custom_vjp
def clip_gradient(x, bound):
    return x


def _clip_fwd(x, bound):
    return x, bound


def _clip_bwd(bound, g):
    return (sg.clip(g, -bound, bound), None)


clip_gradient.defvjp(_clip_fwd, _clip_bwd)


@sg.custom_jvp
def log1pexp(x):
    return sg.log(1.0 + sg.exp(x))


@log1pexp.defjvp
def _log1pexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return log1pexp(x), t * (1.0 - 1.0 / (1.0 + sg.exp(x)))  # stable where exp(x) overflows


def test_custom_vjp_gradient_is_the_rule_on_both_backends():
    f = lambda x: sg.sum(clip_gradient(x, 0.5) * 3.0)  # noqa: E731
    x = np.linspace(-1, 1, 5)
    np.testing.assert_allclose(sg.grad(f)(x), np.full(5, 0.5))  # 3 clipped to 0.5
    for backend in ("llvm", "numpy"):
        value, grad = sg.compile(sg.value_and_grad(f), backend=backend)(x)
        np.testing.assert_allclose(value, 0.0, atol=1e-15)
        np.testing.assert_allclose(grad, np.full(5, 0.5))
    assert clip_gradient(x, 0.5) is x  # concrete, outside a transform: the function runs as it is


def test_custom_vjp_with_residuals_matches_finite_differences():
    @sg.custom_vjp
    def f(x, y):
        return sg.sin(x) * y

    def f_fwd(x, y):
        return f(x, y), (sg.cos(x), sg.sin(x), y)

    def f_bwd(res, g):
        cos_x, sin_x, y = res
        return (cos_x * g * y, sin_x * g)

    f.defvjp(f_fwd, f_bwd)
    x, y = np.array([0.3, -1.2]), np.array([2.0, 0.5])
    loss = lambda x, y: sg.sum(f(x, y) ** 2)  # noqa: E731
    gx, gy = sg.grad(loss, argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gx, 2 * np.sin(x) * y * np.cos(x) * y, rtol=1e-12)
    np.testing.assert_allclose(gy, 2 * np.sin(x) * y * np.sin(x), rtol=1e-12)
    per_example = sg.vmap(sg.grad(lambda x, y: sg.sum(f(x, y))), in_axes=(0, 0))(np.stack([x, x * 2]),
                                                                                   np.stack([y, y]))
    np.testing.assert_allclose(per_example[1], np.cos(2 * x) * y, rtol=1e-12)


def test_custom_jvp_forward_reverse_and_second_order():
    x = np.array([-3.0, 0.0, 2.0, 800.0])
    _, tangent = sg.jvp(log1pexp, (x,), (np.ones(4),))
    want = 1.0 / (1.0 + np.exp(-np.minimum(x, 700)))
    np.testing.assert_allclose(tangent, want, rtol=1e-12)  # 1 at 800, where autodiff of f gives nan
    for backend in ("llvm", "numpy"):
        np.testing.assert_allclose(sg.compile(sg.grad(lambda x: sg.sum(log1pexp(x))), backend=backend)(x), want,
                                   rtol=1e-12)
    hessian = sg.hessian(lambda x: sg.sum(log1pexp(x)))(x[:3])
    np.testing.assert_allclose(np.diag(hessian), want[:3] * (1 - want[:3]), rtol=1e-10)
    np.testing.assert_allclose(sg.vmap(sg.grad(log1pexp))(x), want, rtol=1e-12)


def test_forward_mode_of_a_custom_vjp_function_is_a_clear_error():
    with pytest.raises(sg.UnsupportedOpError, match="custom_vjp"):
        sg.jvp(lambda x: clip_gradient(x, 1.0), (np.ones(2),), (np.ones(2),))


def test_rules_that_do_not_fit_are_errors_naming_the_function():
    @sg.custom_vjp
    def f(x):
        return x * 2

    f.defvjp(lambda x: (x * 2, x), lambda res, g: (g, g))  # two cotangents for one argument
    with pytest.raises(TypeError, match="one cotangent per argument"):
        sg.grad(lambda x: sg.sum(f(x)))(np.ones(3))

    @sg.custom_vjp
    def g(x):
        return x * 2

    g.defvjp(lambda x: (x * 2, x), lambda res, ct: (ct[:2],))  # a cotangent of the wrong shape
    with pytest.raises(TypeError, match="f64\\[2\\], expected f64\\[3\\]"):
        sg.grad(lambda x: sg.sum(g(x)))(np.ones(3))

    @sg.custom_vjp
    def h(x):
        return x * 2
    with pytest.raises(TypeError, match="defvjp"):
        sg.grad(lambda x: sg.sum(h(x)))(np.ones(3))


def test_a_rule_closing_over_a_traced_value_is_refused():
    def outer(scale, x):
        @sg.custom_vjp
        def f(x):
            return x * scale

        f.defvjp(lambda x: (x * scale, None), lambda res, g: (g * scale,))
        return sg.sum(f(x))
    with pytest.raises(sg.TracerError, match="pass that value as an argument"):
        sg.grad(outer)(2.0, np.ones(3))


def test_sg_symbolic_and_the_printed_ir_show_the_function():
    result = sg.symbolic(lambda x: log1pexp(x), 1.0)
    assert str(result.output) == "log(exp(x) + 1.0)"
    text = str(sg.trace(lambda x: log1pexp(x), np.ones(2)))
    assert "custom_jvp" in text and "log1pexp" in text


@pytest.mark.parametrize("backend", [None, "llvm", "numpy"])
def test_reverse_mode_of_a_custom_jvp_reaches_a_scalar_a_loop_reads(backend):
    """Reverse mode of a custom_jvp runs its rule with zero tangents in place: a 0-d zero was a literal constant,
    whose cotangent a scan's reverse rule drops as going nowhere, so the gradient of a scalar the scan reads was 0
    (random_programs_transforms: vmap of a cond, a scan over the examples, under custom_jvp under jacrev)."""
    def g(xs, b):
        return sg.scan(lambda c, x: (c + x, b * x + b), 0.0, xs)[1]

    h = sg.custom_jvp(g)
    h.defjvp(lambda primals, tangents: sg.jvp(g, primals, tangents))
    grads = sg.grad(lambda xs, b: sg.sum(h(xs, b) ** 2), argnums=(0, 1))
    if backend is not None:
        grads = sg.compile(grads, backend=backend)
    xs, b = np.array([1.0, -2.0, 0.5]), 0.7
    gx, gb = grads(xs, b)
    np.testing.assert_allclose(gx, 2 * (b * xs + b) * b, rtol=1e-14)
    np.testing.assert_allclose(gb, np.sum(2 * (b * xs + b) * (xs + 1)), rtol=1e-14)
    per_example = sg.vmap(sg.grad(lambda xs, b: sg.sum(h(xs, b)), argnums=1), in_axes=(0, None))(np.stack([xs, -xs]), b)
    np.testing.assert_allclose(per_example, [np.sum(xs) + 3, 3 - np.sum(xs)], rtol=1e-14)


@pytest.mark.parametrize("backend", [None, "llvm", "numpy"])
def test_hessian_of_a_custom_vjp_differentiates_its_rules(backend):
    """Forward over reverse (hessian, jacfwd(grad), jvp of grad) of a custom_vjp function was refused as forward mode
    of it; JAX's adjoint reads the primal from fwd and differentiates fwd and bwd, so it has one (the rule here is
    the true derivative: the Hessian is f's). Forward mode of the function itself stays refused, as in JAX."""
    @sg.custom_vjp
    def f(x, y):
        return sg.sin(x) * y

    f.defvjp(lambda x, y: (sg.sin(x) * y, (sg.cos(x), sg.sin(x), y)), lambda r, g: (r[0] * g * r[2], r[1] * g))

    def loss(x):
        return sg.sum(f(x, x * 2.0) ** 2)
    x = np.array([0.3, -1.2, 0.7])
    want = np.diag(8 * (np.cos(2 * x) * x ** 2 + 2 * np.sin(2 * x) * x + np.sin(x) ** 2))  # of 4 x^2 sin(x)^2
    hessian = sg.hessian(loss) if backend is None else sg.compile(sg.hessian(loss), backend=backend)
    np.testing.assert_allclose(hessian(x), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(sg.jvp(sg.grad(loss), (x,), (np.ones(3),))[1], np.diag(want), rtol=1e-12)
    with pytest.raises(sg.UnsupportedOpError, match="forward mode"):
        sg.jvp(loss, (x,), (np.ones(3),))

    def later(x):  # ops after the call whose adjoint reads their own outputs (tanh) or a part of the call's (a slice)
        y = f(x, x * 2.0)
        return sg.sum(sg.tanh(y)) + sg.sum(y[:2] * y[1:]), {"y": y}

    def plain(x):
        y = sg.sin(x) * x * 2.0
        return sg.sum(sg.tanh(y)) + sg.sum(y[:2] * y[1:])
    value_and_grad = sg.value_and_grad(later, has_aux=True)
    hessian = sg.jacfwd(lambda x: value_and_grad(x)[1])
    if backend is not None:
        value_and_grad, hessian = (sg.compile(value_and_grad, backend=backend), sg.compile(hessian, backend=backend))
    (value, aux), grad = value_and_grad(x)
    np.testing.assert_allclose(value, plain(x), rtol=1e-14)
    np.testing.assert_allclose(aux["y"], np.sin(x) * x * 2.0, rtol=1e-14)
    np.testing.assert_allclose(grad, sg.grad(plain)(x), rtol=1e-13)
    np.testing.assert_allclose(hessian(x), sg.hessian(plain)(x), rtol=1e-12, atol=1e-13)


def test_vjp_takes_the_calls_outputs_from_fwd_as_value_and_grad_does():
    """A fwd whose output differs from the function's (here by 0.5): value_and_grad, grad and a traced vjp read the
    call's outputs from fwd (JAX's linearization: the value and what later ops' adjoints read); a concrete sg.vjp
    ran the function instead, so its value and cotangent disagreed with value_and_grad's (JAX's: y + 0.5)."""
    @sg.custom_vjp
    def f(x):
        return sg.sin(x) * 2.0

    f.defvjp(lambda x: (sg.sin(x) * 2.0 + 0.5, x), lambda x, g: (g * 3.0 * sg.cos(x),))

    def loss(x):
        return sg.sum(f(x)[:2] * x[1:])
    x = np.array([0.3, -1.2, 2.0])
    y = np.sin(x) * 2.0 + 0.5
    want = 3.0 * np.cos(x) * np.array([x[1], x[2], 0.0]) + np.array([0.0, y[0], y[1]])
    value, pullback = sg.vjp(loss, x)
    np.testing.assert_allclose(value, np.sum(y[:2] * x[1:]), rtol=1e-14)
    np.testing.assert_allclose(pullback(np.float64(1.0))[0], want, rtol=1e-14)
    np.testing.assert_allclose(sg.value_and_grad(loss)(x)[0], value, rtol=1e-14)
    np.testing.assert_allclose(sg.grad(loss)(x), want, rtol=1e-14)
    np.testing.assert_allclose(sg.vjp(f, x)[0], y, rtol=1e-14)


def _stepped_by_a_custom_vjp(custom_vjp, ns, lax, loop):
    """A loss whose loop (lax's scan, fori_loop, while_loop or cond) calls a custom_vjp function whose fwd's value
    differs from the function's (+0.5) and whose bwd reads fwd's residual."""
    @custom_vjp
    def f(x):
        return ns.sin(x)

    f.defvjp(lambda x: (ns.sin(x) + 0.5, ns.cos(x) * 1.5), lambda r, g: (g * r,))
    step = lambda c: f(c) * 0.8 + c * 0.1  # noqa: E731
    run = {"scan": lambda x: lax.scan(lambda c, _: (step(c), c), x, None, length=3)[0],
           "fori_loop": lambda x: lax.fori_loop(0, 3, lambda i, c: step(c), x),
           "while_loop": lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, step(c[1])), (0, x))[1],
           "cond": lambda x: lax.cond(ns.sum(x) > 0, step, lambda c: c * 2.0, x)}[loop]
    return lambda x: ns.sum(run(x) * x)


@pytest.mark.parametrize("loop", ["scan", "fori_loop", "while_loop", "cond"])
def test_a_custom_vjp_in_a_loop_or_branch_is_valued_by_fwd_under_reverse_mode(loop):
    """Inside a loop or a branch, reverse mode values a custom_vjp call by its fwd, as JAX's linearization of scan
    and cond does (and as outside a loop): the loop's value and its carries (so what the later steps' adjoints read)
    came from the function. JAX does not reverse a while loop: the same loop as a fori_loop is its reference."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    loss = _stepped_by_a_custom_vjp(sg.custom_vjp, sg, sg, loop)
    reference_loop = "fori_loop" if loop == "while_loop" else loop
    reference = _stepped_by_a_custom_vjp(jax.custom_vjp, jax.numpy, jax.lax, reference_loop)
    x = np.array([0.3, -0.2, 1.1])
    value, gradient = sg.value_and_grad(loss)(x)
    want_value, want_gradient = jax.value_and_grad(reference)(x)
    np.testing.assert_allclose(value, want_value, rtol=1e-13)
    np.testing.assert_allclose(gradient, want_gradient, rtol=1e-13)
    np.testing.assert_allclose(sg.compile(sg.grad(loss), backend="numpy")(x), want_gradient, rtol=1e-13)
    np.testing.assert_allclose(loss(x), reference(x), rtol=1e-13)  # undifferentiated: the function's value


def _two_outputs_jvp():
    f = sg.custom_jvp(lambda x: (sg.sin(x), x * x))
    f.defjvp(lambda p, t: (f(p[0]), (2.0 * t[0], 3.0 * t[0])))
    return f


def _two_outputs_vjp():
    f = sg.custom_vjp(lambda x: (sg.sin(x), x * x))
    f.defvjp(lambda x: (f(x), x), lambda x, ct: (2.0 * ct[0] + 3.0 * x * ct[1],))
    return f


def _pytree_argument():
    f = sg.custom_jvp(lambda d: d["a"] * d["b"])
    f.defjvp(lambda p, t: (f(p[0]), 7.0 * t[0]["a"] + 0.5 * t[0]["b"]))
    return lambda x: f({"a": x, "b": x * x})


def _nondiff_argument():
    f = sg.custom_vjp(lambda scale, x: scale * sg.sin(x), nondiff_argnums=(0,))
    f.defvjp(lambda scale, x: (f(scale, x), x), lambda scale, x, ct: (scale * 4.0 * x * ct,))
    return lambda x: f(3.0, x)


@pytest.mark.parametrize("make", [_two_outputs_jvp, _two_outputs_vjp, _pytree_argument, _nondiff_argument])
def test_eager_tensors_take_the_rule_of_a_function_the_recorder_cannot_take_as_one_node(make):
    """Several outputs, a pytree argument, nondiff_argnums: on eager tensors the gradient is the rule's, as under
    sg.grad (the function's own ops were recorded instead: cos(x) for a rule saying 2, silently)."""
    f = make()

    def loss(x):
        out = f(x)
        return sum(part.sum() for part in out) if isinstance(out, tuple) else out.sum()

    x_np = np.array([0.3, -1.2, 2.0])
    expected = sg.grad(loss)(x_np)
    x = sg.tensor(x_np, requires_grad=True)
    for _ in range(3):  # (the later steps as the first: no capture takes another path)
        loss(x).backward()
        np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-14)
        x.grad = None
    with sg.no_grad():
        np.testing.assert_allclose(loss(x).numpy(), loss(x_np), rtol=1e-15)
    grad, = sg.autograd.grad(loss(x), x, create_graph=True)  # the rule's backward is recorded too: a Hessian
    hessian_diagonal, = sg.autograd.grad(grad.sum(), x)
    expected_second = np.diag(sg.hessian(loss)(x_np))  # (elementwise: the Hessian is diagonal)
    np.testing.assert_allclose(hessian_diagonal.numpy(), expected_second, rtol=1e-12, atol=1e-14)
