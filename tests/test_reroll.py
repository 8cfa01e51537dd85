"""Rerolling: a Python loop unrolled by tracing is rolled back into a scan, with the same results."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import symgrad as sg
from symgrad.ops.control import evaluate
from symgrad.passes import optimize
from symgrad.passes.reroll import MIN_BLOCKS, reroll

X = np.linspace(-1.0, 2.0, 8)


def ode(x, k, steps):
    for _ in range(steps):
        x = x + 0.01 * (-k * x + sg.sin(x))
    return sg.sum(x ** 2)


def scans(graph) -> int:
    return sum(node.prim.name == "scan" for node in graph.nodes)


def test_a_python_loop_rolls_into_one_scan_with_bitwise_equal_results():
    graph = sg.trace(lambda x, k: ode(x, k, 200), X, 0.7)
    rolled = reroll(graph)
    assert scans(rolled) == 1 and len(rolled.nodes) < 10
    args = [X, np.array(0.7)]
    np.testing.assert_array_equal(evaluate(rolled, args), evaluate(graph, args))


def test_the_gradient_of_a_long_python_loop_is_a_small_graph_and_right():
    vg = sg.value_and_grad(lambda x, k: ode(x, k, 1000), argnums=(0, 1))
    graph = optimize(sg.trace(vg, X, 0.7))
    assert len(graph.nodes) < 40
    value, grads = sg.compile(vg)(X, 0.7)
    reference_value = np.sum(_ode_numpy(X, 0.7, 1000) ** 2)
    np.testing.assert_allclose(value, reference_value, rtol=1e-12)
    eps = 1e-6
    numeric = (np.sum(_ode_numpy(X, 0.7 + eps, 1000) ** 2) - np.sum(_ode_numpy(X, 0.7 - eps, 1000) ** 2)) / (2 * eps)
    np.testing.assert_allclose(grads[1], numeric, rtol=1e-6)


def _ode_numpy(x, k, steps):
    for _ in range(steps):
        x = x + 0.01 * (-k * x + np.sin(x))
    return x


def test_short_loops_stay_unrolled():
    assert scans(reroll(sg.trace(lambda x, k: ode(x, k, MIN_BLOCKS - 1), X, 0.7))) == 0


def test_steps_that_differ_stay_unrolled_and_right():
    def f(x):
        for i in range(40):  # each step reads another element: not one body
            x = x * 0.9 + x[i % 8]
        return x
    graph = sg.trace(f, X)
    rolled = reroll(graph)
    np.testing.assert_array_equal(evaluate(rolled, [X])[0], evaluate(graph, [X])[0])


def test_a_value_of_an_earlier_step_read_after_the_loop_is_kept_right():
    def f(x):
        history = []
        for _ in range(40):
            x = sg.sin(x) * 0.99 + 0.01
            history.append(x)
        return history[5] + history[-1] * 2.0
    graph = sg.trace(f, X)
    rolled = reroll(graph)
    np.testing.assert_array_equal(evaluate(rolled, [X])[0], evaluate(graph, [X])[0])


def test_nested_python_loops_roll_from_the_inside_out():
    def f(x, w):
        for _ in range(20):
            for _ in range(20):
                x = sg.tanh(x * w) + 0.1
            x = x[::-1] * 0.5
        return sg.sum(x)
    graph = sg.trace(f, X, 1.1)
    rolled = reroll(graph)
    (outer,) = [node for node in rolled.nodes if node.prim.name == "scan"]
    assert scans(outer.params["body"]) == 1  # the inner loop, inside the outer one
    np.testing.assert_array_equal(evaluate(rolled, [X, np.array(1.1)]), evaluate(graph, [X, np.array(1.1)]))
    assert_close = dict(rtol=1e-10, atol=1e-12)
    got = sg.grad(f, argnums=(0, 1))(X, 1.1)
    numeric = [(f(X + eps * e, 1.1) - f(X - eps * e, 1.1)) / (2 * eps) for eps in [1e-6] for e in np.eye(8)]
    np.testing.assert_allclose(got[0], numeric, rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(sg.compile(sg.grad(f, argnums=(0, 1)), backend="numpy")(X, 1.1)[1], got[1], **assert_close)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("+*sc"), st.integers(0, 5), st.integers(0, 5)), min_size=1, max_size=6),
       st.integers(MIN_BLOCKS, 40))
def test_random_loop_bodies_roll_to_the_same_results(body, steps):
    """Each step updates three carries from the carries and two constants by random ops."""
    def f(a, b, c, p, q):
        for _ in range(steps):
            values = [a, b, c, p, q]
            new = []
            for op, i, j in body[:3] + body[:3][:3 - len(body[:3])]:
                u, v = values[i % 5], values[j % 5]
                new.append({"+": lambda: u + v, "*": lambda: u * v * 0.5,
                            "s": lambda: sg.sin(u) + v, "c": lambda: sg.cos(u - v)}[op]())
            a, b, c = (new + [a, b, c])[:3]
        return a + b * 2.0 + c * 3.0
    args = [np.linspace(0.1, 0.5, 3) * k for k in (1.0, -1.0, 2.0, 0.3, 0.7)]
    graph = sg.trace(f, *args)
    rolled = reroll(graph)
    np.testing.assert_array_equal(evaluate(rolled, args)[0], evaluate(graph, args)[0])


@pytest.mark.parametrize("backend", ["numpy", None])
def test_compiled_python_loops_match_the_rolled_loop_primitive(backend):
    rolled = sg.compile(sg.value_and_grad(lambda x, k: ode(x, k, 300), argnums=(0, 1)), backend=backend)
    def looped(x, k):
        return sg.sum(sg.fori_loop(0, 300, lambda i, v: v + 0.01 * (-k * v + sg.sin(v)), x) ** 2)
    value, grads = rolled(X, 0.7)
    want_value, want_grads = sg.compile(sg.value_and_grad(looped, argnums=(0, 1)), backend=backend)(X, 0.7)
    np.testing.assert_allclose(value, want_value, rtol=1e-13)
    for got, want in zip(grads, want_grads):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_a_rolled_step_carries_only_what_crosses_from_one_step_to_the_next():
    """A block is cut where the fewest values cross: an RK4 step carries x alone, not its stages,
    so reverse mode keeps one array per step."""
    def loss(x, k):
        f = lambda x: -k * x + sg.sin(x)  # noqa: E731
        for _ in range(20):
            k1 = f(x)
            k2 = f(x + 0.005 * k1)
            k3 = f(x + 0.005 * k2)
            k4 = f(x + 0.01 * k3)
            x = x + 0.01 / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return sg.sum(x ** 2)

    graph = optimize(sg.trace(lambda x: loss(x, 0.7), X))
    (scan,) = [node for node in graph.nodes if node.prim.name == "scan"]
    assert scan.params["num_carry"] == 1
    args = [X]
    np.testing.assert_array_equal(evaluate(reroll(sg.trace(lambda x: loss(x, 0.7), X)), args),
                                  evaluate(sg.trace(lambda x: loss(x, 0.7), X), args))


# ----------------------------------------------------------------------------- regions that must not roll as found

def test_two_variables_equal_from_the_second_step_keep_their_different_starts():
    """a = b = c from the second step on: one carry, but a and b enter the first step as different values."""
    def f(p, q, m=sg):  # m: symgrad, or NumPy for the reference
        a, b = p, q
        for _ in range(40):
            c = a * 0.6 + m.sin(b) * 0.5
            a, b = c, c
        return m.sum(c * c)

    def reference(p, q):
        return f(p, q, m=np)

    args = (np.linspace(0.1, 0.4, 4), np.linspace(-0.3, 0.2, 4))
    for backend in ("numpy", None):
        value, grads = sg.compile(sg.value_and_grad(f, argnums=(0, 1)), backend=backend)(*args)
        np.testing.assert_allclose(value, reference(*args), rtol=1e-13)
        eps, e = 1e-6, np.eye(4)
        numeric = [(reference(args[0] + eps * e[i], args[1]) - reference(args[0] - eps * e[i], args[1])) / (2 * eps)
                   for i in range(4)]
        np.testing.assert_allclose(grads[0], numeric, rtol=1e-6, atol=1e-10)


def test_a_loop_that_ends_the_program_after_a_hoisted_first_step_compiles():
    def f(x, k):
        for _ in range(40):
            x = x * 0.5 + k
        return x
    want = X.copy()
    for _ in range(40):
        want = want * 0.5 + 0.3
    for backend in ("numpy", None):
        np.testing.assert_allclose(sg.compile(f, backend=backend)(X, 0.3), want, rtol=1e-14)


def test_initial_values_of_another_type_than_the_carry_stay_out_of_the_loop():
    def f(x):
        for _ in range(40):  # x enters as int64 and as (1, 4), then is float64 (4,)
            x = sg.reshape(sg.astype(sg.sin(sg.astype(x, "float32")), "float64"), (4,)) * 0.9 + 0.5
        return sg.sum(x * 2.0)
    x = np.arange(4).reshape(1, 4)
    want = x
    for _ in range(40):
        want = np.sin(want.astype("float32")).astype("float64").reshape(4) * 0.9 + 0.5
    for backend in ("numpy", None):
        np.testing.assert_allclose(sg.compile(f, backend=backend)(x), np.sum(want * 2.0), rtol=1e-12)


def test_a_step_value_read_after_the_loop_comes_from_a_last_step_left_unrolled():
    def f(x):
        for _ in range(40):
            t = sg.sin(x)
            x = t * 0.9 + 0.1
        return sg.sum(x) + sg.sum(t)
    graph = optimize(sg.trace(f, X))
    assert not any(n.prim.name == "const" and n.out.size > 1 for n in graph.nodes)  # no zero-filled carry
    (scan,) = [n for n in graph.nodes if n.prim.name == "scan"]
    assert scan.params["num_carry"] == 1
    np.testing.assert_allclose(sg.compile(f)(X), evaluate(sg.trace(f, X), [X])[0], rtol=1e-14)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("+*sc"), st.integers(0, 4), st.integers(0, 4)), min_size=1, max_size=3),
       st.lists(st.integers(0, 5), min_size=3, max_size=3), st.integers(MIN_BLOCKS, 30), st.booleans())
def test_random_loops_after_cse_roll_to_the_same_results(body, assign, steps, same_start):
    """Carries that alias (a = b = new), start alike or not, and end the program, through the whole
    pipeline (CSE first): the compiled loop agrees with the Python loop on NumPy arrays."""
    ops = {"+": lambda m, u, v: u * 0.6 + v * 0.5, "*": lambda m, u, v: u * v * 0.5,
           "s": lambda m, u, v: m.sin(u) * 0.9 + v * 0.2, "c": lambda m, u, v: m.cos(u - v)}

    def f(a, b, c, p, q, m=sg):
        for _ in range(steps):
            values = [a, b, c, p, q]
            pool = [ops[op](m, values[i], values[j]) for op, i, j in body] + [a, b, c]
            a, b, c = (pool[k % len(pool)] for k in assign)
        return a + b * 2.0 + c * 3.0

    base = np.linspace(0.1, 0.5, 3)
    starts = (1.0, 1.0, 1.0) if same_start else (1.0, -1.0, 2.0)
    args = [base * k for k in starts] + [base * 0.3, base * 0.7]
    want = f(*args, m=np)
    for backend in ("numpy", None):
        np.testing.assert_allclose(sg.compile(f, backend=backend)(*args), want, rtol=1e-12, atol=1e-14)


def test_nested_python_loops_over_a_numpy_table_roll_with_right_gradients():
    """Epochs of steps each reading its own row of a NumPy table: the inner loop rolls (its rows become
    xs), then the outer one, never carrying the inner loop's tuple-typed result."""
    rng = np.random.default_rng(0)
    V, W = rng.normal(size=(20, 20, 3)), rng.normal(size=(20, 20, 3))

    def f(x, m=sg):
        for i in range(20):
            for j in range(20):
                x = x + 0.05 * m.sin(x * V[i, j] + W[i, j])
            x = x * 0.99
        return m.sum(x ** 2)

    x, eps = np.array([0.3, -0.7, 1.1]), 1e-6
    numeric = [(f(x + eps * e, m=np) - f(x - eps * e, m=np)) / (2 * eps) for e in np.eye(3)]
    np.testing.assert_allclose(sg.grad(f)(x), numeric, rtol=1e-6)
    for backend in ("numpy", None):
        value, grad = sg.compile(sg.value_and_grad(f), backend=backend)(x)
        np.testing.assert_allclose(value, f(x, m=np), rtol=1e-12)
        np.testing.assert_allclose(grad, numeric, rtol=1e-6)


