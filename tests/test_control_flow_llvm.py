"""The LLVM backend's loops and branches (codegen/llvm/control.py): sg.fori_loop, sg.scan,
sg.while_loop, sg.cond and sg.switch compiled to one native module, checked against the NumPy
backend, the unrolled Python program and central finite differences, values and derivatives."""
from __future__ import annotations

import os
import re
import sys

import numpy as np
import pytest

import symgrad as sg
from symgrad.codegen.llvm import blas
from symgrad.codegen.llvm.backend import LlvmExecutable

from gradcheck import numeric_grad
from test_aot import needs_linker, run_python

RNG = np.random.default_rng(11)
TOLERANCE = {np.float64: dict(rtol=1e-10, atol=1e-12), np.float32: dict(rtol=2e-5, atol=2e-6)}


def native(fn):
    """sg.compile(fn) on the default backend, checked to run as one LLVM module (no NumPy fallback)."""
    compiled = sg.compile(fn)

    def run(*args):
        assert isinstance(compiled.lower(*args).executable, LlvmExecutable)
        return compiled(*args)
    return run


def paths(fn) -> dict:
    """fn compiled on each path a user can take: the default backend, LLVM named, and NumPy."""
    return {"default": native(fn), "llvm": sg.compile(fn, backend="llvm"), "numpy": sg.compile(fn, backend="numpy")}


def assert_trees_close(got, expected, err_msg="", **tolerance):
    got_leaves, expected_leaves = sg.pytree.flatten(got)[0], sg.pytree.flatten(expected)[0]
    assert len(got_leaves) == len(expected_leaves), err_msg
    for a, b in zip(got_leaves, expected_leaves):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape and a.dtype == b.dtype, f"{err_msg}: {a.dtype}{a.shape} != {b.dtype}{b.shape}"
        np.testing.assert_allclose(a, b, err_msg=err_msg, equal_nan=True, **tolerance)


def assert_agree(fn, reference, args, dtype=np.float64):
    """fn on every compiled path agrees with the unrolled `reference` compiled on NumPy."""
    expected = sg.compile(reference, backend="numpy")(*args)
    for path, compiled in paths(fn).items():
        assert_trees_close(compiled(*args), expected, err_msg=path, **TOLERANCE[dtype])
    return expected


# ----------------------------------------------------------------------------- fori_loop

def ode_step(i, carry):
    """A step with an integer counter and two float arrays in a pytree carry."""
    count, (x, v) = carry
    return count + i, (x + 0.1 * v, v - 0.1 * (sg.sin(x) + 0.05 * v * sg.astype(count, v.dtype)))


def ode_loop(x, v):
    count, (x, v) = sg.fori_loop(0, 7, ode_step, (np.int64(0), (x, v)))
    return sg.sum(x ** 2 + v) + 0.01 * count


def ode_unrolled(x, v):
    carry = (np.int64(0), (x, v))
    for i in range(7):
        carry = ode_step(i, carry)
    count, (x, v) = carry
    return sg.sum(x ** 2 + v) + 0.01 * count


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_fori_loop_with_a_pytree_carry_values_and_gradients(dtype):
    x, v = RNG.normal(size=5).astype(dtype), RNG.normal(size=5).astype(dtype)
    assert_agree(ode_loop, ode_unrolled, (x, v), dtype)
    value_and_grad = sg.value_and_grad(ode_loop, argnums=(0, 1))
    expected = assert_agree(value_and_grad, sg.value_and_grad(ode_unrolled, argnums=(0, 1)), (x, v), dtype)
    assert expected[1][0].dtype == dtype
    if dtype == np.float64:
        for n in (0, 1):
            np.testing.assert_allclose(expected[1][n], numeric_grad(ode_unrolled, (x, v), n), rtol=1e-7, atol=1e-9)


def test_fori_loop_returning_every_part_of_its_carry():
    """The final carry, the counter and an input are all outputs: each is its own fresh array."""
    def f(x):
        count, (y, v) = sg.fori_loop(0, 3, ode_step, (np.int64(0), (x, x * 2.0)))
        return count, y, v, x, y

    def unrolled(x):
        carry = (np.int64(0), (x, x * 2.0))
        for i in range(3):
            carry = ode_step(i, carry)
        count, (y, v) = carry
        return count, y, v, x, y
    x = RNG.normal(size=4)
    out = native(f)(x)
    assert_trees_close(out, sg.compile(unrolled, backend="numpy")(x))
    assert len({id(a) for a in out}) == 5 and not np.shares_memory(out[1], out[4])


@pytest.mark.parametrize("steps", [0, 1, 2, 3, 10])
def test_fori_loop_of_each_parity_of_steps(steps):
    """The carries swap buffers each step: the result is right whether a loop ends on either side."""
    def f(x):
        return sg.fori_loop(0, steps, lambda i, c: c * 1.5 + i, x)

    x = np.arange(3.0)
    expected = x.copy()
    for i in range(steps):
        expected = expected * 1.5 + i
    for path, compiled in paths(f).items():
        np.testing.assert_allclose(compiled(x), expected, rtol=1e-14, err_msg=path)
    for path, compiled in paths(sg.value_and_grad(lambda x: sg.sum(f(x)))).items():
        np.testing.assert_allclose(compiled(x)[1], np.full(3, 1.5 ** steps), rtol=1e-14, err_msg=path)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_edge_values_in_carries_of_every_kind(dtype):
    """0-d, empty, non-finite, integer and boolean carries, through the loop and out of it exactly."""
    def step(i, carry):
        scalar, empty, edges, count, flag = carry
        return scalar * 2.0, empty + 1.0, edges * 0.5 + edges, count + np.int32(1), ~flag

    def f(scalar, empty, edges):
        return sg.fori_loop(0, 5, step, (scalar, empty, edges, np.int32(0), np.bool_(True)))

    def unrolled(scalar, empty, edges):
        carry = (scalar, empty, edges, np.int32(0), np.bool_(True))
        for i in range(5):
            carry = step(i, carry)
        return carry

    args = (dtype(0.75), np.zeros(0, dtype), np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1e30], dtype))
    expected = sg.compile(unrolled, backend="numpy")(*args)
    assert expected[3].dtype == np.int32 and expected[4].dtype == np.bool_
    for path, compiled in paths(f).items():
        for got, want in zip(compiled(*args), expected):
            assert got.shape == want.shape and got.dtype == want.dtype, path
            np.testing.assert_array_equal(got, want, err_msg=path)


