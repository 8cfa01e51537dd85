"""sg.fori_loop, sg.scan, sg.while_loop, sg.cond, sg.switch: values and derivatives on every path
(uncompiled transform, each backend, eager tensors) against the unrolled Python program and
central finite differences; the IR they make (printed, hashed, pickled); their errors."""
import pickle

import numpy as np
import pytest

import symgrad as sg
from symgrad import ir
from gradcheck import assert_grads_match_finite_differences

BACKENDS = ("numpy", None)  # None: the default backend


def ode(x, k, steps, loop=True):
    """The issue's 8-element ODE: explicit Euler steps of x' = -k x + sin x."""
    def step(i, x):
        return x + 0.01 * (-k * x + sg.sin(x))
    if loop:
        return sg.fori_loop(0, steps, step, x)
    for i in range(steps):
        x = step(i, x)
    return x


def assert_paths_agree(f, reference, args, argnums=0, rtol=1e-10, atol=1e-12):
    """f's value and gradient match the reference program's on each backend and uncompiled."""
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    want_value, want_grads = sg.value_and_grad(reference, argnums=nums)(*args)
    paths = {"transform": sg.value_and_grad(f, argnums=nums)(*args)}
    for backend in BACKENDS:
        paths[backend or "default"] = sg.compile(sg.value_and_grad(f, argnums=nums), backend=backend)(*args)
    for path, (value, grads) in paths.items():
        np.testing.assert_allclose(value, want_value, rtol=rtol, atol=atol, err_msg=path)
        for got, want in zip(grads, want_grads):
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=path)


X8 = np.linspace(-1.0, 2.0, 8)


# ----------------------------------------------------------------------------- fori_loop

def test_fori_loop_ode_matches_the_unrolled_program_and_finite_differences():
    loss = lambda x, k: sg.sum(ode(x, k, 50) ** 2)  # noqa: E731
    unrolled = lambda x, k: sg.sum(ode(x, k, 50, loop=False) ** 2)  # noqa: E731
    assert_paths_agree(loss, unrolled, (X8, 0.7), argnums=(0, 1))
    assert_grads_match_finite_differences(loss, [X8, 0.7], (0, 1))


def test_a_rolled_loop_is_one_node_whose_body_is_one_step():
    graph = sg.trace(lambda x: ode(x, 0.5, 100_000), X8)
    assert [n.prim.name for n in graph.nodes].count("scan") == 1
    assert len(graph.nodes) < 10


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fori_loop_with_a_pytree_carry_and_the_step_index(dtype):
    def f(x):
        def body(i, carry):
            total, state = carry
            # the step index is an int64 scalar: NumPy's promotion would make float32 * int64 a float64
            return total + i, {"a": state["a"] * 0.9 + sg.cos(state["b"]) * sg.asarray(i).astype(dtype),
                               "b": state["b"] + 0.1}
        total, state = sg.fori_loop(2, 7, body, (np.int64(0), {"a": x, "b": x * 2}))
        return sg.sum(state["a"] * state["b"]) + sg.asarray(total).astype(dtype)

    def unrolled(x):
        total, a, b = 0, x, x * 2
        for i in range(2, 7):
            total, a, b = total + i, a * 0.9 + sg.cos(b) * i, b + 0.1
        return sg.sum(a * b) + dtype(total)

    x = X8.astype(dtype)
    tolerance = dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else {}
    assert_paths_agree(f, unrolled, (x,), **tolerance)
    for backend in BACKENDS:
        assert sg.compile(f, backend=backend)(x).dtype == dtype


def test_fori_loop_with_no_steps_returns_its_initial_value():
    for lower, upper in [(0, 0), (5, 2)]:
        f = lambda x, lo=lower, hi=upper: sg.fori_loop(lo, hi, lambda i, v: v * 2.0, x)  # noqa: E731
        for backend in BACKENDS:
            out = sg.compile(f, backend=backend)(X8)
            np.testing.assert_array_equal(out, X8)
            out[0] = 99.0  # a fresh array, not the caller's
            assert X8[0] != 99.0
        np.testing.assert_array_equal(sg.grad(lambda x, f=f: sg.sum(f(x)))(X8), np.ones(8))


def test_fori_loop_with_traced_bounds_runs_as_a_while_loop():
    f = lambda x, n: sg.fori_loop(0, n, lambda i, v: v + i * x, x)  # noqa: E731
    for backend in BACKENDS:
        compiled = sg.compile(f, backend=backend)
        for n in (0, 1, 6):
            np.testing.assert_allclose(compiled(X8, np.int64(n)), X8 * (1 + n * (n - 1) / 2))
    assert "while" in str(sg.trace(f, X8, np.int64(3)))


# ----------------------------------------------------------------------------- scan