def _recurrence(xs, w, u, steps, stack_axis=0, stride=1, time_axis=0):
    """A tanh recurrence over rows xs[t] (or xs[:, t]) of a traced input, every step's h stacked."""
    h, outs = sg.zeros((3, 5)), []
    for t in range(0, steps * stride, stride):
        row = xs[t] if time_axis == 0 else xs[:, t]
        h = sg.tanh(row @ w + h @ u)
        outs.append(h)
    return sg.sum(sg.stack(outs, axis=stack_axis) ** 2) + sg.sum(outs[3] * outs[-1]) + sg.sum(sg.stack(outs[5:]))


@pytest.mark.parametrize("stack_axis, stride, time_axis", [(0, 1, 0), (1, 2, 1), (2, 1, 0)])
def test_a_loop_over_rows_of_a_traced_input_rolls_with_its_outputs_stacked(stack_axis, stride, time_axis):
    """x[t] of a traced x with t advancing becomes the scan's xs, and sg.stack of every step's h its ys:
    the graph stops growing with the number of steps, and values and gradients are those of the unrolled
    program (finite differences too)."""
    rng = np.random.default_rng(3)
    w, u = rng.standard_normal((4, 5)) * 0.5, rng.standard_normal((5, 5)) * 0.5
    shape = lambda steps: (steps * stride, 3, 4) if time_axis == 0 else (3, steps * stride, 4)
    f = lambda steps: lambda xs, w, u: _recurrence(xs, w, u, steps, stack_axis, stride, time_axis)
    sizes = [len(reroll(sg.trace(f(steps), np.zeros(shape(steps)), w, u)).nodes) for steps in (20, 60)]
    assert sizes[0] == sizes[1]
    xs = rng.standard_normal(shape(30))
    graph = sg.trace(f(30), xs, w, u)
    rolled = reroll(graph)
    assert scans(rolled) == 1
    np.testing.assert_allclose(evaluate(rolled, [xs, w, u]), evaluate(graph, [xs, w, u]), rtol=1e-14)
    vg = sg.value_and_grad(f(30), argnums=(0, 1, 2))
    for backend in ("llvm", "numpy"):
        value, grads = sg.compile(vg, backend=backend)(xs, w, u)
        np.testing.assert_allclose(value, evaluate(graph, [xs, w, u])[0], rtol=1e-13)
        for argnum, index in ((0, (7, 1, 2) if time_axis == 0 else (1, 7, 2)), (2, (1, 3))):
            args = [xs, w, u]
            plus, minus = [a.copy() for a in args], [a.copy() for a in args]
            plus[argnum][index] += 1e-6
            minus[argnum][index] -= 1e-6
            numeric = (f(30)(*plus) - f(30)(*minus)) / 2e-6
            np.testing.assert_allclose(grads[argnum][index], numeric, rtol=1e-6)


