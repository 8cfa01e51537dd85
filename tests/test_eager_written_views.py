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


def _F(lib):
    return lib.nn.functional


# op -> (f(lib, x), what PyTorch's backward reads of it: the input as it is then, or the output the forward saved)
READS = {
    "exp": (lambda lib, x: x.exp(), "output"),
    "expm1": (lambda lib, x: x.expm1(), "output"),
    "tanh": (lambda lib, x: x.tanh(), "output"),
    "sigmoid": (lambda lib, x: x.sigmoid(), "output"),
    "relu": (lambda lib, x: x.relu(), "output"),
    "sqrt": (lambda lib, x: x.exp().sqrt(), "output"),
    "sin": (lambda lib, x: x.sin(), "input"),
    "square": (lambda lib, x: x * x, "input"),
    "softplus": (lambda lib, x: _F(lib).softplus(x, beta=2.0, threshold=1.0), "input"),
    "elu": (lambda lib, x: _F(lib).elu(x, 0.5), "input"),
    "celu": (lambda lib, x: _F(lib).celu(x, 0.5), "input"),
    "selu": (lambda lib, x: _F(lib).selu(x), "input"),
    "gelu": (lambda lib, x: _F(lib).gelu(x), "input"),
    "gelu_tanh": (lambda lib, x: _F(lib).gelu(x, approximate="tanh"), "input"),
    "silu": (lambda lib, x: _F(lib).silu(x), "input"),
    "mish": (lambda lib, x: _F(lib).mish(x), "input"),
    "hardswish": (lambda lib, x: _F(lib).hardswish(x), "input"),
    "leaky_relu": (lambda lib, x: _F(lib).leaky_relu(x, 0.1), "input"),
    "mse_loss": (lambda lib, x: _F(lib).mse_loss(x, lib.full_like(x, 0.3), reduction="none"), "input"),
    "smooth_l1_loss": (lambda lib, x: _F(lib).smooth_l1_loss(x, lib.full_like(x, 0.3), reduction="none"), "input"),
    "huber_loss": (lambda lib, x: _F(lib).huber_loss(x, lib.full_like(x, 0.3), reduction="none", delta=0.5), "input"),
    "softmax": (lambda lib, x: _F(lib).softmax(x, -1), "output"),
}


def _op_steps(lib, op, write, steps=4):
    """Per step, x's gradient of sum(op(x) * c) for a from_numpy leaf x that NumPy writes after the forward
    (`write`: "input", or "input, loss read first"), or ("output") w's for x = a from_numpy array times w, op's
    output written in place before backward (the error's text if backward refuses); with the input as it was and
    as written."""
    rng = np.random.default_rng(7)
    w = lib.from_numpy(rng.standard_normal(3) * 0.5 + 1.0).requires_grad_()
    seen = []
    for _ in range(steps):
        arr = rng.standard_normal((4, 3))
        before = arr.copy()
        x = lib.from_numpy(arr).requires_grad_() if write != "output" else lib.from_numpy(arr) * w
        y = READS[op][0](lib, x)
        loss = (y * lib.from_numpy(np.linspace(0.5, 1.5, 12).reshape(4, 3))).sum()
        if write == "input, loss read first":
            loss.item()
        if write == "output":
            y.mul_(2.0)
        else:
            arr *= -0.75
            arr += 0.25
        try:
            loss.backward()
        except RuntimeError as error:
            seen.append((str(error), before, arr.copy()))
            continue
        seen.append(((x if write != "output" else w).grad.numpy().copy(), before, arr.copy()))
        w.grad = None
    return seen


def _gradient_at(op, values):
    """op's gradient (sum(op(x) * c)) at a tensor of `values` that no NumPy array shares."""
    x = sg.tensor(values, dtype=sg.float64, requires_grad=True)
    (READS[op][0](sg, x) * sg.tensor(np.linspace(0.5, 1.5, 12).reshape(4, 3))).sum().backward()
    return x.grad.numpy()


@pytest.mark.parametrize("write", ["input", "input, loss read first", "output"])
@pytest.mark.parametrize("op", sorted(READS))
def test_what_a_backward_reads_after_numpy_or_an_in_place_op_writes(op, write):
    """A NumPy write to the input between forward and backward: the gradient at the written input where PyTorch's
    backward reads the input, at the forward's where it reads the output; an in-place write to the output: PyTorch's
    error where its backward reads the output. Op by op (steps 0 and 1) and in a captured step (2 and 3); and as
    PyTorch's. (elu, gelu, silu, softplus, mish, the losses: one op in PyTorch, several here, whose backward read
    the forward's intermediate values; expm1's read the input.)"""
    tape.start_over()
    ours = _op_steps(sg, op, write)
    reads = READS[op][1]
    for step, (got, before, after) in enumerate(ours):
        if write == "output":
            assert isinstance(got, str) == (reads == "output"), (step, got)
            if isinstance(got, str):
                assert "modified by an inplace operation" in got
        elif reads is not None:
            want = _gradient_at(op, after if reads == "input" else before)
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15, err_msg=f"step {step}")
    if torch is not None:
        for step, (a, b) in enumerate(zip(ours, _op_steps(torch, op, write))):
            assert isinstance(a[0], str) == isinstance(b[0], str), (step, a[0], b[0])
            if not isinstance(a[0], str):
                np.testing.assert_allclose(a[0], b[0], rtol=1e-12, atol=1e-15, err_msg=f"step {step}")


def _target_steps(lib, loss, steps=4):
    """Per step, (w's gradient of loss(w * 1.5, target) for a from_numpy target NumPy writes after the forward, the
    target as written)."""
    rng = np.random.default_rng(8)
    w = lib.from_numpy(rng.standard_normal((4, 3))).requires_grad_()
    seen = []
    for _ in range(steps):
        target_np = rng.standard_normal((4, 3))
        value = getattr(_F(lib), loss)(w * 1.5, lib.from_numpy(target_np), reduction="sum")
        target_np[:2] = -target_np[:2] + 0.5
        value.backward()
        seen.append((w.grad.numpy().copy(), target_np.copy(), w.detach().numpy().copy()))
        w.grad = None
    return seen


@pytest.mark.parametrize("loss", ["mse_loss", "smooth_l1_loss", "huber_loss"])
def test_a_loss_reads_its_target_as_numpy_wrote_it(loss):
    """PyTorch's loss is one op that reads its target at backward: a from_numpy target written after the forward
    gives the gradient at the written target (symgrad's read the forward's difference); mse's is 3 (1.5 w - t)."""
    tape.start_over()
    ours = _target_steps(sg, loss)
    for step, (got, target, w) in enumerate(ours):
        if loss == "mse_loss":
            np.testing.assert_allclose(got, 3.0 * (1.5 * w - target), rtol=1e-12, err_msg=f"step {step}")
    if torch is not None:
        for step, (a, b) in enumerate(zip(ours, _target_steps(torch, loss))):
            np.testing.assert_allclose(a[0], b[0], rtol=1e-12, atol=1e-15, err_msg=f"step {step}")
