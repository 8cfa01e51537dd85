"""The steady-state step's fast paths (symgrad.eager.whole_backward: the capture a tape deferred against taken
without a lookup, its results handed out by a plan made once per grouping of its records; the loss's seed; the
thread-local grad mode and tape read from class defaults): a loop whose steps change between them must print
what PyTorch prints, step by step, in float64.
"""
import threading

import numpy as np
import pytest

import symgrad as sg
from symgrad.eager import tape
from symgrad.eager.tensor import DeferredTensor


def _data(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (20, 3))
    return x, x @ np.array([[1.5], [-2.0], [0.5]]) + 0.3 + 0.01 * rng.standard_normal((20, 1))


def _loop(lib, x_array, y_array, steps=16):
    """Linear regression with manual updates, changed between steps: a new structure (steps 4 and 5), the
    batch (from_numpy) written in place by NumPy (steps 6 and 11), the weight scaled in place (step 7), a hook on
    the weight (steps 8 and 9) and on an intermediate value (step 10), a backward with retain_graph followed by a
    second one (step 12). Returns per step (loss, w.grad, b.grad, w, b) as arrays, and whether each step's loss
    was deferred."""
    x_array, y_array = x_array.copy(), y_array.copy()
    x, y = lib.from_numpy(x_array), lib.from_numpy(y_array)
    w = lib.zeros((3, 1), dtype=lib.float64, requires_grad=True)
    b = lib.zeros(1, dtype=lib.float64, requires_grad=True)
    record, deferred, handle = [], [], None
    for step in range(steps):
        if step in (3, 15):
            x_array *= 1.25  # NumPy writes the batch: the next step must read the new values
        if step == 7:
            with lib.no_grad():
                w.mul_(0.5)
        if step == 8:
            handle = w.register_hook(lambda grad: grad * 2)
        if step == 10:
            handle.remove()
        residual = x @ w + b - y
        if step == 10:
            residual.register_hook(lambda grad: grad * 3)
        loss = (residual ** 2).sum() * 0.05 if step in (4, 5) else (residual ** 2).mean()
        deferred.append(type(loss).__name__ == "DeferredTensor")
        if step == 12:
            loss.backward(retain_graph=True)
        loss.backward()
        record.append([loss.item()] + [t.detach().numpy().copy() for t in (w.grad, b.grad)])
        with lib.no_grad():
            w -= 0.1 * w.grad
            b -= 0.1 * b.grad
        w.grad.zero_()
        b.grad.zero_()
        record[-1] += [t.detach().numpy().copy() for t in (w, b)]
    return record, deferred


def _numpy_loop(x, y, steps=16):
    """The same loop with the gradients by hand: the reference when PyTorch is absent."""
    x = x.copy()
    w, b, record = np.zeros((3, 1)), np.zeros(1), []
    for step in range(steps):
        if step in (3, 15):
            x *= 1.25
        if step == 7:
            w = w * 0.5
        residual = x @ w + b - y
        d = 2 * residual / residual.size * (3 if step == 10 else 1) * (2 if step == 12 else 1)
        gw, gb = x.T @ d * (2 if step in (8, 9) else 1), d.sum(0)
        record.append([float((residual ** 2).mean()), gw, gb])
        w, b = w - 0.1 * gw, b - 0.1 * gb
        record[-1] += [w, b]
    return record


def test_a_changing_loop_prints_what_pytorch_prints_in_float64():
    x, y = _data()
    tape.start_over()  # which steps defer (below) counts from an empty tape: an earlier test may leave ops on it
    ours, deferred = _loop(sg, x, y)
    torch = pytest.importorskip("torch")
    theirs, _ = _loop(torch, x, y)
    for step, (a, b) in enumerate(zip(ours, theirs)):
        for value, reference in zip(a, b):
            np.testing.assert_allclose(value, reference, rtol=1e-10, atol=1e-12, err_msg=f"step {step}")
    # the steady steps took the deferred path (a new structure or a second backward runs op by op: the general path
    # ran the step before; after the hook on an intermediate value, an irregular tape, the next step expects the
    # newest steady capture); step 6, after the new structure, switches back to the first structure's capture where
    # its ops leave the second's (mean, not sum)
    assert [step for step, flag in enumerate(deferred) if not flag] == [0, 1, 4, 5, 13]


def test_a_changing_loop_matches_the_gradients_by_hand():
    x, y = _data(1)
    ours, deferred = _loop(sg, x, y)
    for step, (a, b) in enumerate(zip(ours, _numpy_loop(x, y))):
        for value, reference in zip(a, b):
            np.testing.assert_allclose(value, reference, rtol=1e-10, atol=1e-12, err_msg=f"step {step}")
    assert deferred[3] and deferred[15]


def test_a_held_grad_sees_the_steady_steps_sums():
    """Gradients accumulate into the .grad a caller holds, on the fast path too (no zero_ between steps)."""
    x, y = _data(2)
    w = sg.zeros((3, 1), dtype=sg.float64, requires_grad=True)
    xt, yt = sg.from_numpy(x), sg.from_numpy(y)
    total = np.zeros((3, 1))
    held = None
    for step in range(6):
        loss = ((xt @ w - yt) ** 2).mean()
        assert isinstance(loss, DeferredTensor) == (step >= 2)
        loss.backward()
        total += 2 * x.T @ (x @ np.zeros((3, 1)) - y) / y.size
        held = w.grad if held is None else held
        assert w.grad is held
        np.testing.assert_allclose(held.numpy(), total, rtol=1e-10)
        assert tape.current_tape().pending == []


def test_a_second_backward_through_a_steady_step_raises_pytorchs_error():
    x, y = _data(3)
    w = sg.zeros((3, 1), dtype=sg.float64, requires_grad=True)
    for _ in range(4):
        loss = ((sg.from_numpy(x) @ w - sg.from_numpy(y)) ** 2).mean()
        loss.backward()
    assert isinstance(loss, sg.Tensor)
    with pytest.raises(RuntimeError, match="second time"):
        loss.backward()


def test_a_loss_of_another_dtype_and_a_non_scalar_output_get_their_seeds():
    w = sg.tensor(np.ones(3, np.float32), requires_grad=True)
    for _ in range(4):
        (w * w).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), 8 * np.ones(3, np.float32))
    assert w.grad.dtype == np.float32
    with pytest.raises(RuntimeError, match="only for scalar outputs"):
        (w * w).backward()
    (w * 2).backward(sg.tensor(np.ones(3, np.float32)))
    np.testing.assert_array_equal(w.grad.numpy(), 10 * np.ones(3, np.float32))


def test_grad_mode_and_tape_are_per_thread_from_their_defaults():
    """A new thread starts in grad mode with no tape, whatever the main thread's mode (class defaults of the
    thread-locals)."""
    seen = {}

    def work():
        seen["mode"] = sg.is_grad_enabled()
        seen["tape"] = tape.state.tape
        w = sg.tensor([2.0], requires_grad=True)
        for _ in range(3):
            w.grad = None
            (w ** 3).sum().backward()
        seen["grad"] = w.grad.numpy().copy()

    with sg.no_grad():
        thread = threading.Thread(target=work)
        thread.start()
        thread.join()
        assert not sg.is_grad_enabled()
    assert seen["mode"] is True and seen["tape"] is None
    np.testing.assert_allclose(seen["grad"], [12.0])