def test_a_loop_over_rows_run_backwards_rolls_and_is_right():
    """t going back over x (the backward half of a bidirectional RNN) reads x's rows with a negative step."""
    def f(xs, h):
        for t in reversed(range(24)):
            h = sg.sin(xs[t] * h) + 0.1 * xs[23 - t]
        return sg.sum(h)
    xs = np.linspace(-1.0, 1.0, 24 * 8).reshape(24, 8)
    graph = sg.trace(f, xs, X)
    assert scans(reroll(graph)) == 1
    np.testing.assert_array_equal(evaluate(reroll(graph), [xs, X])[0], evaluate(graph, [xs, X])[0])
    for backend in ("llvm", "numpy"):
        grads = sg.compile(sg.grad(f, argnums=(0, 1)), backend=backend)(xs, X)
        for argnum, index in ((0, (20, 3)), (0, (2, 3)), (1, (5,))):
            args = [xs, X]
            plus, minus = [a.copy() for a in args], [a.copy() for a in args]
            plus[argnum][index] += 1e-6
            minus[argnum][index] -= 1e-6
            np.testing.assert_allclose(grads[argnum][index], (f(*plus) - f(*minus)) / 2e-6, rtol=1e-6, atol=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("+*sr"), st.integers(0, 4), st.integers(0, 4)), min_size=1, max_size=3),
       st.integers(MIN_BLOCKS, 30), st.sampled_from([1, 2, -1]), st.lists(st.integers(-40, 40), max_size=3),
       st.booleans())