def test_jacobian_and_hessian_through_a_loop():
    def f(x):
        return sg.fori_loop(0, 4, lambda i, c: c + 0.3 * sg.tanh(c[::-1] * x), x)

    def unrolled(x):
        c = x
        for _ in range(4):
            c = c + 0.3 * sg.tanh(c[::-1] * x)
        return c

    x = RNG.normal(size=3)
    jacobian = assert_agree(sg.jacobian(f), sg.jacobian(unrolled), (x,))
    assert jacobian.shape == (3, 3)
    scalar = lambda x: sg.sum(f(x) ** 2)  # noqa: E731
    hessian = assert_agree(sg.hessian(scalar), sg.hessian(lambda x: sg.sum(unrolled(x) ** 2)), (x,))
    np.testing.assert_allclose(hessian, hessian.T, rtol=1e-10)
    np.testing.assert_allclose(assert_agree(sg.jacfwd(f), sg.jacfwd(unrolled), (x,)), jacobian, rtol=1e-10)


# ----------------------------------------------------------------------------- scan

def scan_step(c, x):
    return c * 0.9 + sg.sin(x), c * x


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_scan_with_xs_and_ys(reverse, dtype):
    def f(c, xs):
        carry, ys = sg.scan(scan_step, c, xs, reverse=reverse)
        return carry, ys

    def unrolled(c, xs):
        ys = [None] * xs.shape[0]
        for step in (reversed(range(xs.shape[0])) if reverse else range(xs.shape[0])):
            c, ys[step] = scan_step(c, xs[step])
        return c, sg.stack(ys)

    c, xs = RNG.normal(size=3).astype(dtype), RNG.normal(size=(6, 3)).astype(dtype)
    assert_agree(f, unrolled, (c, xs), dtype)
    loss = lambda f: lambda c, xs: sg.sum(f(c, xs)[0]) + sg.sum(f(c, xs)[1] ** 2)  # noqa: E731
    assert_agree(sg.value_and_grad(loss(f), argnums=(0, 1)), sg.value_and_grad(loss(unrolled), argnums=(0, 1)),
                 (c, xs), dtype)


def test_zero_length_scan_returns_the_initial_carry():
    def f(c, xs):
        carry, ys = sg.scan(scan_step, c, xs)
        return carry * 2.0, ys

    c, xs = np.array([1.0, -2.0, 3.0]), np.zeros((0, 3))
    for path, compiled in paths(f).items():
        carry, ys = compiled(c, xs)
        np.testing.assert_array_equal(carry, c * 2.0, err_msg=path)
        assert ys.shape == (0, 3), path
    for path, compiled in paths(sg.grad(lambda c, xs: sg.sum(f(c, xs)[0]))).items():
        np.testing.assert_array_equal(compiled(c, xs), np.full(3, 2.0), err_msg=path)


