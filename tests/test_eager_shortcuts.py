"""Shortcuts of a deferred step: a front-end call (an operator, an sg.* function) made at a position of the
tape where the same call deferred in an earlier step takes that plan again without looking it up by shapes
and dtypes (symgrad.eager.tensor._shortcut). Any call that differs (another number, another operand, an op
on constants, no_grad, a trace) must take the ordinary path and compute what eager evaluation computes.
"""

import numpy as np
import pytest

import symgrad as sg
from symgrad.eager import tape
from symgrad.eager.tensor import DeferredTensor


def _regression(lib, steps, variant=lambda step, lib, x, w, b, y: None, lr=0.1):
    """The seed program (x @ w + b, squared error, manual updates under no_grad) in float64; per step,
    `variant` may run something first, and the loss and whether it was deferred are observed."""
    rng = np.random.default_rng(0)
    x_np, y_np = rng.uniform(-1, 1, (20, 2)), rng.standard_normal((20, 1))
    x, y = lib.from_numpy(x_np.copy()), lib.from_numpy(y_np.copy())
    w = lib.tensor(rng.standard_normal((2, 1)), requires_grad=True)
    b = lib.tensor(np.zeros(1), requires_grad=True)
    observed = []
    for step in range(steps):
        power = variant(step, lib, x, w, b, y) or 2
        loss = ((x @ w + b - y) ** power).mean()
        deferred = isinstance(loss, DeferredTensor)
        loss.backward()
        with lib.no_grad():
            w -= lr * w.grad
            b -= lr * b.grad
        w.grad.zero_()
        b.grad.zero_()
        observed.append((loss.item(), deferred))
    return observed, [w.detach().numpy().copy(), b.detach().numpy().copy()]


def _same_as_pytorch(variant=lambda step, lib, x, w, b, y: None, steps=9):
    tape.start_over()
    ours, our_params = _regression(sg, steps, variant)
    torch = pytest.importorskip("torch")
    theirs, their_params = _regression(torch, steps, variant)
    np.testing.assert_allclose([v for v, _ in ours], [v for v, _ in theirs], rtol=1e-10, atol=1e-12)
    for a, b in zip(our_params, their_params):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    return [flag for _, flag in ours]


def test_the_seed_program_is_deferred_from_its_third_step_and_matches_pytorch(lowerings):
    assert _same_as_pytorch() == [False, False] + [True] * 7


def test_another_exponent_at_a_remembered_position_is_not_the_remembered_call(lowerings):
    """x ** 3 where x ** 2 deferred: another call (the number is part of it), so another plan; the step runs
    op by op, and the next one with ** 2 is deferred again."""
    flags = _same_as_pytorch(lambda step, lib, x, w, b, y: 3 if step == 4 else 2)
    assert flags[3] and not flags[4] and flags[6]


def test_an_op_on_constants_at_a_remembered_position_runs_and_the_step_stays_deferred(lowerings):
    """x @ w.detach() (nothing requires grad) at the position where x @ w deferred: the same call, but not
    the capture's operands, so it runs now, unrecorded, and the step is still deferred."""
    seen = {}

    def variant(step, lib, x, w, b, y):
        if step >= 3:
            seen.setdefault(lib.__name__, []).append((x @ w.detach()).sum().item())
    flags = _same_as_pytorch(variant)
    assert flags == [False, False] + [True] * 7
    np.testing.assert_allclose(seen["symgrad"], seen["torch"], rtol=1e-12)


def test_another_batch_size_at_a_remembered_position(lowerings):
    """The same call on a batch of another shape: the operand checks refuse it, the ordinary path runs (and
    the step after it, which follows a structure seen once); then the step is deferred again."""
    rng = np.random.default_rng(1)
    w = sg.tensor(rng.standard_normal((2, 1)), requires_grad=True)
    for step in range(8):
        x = sg.tensor(rng.standard_normal((3 if step == 4 else 5, 2)))
        loss = ((x @ w) ** 2).sum()
        assert isinstance(loss, DeferredTensor) == (step in (2, 3, 6, 7))
        loss.backward()
        np.testing.assert_allclose(w.grad.numpy(), 2 * x.numpy().T @ (x.numpy() @ w.detach().numpy()), rtol=1e-12)
        w.grad = None