@pytest.mark.parametrize("reverse", [False, True])
def test_scan_carries_and_stacks_like_the_python_loop(reverse):
    xs = np.random.default_rng(0).normal(size=(6, 3))

    def f(h0, xs, w):
        def step(h, x):
            h = sg.tanh(h * w + x)
            return h, h.sum() * x
        h, ys = sg.scan(step, h0, xs, reverse=reverse)
        return sg.sum(h) + sg.sum(ys ** 2)

    def unrolled(h0, xs, w):
        h, ys = h0, [None] * len(xs)
        for t in (range(len(xs) - 1, -1, -1) if reverse else range(len(xs))):
            h = sg.tanh(h * w + xs[t])
            ys[t] = h.sum() * xs[t]
        return sg.sum(h) + sg.sum(sg.stack(ys) ** 2)

    args = (np.array([0.1, -0.2, 0.3]), xs, np.array([0.5, 0.9, -0.4]))
    assert_paths_agree(f, unrolled, args, argnums=(0, 1, 2))
    assert_grads_match_finite_differences(f, list(args), (0, 1, 2))


def test_scan_of_a_cumulative_sum_and_of_zero_steps():
    xs = np.arange(5.0)
    for backend in BACKENDS:
        total, partial = sg.compile(lambda xs: sg.scan(lambda c, x: (c + x, c + x), 0.0, xs), backend=backend)(xs)
        np.testing.assert_array_equal(partial, np.cumsum(xs))
        assert total == 10.0
        carry, ys = sg.compile(lambda c: sg.scan(lambda c, x: (c * 2, c), c, length=0), backend=backend)(X8)
        np.testing.assert_array_equal(carry, X8)
        assert ys.shape == (0, 8)


def test_a_loop_body_of_exp2_differentiates_with_its_constant_log2_factor():
    """exp2's derivative y*log(2) holds the constant log(2), which calls a function: it was made a value of its
    own computed in the forward step (an ew node of no input), and hoisting it out of the loop as a value of the
    consts alone raised ShapeError (prober11's seed 7162: a scan whose body is a zero-step fori_loop of exp2)."""
    def f(x, steps):
        def body(c, t):
            return sg.fori_loop(0, steps, lambda j, d: sg.exp2(sg.tanh(d)) + t * 0.1, c), sg.sum(c)
        c, ys = sg.scan(body, x[0] * 0.5, x)
        return c * 2.0 + sg.sum(ys)

    def unrolled(x, steps):
        c, total = x[0] * 0.5, 0.0
        for t in range(4):
            total = total + c
            for _ in range(steps):
                c = sg.exp2(sg.tanh(c)) + x[t] * 0.1
        return c * 2.0 + total
    x = np.array([0.3, -0.7, 1.1, 0.0])
    for steps in (0, 2):
        assert_paths_agree(lambda x, s=steps: f(x, s), lambda x, s=steps: unrolled(x, s), (x,))
        assert_grads_match_finite_differences(lambda x, s=steps: f(x, s), (x,))


def test_nested_loops_differentiate():
    def f(x, w):
        def outer(c, t):
            inner = sg.fori_loop(0, 3, lambda i, v: sg.sin(v * w) + t, c)
            return inner, sg.sum(inner)
        c, ys = sg.scan(outer, x, np.arange(4.0))
        return sg.sum(c) + sg.sum(ys)

    def unrolled(x, w):
        c, total = x, 0.0
        for t in range(4):
            for _ in range(3):
                c = sg.sin(c * w) + t
            total = total + sg.sum(c)
        return sg.sum(c) + total

    args = (np.array([0.3, -0.1]), 0.8)
    assert_paths_agree(f, unrolled, args, argnums=(0, 1))
    assert_grads_match_finite_differences(f, list(args), (0, 1))