def test_nested_scan():
    """A fori_loop inside a scan's body: a loop in a loop, each a function of its own."""
    def inner(c, x):
        c = sg.fori_loop(0, 3, lambda i, a: a * 0.8 + sg.cos(a * x), c)
        return c, sg.sum(c * x)

    def f(c, xs):
        carry, ys = sg.scan(inner, c, sg.cos(xs))  # xs computed first, into memory
        return sg.sum(carry) + sg.sum(ys ** 2)

    def unrolled(c, xs):
        ys = []
        xs = sg.cos(xs)
        for step in range(xs.shape[0]):
            for _ in range(3):
                c = c * 0.8 + sg.cos(c * xs[step])
            ys.append(sg.sum(c * xs[step]))
        return sg.sum(c) + sg.sum(sg.stack(ys) ** 2)

    rng = np.random.default_rng(11)  # (its own draws: the shared RNG's depend on which tests ran before)
    c, xs = rng.normal(size=2), rng.normal(size=(5, 2))
    assert_agree(f, unrolled, (c, xs))
    _, (dc, dxs) = assert_agree(sg.value_and_grad(f, argnums=(0, 1)), sg.value_and_grad(unrolled, argnums=(0, 1)),
                                (c, xs))
    # central differences with a step of 1e-6 of an f of about 24 (rounded to ~4e-15): ~1e-9 off in each slope
    np.testing.assert_allclose(dc, numeric_grad(unrolled, (c, xs), 0), rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(dxs, numeric_grad(unrolled, (c, xs), 1), rtol=1e-7, atol=1e-8)


def test_a_second_loop_reads_the_first_ones_results():
    def f(x):
        a, ys = sg.scan(lambda c, _: (c * 1.1 + 1.0, c), x, length=5)
        b = sg.fori_loop(0, 4, lambda i, c: c - 0.5 * ys[i], a)
        return a, b, ys

    def unrolled(x):
        ys = []
        for _ in range(5):
            ys.append(x)
            x = x * 1.1 + 1.0
        b = x
        for i in range(4):
            b = b - 0.5 * ys[i]
        return x, b, sg.stack(ys)

    assert_agree(f, unrolled, (RNG.normal(size=(2, 3)),))


# ----------------------------------------------------------------------------- while_loop

def halvings(x, limit):
    """Halve x until its sum drops below limit: as many steps as the data asks for."""
    return sg.while_loop(lambda c: sg.sum(c[1] ** 2) > limit,
                         lambda c: (c[0] + 1, c[1] * 0.5 + 0.01 * sg.sin(c[1] * x)), (np.int64(0), x))


def halvings_in_python(x, limit):
    count, c = 0, x
    while np.sum(c ** 2) > limit:
        count, c = count + 1, c * 0.5 + 0.01 * np.sin(c * x)
    return count, c


@pytest.mark.parametrize("limit", [100.0, 10.0, 3.0, 1.0, 0.5, 1e-3])
def test_while_loop_values_for_any_number_of_steps(limit):
    x = np.array([1.0, -2.0, 0.5])
    count, expected = halvings_in_python(x, limit)
    for path, compiled in paths(halvings).items():
        got_count, got = compiled(x, limit)
        assert got_count == count, path
        np.testing.assert_allclose(got, expected, rtol=1e-13, err_msg=path)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_while_loop_forward_mode(dtype):
    x = np.array([1.0, -2.0, 0.5], dtype)

    def f(x):
        return halvings(x, 0.1)[1]

    tangent = np.array([0.3, 1.0, -2.0], dtype)
    results = {path: compiled(x, tangent) for path, compiled in
               paths(lambda x, t: sg.jvp(f, (x,), (t,))).items()}
    for path, (value, out_tangent) in results.items():
        assert_trees_close((value, out_tangent), results["numpy"], err_msg=path, **TOLERANCE[dtype])
    jacobians = {path: compiled(x) for path, compiled in paths(sg.jacfwd(f)).items()}
    for path, jacobian in jacobians.items():
        assert_trees_close(jacobian, jacobians["numpy"], err_msg=path, **TOLERANCE[dtype])
    if dtype == np.float64:
        steps = halvings_in_python(x, 0.1)[0]
        unrolled = sg.jacfwd(lambda x: sg.fori_loop(0, steps, lambda i, c: c * 0.5 + 0.01 * sg.sin(c * x), x))
        np.testing.assert_allclose(jacobians["default"], unrolled(x), rtol=1e-12)


def test_fori_loop_with_traced_bounds_is_a_while_loop():
    def f(x, n):
        return sg.fori_loop(0, n, lambda i, c: c + sg.sqrt(c + i), x)

    x = np.array([0.5, 2.0])
    for n in (0, 1, 4, 5):
        expected = x.copy()
        for i in range(n):
            expected = expected + np.sqrt(expected + i)
        for path, compiled in paths(f).items():
            np.testing.assert_allclose(compiled(x, np.int64(n)), expected, rtol=1e-14, err_msg=path)


# ----------------------------------------------------------------------------- while_loop in reverse mode

CHECKPOINTS = [None, 2, 3, 1000]


def newton_sqrt(a, checkpoints=None):
    """sqrt(a) by Newton's method until the relative residual is small: as many steps as `a` asks for.
    The root, and the number of steps (an integer carry)."""
    tolerance = 1e-12 if a.dtype == np.float64 else 1e-5
    return sg.while_loop(lambda c: sg.max(sg.abs(c[0] * c[0] - a) / a) > tolerance,
                         lambda c: (0.5 * (c[0] + a / c[0]), c[1] + 1), (a + 1.0, np.int64(0)),
                         checkpoints=checkpoints)


def newton_unrolled(a, steps):
    x = a + 1.0
    for _ in range(steps):
        x = 0.5 * (x + a / x)
    return x


@pytest.mark.parametrize("checkpoints", CHECKPOINTS)
def test_reverse_mode_through_a_newton_solve(checkpoints):
    """A loop stopping on the data: the gradient through its steps agrees with the NumPy backend, the
    unrolled steps, finite differences, and at convergence the implicit derivative 1 / (2 sqrt(a))."""
    a, w = np.array([0.5, 2.0, 9.0, 100.0]), np.array([1.0, -2.0, 0.5, 3.0])
    steps = int(newton_sqrt(a)[1])
    assert steps >= 8

    def loss(a):
        root, count = newton_sqrt(a, checkpoints)
        return sg.sum(root * w) + 0.01 * count

    value, grad = assert_agree(sg.value_and_grad(loss), sg.value_and_grad(
        lambda a: sg.sum(newton_unrolled(a, steps) * w) + 0.01 * steps), (a,))
    np.testing.assert_allclose(value, np.sum(np.sqrt(a) * w) + 0.01 * steps, rtol=1e-12)
    np.testing.assert_allclose(grad, numeric_grad(loss, (a,), 0), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(grad, 0.5 * w / np.sqrt(a), rtol=1e-9)


def settle(x, w, scale, empty, checkpoints=None):
    """A pytree carry: a dict of a (position, velocity) pair, an int32 counter, a 0-d scale and an empty
    array, stepped until the velocity is small (or 300 steps)."""
    def body(c):
        x, v = c["state"]
        v = v * 0.8 - 0.1 * sg.sin(x * w) * c["scale"]
        return {"state": (x + 0.1 * v, v), "count": c["count"] + np.int32(1), "scale": c["scale"] * 0.99,
                "empty": c["empty"] * 2.0}

    init = {"state": (x, x * 0.5), "count": np.int32(0), "scale": scale, "empty": empty}
    return sg.while_loop(lambda c: (sg.sum(c["state"][1] ** 2) > 1e-2) & (c["count"] < 300), body, init,
                         checkpoints=checkpoints)


def settle_unrolled(x, w, scale, empty, steps):
    c = {"state": (x, x * 0.5), "count": np.int32(0), "scale": scale, "empty": empty}
    for _ in range(steps):
        (x, v), scale = c["state"], c["scale"]
        v = v * 0.8 - 0.1 * sg.sin(x * w) * scale
        c = {"state": (x + 0.1 * v, v), "count": c["count"] + np.int32(1), "scale": scale * 0.99,
             "empty": c["empty"] * 2.0}
    return c


def settle_loss(c):
    x, v = c["state"]
    return sg.sum(x ** 2) + sg.sum(v) + c["scale"] + sg.sum(c["empty"]) + 0.5 * c["count"]


@pytest.mark.parametrize("checkpoints", CHECKPOINTS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_reverse_mode_with_a_pytree_carry_and_an_integer_counter(dtype, checkpoints):
    args = (np.array([1.5, -0.7, 0.3], dtype), np.array([0.9, 1.3, -1.1], dtype), dtype(1.2), np.zeros(0, dtype))
    final = settle(*args)
    steps = int(final["count"])
    assert 10 < steps < 300 and final["count"].dtype == np.int32
    assert_agree(lambda *a: settle(*a, checkpoints=checkpoints), lambda *a: settle_unrolled(*a, steps), args, dtype)
    argnums = (0, 1, 2, 3)
    loss = lambda *a: settle_loss(settle(*a, checkpoints=checkpoints))  # noqa: E731
    expected = assert_agree(sg.value_and_grad(loss, argnums=argnums),
                            sg.value_and_grad(lambda *a: settle_loss(settle_unrolled(*a, steps)), argnums=argnums),
                            args, dtype)
    assert [g.dtype for g in expected[1]] == [dtype] * 4 and expected[1][2].shape == () and expected[1][3].shape == (0,)
    if dtype == np.float64:
        for n in range(3):
            np.testing.assert_allclose(expected[1][n], numeric_grad(loss, args, n), rtol=1e-6, atol=1e-8)


def _calls_of_loop_conditions(compiled, *args) -> int:
    return len(re.findall(r"call i32 @\"?[\w.]*\.cond\d", compiled.lower(*args).executable.llvm_ir))


@pytest.mark.parametrize("checkpoints", CHECKPOINTS)
def test_value_and_gradient_run_a_while_loop_once(checkpoints, monkeypatch):
    """The loop keeps its carries for the reverse pass as it runs (one loop in the code), instead of the
    reverse pass running it again; the same numbers as when the two land in different functions of a
    long kernel (which keeps them apart) and as the NumPy backend."""
    from symgrad.codegen.llvm import kernel
    a, w = np.array([0.5, 2.0, 9.0, 100.0]), np.array([1.0, -2.0, 0.5, 3.0])

    def loss(a):
        root, count = newton_sqrt(a, checkpoints)
        return sg.sum(root ** 2 * w) + 0.01 * count
    once = sg.compile(sg.value_and_grad(loss))
    assert _calls_of_loop_conditions(once, a) == 1
    expected = sg.compile(sg.value_and_grad(loss), backend="numpy")(a)
    for got in (once(a), once(a)):  # the tape is taken and freed by each call
        np.testing.assert_allclose(got[0], expected[0], rtol=1e-13)
        np.testing.assert_allclose(got[1], expected[1], rtol=1e-12)
    monkeypatch.setattr(kernel, "GROUPS_PER_FUNCTION", 1)  # each job a function: the loop runs twice
    np.testing.assert_allclose(sg.compile(sg.value_and_grad(loss))(a)[1], expected[1], rtol=1e-12)


def test_an_error_between_a_while_loop_and_its_reverse_pass_is_raised_and_the_next_call_works():
    """A LinAlgError raised after the loop kept its tape and before the reverse pass took it: the error
    return frees the tape (kernel.hold), and the function goes on working."""
    def loss(a):
        root, _ = newton_sqrt(a)
        matrix = sg.outer(root, root) + sg.diag(root - 2.0)
        return sg.sum(sg.linalg.cholesky(matrix)) + sg.sum(root)
    grad = sg.compile(sg.grad(loss))
    good, bad = np.array([9.0, 16.0, 25.0]), np.array([0.5, 2.0, 9.0])
    expected = sg.compile(sg.grad(loss), backend="numpy")(good)
    with pytest.raises(np.linalg.LinAlgError):
        grad(bad)
    np.testing.assert_allclose(grad(good), expected, rtol=1e-10)


def steps_and_gradient(x, w, n):
    """By hand in NumPy: y <- y * w + 0.1 sin(y), n times from x; sum(y) and its gradient in x and w."""
    ys = [x]
    for _ in range(n):
        ys.append(ys[-1] * w + 0.1 * np.sin(ys[-1]))
    ct, dw = np.ones_like(x), np.zeros_like(w)
    for y in reversed(ys[:-1]):
        ct, dw = ct * (w + 0.1 * np.cos(y)), dw + ct * y
    return np.sum(ys[-1]), ct, dw


def damped_loop(checkpoints):
    """f(x, w, n): sum(y) of the loop steps_and_gradient computes by hand, as a while_loop keeping `checkpoints`."""
    def f(x, w, n):
        y = sg.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * w + 0.1 * sg.sin(c[1])),
                          (np.int64(0), x), checkpoints=checkpoints)[1]
        return sg.sum(y)
    return f


@pytest.mark.parametrize("checkpoints", [None, 2, 3, 5])
def test_reverse_mode_for_every_trip_count_around_the_tapes_thinning(checkpoints):
    """The tape keeps at most `checkpoints` carries, dropping every other one when full: every trip count
    near the points where it thins (and the number of carries recomputed doubles) pulls back right."""
    x, w = np.array([0.3, -1.2, 2.0]), np.array([0.9, 1.05, -0.8])
    compiled = paths(sg.value_and_grad(damped_loop(checkpoints), argnums=(0, 1)))
    for n in [*range(18), 31, 32, 33, 100]:
        value, dx, dw = steps_and_gradient(x, w, n)
        for path, run in compiled.items():
            got_value, (got_dx, got_dw) = run(x, w, np.int64(n))
            np.testing.assert_allclose(got_value, value, rtol=1e-12, err_msg=f"{path}, {n} steps")
            np.testing.assert_allclose(got_dx, dx, rtol=1e-11, atol=1e-300, err_msg=f"{path}, {n} steps")
            np.testing.assert_allclose(got_dw, dw, rtol=1e-11, atol=1e-14, err_msg=f"{path}, {n} steps")


@pytest.mark.parametrize("checkpoints", [None, 3])
def test_the_tape_a_call_keeps_serves_later_calls_of_any_length(checkpoints, monkeypatch):
    """The records' block a call leaves (with its capacity) is the next call's: longer (it grows), shorter,
    none; keeping every carry of 500,000 steps, 80-byte records (40 MB, which malloc would map afresh),
    faults no pages after the first call (the checkpointed loop's segment is still malloc'd per call)."""
    import resource

    monkeypatch.setenv("SYMGRAD_QUICK_CODE", "0")  # (one code throughout: an upgrade's code has a tape of its own)
    x, w = np.array([0.3, -1.2, 2.0]), np.array([0.9, 1.05, -0.8])
    run = native(sg.value_and_grad(damped_loop(checkpoints), argnums=(0, 1)))
    for n in [100, 3, 0, 40, 1000, 7]:
        value, dx, dw = steps_and_gradient(x, w, n)
        got_value, (got_dx, got_dw) = run(x, w, np.int64(n))
        np.testing.assert_allclose(got_value, value, rtol=1e-12, err_msg=f"{n} steps")
        np.testing.assert_allclose(got_dx, dx, rtol=1e-11, atol=1e-300, err_msg=f"{n} steps")
        np.testing.assert_allclose(got_dw, dw, rtol=1e-11, atol=1e-14, err_msg=f"{n} steps")
    x, w = np.linspace(-1.0, 1.0, 8), np.full(8, 0.99)
    first = run(x, w, np.int64(500_000))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    again = run(x, w, np.int64(500_000))
    assert checkpoints is not None or resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before < 500
    assert again[0] == first[0] and all(np.array_equal(a, b) for a, b in zip(again[1], first[1]))


@pytest.mark.parametrize("checkpoints", [None, 2])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_reverse_mode_through_a_loop_of_no_steps(dtype, checkpoints):
    """A loop whose condition is false at once: the cotangents pass through, the body consts get zeros."""
    def f(x, w):
        return sg.sum(sg.while_loop(lambda c: sg.sum(c) > 100.0, lambda c: c * w, x, checkpoints=checkpoints) * 3.0)

    x, w = np.array([1.0, -2.0, 0.0], dtype), np.array([2.0, 0.5, 1.0], dtype)
    for path, compiled in paths(sg.value_and_grad(f, argnums=(0, 1))).items():
        value, (dx, dw) = compiled(x, w)
        assert dx.dtype == dw.dtype == dtype, path
        np.testing.assert_array_equal(value, dtype(-3.0), err_msg=path)
        np.testing.assert_array_equal(dx, np.full(3, 3.0, dtype), err_msg=path)
        np.testing.assert_array_equal(dw, np.zeros(3, dtype), err_msg=path)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_reverse_mode_with_edge_values_in_the_carry(dtype):
    """Infinities, NaN, signed zeros and a 0-d carry go through the steps kept on the tape unchanged."""
    def f(x, s, w):
        count, y, t = sg.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * c[2], c[2] * 0.5),
                                    (np.int64(0), x, s), checkpoints=2)
        return sg.sum(y * w) + t

    x = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1e30], dtype)
    s, w = dtype(2.0), np.array([1.0, 2.0, 3.0, -1.0, 4.0, 0.5], dtype)
    results = {path: compiled(x, s, w) for path, compiled in paths(sg.value_and_grad(f, argnums=(0, 1))).items()}
    for path, result in results.items():
        assert_trees_close(result, results["numpy"], err_msg=path, **TOLERANCE[dtype])
    value, (dx, ds) = results["default"]
    assert np.isnan(value) and ds.shape == () and ds.dtype == dtype
    np.testing.assert_allclose(dx, w * s ** 3 * 0.125)  # s * (s/2) * (s/4)


