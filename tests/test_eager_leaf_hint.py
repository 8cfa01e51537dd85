"""The leaves of a deferred step take the previous tape's references in order (Tape.hint, tensor._leaf_has_slot):
a step that meets other leaves, or the same in another order, or changes one between its uses (`.data =`,
requires_grad_, an in-place write), must compute what eager evaluation computes. Checked against NumPy and
PyTorch (float64, 1e-10) over steps that change what the hint expects."""

import numpy as np
import pytest

import symgrad as sg
from symgrad.eager import tape
from symgrad.eager.tensor import DeferredTensor


def _run(lib, steps, variant):
    """Linear regression with two leaves, w and b, `variant(step, lib, leaves)` giving the two tensors used as
    (weight, bias) at the step (and changing them as it likes first); per step the loss, whether it was deferred,
    and the gradients of the tensors used."""
    rng = np.random.default_rng(7)
    x, y = lib.from_numpy(rng.uniform(-1, 1, (2, 2))), lib.from_numpy(rng.standard_normal((2, 2)))
    leaves = {name: lib.tensor(rng.standard_normal((2, 2)), requires_grad=True) for name in ("w", "v", "b")}
    observed = []
    for step in range(steps):
        weight, bias = variant(step, lib, leaves)
        loss = ((x @ weight + bias - y) ** 2).mean()
        deferred = isinstance(loss, DeferredTensor)
        loss.backward()
        grads = [t.grad.numpy().copy() if t.grad is not None else None for t in (weight, bias)]
        with lib.no_grad():
            for t in (weight, bias):
                if t.grad is not None:
                    t -= 0.1 * t.grad
                    t.grad = None
        observed.append((loss.item(), deferred, grads))
    return observed


def _same_as_pytorch(variant, steps=8):
    tape.start_over()
    ours = _run(sg, steps, variant)
    torch = pytest.importorskip("torch")
    theirs = _run(torch, steps, variant)
    for (our_loss, _, our_grads), (their_loss, _, their_grads) in zip(ours, theirs):
        np.testing.assert_allclose(our_loss, their_loss, rtol=1e-10, atol=1e-12)
        for a, b in zip(our_grads, their_grads):
            assert (a is None) == (b is None)
            if a is not None:
                np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    return [deferred for _, deferred, _ in ours]


def test_the_same_leaves_take_the_hint_and_are_deferred(lowerings):
    assert _same_as_pytorch(lambda step, lib, leaves: (leaves["w"], leaves["b"])) == [False, False] + [True] * 6


def test_another_leaf_in_place_of_one_the_hint_expects(lowerings):
    """v where w was: a leaf of the same type at the same slot (a capture is leaf-agnostic), deferred, its
    gradient its own; then w again."""
    flags = _same_as_pytorch(lambda step, lib, leaves: (leaves["v"] if step == 4 else leaves["w"], leaves["b"]))
    assert flags == [False, False] + [True] * 6


def test_one_leaf_in_both_places_after_the_hint(lowerings):
    """b as the weight too: the second use is the same leaf at another slot of the
    capture's, so the step runs op by op, with b's two uses summed."""
    def variant(step, lib, leaves):
        if step == 4:
            return leaves["b"], leaves["b"]
        return leaves["w"], leaves["b"]
    flags = _same_as_pytorch(variant)
    assert flags[3] and not flags[4]


def test_data_assignment_on_a_hinted_leaf_after_its_use(lowerings):
    """`w.data = ...` after `x @ w` deferred (w took its slot from the hint): the tape is irregular, the backward
    takes the general path; the op used w's old array, the gradient w's value as PyTorch reads it."""
    def variant(step, lib, leaves):
        w, b = leaves["w"], leaves["b"]
        if step == 4:
            lib.from_numpy(np.eye(2)) @ w  # (recorded, not part of the loss)
            w.data = w.data * 2.0
        return w, b
    _same_as_pytorch(variant)
    tape.start_over()
    w = sg.tensor(np.ones((2, 2)), requires_grad=True)
    for step in range(4):
        product = sg.from_numpy(np.eye(2)) @ w
        if step == 3:
            assert isinstance(product, DeferredTensor)
            w.data = w.data * 2.0
            assert not tape.state.tape.regular
        loss = product.sum()
        loss.backward()
        np.testing.assert_allclose(loss.item(), 4.0)
        np.testing.assert_allclose(w.grad.numpy(), np.ones((2, 2)))
        w.grad = None


def test_requires_grad_off_and_an_in_place_write_on_a_hinted_leaf(lowerings):
    """b.requires_grad_(False) at one step (a constant where a leaf was: op by op, b gets no gradient), and an
    in-place write to w under no_grad between steps (a new version read afresh)."""
    def variant(step, lib, leaves):
        w, b = leaves["w"], leaves["b"]
        b.requires_grad_(step != 4)
        if step == 5:
            with lib.no_grad():
                w.mul_(0.5)
        return w, b
    flags = _same_as_pytorch(variant)
    assert flags[3] and not flags[4] and flags[7]


def test_a_freed_leaf_and_a_new_one_in_its_place(lowerings):
    """A new leaf object each step (the hint's reference is dead, or another object's): slots by the table,
    every step still deferred from the third, gradients right."""
    tape.start_over()
    rng = np.random.default_rng(8)
    x = sg.tensor(rng.standard_normal((4, 3)))
    flags = []
    for step in range(6):
        w = sg.tensor(rng.standard_normal((3, 1)), requires_grad=True)
        loss = ((x @ w) ** 2).sum()
        flags.append(isinstance(loss, DeferredTensor))
        loss.backward()
        np.testing.assert_allclose(w.grad.numpy(), 2 * x.numpy().T @ (x.numpy() @ w.detach().numpy()), rtol=1e-12)
        del w, loss
    assert flags == [False, False] + [True] * 4


def test_data_assignment_updates_between_steps_keep_the_hint(lowerings):
    """The old update `p.data = p.data - lr * p.grad.data` after each backward (on the next step's tape, before
    any op) asks the tape's slots; the step still takes the hint and is deferred, with PyTorch's values."""
    def run(lib):
        rng = np.random.default_rng(9)
        x, y = lib.from_numpy(rng.standard_normal((5, 3))), lib.from_numpy(rng.standard_normal((5, 1)))
        w, b = lib.tensor(rng.standard_normal((3, 1)), requires_grad=True), lib.tensor(np.zeros(1), requires_grad=True)
        losses, flags = [], []
        for step in range(7):
            loss = ((x @ w + b - y) ** 2).mean()
            flags.append(isinstance(loss, DeferredTensor) and (lib is not sg or tape.state.tape.hinted == 2))
            loss.backward()
            for p in (w, b):
                p.data = p.data - 0.1 * p.grad.data
                p.grad = None
            losses.append(loss.item())
        return losses, flags, w.detach().numpy().copy()
    tape.start_over()
    losses, flags, w = run(sg)
    assert flags == [False, False] + [True] * 5
    torch = pytest.importorskip("torch")
    their_losses, _, their_w = run(torch)
    np.testing.assert_allclose(losses, their_losses, rtol=1e-10)
    np.testing.assert_allclose(w, their_w, rtol=1e-10)