def test_random_loops_over_rows_with_kept_values_roll_to_the_same_results(body, steps, stride, kept, stacked):
    """Two carries updated from the carries, a row of a traced table (t moving forward, by two, or back) and a
    constant; random steps' values read after the loop, and the stack of every step's first carry or not."""
    def f(a, b, table):
        history, first = [], (steps - 1) * (stride < 0)
        for t in range(steps):
            values = [a, b, table[first + stride * t], table[0] * 0.5, a * 0.0 + 0.25]
            new = []
            for op, i, j in (body * 2)[:2]:
                u, v = values[i], values[j]
                new.append({"+": lambda: u + v, "*": lambda: u * v * 0.5, "s": lambda: sg.sin(u) + v,
                            "r": lambda: sg.tanh(u * 0.7 - v)}[op]())
            a, b = new
            history.append(a)
        out = a + 2.0 * b + sum(history[k] * (k % 3 + 1.0) for k in kept if -steps <= k < steps)
        return sg.sum(out) + (sg.sum(sg.stack(history, axis=1) ** 2) if stacked else 0.0)
    rows = np.linspace(-1.0, 1.0, 4 * steps * abs(stride)).reshape(steps * abs(stride), 4)
    args = [np.linspace(0.1, 0.5, 4), np.linspace(-0.3, 0.2, 4), rows]
    graph = sg.trace(f, *args)  # (a stack along axis 1 is the ys transposed: NumPy may sum it in another order)
    np.testing.assert_allclose(evaluate(reroll(graph), args)[0], evaluate(graph, args)[0], rtol=1e-14)
    vg = sg.value_and_grad(f, argnums=(0, 2))
    value, grads = sg.compile(vg)(*args)  # (terms of order 1 may cancel to a small sum: an absolute tolerance too)
    np.testing.assert_allclose(value, evaluate(graph, args)[0], rtol=1e-13, atol=1e-14)
    unrolled = sg.compile(lambda *a: sg.vjp(lambda *b: f(*b), *a)[1](1.0))  # a check through another path
    for got, want in zip(grads, [unrolled(*args)[0], unrolled(*args)[2]]):
        np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-13)