def _resident_bytes() -> int:
    """The memory this process holds now (Linux); 0 elsewhere, where the leak check cannot run."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0


def test_an_index_error_in_a_body_differentiated_in_reverse_mode_frees_the_tape():
    """The body fails on a step the data chooses, after 100,000 steps kept: the error is the one outside a
    loop, each time, and the tape is freed on the way out (a leak would hold about 10 MB a call)."""
    def f(x, table, steps, bad_step):
        def body(c):  # row 3 of the table, until step `bad_step` reads row 10 of 10
            return c[0] + 1, c[1] * 0.5 + 0.1 * sg.sin(c[1]) + table[sg.where(c[0] < bad_step, 3, 10)]
        y = sg.while_loop(lambda c: c[0] < steps, body, (np.int64(0), x))[1]
        return sg.sum(y * np.arange(8.0))  # linear in y: the gradient runs the reverse pass only

    def by_hand(x, row, steps):
        ys = [x]
        for _ in range(steps):
            ys.append(ys[-1] * 0.5 + 0.1 * np.sin(ys[-1]) + row)
        ct = np.arange(8.0)
        for y in reversed(ys[:-1]):
            ct = ct * (0.5 + 0.1 * np.cos(y))
        return ct

    x, table, never = np.ones(8), np.linspace(0.0, 1.0, 80).reshape(10, 8), np.int64(10 ** 6)
    for path, compiled in paths(sg.grad(f)).items():
        np.testing.assert_allclose(compiled(x, table, np.int64(30), never), by_hand(x, table[3], 30), rtol=1e-12,
                                   err_msg=path)
        with pytest.raises(IndexError) as inside:
            compiled(x, table, np.int64(30), np.int64(29))
        with pytest.raises(IndexError) as outside:
            sg.compile(lambda table, i: table[i], backend=None if path == "default" else path)(table, np.int64(10))
        assert str(inside.value) == str(outside.value), path
    grad = native(sg.grad(f))
    before = _resident_bytes()  # now, not the process's peak (an earlier test may have peaked higher)
    for _ in range(40):
        with pytest.raises(IndexError, match="out of bounds"):
            grad(x, table, np.int64(100_000), np.int64(99_999))
    assert _resident_bytes() - before < 100 << 20
    np.testing.assert_allclose(grad(x, table, np.int64(30), never), by_hand(x, table[3], 30), rtol=1e-12)


def test_grad_of_a_scan_whose_body_has_a_while_loop():
    """A while loop's reverse pass inside the body of the scan pulling back through a scan."""
    def body(total, a):
        root = newton_sqrt(a, checkpoints=3)[0]
        return total + root, root * total

    def f(a_rows):
        total, ys = sg.scan(body, sg.zeros(3), a_rows)
        return sg.sum(total) + sg.sum(ys ** 2)

    def unrolled(a_rows):
        total, ys = sg.zeros(3), []
        for row in range(a_rows.shape[0]):
            total, y = body(total, a_rows[row])
            ys.append(y)
        return sg.sum(total) + sg.sum(sg.stack(ys) ** 2)

    a_rows = RNG.uniform(0.5, 4.0, size=(5, 3))
    value, grad = assert_agree(sg.value_and_grad(f), sg.value_and_grad(unrolled), (a_rows,))
    np.testing.assert_allclose(grad, numeric_grad(unrolled, (a_rows,), 0), rtol=1e-7, atol=1e-9)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="resets and reads the peak memory in /proc")