def test_forward_mode_jacobians_and_hessians_through_a_loop():
    f = lambda x, k: ode(x, k, 20)  # noqa: E731
    g = lambda x, k: ode(x, k, 20, loop=False)  # noqa: E731
    args = (X8[:4], 0.7)
    for transform in (sg.jacfwd, sg.jacrev, sg.jacobian):
        np.testing.assert_allclose(transform(f)(*args), transform(g)(*args), rtol=1e-10, atol=1e-12)
    primal, tangent = sg.jvp(f, args, (np.ones(4), 1.0))
    want_primal, want_tangent = sg.jvp(g, args, (np.ones(4), 1.0))
    np.testing.assert_allclose(tangent, want_tangent, rtol=1e-10)
    loss = lambda x, k: sg.sum(f(x, k) ** 2)  # noqa: E731
    unrolled = lambda x, k: sg.sum(g(x, k) ** 2)  # noqa: E731
    np.testing.assert_allclose(sg.hessian(loss)(*args), sg.hessian(unrolled)(*args), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(sg.compile(sg.hessian(loss))(*args), sg.hessian(unrolled)(*args), rtol=1e-9, atol=1e-12)


def test_reverse_mode_stores_one_carry_per_step_in_one_forward_loop():
    """The scan reverse mode adds (a copy storing the carries) is merged with the primal scan, and
    cotangents no one reads (of the step counter) are pruned from the loops."""
    from symgrad.passes import optimize
    graph = optimize(sg.trace(sg.value_and_grad(lambda x: sg.sum(ode(x, 0.5, 100))), X8))
    scans = [n for n in graph.nodes if n.prim.name == "scan"]
    assert len(scans) == 2  # the forward loop and the backward loop
    forward = scans[0]
    assert forward.out.type_str() == "(f64[8], f64[100,8])"  # no stored counter


# ----------------------------------------------------------------------------- cond / switch

def test_switch_picks_a_branch_and_clamps_its_index():
    branches = [lambda x: x * 2.0, lambda x: sg.sin(x), lambda x: x ** 3]
    f = lambda i, x: sg.sum(sg.switch(i, branches, x))  # noqa: E731
    for index, chosen in [(-3, 0), (0, 0), (1, 1), (2, 2), (7, 2)]:
        want_value = np.sum([X8 * 2.0, np.sin(X8), X8 ** 3][chosen])
        want_grad = [np.full(8, 2.0), np.cos(X8), 3 * X8 ** 2][chosen]
        for backend in BACKENDS:
            value, grad = sg.compile(sg.value_and_grad(f, argnums=1), backend=backend)(np.int64(index), X8)
            np.testing.assert_allclose(value, want_value)
            np.testing.assert_allclose(grad, want_grad)
        np.testing.assert_allclose(f(index, X8), want_value)  # outside a trace: a Python branch
        np.testing.assert_allclose(sg.jvp(lambda x: f(np.int64(index), x), (X8,), (np.ones(8),))[1], want_grad.sum())


def test_cond_inside_a_loop_body_and_over_captured_values():
    def f(x, w):
        def body(i, v):
            return sg.cond(i < 2, lambda v: v * w, lambda v: sg.sin(v) + w, v)
        return sg.sum(sg.fori_loop(0, 5, body, x))

    def unrolled(x, w):
        v = x
        for i in range(5):
            v = v * w if i < 2 else sg.sin(v) + w
        return sg.sum(v)

    args = (X8[:3], 1.3)
    assert_paths_agree(f, unrolled, args, argnums=(0, 1))
    assert_grads_match_finite_differences(f, list(args), (0, 1))


def test_cond_on_a_traced_predicate_differentiates_the_branch_taken():
    f = lambda x: sg.cond(sg.sum(x) > 0, lambda x: sg.exp(x), lambda x: -x * x, x)  # noqa: E731
    for x in (X8, -X8):
        want = np.exp(x) if x.sum() > 0 else -2 * x
        for backend in BACKENDS:
            np.testing.assert_allclose(sg.compile(sg.grad(lambda x: sg.sum(f(x))), backend=backend)(x), want)


# ----------------------------------------------------------------------------- while_loop

def newton_sqrt(a, checkpoints=None):
    """sqrt(a) by Newton's iteration, stopping at a tolerance: a step count known only at run time."""
    def cond(state):
        x, steps = state
        return (sg.abs(x * x - a) > 1e-12) & (steps < 100)
    x, steps = sg.while_loop(cond, lambda s: (0.5 * (s[0] + a / s[0]), s[1] + 1), (a + 1.0, np.int64(0)),
                             checkpoints=checkpoints)
    return x


def test_while_loop_runs_until_its_condition_fails():
    for backend in BACKENDS:
        compiled = sg.compile(newton_sqrt, backend=backend)
        for a in (0.25, 2.0, 1e6):
            np.testing.assert_allclose(compiled(a), np.sqrt(a), rtol=1e-12)
    np.testing.assert_allclose(newton_sqrt(2.0), np.sqrt(2.0))  # outside a trace: a Python loop


def test_while_loop_forward_mode():
    for backend in BACKENDS:
        for a in (0.25, 2.0):
            tangent = sg.compile(lambda a: sg.jvp(newton_sqrt, (a,), (1.0,))[1], backend=backend)(a)
            np.testing.assert_allclose(tangent, 0.5 / np.sqrt(a), rtol=1e-8)
    np.testing.assert_allclose(sg.jacfwd(newton_sqrt)(2.0), 0.5 / np.sqrt(2.0), rtol=1e-8)


@pytest.mark.parametrize("checkpoints", [None, 2, 5])
def test_while_loop_reverse_mode(checkpoints):
    """A loop whose step count depends on the data, differentiated in reverse mode (which JAX's
    while_loop is not), keeping every carry or a few checkpoints."""
    def f(x, w):
        def cond(state):
            v, n = state
            return (sg.sum(v * v) < 50.0) & (n < 40)
        v, n = sg.while_loop(cond, lambda s: (s[0] * w + sg.sin(s[0]), s[1] + 1), (x, np.int64(0)),
                             checkpoints=checkpoints)
        return sg.sum(v ** 2) + sg.sum(w)

    args = (np.array([0.3, -0.2, 0.5]), np.array([1.1, 1.2, 0.9]))
    steps = 0
    v = args[0]
    while np.sum(v * v) < 50.0 and steps < 40:
        v, steps = v * args[1] + np.sin(v), steps + 1
    assert steps > 5

    def unrolled(x, w):
        v = x
        for _ in range(steps):
            v = v * w + sg.sin(v)
        return sg.sum(v ** 2) + sg.sum(w)

    assert_paths_agree(f, unrolled, args, argnums=(0, 1))
    assert_grads_match_finite_differences(f, list(args), (0, 1))
    for backend in BACKENDS:
        np.testing.assert_allclose(sg.compile(sg.grad(newton_sqrt), backend=backend)(2.0), 0.5 / np.sqrt(2.0),
                                   rtol=1e-9)


@pytest.mark.parametrize("checkpoints", [None, 2])
def test_value_and_grad_of_a_while_loop_runs_it_once_on_the_numpy_backend(checkpoints):
    """The loop keeps the carries its reverse pass needs as it runs (its result and its gradient from one
    forward run: the condition is evaluated once per step and once at the end), and both agree with the
    LLVM backend and finite differences."""
    def loss(a):
        return sg.sum(newton_sqrt(a, checkpoints) ** 3)

    a = np.array(3.0)
    executable = sg.compile(sg.value_and_grad(loss), backend="numpy").lower(a).executable
    namespace = executable._fn.__globals__
    calls = []
    for name in [n for n in namespace if n.startswith("_cond_")]:
        namespace[name] = lambda *args, cond=namespace[name]: calls.append(1) or cond(*args)
    value, grad = executable(a)
    x, steps = a + 1.0, 0
    while abs(x * x - a) > 1e-12 and steps < 100:
        x, steps = 0.5 * (x + a / x), steps + 1
    assert steps > 3 and len(calls) == steps + 1
    native_value, native_grad = sg.compile(sg.value_and_grad(loss), backend="llvm")(a)
    np.testing.assert_allclose(value, native_value, rtol=1e-13)
    np.testing.assert_allclose(grad, native_grad, rtol=1e-12)
    np.testing.assert_allclose(grad, 1.5 * np.sqrt(a), rtol=1e-9)
    assert_grads_match_finite_differences(loss, [a], (0,))


def test_while_loop_checkpoints_bound_the_carries_kept():
    """carries_in_reverse yields every carry, last first, keeping at most C + 2 n / C at once."""
    from symgrad.ops.control import carries_in_reverse
    live = {"now": 0, "peak": 0}

    class Carry:
        def __init__(self, step):
            self.step = step
            live["now"] += 1
            live["peak"] = max(live["peak"], live["now"])

        def __del__(self):
            live["now"] -= 1

    steps, kept = 100_000, 100
    order = [c.step for c in carries_in_reverse(lambda c: c.step < steps, lambda c: Carry(c.step + 1), Carry(0), kept)]
    assert order == list(range(steps - 1, -1, -1))
    assert live["peak"] <= kept + 2 * steps // kept + 2
    everything = [c.step for c in carries_in_reverse(lambda c: c.step < 7, lambda c: Carry(c.step + 1), Carry(0), None)]
    assert everything == list(range(6, -1, -1))


def test_while_loop_errors():
    with pytest.raises(ValueError, match="checkpoints must be"):
        sg.while_loop(lambda v: v < 1, lambda v: v + 1, 0, checkpoints=1)
    with pytest.raises(sg.TracerError, match=r"Hessian through a while loop.*sg.jacfwd\(sg.jacfwd\(f\)\)") as info:
        sg.hessian(newton_sqrt)(2.0)
    assert "test_control_flow.py" in str(info.value)
    np.testing.assert_allclose(sg.jacfwd(sg.jacfwd(newton_sqrt))(2.0), -0.25 * 2.0 ** -1.5, rtol=1e-8)


def _loop_of_y_plus_x_term(ns, while_loop):
    """A while loop over y only, plus a term in x (for ns = sg or jax.numpy)."""
    def f(x, y):
        v = while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * ns.cos(c[1]) + 0.25), (0, y))[1]
        return ns.sum(v * v) + ns.sum(ns.sin(x) * x ** 2)
    return f