def test_a_one_piece_concatenate_of_the_last_carry_reads_the_carry():
    """A concatenate of the last step's carry alone is no stack of the ys (there are none): it had raised a
    KeyError. (Tracing drops such a concatenate; another pass might make one.)"""
    from symgrad import ir
    from symgrad.ops.shape import concatenate_p
    graph = sg.trace(lambda x: ode_steps(x, 40).reshape(1, 8), X)
    out = ir.Value((1, 8), graph.outputs[0].dtype)
    node = ir.Node(concatenate_p, (graph.outputs[0],), ir.freeze_attrs({"axis": 0}), out, {})
    graph = ir.Graph(list(graph.inputs), list(graph.nodes) + [node], [out], graph.name)
    rolled = reroll(graph)
    assert scans(rolled) == 1
    np.testing.assert_array_equal(evaluate(rolled, [X])[0], evaluate(graph, [X])[0])


def ode_steps(x, steps):
    for _ in range(steps):
        x = sg.sin(x) * 0.99 + 0.01 * sg.cos(x * 1.3)
    return x


def test_a_loop_reading_an_input_of_its_own_per_step_rolls_with_them_stacked():
    """An eager step's x[t] (computed before recording) and Python numbers are inputs of the graph, one per step:
    they become the scan's xs, stacked before the loop. An input read by two steps stays a constant."""
    def f(x, xs, k):
        for row in xs:
            x = sg.sin(x * row + k) * 0.9
        return x
    rows = [np.linspace(0.5, 1.5, 8) * (1 + 0.01 * t) for t in range(30)]
    graph = sg.trace(f, X, rows, 0.3)
    rolled = reroll(graph)
    assert scans(rolled) == 1
    long = [np.full(8, 1 + 0.001 * t) for t in range(100)]  # the stack of 100 inputs (as many reshapes) stays a stack
    assert scans(reroll(sg.trace(f, X, long, 0.3))) == 1
    args = [X, *rows, np.array(0.3)]
    np.testing.assert_array_equal(evaluate(rolled, args), evaluate(graph, args))
    shared = sg.trace(f, X, [rows[0]] * 30, 0.3)  # one input read by every step: a constant of the loop
    assert scans(reroll(shared)) == 1
    reference = np.array(X)
    for row in rows:
        reference = np.sin(reference * row + 0.3) * 0.9
    np.testing.assert_allclose(sg.compile(f)(X, rows, 0.3), reference, rtol=1e-14)
    grads = sg.grad(lambda x, xs: sg.sum(f(x, xs, 0.3)), argnums=(0, 1))(X, rows)
    eps = 1e-6  # the derivative along a row of ones, at a late step (an early step's is below the differences' error)
    numeric = (np.sum(f_numpy(X, [r + eps * (i == 27) for i, r in enumerate(rows)])) -
               np.sum(f_numpy(X, [r - eps * (i == 27) for i, r in enumerate(rows)]))) / (2 * eps)
    np.testing.assert_allclose(np.sum(grads[1][27]), numeric, rtol=1e-6)