def test_checkpoints_bound_the_memory_of_the_reverse_pass():
    """1000 steps of an 80 KB carry, in a fresh process: every carry kept holds about 80 MB at the peak;
    at most 45 checkpoints, with the carries recomputed between two of them, about 76 carries (6 MB)."""
    out = run_python("""
        import numpy as np
        import symgrad as sg

        def kilobytes(field):
            return int(open("/proc/self/status").read().split(field + ":")[1].split()[0])

        def loss(checkpoints):
            return lambda x, n: sg.sum(sg.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, sg.sin(c[1]) * 1.01),
                                                     (np.int64(0), x), checkpoints=checkpoints)[1])
        grads = {checkpoints: sg.compile(sg.grad(loss(checkpoints))) for checkpoints in (45, None)}
        x = np.linspace(0.0, 1.0, 10_000)
        results = [grads[checkpoints](x, np.int64(3)) for checkpoints in grads]  # compiled, run once
        for checkpoints in grads:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")  # the peak is the memory in use now
            in_use = kilobytes("VmRSS")
            results.append(grads[checkpoints](x, np.int64(1000)))
            print(kilobytes("VmHWM") - in_use)
        np.testing.assert_array_equal(results[2], results[3])
    """, block=())
    checkpointed, every_carry = (int(kb) / 1024 for kb in out.split())
    assert every_carry > 70 and checkpointed < 12, (checkpointed, every_carry)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the address space's size from /proc")
