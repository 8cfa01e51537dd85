"""NumPy writes to a from_numpy leaf that requires grad, read through a view of it (a slice, t(), a reshape): the
forward's values are those of the memory when each op ran, the backward reads the view's memory as NumPy left it, as
PyTorch's saved views do, op by op (steps 0 and 1) and in a captured, deferred step (from step 2) alike."""
import numpy as np
import pytest

import symgrad as sg
from symgrad.eager import tape
from symgrad.eager.tensor import DeferredTensor

try:
    import torch
except ImportError:  # the PyTorch comparisons are skipped
    torch = None

VIEWS = {"slice": lambda x: x[:, 1:], "t": lambda x: (x.T if isinstance(x, np.ndarray) else x.t())[:, 1:],
         "reshape": lambda x: x.reshape(6, 2)}


def _product_steps(lib, view, steps=4):
    """Per step: (the input, the input as NumPy wrote it after the forward, w, x.grad, w.grad, deferred) of
    loss = (h * h).sum(), h = view(x) @ w[:k] for a new from_numpy leaf x each step, the loss not read first."""
    rng = np.random.default_rng(5)
    w = lib.from_numpy(rng.standard_normal((3, 2))).requires_grad_()
    seen = []
    for _ in range(steps):
        arr = rng.standard_normal((4, 3))
        before = arr.copy()
        x = lib.from_numpy(arr).requires_grad_()
        v = VIEWS[view](x)
        loss = ((v @ w[:v.shape[-1]]) ** 2).sum()
        arr += 0.25
        loss.backward()
        seen.append((before, arr.copy(), w.detach().numpy().copy(), x.grad.numpy().copy(), w.grad.numpy().copy(),
                     isinstance(loss, DeferredTensor)))
        w.grad = None
    return seen


@pytest.mark.parametrize("view", sorted(VIEWS))
def test_a_view_of_a_written_leaf_gives_the_forwards_values_and_the_written_memory(view):
    """review36: from step 2 (deferred) the gradients were those of the written input (the view computed again from
    the leaf's memory at backward, the product after it too). Expected, PyTorch-free: h from the input as it was,
    w's gradient from the view as written, x's gradient through h alone."""
    tape.start_over()
    ours = _product_steps(sg, view)
    for step, (before, after, w, x_grad, w_grad, _) in enumerate(ours):
        read, written = VIEWS[view](before), VIEWS[view](after)
        k = read.shape[-1]
        h = read @ w[:k]
        want_w = np.zeros_like(w)
        want_w[:k] = written.T @ (2 * h)
        want_x = np.zeros_like(before)
        VIEWS[view](want_x)[...] = 2 * h @ w[:k].T  # (every view here is of the memory, as NumPy's)
        np.testing.assert_allclose(w_grad, want_w, rtol=1e-12, err_msg=f"step {step}")
        np.testing.assert_allclose(x_grad, want_x, rtol=1e-12, err_msg=f"step {step}")
    assert sum(deferred for *_, deferred in ours) >= 2, "later steps are deferred"
    if torch is not None:
        for step, (a, b) in enumerate(zip(ours, _product_steps(torch, view))):
            for got, want in zip(a[3:5], b[3:5]):
                np.testing.assert_allclose(got, want, rtol=1e-12, err_msg=f"step {step}")


def _written_around(lib, view, when, steps=4):
    """Per step (the loss, x.grad, w.grad) of a program on a view of a from_numpy leaf that NumPy writes before its
    use (`when`: after the view is made, after it is read, or not), and again after the forward."""
    rng = np.random.default_rng(6)
    w = lib.from_numpy(rng.standard_normal(3)).requires_grad_()
    seen = []
    for _ in range(steps):
        arr = rng.standard_normal((4, 3))
        x = lib.from_numpy(arr).requires_grad_()
        v = VIEWS[view](x)
        if when == "read first":
            v.sum().item()
        if when != "not":
            arr += 0.25
        h = (v * w[:v.shape[-1]]).sin()
        loss = (h * v).sum()
        arr *= 2.0
        loss.backward()
        seen.append((loss.item(), x.grad.numpy().copy(), w.grad.numpy().copy()))
        w.grad = None
    return seen


@pytest.mark.parametrize("when", ["not", "made", "read first"])
@pytest.mark.parametrize("view", sorted(VIEWS))
def test_a_view_written_before_its_use_is_read_as_written(view, when):
    """NumPy's write between a view and the op on it (deferred or read first): the op reads the view as written,
    as PyTorch's (the deferred op read the leaf's copy of the forward's first use)."""
    if torch is None:
        pytest.skip("PyTorch is the reference here")
    tape.start_over()
    for step, (a, b) in enumerate(zip(_written_around(sg, view, when), _written_around(torch, view, when))):
        for got, want in zip(a, b):
            np.testing.assert_allclose(got, want, rtol=1e-12, err_msg=f"step {step}")
