"""Matrix products taken out of a scan's steps (passes/scan_products.py), and reverse mode storing no copies: the
same results as the loop with its products inside and as the unrolled program, on both backends."""
import importlib

import numpy as np
import pytest

import symgrad as sg
import symgrad.passes as passes
from gradcheck import assert_grads_match_finite_differences
from symgrad.passes import optimize
from symgrad.passes.scan_products import hoist_scan_products

reroll_module = importlib.import_module("symgrad.passes.reroll")
BACKENDS = ["llvm", "numpy"]


def lstm(B, H, T):
    """An LSTM as a Python loop over xs[:, t] (rolled into one scan), its outputs stacked."""
    def loss(W, U, b, xs):
        h = c = sg.zeros((B, H))
        outs = []
        for t in range(T):
            g = xs[:, t] @ W + h @ U + b
            i, f, o, u = sg.sigmoid(g[:, :H]), sg.sigmoid(g[:, H:2 * H]), sg.sigmoid(g[:, 2 * H:3 * H]), \
                sg.tanh(g[:, 3 * H:])
            c = f * c + i * u
            h = o * sg.tanh(c)
            outs.append(h)
        return sg.mean(sg.stack(outs, axis=1) ** 2)
    rng = np.random.default_rng(0)
    D = 5
    return loss, [rng.normal(scale=0.3, size=(D, 4 * H)), rng.normal(scale=0.3, size=(H, 4 * H)),
                  rng.normal(scale=0.1, size=4 * H), rng.normal(size=(B, T, D))]


def elman(reverse, dtype=np.float64):
    """`W @ h + U @ x[t]`: the constants on the left, the step's rows in columns."""
    rng = np.random.default_rng(1)
    W, U, xs = rng.normal(scale=0.2, size=(6, 6)), rng.normal(scale=0.5, size=(6, 3)), rng.normal(size=(9, 3, 4))

    def loss(W, U, xs):
        def cell(h, x):
            h = sg.tanh(W @ h + U @ x)
            return h, sg.sum(h * h, axis=0)
        h, ys = sg.scan(cell, np.zeros((6, 4), dtype), xs, reverse=reverse)
        return sg.sum(ys) + sg.sum(h ** 2)
    return loss, [W.astype(dtype), U.astype(dtype), xs.astype(dtype)]


def value_and_grads(loss, args, backend, hoisted=True, rolled=True):
    vg = sg.value_and_grad(loss, argnums=tuple(range(len(args))))
    saved = passes.PIPELINE, reroll_module.MIN_BLOCKS
    if not hoisted:
        passes.PIPELINE = tuple(p for p in passes.PIPELINE if p is not hoist_scan_products)
    if not rolled:
        reroll_module.MIN_BLOCKS = 10 ** 9
    try:
        value, grads = sg.compile(vg, backend=backend)(*args)
    finally:
        passes.PIPELINE, reroll_module.MIN_BLOCKS = saved
    return [np.asarray(value)] + [np.asarray(g) for g in grads]


def assert_all_close(got, want, rtol=1e-12, atol=1e-14):
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def scan_bodies(graph):
    return [node.params["body"] for node in graph.nodes if node.prim.name == "scan"]


def products(graph) -> int:
    return sum(node.prim.name == "matmul" for node in graph.nodes)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_lstm_loop_matches_its_unrolled_program_and_finite_differences(backend):
    loss, args = lstm(3, 4, 20)
    got = value_and_grads(loss, args, backend)
    assert_all_close(got, value_and_grads(loss, args, backend, rolled=False))
    assert_all_close(got, value_and_grads(loss, args, backend, hoisted=False))
    if backend == "llvm":
        assert_grads_match_finite_differences(loss, args, (0, 1, 2, 3))


def test_an_lstm_step_keeps_only_its_recurrent_products():
    """Forward: h @ U only (x[t] @ W is one product before the loop); reverse: dg @ U.T only (the weight
    gradients are one product each after it, the bias gradient one sum); nothing stored transposed."""
    loss, args = lstm(3, 4, 20)
    graph = optimize(sg.trace(sg.value_and_grad(loss, argnums=(0, 1, 2)), *args))
    forward, backward = scan_bodies(graph)
    assert products(forward) == 1 and products(backward) == 1
    assert not any(node.prim.name == "transpose" for node in forward.nodes)
    scan = next(node for node in graph.nodes if node.prim.name == "scan")
    rows = forward.inputs[scan.params["num_consts"] + scan.params["num_carry"]:]
    assert not {id(v) for v in rows} & {id(v) for v in forward.outputs}  # no step copies its row of the xs
    assert len(backward.outputs) == 3  # two carried cotangents and the gate cotangents stacked: no sums carried
    assert products(graph) == 3  # the input projection, then the two weight gradients


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("backend", BACKENDS)
def test_constants_on_the_left_and_reverse_scans(backend, reverse):
    loss, args = elman(reverse)
    got = value_and_grads(loss, args, backend)
    assert_all_close(got, value_and_grads(loss, args, backend, hoisted=False))
    assert_grads_match_finite_differences(loss, args, (0, 1, 2))
    graph = optimize(sg.trace(sg.value_and_grad(loss, argnums=(0, 1, 2)), *args))
    assert [products(body) for body in scan_bodies(graph)] == [1, 1]


@pytest.mark.parametrize("backend", BACKENDS)
def test_float32(backend):
    loss, args = elman(False, np.float32)
    got = value_and_grads(loss, args, backend)
    assert all(g.dtype == np.float32 for g in got)
    assert_all_close(got, value_and_grads(loss, args, backend, hoisted=False), rtol=1e-5, atol=1e-6)


def test_the_input_cotangent_is_one_product_after_the_loop():
    loss, args = lstm(2, 3, 18)
    graph = optimize(sg.trace(sg.grad(loss, argnums=3), *args))
    forward, backward = scan_bodies(graph)
    assert products(backward) == 1
    for backend in BACKENDS:
        got = sg.compile(sg.grad(loss, argnums=3), backend=backend)(*args)
        np.testing.assert_allclose(got, value_and_grads(loss, args, backend, rolled=False)[4], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("length", [0, 1, 2])
@pytest.mark.parametrize("backend", BACKENDS)
def test_short_scans_and_zeros(backend, length):
    loss, args = elman(False)
    args = [np.zeros_like(args[0]), args[1], args[2][:length]]
    assert_all_close(value_and_grads(loss, args, backend), value_and_grads(loss, args, backend, hoisted=False))


def test_a_carry_its_step_does_not_read_is_left_as_it_is():
    """A carry whose old value no step reads (b below; each step also computes values it never uses, as
    test_reroll's random loops do) is no sum of products: looking at its uses had raised a KeyError."""
    def f(a, b, table):
        for t in range(17):
            unused = [table[0] * 0.5, a * 0.0 + 0.25]
            a, b = table[t] + table[t], a + a
        return sg.sum(a + 2.0 * b) + 0.0 * len(unused)
    args = [np.linspace(0.1, 0.5, 4), np.linspace(-0.3, 0.2, 4), np.linspace(-1.0, 1.0, 68).reshape(17, 4)]
    value, grads = sg.compile(sg.value_and_grad(f, argnums=(1, 2)))(*args)
    np.testing.assert_allclose(value, f(*args), rtol=1e-14)
    want = np.zeros((17, 4))
    want[16], want[15] = 2.0, 8.0  # a = 2 table[16]; b = 2 a_15 = 4 table[15], read twice
    np.testing.assert_allclose(grads[1], want, rtol=1e-14)
    np.testing.assert_array_equal(grads[0], np.zeros(4))