def test_a_tape_larger_than_memory_is_a_memory_error():
    """The address space limited to 256 MB more than in use, a tape of 8 GB fails to grow: a MemoryError
    saying so, not a crash, and the process goes on."""
    out = run_python("""
        import os, resource
        import numpy as np
        import symgrad as sg

        grad = sg.compile(sg.grad(lambda x, n: sg.sum(sg.while_loop(lambda c: c[0] < n,
                                                                    lambda c: (c[0] + 1, sg.sin(c[1])),
                                                                    (np.int64(0), x))[1])))
        x = np.ones(10_000)
        small = grad(x, np.int64(3))
        in_use = int(open("/proc/self/statm").read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        resource.setrlimit(resource.RLIMIT_AS, (in_use + (256 << 20), resource.RLIM_INFINITY))
        try:
            grad(x, np.int64(100_000))
        except MemoryError as error:
            print(error)
        np.testing.assert_array_equal(grad(x, np.int64(3)), small)
    """, block=())
    assert out.startswith("out of memory for the carries the reverse pass of sg.while_loop keeps"), out
    assert "checkpoints=C" in out


@needs_linker
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the address space's size from /proc")
def test_a_tape_larger_than_memory_is_a_memory_error_from_a_shared_library(tmp_path):
    """The same through an AOT library, whose CPython entry and C entry (called with keywords) both raise
    MemoryError, and which goes on working."""
    out = run_python("""
        import os, resource, sys
        import numpy as np
        import symgrad as sg

        def loss(x, n):
            return sg.sum(sg.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, sg.sin(c[1])), (np.int64(0), x))[1])
        x = np.ones(10_000)
        sg.aot.compile(loss, (x, np.int64(3)), grad="x", out=sys.argv[1])
        grad = sg.load(sys.argv[1]).grad
        assert grad.fast is not None  # the CPython entry, called with positional arguments
        small = grad(x, np.int64(3))
        in_use = int(open("/proc/self/statm").read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        resource.setrlimit(resource.RLIMIT_AS, (in_use + (256 << 20), resource.RLIM_INFINITY))
        for call in (lambda: grad(x, np.int64(100_000)), lambda: grad(x=x, n=np.int64(100_000))):
            try:
                call()
            except MemoryError as error:
                print(error)
        np.testing.assert_array_equal(grad(x=x, n=np.int64(3)), small)
    """, str(tmp_path / "tape"), block=())
    fast, c_entry = out.splitlines()
    assert fast == c_entry and fast.startswith("loss.grad: out of memory for the carries"), out