@pytest.mark.parametrize("which", ["hessian", "jacfwd of grad"])
def test_second_derivatives_along_an_argument_a_checkpointed_while_loop_does_not_read(which):
    """Differentiating along x only, the loop over y is no part of the derivative (as in JAX, which closes over the
    arguments not in argnums): before, grad/jacrev reversed the loop for y too, inside the checkpoint's rule, and
    the outer forward pass refused that reverse pass ("cannot be differentiated again") where JAX runs."""
    def second(lib, fn):
        inner = lib.checkpoint(fn)
        return lib.hessian(inner) if which == "hessian" else lib.jacfwd(lib.grad(inner))

    f = _loop_of_y_plus_x_term(sg, sg.while_loop)
    x, y = np.array([0.3, -0.7, 1.1]), np.array([0.5, 1.5, -2.0])
    got = second(sg, f)(x, y)
    gradient = lambda x_: 2 * x_ * np.sin(x_) + x_ ** 2 * np.cos(x_)  # noqa: E731
    eps, numeric = 1e-6, np.zeros((3, 3))
    for i in range(3):
        e = np.zeros(3)
        e[i] = eps
        numeric[:, i] = (gradient(x + e) - gradient(x - e)) / (2 * eps)
    np.testing.assert_allclose(got, numeric, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(sg.grad(f)(x, y), gradient(x), rtol=1e-12)
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    np.testing.assert_allclose(got, second(jax, _loop_of_y_plus_x_term(jax.numpy, jax.lax.while_loop))(x, y),
                               rtol=1e-12, atol=1e-12)


def test_jacobians_take_repeated_argnums():
    f = _loop_of_y_plus_x_term(sg, sg.while_loop)
    x, y = np.array([0.3, -0.7, 1.1]), np.array([0.5, 1.5, -2.0])
    for transform in (sg.jacrev, sg.jacfwd):
        first, again = transform(f, argnums=(0, 0))(x, y)
        np.testing.assert_allclose(first, 2 * x * np.sin(x) + x ** 2 * np.cos(x), rtol=1e-12)
        np.testing.assert_array_equal(first, again)


# ----------------------------------------------------------------------------- checkpoint

def test_checkpoint_recomputes_its_function_in_the_backward_pass():
    from symgrad.passes import optimize

    def block(x, w):
        return sg.tanh(sg.sin(x * w) * w)

    def f(x, w, remat):
        step = sg.checkpoint(block) if remat else block
        return sg.sum(sg.fori_loop(0, 4, lambda i, v: step(v, w), x) ** 2)

    args = (X8, np.linspace(0.5, 1.5, 8))
    assert_paths_agree(lambda x, w: f(x, w, True), lambda x, w: f(x, w, False), args, argnums=(0, 1))
    graph = optimize(sg.trace(sg.grad(lambda x, w: f(x, w, True), argnums=(0, 1)), *args))
    backward_branch = str(graph).split("def block_vjp")[1]
    assert "sin" in backward_branch and "tanh" in backward_branch  # the forward, run again
    np.testing.assert_allclose(sg.checkpoint(block)(X8, 2.0), np.tanh(np.sin(X8 * 2.0) * 2.0))


# ----------------------------------------------------------------------------- eager tensors

def test_loops_and_branches_over_eager_tensors_record_each_step():
    x = sg.tensor(X8, requires_grad=True)
    k = sg.tensor(0.7, requires_grad=True)
    y = sg.cond(True, lambda v: sg.sum(v ** 2), lambda v: sg.sum(v), ode(x, k, 10))
    y.backward()
    want = sg.grad(lambda x, k: sg.sum(ode(x, k, 10, loop=False) ** 2), argnums=(0, 1))(X8, 0.7)
    np.testing.assert_allclose(x.grad.numpy(), want[0], rtol=1e-12)
    np.testing.assert_allclose(k.grad.numpy(), want[1], rtol=1e-12)
    carry, ys = sg.scan(lambda c, t: (c * t, c), sg.tensor(1.0, requires_grad=True), sg.tensor(np.arange(1.0, 4.0)))
    assert isinstance(ys, sg.Tensor) and ys.shape == (3,)
    np.testing.assert_allclose(ys.detach().numpy(), [1.0, 1.0, 2.0])
    (carry * 1.0).backward()
    np.testing.assert_allclose(carry.detach().numpy(), 6.0)


# ----------------------------------------------------------------------------- the IR

def test_nested_bodies_print_indented():
    def f(x):
        return sg.fori_loop(0, 3, lambda i, v: sg.cond(v[0] > 0, lambda u: u * 2.0, lambda u: u - 1.0, v), x)
    text = str(sg.trace(f, np.zeros(2)))
    assert text == """\
def f(x: f64[2]) -> f64[2]:
  v0: i64[]           = const[value=0]
  v1: (i64[], f64[2]) = scan[body=step, length=3, num_carry=2, num_consts=0, reverse=False] v0 x
    def step(c_0: i64[], c_1: f64[2]) -> (i64[], f64[2]):
      v0: i64[]    = ew[x0 + 1] c_0
      v1: f64[1]   = slice[sizes=(1,), starts=(0,), steps=(1,)] c_1
      v2: f64[]    = reshape[shape=()] v1
      v3: bool[]   = ew[x0 > 0] v2
      v4: i64[]    = convert[dtype=i64] v3
      v5: (f64[2]) = switch[branches=(f, f)] v4 c_1
        def f(u: f64[2]) -> f64[2]:
          v0: f64[2] = ew[x0 - 1.0] u
          return v0
        def f(u: f64[2]) -> f64[2]:
          v0: f64[2] = ew[2.0*x0] u
          return v0
      v6: f64[2]   = result[index=0] v5
      return v0, v6
  v2: f64[2]          = result[index=1] v1
  return v2"""


def test_graphs_with_loops_hash_compare_and_pickle():
    f = lambda x: ode(x, 0.5, 10)  # noqa: E731
    a, b = sg.trace(f, X8), sg.trace(f, X8)
    assert a == b and hash(a) == hash(b)
    assert sg.trace(lambda x: ode(x, 0.5, 11), X8) != a
    restored = pickle.loads(pickle.dumps(a))
    assert restored == a and str(restored) == str(a)


# ----------------------------------------------------------------------------- errors

def test_a_carry_that_changes_shape_or_dtype_names_the_carry_and_the_line():
    with pytest.raises(sg.ShapeError, match=r"carry 'carry'.*f64\[8\] to f64\[9\]") as info:
        sg.trace(lambda x: sg.fori_loop(0, 3, lambda i, v: sg.concatenate([v, v[:1]]), x), X8)
    assert "test_control_flow.py" in str(info.value)
    with pytest.raises(sg.ShapeError, match=r"carry_1.*i64\[\] to f64\[\]"):
        sg.trace(lambda x: sg.fori_loop(0, 3, lambda i, c: (c[0] * 2, c[1] + 0.5), (x, np.int64(1))), X8)
    with pytest.raises(TypeError, match="structure"):
        sg.trace(lambda x: sg.fori_loop(0, 3, lambda i, v: (v, v), x), X8)


def test_branches_returning_different_types_are_an_error():
    with pytest.raises(TypeError, match=r"branches must return the same.*true_fun returns f64\[8\].*false_fun returns f32\[8\]") as info:
        sg.trace(lambda x: sg.cond(x[0] > 0, lambda v: v, lambda v: v.astype(np.float32), x), X8)
    assert "test_control_flow.py" in str(info.value)
    with pytest.raises(TypeError, match="same structure"):
        sg.trace(lambda x: sg.switch(1, [lambda v: v, lambda v: (v, v)], x), X8)


def test_predicates_must_be_scalars():
    with pytest.raises(sg.ShapeError, match=r"predicate must be a scalar.*\(8,\)") as info:
        sg.trace(lambda x: sg.cond(x > 0, lambda v: v, lambda v: -v, x), X8)
    assert "test_control_flow.py" in str(info.value)
    with pytest.raises(sg.ShapeError, match="predicate must be a scalar"):
        sg.trace(lambda x: sg.while_loop(lambda v: v > 0, lambda v: v - 1.0, x), X8)
    with pytest.raises(sg.ShapeError, match="predicate must be a scalar"):
        sg.cond(X8 > 0, lambda v: v, lambda v: -v, X8)


def test_scan_checks_its_xs_and_its_body():
    with pytest.raises(sg.ShapeError, match=r"disagree.*\[3, 4\]"):
        sg.trace(lambda a, b: sg.scan(lambda c, x: (c, x[0] + x[1]), 0.0, (a, b)), np.zeros(3), np.zeros(4))
    with pytest.raises(TypeError, match=r"pair \(carry, y\)"):
        sg.trace(lambda a: sg.scan(lambda c, x: c + x, 0.0, a), np.zeros(3))


def test_a_loop_over_constants_is_compiled_not_run_while_tracing():
    graph = sg.trace(lambda x: x * sg.fori_loop(0, 10 ** 9, lambda i, v: v * 0.5, 1.0), X8)
    assert "scan" in str(graph)


def test_a_loop_body_reading_a_global_is_never_stale():
    """What a body reads is guarded like what the function reads: changed in place for the uncompiled
    transform, rebound for sg.compile."""
    global SCALE
    SCALE = np.full(3, 0.5)
    grad = sg.grad(lambda x: sg.sum(sg.fori_loop(0, 20, lambda i, v: v * SCALE + 0.1, x)))
    compiled = sg.compile(lambda x: sg.fori_loop(0, 20, lambda i, v: v * SCALE + 0.1, x))
    x = np.ones(3)
    np.testing.assert_allclose(grad(x), 0.5 ** 20)
    compiled(x)
    SCALE[...] = 0.9
    np.testing.assert_allclose(grad(x), 0.9 ** 20)
    SCALE = np.full(3, 0.8)
    np.testing.assert_allclose(grad(x), 0.8 ** 20)
    np.testing.assert_allclose(compiled(x), sum(0.1 * 0.8 ** j for j in range(20)) + 0.8 ** 20)


def test_fori_loop_errors_name_fori_loop_and_the_users_carry():
    with pytest.raises(sg.ShapeError, match=r"fori_loop: the body changes the carry 'carry' from f32\[8\] to f64\[8\]"):
        sg.trace(lambda x: sg.fori_loop(0, 3, lambda i, v: v * i, x), X8.astype(np.float32))
    with pytest.raises(TypeError, match=r"fori_loop: .* takes an array and returns a tuple of 2"):
        sg.trace(lambda x: sg.fori_loop(0, 3, lambda i, v: (v, v), x), X8)
    with pytest.raises(sg.ShapeError, match=r"fori_loop: the body changes the carry 'carry_0'"):
        sg.trace(lambda x, n: sg.fori_loop(0, n, lambda i, v: (v[0][:2], v[1]), (x, x)), X8, np.int64(3))
    with pytest.raises(TypeError, match="upper must be an integer"):
        sg.fori_loop(0, 2.5, lambda i, v: v, X8)
    with pytest.raises(TypeError, match="lower must be an integer scalar"):
        sg.trace(lambda x, lo: sg.fori_loop(lo, 3, lambda i, v: v, x), X8, 0.5)
    with pytest.raises(sg.ShapeError, match="index must be an integer scalar"):
        sg.switch(1.7, [lambda v: v, lambda v: -v], X8)
    assert sg.grad(lambda a: newton_sqrt(a, checkpoints=np.int64(4)))(2.0) > 0


def test_reverse_mode_keeps_a_costly_steps_residuals_and_recomputes_an_elementwise_step():
    """A step with a matrix product stacks what its pullback reads (no product run again backward); an
    elementwise step stacks its carry alone and is recomputed from it."""
    from symgrad.passes import optimize
    rng = np.random.default_rng(1)
    W, xs = rng.normal(scale=0.4, size=(5, 5)), rng.normal(size=(12, 5))

    def rnn(W, h0, m=sg):
        h = h0
        for t in range(12):
            h = m.tanh(W @ h + xs[t])
        return m.sum(h ** 2)

    def rolled(W, h0):
        h, _ = sg.scan(lambda h, x: (sg.tanh(W @ h + x), ()), h0, xs)
        return sg.sum(h ** 2)

    args = (W, np.linspace(-0.5, 0.5, 5))
    assert_paths_agree(rolled, rnn, args, argnums=(0, 1))
    assert_grads_match_finite_differences(rolled, list(args), (0, 1))
    graph = optimize(sg.trace(sg.grad(rolled, argnums=(0, 1)), *args))
    forward, backward = [node for node in graph.nodes if node.prim.name == "scan"]
    assert sum(n.prim.name == "matmul" for n in backward.params["body"].nodes) == 1  # W.T @ ct only
    # the weight gradient, the sum of every step's ct h^T, is one product after the loop
    assert sum(n.prim.name == "matmul" for n in graph.nodes[graph.nodes.index(backward):]) == 1
    elementwise = optimize(sg.trace(sg.grad(lambda x: sg.sum(ode(x, 0.5, 100))), X8))
    forward = [node for node in elementwise.nodes if node.prim.name == "scan"][0]
    assert forward.out.type_str() == "(f64[8], f64[100,8])"  # the carry, stacked once per step


def _stacked_and_pullback(f, *args):
    """The optimized graph of value_and_grad(f): the forward scan's stacked types and the reverse scan's body."""
    from symgrad.passes import optimize
    graph = optimize(sg.trace(sg.value_and_grad(f), *args))
    forward, backward = [node for node in graph.nodes if node.prim.name == "scan"]
    stacked = [ir.Value(shape, dtype).type_str() for shape, dtype in ir.components(forward.out.dtype)[1:]]
    return stacked, backward.params["body"]


def _calls_a_function(graph) -> bool:
    import sympy
    return any(n.prim.name == "ew" and n.params["expr"].has(sympy.Function) for n in ir.all_nodes(graph))


def test_an_elementwise_step_stacks_the_costly_factors_of_its_derivative_when_no_more_than_its_carry():
    """sin's pullback g*cos(x): cos(x) is computed in the forward step (beside sin(x)) and stacked in place of
    the carry, and the reverse loop only multiplies; a step whose factors would stack more than its carry
    (cos(x) and exp(x)) stacks the carry and is recomputed from it."""
    loss = lambda x: sg.sum(ode(x, 0.5, 100) ** 2)  # noqa: E731
    stacked, pullback = _stacked_and_pullback(loss, X8)
    assert stacked == ["f64[100,8]"] and not _calls_a_function(pullback)
    assert_paths_agree(loss, lambda x: sg.sum(ode(x, 0.5, 100, loop=False) ** 2), (X8,))
    assert_grads_match_finite_differences(loss, [X8])
    two = lambda x: sg.sum(sg.fori_loop(0, 30, lambda i, x: 0.1 * (sg.sin(x) + sg.exp(-x * x)), x))  # noqa: E731
    stacked, pullback = _stacked_and_pullback(two, X8)
    assert stacked == ["f64[30,8]"] and _calls_a_function(pullback)
    assert_grads_match_finite_differences(two, [X8])


def test_a_literal_array_the_step_reads_gets_no_cotangent():
    """A rerolled Python loop passes the array it closes over (k) into its scan as a const: the pullback
    computes no cotangent for it (it would go nowhere), so it keeps cos(x) alone, not x as well."""
    k = np.linspace(0.5, 1.5, 8)
    loss = lambda x: sg.sum(ode(x, k, 200, loop=False) ** 2)  # noqa: E731
    stacked, pullback = _stacked_and_pullback(loss, X8)
    assert stacked == ["f64[200,8]"] and not _calls_a_function(pullback)
    assert_paths_agree(loss, lambda x: sg.sum(ode(x, k, 200) ** 2), (X8,))
    assert_grads_match_finite_differences(loss, [X8])


def test_stacked_factors_give_the_torch_gradient_and_the_same_bits_on_both_backends():
    torch = pytest.importorskip("torch")
    k = np.linspace(0.5, 1.5, 8)
    loss = lambda x: sg.sum(ode(x, k, 500) ** 2)  # noqa: E731
    x = torch.tensor(X8, requires_grad=True)
    h, kt = x, torch.tensor(k)
    for _ in range(500):
        h = h + 0.01 * (-kt * h + torch.sin(h))
    (h ** 2).sum().backward()
    value, grad = sg.compile(sg.value_and_grad(loss))(X8)
    np.testing.assert_allclose(grad, x.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(value, (h ** 2).sum().item(), rtol=1e-13)
    numpy_value, numpy_grad = sg.compile(sg.value_and_grad(loss), backend="numpy")(X8)
    np.testing.assert_allclose(numpy_grad, grad, rtol=1e-14)


@pytest.mark.parametrize("x", [np.zeros(8), np.array([0.0, np.inf, -np.inf, np.nan, 1e300, -0.0, 1.0, 2.0]),
                               np.zeros(0), np.float64(0.3)], ids=["zeros", "nonfinite", "empty", "0-d"])
def test_stacked_factors_at_edge_values_match_the_unrolled_program(x):
    loss = lambda x: sg.sum(ode(x, 0.5, 5) ** 2)  # noqa: E731
    unrolled = lambda x: sg.sum(ode(x, 0.5, 5, loop=False) ** 2)  # noqa: E731
    with np.errstate(all="ignore"):
        assert_paths_agree(loss, unrolled, (x,))


def test_residuals_computed_from_constants_alone_are_not_stacked_per_step():
    """The matrix product's pullback reads W transposed: computed once, not copied into every step."""
    from symgrad.passes import optimize
    W, xs = np.eye(6) * 0.5, np.ones((30, 6))

    def f(W, h0):
        h, _ = sg.scan(lambda h, x: (sg.tanh(W @ h + x), ()), h0, xs)
        return sg.sum(h)

    graph = optimize(sg.trace(sg.value_and_grad(f, argnums=(0, 1)), W, np.zeros(6)))
    stacked = [shape for node in graph.nodes if node.prim.name == "scan" for shape, _ in ir.components(node.out.dtype)]
    assert (30, 6, 6) not in stacked
    assert_grads_match_finite_differences(f, [W, np.linspace(-1, 1, 6)], (0, 1))


def _jax_style_loops(lib, x, xs):
    """Bodies written for JAX (`x.at[i].set(v)`, chained, and on sg.* results) in each loop and branch: the values."""
    lax = lib if lib is sg else lib.lax
    numpy = sg if lib is sg else lib.numpy

    def body(i, v):
        return v.at[i].set(v[i] * 2 + i).at[0].add(1.0)

    def step(c, t):
        c = c.at[0].add(t)
        return c, numpy.sin(c).at[1].set(0.0)

    def grow(carry):
        v, k = carry
        return v.at[k % 3].multiply(1.5), k + 1

    fori = lax.fori_loop(0, 3, body, x)
    carry, ys = lax.scan(step, x, xs)
    grown, count = lax.while_loop(lambda c: c[1] < 5, grow, (x, 0))
    picked = lax.cond(True, lambda v: v.at[0].set(9.0), lambda v: v, x)
    chosen = lax.switch(1, [lambda v: v, lambda v: v.at[-1].max(7.0)], x)
    return fori, carry, ys, grown, count, picked, chosen


@pytest.mark.parametrize("compiled", [False, True])
def test_jax_style_bodies_run_outside_a_trace_as_inside(compiled):
    """Outside a trace the loops run in Python on NumPy arrays, which have no `.at`: a body written for JAX raised
    NumPy's AttributeError there, where it runs inside a trace (and in JAX outside jit). Its arrays have `.at` now
    (LoopArray), the results are plain arrays, and the numbers are the traced ones (JAX's too, in float32)."""
    x, xs = np.arange(3.0), np.arange(4.0)
    run = sg.compile(lambda a, b: _jax_style_loops(sg, a, b)) if compiled else lambda a, b: _jax_style_loops(sg, a, b)
    ours = run(x, xs)
    assert compiled or all(type(value) is np.ndarray for value in ours) and type(x) is np.ndarray
    ours = [np.asarray(value) for value in ours]
    expected_fori = [3.0, 3.0, 6.0]  # [0, 1, 2] -> [1, 1, 2] -> [2, 3, 2] -> [3, 3, 6]
    np.testing.assert_array_equal(ours[0], expected_fori)
    np.testing.assert_array_equal(ours[1], [6.0, 1.0, 2.0])
    np.testing.assert_allclose(ours[2], np.sin([[0.0, 1, 2], [1, 1, 2], [3, 1, 2], [6, 1, 2]]) * [1, 0, 1], rtol=1e-15)
    np.testing.assert_array_equal(ours[3], [0.0, 2.25, 3.0])
    assert int(ours[4]) == 5
    np.testing.assert_array_equal(ours[5], [9.0, 1.0, 2.0])
    np.testing.assert_array_equal(ours[6], [0.0, 1.0, 7.0])
    jax = pytest.importorskip("jax")
    for got, want in zip(ours, _jax_style_loops(jax, jax.numpy.asarray(x), jax.numpy.asarray(xs))):
        np.testing.assert_allclose(got, want, rtol=1e-6)