def test_no_grad_and_a_trace_at_a_remembered_position(lowerings):
    """Under no_grad the call is not recorded; inside a trace (a function given to sg.grad) it joins the trace:
    neither takes the deferred step's shortcut."""
    rng = np.random.default_rng(2)
    x = sg.tensor(rng.standard_normal((4, 2)))
    w = sg.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    expected = x.numpy() @ w.detach().numpy()
    for step in range(6):
        if step == 3:
            with sg.no_grad():
                product = x @ w
            assert product.grad_fn is None and not isinstance(product, DeferredTensor)
            np.testing.assert_allclose(product.numpy(), expected)
        if step == 4:
            grad = sg.grad(lambda v: sg.sum((x @ w) * v))(np.ones((4, 3)))
            np.testing.assert_allclose(grad, expected, rtol=1e-12)
        loss = sg.tanh(x @ w).sum()
        assert isinstance(loss, DeferredTensor) == (step >= 2)
        loss.backward()
        np.testing.assert_allclose(w.grad.numpy(), x.numpy().T @ (1 - np.tanh(expected) ** 2), rtol=1e-12)
        w.grad = None


def test_a_call_with_an_array_operand_is_not_shortcut(lowerings):
    """An operand given as a NumPy array (a constant lifted at each call) is read afresh every step."""
    w = sg.tensor(np.ones(3), requires_grad=True)
    for step in range(6):
        scale = np.full(3, float(step))
        loss = (w * scale).sum()
        loss.backward()
        np.testing.assert_allclose(w.grad.numpy(), scale)
        w.grad = None


def test_a_loop_with_retain_graph_lowers_one_function(lowerings):
    """A step captured by a backward with retain_graph returns every forward value (the next backwards will
    want them too): one function lowered, not a second one at the first deferred step."""
    rng = np.random.default_rng(3)
    x, w = sg.tensor(rng.standard_normal((4, 3))), sg.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    for step in range(5):
        loss = sg.nn.functional.cross_entropy(x @ w, sg.tensor(np.array([0, 1, 1, 0])))
        loss.backward(retain_graph=True)
        w.grad = None
    assert len(lowerings) == 1


def _unary_regression(lib, steps, variant):
    """x @ w, a unary method, `- y`, a mean: per step `variant(step)` gives (the method's name, mean's keepdim,
    whether `- y` takes y or a tensor made anew); the losses, the deferred flags and w after the steps."""
    rng = np.random.default_rng(5)
    x, y = lib.from_numpy(rng.uniform(-1, 1, (6, 3))), lib.from_numpy(rng.standard_normal((6, 2)))
    w = lib.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    observed = []
    for step in range(steps):
        name, keepdim, fresh = variant(step)
        target = lib.tensor(y.numpy() * 0.5) if fresh else y
        difference = getattr(x @ w, name)() - target
        if keepdim:  # (PyTorch's mean takes keepdim with dims only)
            mean = difference.mean(keepdim=True) if lib is sg else difference.mean((0, 1), keepdim=True)
        else:
            mean = difference.mean()
        loss = mean * 3.0
        observed.append(isinstance(loss, DeferredTensor))
        if lib is sg and observed[-1]:
            assert loss.grad_fn.next_functions[0][0].name() == "MeanBackward0"
        loss.sum().backward() if keepdim else loss.backward()
        with lib.no_grad():
            w -= 0.1 * w.grad
        w.grad.zero_()
        observed[-1] = (float(loss.detach().numpy().sum()), observed[-1])
    return observed, w.detach().numpy().copy()


@pytest.mark.parametrize("change", ["method", "keepdim", "operand"])
def test_operator_and_method_entries_take_a_shortcut_only_for_the_same_call(lowerings, change):
    """Operators, unary methods and `t.mean()` try the deferred step's shortcut before the general call
    (tensor._deferred_call): another method (sigmoid where tanh deferred) or mean's keepdim at a remembered
    position runs op by op, as eager evaluation, and the step after it is deferred again; another constant in
    place of `y` (the same source) is deferred, reading its own values. Values and gradients are PyTorch's."""
    def variant(step):
        other = step == 4
        return ("sigmoid" if other and change == "method" else "tanh", other and change == "keepdim",
                other and change == "operand")
    tape.start_over()
    ours, our_w = _unary_regression(sg, 9, variant)
    expected = [False, False] + [True] * 7 if change == "operand" else [False, False, True, True, False, False, True,
                                                                        True, True]
    assert [flag for _, flag in ours] == expected
    torch = pytest.importorskip("torch")
    theirs, their_w = _unary_regression(torch, 9, variant)
    np.testing.assert_allclose([v for v, _ in ours], [v for v, _ in theirs], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(our_w, their_w, rtol=1e-10, atol=1e-12)