# ----------------------------------------------------------------------------- switch and cond

BRANCHES = [lambda x, y: (x * y, sg.sum(x)), lambda x, y: (sg.sin(x) + y, sg.max(x)),
            lambda x, y: (sg.fori_loop(0, 3, lambda i, c: c / y + 0.1, x), -sg.sum(y))]  # a loop in a branch


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_switch_with_three_branches_clamps_its_index(dtype):
    def f(i, x, y):
        return sg.switch(i, BRANCHES, x, y)

    x, y = RNG.uniform(0.5, 2.0, 4).astype(dtype), RNG.uniform(0.5, 2.0, 4).astype(dtype)
    compiled = paths(f)
    grads = paths(sg.grad(lambda i, x, y: sg.sum(f(i, x, y)[0]) + f(i, x, y)[1], argnums=(1, 2)))
    for index in (-5, -1, 0, 1, 2, 3, 7):
        branch = BRANCHES[min(max(index, 0), 2)]
        expected = sg.compile(branch, backend="numpy")(x, y)
        expected_grads = sg.compile(sg.grad(lambda x, y: sg.sum(branch(x, y)[0]) + branch(x, y)[1], argnums=(0, 1)),
                                    backend="numpy")(x, y)
        for path in compiled:
            assert_trees_close(compiled[path](np.int64(index), x, y), expected, err_msg=f"{path} {index}",
                               **TOLERANCE[dtype])
            assert_trees_close(grads[path](np.int64(index), x, y), expected_grads, err_msg=f"{path} {index}",
                               **TOLERANCE[dtype])


def test_cond_inside_a_fori_loop_body():
    def step(i, c):
        return sg.cond(sg.sum(c) > 0, lambda c: c * 0.5 - 1.0, lambda c: sg.exp(c * 0.1) + i, c)

    def f(x):
        return sg.sum(sg.fori_loop(0, 9, step, x) ** 2)

    def unrolled(x):
        for i in range(9):
            x = x * 0.5 - 1.0 if np.sum(x) > 0 else np.exp(x * 0.1) + i
        return np.sum(x ** 2)

    x = np.array([2.0, -0.5, 1.5])
    for path, compiled in paths(sg.value_and_grad(f)).items():
        value, grad = compiled(x)
        np.testing.assert_allclose(value, unrolled(x), rtol=1e-13, err_msg=path)
        np.testing.assert_allclose(grad, numeric_grad(unrolled, (x,), 0), rtol=1e-6, atol=1e-10, err_msg=path)


# ----------------------------------------------------------------------------- what a body may hold

@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_body_with_a_matrix_product(dtype):
    """16x16 products are large enough to call BLAS, from inside the loop."""
    w = (RNG.normal(size=(16, 16)) / 4).astype(dtype)

    def f(x, w):
        return sg.sum(sg.fori_loop(0, 5, lambda i, c: sg.tanh(c @ w), x) ** 2)

    def unrolled(x, w):
        for _ in range(5):
            x = sg.tanh(x @ w)
        return sg.sum(x ** 2)

    x = RNG.normal(size=(16, 16)).astype(dtype)
    assert_agree(sg.value_and_grad(f, argnums=(0, 1)), sg.value_and_grad(unrolled, argnums=(0, 1)), (x, w), dtype)
    if blas.addresses():  # NumPy ships a BLAS: the body calls it
        assert "gemm" in sg.compile(f).lower(x, w).executable.llvm_ir


def test_a_body_using_a_primitive_lowered_by_composition():
    """sg.roll has no LLVM rule; inside a body it is lowered as its slices and concatenation."""
    def f(x):
        return sg.fori_loop(0, 4, lambda i, c: sg.roll(c, 1) * 0.5 + c, x)

    def unrolled(x):
        for _ in range(4):
            x = sg.roll(x, 1) * 0.5 + x
        return x

    assert_agree(f, unrolled, (np.arange(5.0),))


def test_an_index_error_inside_a_body_is_the_one_outside_a_loop():
    def gather(x, i):
        return x[i]

    def f(x, i):
        return sg.fori_loop(0, 3, lambda step, c: c + gather(x, i + step), sg.zeros(2))

    x, i = np.arange(6.0).reshape(3, 2), np.int64(1)
    for path, compiled in paths(f).items():
        np.testing.assert_array_equal(compiled(x, np.int64(0)), x.sum(axis=0), err_msg=path)  # rows 0, 1, 2
    for backend in ("llvm", "numpy"):
        with pytest.raises(IndexError) as outside:
            sg.compile(gather, backend=backend)(x, np.int64(3))
        with pytest.raises(IndexError) as inside:
            sg.compile(f, backend=backend)(x, i)  # the last step reads row 3
        assert str(inside.value) == str(outside.value), backend


def test_a_large_constant_inside_a_body():
    weights = np.linspace(0.0, 1.0, 20_000)  # 160 KB: reached through a pointer slot, not compiled in

    def f(x):
        weights = np.linspace(0.0, 1.0, 20_000)  # made by the trace: a constant (a closure's would be read)
        return sg.fori_loop(0, 3, lambda i, c: c * 0.5 + sg.mean(weights * sg.cos(c * weights) ** 2), x)

    x = np.float64(0.3)  # a 0-d carry
    expected = x
    for _ in range(3):
        expected = expected * 0.5 + np.mean(weights * np.cos(expected * weights) ** 2)
    for path, compiled in paths(f).items():
        np.testing.assert_allclose(compiled(x), expected, rtol=1e-12, err_msg=path)
    assert "const_" + sg.ir.Constant(weights)._digest[:16] in sg.compile(f).lower(x).executable.llvm_ir