def f_numpy(x, rows):
    for row in rows:
        x = np.sin(x * row + 0.3) * 0.9
    return x


def test_a_stack_of_every_step_with_the_last_step_left_unrolled_reads_the_ys():
    """The roll starts its steps after `xs[t] @ wx + h @ wh` (fewest carries), so the last step's tanh stays after
    the loop: the stack of every h is the ys and that last piece, not a slice per step."""
    rng = np.random.default_rng(0)
    xs, wx, wh, b = rng.standard_normal((30, 3, 4)), rng.standard_normal((4, 5)), rng.standard_normal((5, 5)) / 2, \
        rng.standard_normal(5)

    def f(xs, wx, wh, b):
        h, hs = np.zeros((3, 5)), []
        for t in range(30):
            h = sg.tanh(xs[t] @ wx + h @ wh + b)
            hs.append(h)
        return sg.stack(hs)

    graph = sg.trace(f, xs, wx, wh, b)
    rolled = reroll(graph)
    assert scans(rolled) == 1 and sum(node.prim.name == "slice" for node in rolled.nodes) <= 2
    args = [xs, wx, wh, b]
    np.testing.assert_array_equal(evaluate(rolled, args)[0], evaluate(graph, args)[0])
    loss = sg.compile(sg.grad(lambda wh: sg.sum(sg.sin(f(xs, wx, wh, b)))))
    eps, index = 1e-6, (1, 2)
    plus, minus = wh.copy(), wh.copy()
    plus[index] += eps
    minus[index] -= eps
    numeric = (np.sum(np.sin(evaluate(graph, [xs, wx, plus, b])[0])) -
               np.sum(np.sin(evaluate(graph, [xs, wx, minus, b])[0]))) / (2 * eps)
    np.testing.assert_allclose(loss(wh)[index], numeric, rtol=1e-6)