def test_the_native_code_does_not_grow_with_the_number_of_steps(monkeypatch):
    from symgrad.codegen.llvm import kernel
    monkeypatch.setattr(kernel, "STACK_WORKSPACE", 0)  # both workspaces (the stacked residuals) from malloc

    def program(steps):
        return sg.compile(sg.value_and_grad(lambda x: sg.sum(sg.fori_loop(0, steps, lambda i, c: c * sg.cos(c), x))))

    x = np.ones(8)
    short, long = (re.sub(r"\d+", "#", program(steps).lower(x).executable.llvm_ir) for steps in (10, 10_000))
    assert short == long  # the same code, but for its numbers (trip counts, offsets, sizes)


# ----------------------------------------------------------------------------- ahead of time

@needs_linker
def test_aot_library_with_a_loop_and_a_branch(tmp_path):
    w = RNG.normal(size=(8, 8)) / 3  # 8x8 products call BLAS through the library's gemm slot

    def f(x, i):
        def step(k, c):  # x[i] is read in the body: an index out of range fails there
            return sg.switch(i, [lambda c: sg.tanh(c @ w), lambda c: sg.sin(c) + 0.1 * k], c) + 0.01 * x[i]
        return sg.sum(sg.fori_loop(0, 20, step, x) ** 2)

    x = RNG.normal(size=(8, 8))
    artifact = sg.aot.compile(f, (x, np.int64(0)), grad="x", value_and_grad=True, out=str(tmp_path / "looped"))
    assert "dgemm" in artifact.metadata["blas_slots"]
    loaded = sg.load(tmp_path / "looped")
    for i in (0, 1, 7):
        expected_value, expected_grad = sg.compile(sg.value_and_grad(f), backend="numpy")(x, np.int64(i))
        np.testing.assert_allclose(loaded(x, np.int64(i)), expected_value, rtol=1e-12)
        value, grad = loaded.value_and_grad(x, np.int64(i))
        np.testing.assert_allclose(value, expected_value, rtol=1e-12)
        np.testing.assert_allclose(grad, expected_grad, rtol=1e-11)
    with pytest.raises(IndexError, match="out of bounds"):
        loaded(x, np.int64(8))


@needs_linker
def test_aot_library_differentiating_a_while_loop_in_reverse_mode(tmp_path):
    """A shared library's value and gradient through a checkpointed while loop whose body gathers a row
    of a table (its gradient scatters back), and the index error of a row out of range from its body."""
    def loss(x, table, bad_step):
        def body(c):
            row = table[sg.where(c[0] < bad_step, sg.minimum(c[0], 3), 10)]
            return c[0] + 1, c[1] * (0.5 + 0.1 * row) + 0.01 * sg.sin(c[1])
        count, y = sg.while_loop(lambda c: sg.sum(c[1] ** 2) > 1e-8, body, (np.int64(0), x), checkpoints=4)
        return sg.sum(y ** 2) * 1e8 + count

    x, table = RNG.normal(size=8), RNG.uniform(-1.0, 1.0, size=(10, 8))
    never = np.int64(1 << 40)
    sg.aot.compile(loss, (x, table, never), grad=["x", "table"], value_and_grad=True, out=str(tmp_path / "solve"))
    loaded = sg.load(tmp_path / "solve")
    expected_value, expected_grads = sg.compile(sg.value_and_grad(loss, argnums=(0, 1)), backend="numpy")(
        x, table, never)
    for value, grads in (loaded.value_and_grad(x, table, never),
                         loaded.value_and_grad(x=x, table=table, bad_step=never)):  # keywords: the C entry
        np.testing.assert_allclose(value, expected_value, rtol=1e-12)
        for got, expected in zip(grads, expected_grads):
            np.testing.assert_allclose(got, expected, rtol=1e-11, atol=1e-12)
    assert np.count_nonzero(expected_grads[1]) == 4 * 8  # rows 0-3 are read
    with pytest.raises(IndexError, match="out of bounds"):
        loaded.value_and_grad(x, table, np.int64(5))
    with pytest.raises(IndexError, match="out of bounds"):
        loaded.value_and_grad(x=x, table=table, bad_step=np.int64(5))


@pytest.mark.parametrize("inner, outer", [(2, 2), (3, 2), (4, 2), (4, 3), (8, 1)])
def test_reverse_scans_of_reverse_scans_carry_every_outer_step(inner, outer):
    """A reverse scan whose body is a reverse scan over its transposed row: with the loop bodies' parameters
    noalias, LLVM's O3 read a stale carry when the inner length was even (the product of one outer step's
    values, 2**6 for 2**28); jacrev of a scan of fori_loops, which vmaps that reverse pass, was wrong with it
    (prober11's seed 5276, a Hessian)."""
    def product(ys):
        def body(c, y):
            return sg.scan(lambda d, v: (d * v, None), c, sg.transpose(y), reverse=True)[0], None
        return sg.scan(body, np.ones(1), ys, reverse=True)[0]

    ys = 2.0 ** np.arange(outer * inner).reshape(outer, 1, inner)
    expected = [2.0 ** np.arange(outer * inner).sum()]
    np.testing.assert_array_equal(sg.compile(product)(ys), expected)
    np.testing.assert_array_equal(sg.compile(product, backend="numpy")(ys), expected)

    def f(x):
        return sg.scan(lambda c, _: (sg.fori_loop(0, inner, lambda j, d: sg.sin(d), c), c), sg.sin(x), sg.zeros(2))[0]

    np.testing.assert_allclose(sg.jacrev(f)(0.3), sg.grad(f)(0.3), rtol=1e-14)
    np.testing.assert_allclose(sg.hessian(f)(0.3), sg.grad(sg.grad(f))(0.3), rtol=1e-13)
