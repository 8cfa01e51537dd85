"""Deferred forward: once a step is captured, the ops of the next steps that repeat it only record
(symgrad.eager.tensor._defer), and backward runs forward and adjoint as one lowered function
(symgrad.eager.whole_backward.Capture). Every observable value must be what eager evaluation gives:
checked against NumPy, sg.grad and PyTorch (when installed), at forcing points, across structure
changes, and around the memory shared with NumPy (the rule in symgrad.eager.tape).
"""

import io

import numpy as np
import pytest

import symgrad as sg
from symgrad.eager import tape
from symgrad.eager.tensor import DeferredTensor
from test_eager_capture import _functional_grads, _mlp_data as _data


def _forward(lib, params, x, y):
    w1, b1, w2, b2 = params
    hidden = lib.tanh(x @ w1 + b1)
    logits = hidden @ w2 + b2
    return hidden, logits, lib.nn.functional.cross_entropy(logits, y)


def _numpy_forward(params, x, y):
    w1, b1, w2, b2 = params
    hidden = np.tanh(x @ w1 + b1)
    logits = hidden @ w2 + b2
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return hidden, logits, -log_probs[np.arange(len(y)), y].mean()


def _captured(tensors, x, y, steps=2):
    """Run the step `steps` times (the first op by op, the second captures it)."""
    for _ in range(steps):
        for t in tensors:
            t.grad = None
        _forward(sg, tensors, sg.tensor(x), sg.tensor(y))[2].backward()


def _check_grads(tensors, params, x, y, scale=1.0):
    for t, e in zip(tensors, _functional_grads(params, x, y)):
        np.testing.assert_allclose(t.grad.numpy(), scale * e, rtol=1e-10, atol=1e-12)


def test_deferred_values_and_gradients_equal_eager_ones_in_float64(lowerings):
    params, x, y = _data()
    tensors = [sg.tensor(p, requires_grad=True) for p in params]
    expected = _numpy_forward(params, x, y)
    _functional_grads(params, x, y)
    before = len(lowerings)  # (the reference's code, sg.grad's)
    for step in range(5):
        for t in tensors:
            t.grad = None
        hidden, logits, loss = _forward(sg, tensors, sg.tensor(x), sg.tensor(y))
        # from the third step on, the ops only record: nothing is computed before backward
        assert isinstance(loss, DeferredTensor) == (step >= 2)
        assert loss.shape == () and loss.dtype == np.float64 and logits.shape == (6, 3) and loss.requires_grad
        loss.backward()
        assert tape.current_tape().pending == []
        for value, reference in zip((hidden, logits, loss), expected):
            np.testing.assert_allclose(value.detach().numpy(), reference, rtol=1e-10, atol=1e-12)
        _check_grads(tensors, params, x, y)
    assert len(lowerings) == before + 1  # the step's forward + adjoint, lowered once


def test_deferred_training_matches_pytorch_with_a_value_read_each_step():
    torch = pytest.importorskip("torch")
    params, x, y = _data(1)
    losses = {}
    for lib in (sg, torch):
        tensors = [lib.tensor(p, requires_grad=True) for p in params]
        optimizer = lib.optim.Adam(tensors, lr=0.05)
        losses[lib.__name__] = []
        for step in range(6):
            optimizer.zero_grad()
            loss = _forward(lib, tensors, lib.tensor(x), lib.tensor(y))[2]
            loss.backward()
            optimizer.step()
            losses[lib.__name__].append(loss.item())  # read after the parameters changed: the step's value
        losses[lib.__name__] += [t.detach().numpy() for t in tensors]
    for ours, theirs in zip(losses["symgrad"], losses["torch"]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


_FORCING = {
    "item": lambda t: t.sum().item() if t.ndim else t.item(),
    "detach().numpy()": lambda t: t.detach().numpy(),
    "repr": repr,
    "print": lambda t: print(t, file=io.StringIO()),
    "float": lambda t: float(t.sum()),
    "bool": lambda t: bool(t.sum() > 0),
    "np.asarray": lambda t: np.asarray(t.detach()),
    ".data": lambda t: t.data.numpy(),
    "tolist": lambda t: t.tolist(),
    "an op not recorded": lambda t: t.argmax(),
    "format": lambda t: f"{t.sum():.3f}",
}


@pytest.mark.parametrize("force", sorted(_FORCING))
def test_forcing_points_before_backward(force):
    """A value read midway computes what is pending; the rest of the step and its backward are unchanged."""
    params, x, y = _data(2)
    tensors = [sg.tensor(p, requires_grad=True) for p in params]
    tape.start_over()
    expected_hidden = _numpy_forward(params, x, y)[0]
    for _ in range(2):
        _captured(tensors, x, y)  # the step as captured (a forcing op may have changed the structure)
        for t in tensors:
            t.grad = None
        w1, b1, w2, b2 = tensors
        hidden = sg.tanh(sg.tensor(x) @ w1 + b1)
        assert isinstance(hidden, DeferredTensor)
        _FORCING[force](hidden)
        # what was deferred is computed (the forcing op itself may be deferred: from the second iteration on, the
        # step with it is a steady capture of its own, which the tape switches to)
        assert tape.current_tape().pending == [] and hidden._node.value is not None
        np.testing.assert_allclose(hidden.detach().numpy(), expected_hidden, rtol=1e-12)
        loss = sg.nn.functional.cross_entropy(hidden @ w2 + b2, sg.tensor(y))
        loss.backward()
        _check_grads(tensors, params, x, y)


def test_a_structure_change_mid_step_while_deferred():
    """An op that the capture does not expect computes what is pending and continues op by op; the
    captured structure is deferred again when it comes back."""
    params, x, y = _data(3)
    tensors = [sg.tensor(p, requires_grad=True) for p in params]
    tape.start_over()
    _captured(tensors, x, y)
    for kind in ["same", "extra op", "same", "same", "other batch", "same"]:
        for t in tensors:
            t.grad = None
        n = 4 if kind == "other batch" else len(y)
        hidden, logits, loss = _forward(sg, tensors, sg.tensor(x[:n]), sg.tensor(y[:n]))
        scale = 1.0
        if kind == "extra op":
            assert isinstance(loss, DeferredTensor)
            loss = loss * 3.0
            scale = 3.0
            assert not isinstance(loss, DeferredTensor) and tape.current_tape().capture is None
        loss.backward()
        _check_grads(tensors, params, x[:n], y[:n], scale)
        np.testing.assert_allclose(hidden.detach().numpy(), _numpy_forward(params, x[:n], y[:n])[0], rtol=1e-12)


def test_data_dependent_if_on_a_deferred_value():
    rng = np.random.default_rng(5)
    w0 = rng.standard_normal(3)
    w = sg.tensor(w0, requires_grad=True)
    w_np = w0.copy()
    for step in range(10):
        x = rng.standard_normal(3) * (0.1 if step % 3 else 3.0)
        loss = (w * sg.tensor(x)).sum() ** 2
        if loss > 1.0:  # forces the deferred square
            loss = loss.sqrt()
            g = np.sign(x @ w_np) * x  # d|w.x|
        else:
            g = 2 * (x @ w_np) * x
        loss.backward()
        np.testing.assert_allclose(w.grad.numpy(), g, rtol=1e-10, atol=1e-14)
        with sg.no_grad():
            w -= 0.1 * w.grad
        w_np -= 0.1 * g
        w.grad = None


# ------------------------------------------------------------------ memory shared with NumPy
def _deferred(make_loss, leaf):
    """make_loss() three times, the first two run backward (they capture the step): the third loss,
    deferred, before its backward."""
    for _ in range(2):
        leaf.grad = None
        make_loss().backward()
    leaf.grad = None
    loss = make_loss()
    assert isinstance(loss, DeferredTensor)
    return loss


def _deferring_step(w, x):
    return _deferred(lambda: sg.sin(w * x).sum(), w)


def test_from_numpy_then_a_numpy_write_before_the_value_is_computed():
    """A deferred op reads an array shared with NumPy as it was at the op's line (a copy is kept); its backward, as
    PyTorch's (whose saved tensors share the memory), reads the array as NumPy left it: w.grad was cos(w x) * the
    old x, PyTorch's cos(w x) * the new one, where the same loop's first steps (not deferred) gave PyTorch's."""
    tape.start_over()
    array = np.array([0.5, 1.5])
    x = sg.from_numpy(array)
    w = sg.tensor(np.array([1.0, 2.0]), requires_grad=True)
    loss = _deferring_step(w, x)
    assert isinstance(loss, DeferredTensor)
    array[:] = [10.0, 20.0]  # after the line, before anything computed it
    loss.backward()
    np.testing.assert_allclose(loss.item(), np.sin([0.5, 3.0]).sum(), rtol=1e-12)
    np.testing.assert_allclose(w.grad.numpy(), np.cos([0.5, 3.0]) * [10.0, 20.0], rtol=1e-12)
    np.testing.assert_allclose(x.numpy(), [10.0, 20.0])  # the tensor itself does share the array


def test_a_numpy_view_of_a_leaf_written_before_the_value_is_computed():
    tape.start_over()
    x = sg.tensor(np.array([0.5, 1.5]))
    view = x.numpy()  # x's array, handed to NumPy
    w = sg.tensor(np.array([1.0, 2.0]), requires_grad=True)
    loss = _deferring_step(w, x)
    view[0] = 100.0
    loss.backward()  # the forward's values from x as it was, the backward's from x as NumPy left it (PyTorch's)
    np.testing.assert_allclose(loss.item(), np.sin([0.5, 3.0]).sum(), rtol=1e-12)
    np.testing.assert_allclose(w.grad.numpy(), np.cos([0.5, 3.0]) * [100.0, 1.5], rtol=1e-12)
    # and a parameter's .data written through NumPy: the deferred op saw the value before
    data = w.data.numpy()
    loss = _deferring_step(w, x)
    assert isinstance(loss, DeferredTensor)
    data[:] = 0.0
    np.testing.assert_allclose(loss.item(), np.sin([100.0, 3.0]).sum(), rtol=1e-12)


@pytest.mark.parametrize("let_go", [False, True])
def test_a_leaf_written_through_numpy_between_two_of_its_uses(let_go):
    """A parameter whose array NumPy holds, written between two of its uses in a deferred step: the first
    op saw the old values, the second the new ones, as in PyTorch. `let_go`: NumPy takes the array afresh each
    step and drops it after writing (the second op compares with the first's copy, not the array)."""
    torch = pytest.importorskip("torch")
    results = {}
    for lib in (sg, torch):
        w = lib.tensor(np.array([0.5, -1.0]), requires_grad=True)
        view = w.detach().numpy()
        x = lib.tensor(np.array([2.0, 3.0]))
        for step in range(5):
            if let_go:
                view = w.detach().numpy()
            w.grad = None
            first = lib.sin(w * x)
            if step >= 3:
                view += 0.125
            if let_go:
                del view
            loss = (first * w).sum()
            loss.backward()
            results.setdefault(lib.__name__, []).append((loss.item(), w.grad.numpy().copy()))
    for ours, theirs in zip(results["symgrad"], results["torch"]):
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(a, b, rtol=1e-12)


def test_an_in_place_leaf_update_between_two_deferred_ops():
    """`w -= ...` under no_grad between two ops of the step: the first op saw the old w, the second the new
    one, as in PyTorch (the in-place write computes what is pending first)."""
    torch = pytest.importorskip("torch")
    results = {}
    for lib in (sg, torch):
        w = lib.tensor(np.array([0.5, -1.0]), requires_grad=True)
        x = lib.tensor(np.array([2.0, 3.0]))
        for step in range(4):
            w.grad = None
            hidden = lib.sin(w * x)
            if step == 3:
                with lib.no_grad():
                    w -= 0.25
            loss = (hidden * w).sum()
            loss.backward()
            results.setdefault(lib.__name__, []).append((loss.item(), w.grad.numpy().copy(), hidden.detach().numpy()))
    for ours, theirs in zip(results["symgrad"], results["torch"]):
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(a, b, rtol=1e-12)


def test_version_errors_are_raised_where_pytorch_raises_them():
    """In a deferred step: an in-place op on a leaf in grad mode fails at its line; a saved value
    modified in place under no_grad fails at backward."""
    tape.start_over()
    w = sg.tensor(np.array([0.2, 0.4]), requires_grad=True)
    x = sg.tensor(np.array([1.0, 2.0]))
    loss = _deferring_step(w, x)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        w.add_(1.0)
    loss.backward()  # nothing was modified
    np.testing.assert_allclose(w.grad.numpy(), np.cos([0.2, 0.8]) * [1.0, 2.0], rtol=1e-12)
    made = []
    loss = _deferred(lambda: made.append(sg.exp(w * x)) or made[-1].sum(), w)  # exp's adjoint reads its output
    hidden = made[-1]
    assert isinstance(hidden, DeferredTensor)
    with sg.no_grad():
        hidden.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_dot_data_assignment_between_uses_of_a_leaf():
    """`w.data = ...` between two uses of w in one step: each op used the array it was given."""
    tape.start_over()
    w = sg.tensor(np.array([1.0, 2.0]), requires_grad=True)
    for step in range(4):
        w.grad = None
        first = w * 3.0
        w.data = w.data * 0 + np.array([1.0, 2.0]) * (step + 1)
        loss = (first * w).sum()
        loss.backward()
        old = np.array([1.0, 2.0]) * (step if step else 1)
        new = np.array([1.0, 2.0]) * (step + 1)
        np.testing.assert_allclose(loss.item(), (3 * old * new).sum(), rtol=1e-12)
        np.testing.assert_allclose(w.grad.numpy(), 3 * new + 3 * old, rtol=1e-12)


def test_dot_data_assignment_on_a_result_read_later_in_the_step():
    """`h2.data = ...` on an op's result: the ops after it read the new array and the gradient flows through h2's
    record, as PyTorch's. A captured step recomputed h2 from its record instead (from the second step on, other
    gradients, from the third another loss)."""
    tape.start_over()
    start, x = np.array([[1.0, -2.0], [0.5, 3.0]]), np.array([[0.3, 1.0], [-1.0, 2.0]])
    w = sg.tensor(start, requires_grad=True)
    h = x @ start
    expected_loss, expected_grad = ((3 * h) ** 2).sum(), x.T @ (2 * 3 * h * 2)  # d/dh (2h + h)^2 through h2 and h
    for _ in range(4):
        w.grad = None
        hidden = sg.tensor(x) @ w
        doubled = hidden * 1.0
        doubled.data = doubled.data * 2
        loss = ((doubled + hidden) ** 2).sum()
        loss.backward()
        np.testing.assert_allclose(loss.item(), expected_loss, rtol=1e-12)
        np.testing.assert_allclose(w.grad.numpy(), expected_grad, rtol=1e-12)


@pytest.mark.parametrize("write", ["mul_", "setitem", "copy_", "numpy"])
def test_writes_through_dot_data_of_a_result_read_later_in_the_step(write):
    """Writes through `h2.data` of an op's result, or by NumPy to h2.detach().numpy() (unseen by h2's counter): the
    ops after it read the written array, as PyTorch's. The captured step computed the forward again from the leaves
    (other gradients from the second step on)."""
    tape.start_over()
    start, x = np.array([[1.0, -2.0], [0.5, 3.0]]), np.array([[0.3, 1.0], [-1.0, 2.0]])
    w = sg.tensor(start, requires_grad=True)
    h = x @ start
    written = {"mul_": 2 * h, "numpy": 2 * h, "setitem": np.vstack([[5.0, 5.0], h[1:]]),
               "copy_": np.ones((2, 2))}[write]
    expected_loss, expected_grad = ((written + h) ** 2).sum(), x.T @ (2 * (written + h) * 2)
    for _ in range(4):
        w.grad = None
        hidden = sg.tensor(x) @ w
        copied = hidden * 1.0
        if write == "mul_":
            copied.data.mul_(2.0)
        elif write == "numpy":
            copied.detach().numpy()[...] *= 2.0
        elif write == "setitem":
            copied.data[0] = 5.0
        else:
            copied.data.copy_(sg.ones(2, 2))
        loss = ((copied + hidden) ** 2).sum()
        loss.backward()
        np.testing.assert_allclose(loss.item(), expected_loss, rtol=1e-12)
        np.testing.assert_allclose(w.grad.numpy(), expected_grad, rtol=1e-12)


# ------------------------------------------------------------------ hooks, retain_grad, errors
def test_hooks_and_retain_grad_on_deferred_values():
    params, x, y = _data(6)
    tensors = [sg.tensor(p, requires_grad=True) for p in params]
    reference = [sg.tensor(p, requires_grad=True) for p in params]
    hidden_ref, logits_ref, loss_ref = _forward(sg, reference, sg.tensor(x), sg.tensor(y))
    logits_ref.retain_grad()
    loss_ref.backward()
    seen = []
    for step in range(3):
        _captured(tensors, x, y)
        for t in tensors:
            t.grad = None
        hidden, logits, loss = _forward(sg, tensors, sg.tensor(x), sg.tensor(y))
        assert isinstance(loss, DeferredTensor)
        logits.retain_grad()
        hidden.register_hook(lambda g: seen.append(g.numpy().copy()))
        loss.backward()
        np.testing.assert_allclose(logits.grad.numpy(), logits_ref.grad.numpy(), rtol=1e-12)
        _check_grads(tensors, params, x, y)
    assert len(seen) == 3
    np.testing.assert_allclose(seen[0], logits_ref.grad.numpy() @ params[2].T, rtol=1e-12)


def test_a_shape_error_is_raised_at_its_line_in_a_deferred_step():
    params, x, y = _data(7)
    tensors = [sg.tensor(p, requires_grad=True) for p in params]
    tape.start_over()
    _captured(tensors, x, y)
    w1, b1, w2, b2 = tensors
    hidden = sg.tanh(sg.tensor(x) @ w1 + b1)
    assert isinstance(hidden, DeferredTensor)
    with pytest.raises(ValueError):
        hidden @ w1  # (6, 7) @ (5, 7)
    # the step goes on, op by op, and is right
    for t in tensors:
        t.grad = None
    loss = sg.nn.functional.cross_entropy(hidden @ w2 + b2, sg.tensor(y))
    loss.backward()
    _check_grads(tensors, params, x, y)


@pytest.mark.parametrize("pick", [lambda t, i: t[i], lambda t, i: sg.take(t, i)], ids=["getitem", "take"])
def test_an_index_out_of_range_is_raised_at_its_line_in_a_deferred_step(pick):
    w = sg.tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    tape.start_over()
    for step, index in enumerate([np.array([0, 2, 1])] * 3 + [np.array([0, 3, 1])]):
        w.grad = None
        scaled = sg.sin(w * 2.0)
        if step == 3:
            assert isinstance(scaled, DeferredTensor)
            with pytest.raises(IndexError, match="out of bounds"):
                pick(scaled, index)
            break
        pick(scaled, index).sum().backward()
        np.testing.assert_allclose(w.grad.numpy(), 2 * np.cos([2.0, 4.0, 6.0]), rtol=1e-12)


def test_retain_graph_on_a_deferred_step_then_a_second_backward():
    w = sg.tensor(np.array([0.1, 0.2]), requires_grad=True)
    x = sg.tensor(np.array([1.0, -1.0]))
    tape.start_over()
    loss = _deferring_step(w, x)
    assert isinstance(loss, DeferredTensor)
    loss.backward(retain_graph=True)
    loss.backward()
    np.testing.assert_allclose(w.grad.numpy(), 2 * np.cos([0.1, -0.2]) * [1.0, -1.0], rtol=1e-12)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()


def test_autograd_grad_and_create_graph_on_a_deferred_step():
    w = sg.tensor(np.array([0.3, 0.6]), requires_grad=True)
    x = sg.tensor(np.array([2.0, 1.0]))
    tape.start_over()
    loss = _deferring_step(w, x)
    (g,) = sg.autograd.grad(loss, [w], create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), np.cos([0.6, 0.6]) * [2.0, 1.0], rtol=1e-12)
    g.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), -np.sin([0.6, 0.6]) * [4.0, 1.0], rtol=1e-12)


def test_a_deferred_value_kept_past_later_steps_keeps_its_value():
    """A tensor of a deferred step read only after later steps (and their in-place updates)."""
    w = sg.tensor(np.array([1.0, 2.0]), requires_grad=True)
    x = sg.tensor(np.array([0.5, 0.25]))
    kept = []
    values = []
    for step in range(6):
        w.grad = None
        hidden = sg.sin(w * x)
        kept.append(hidden)
        values.append(np.sin(w.detach().numpy().copy() * [0.5, 0.25]))
        hidden.sum().backward()
        with sg.no_grad():
            w -= 0.5 * w.grad
    for tensor, value in zip(kept, values):
        np.testing.assert_allclose(tensor.detach().numpy(), value, rtol=1e-12)


def test_an_op_outside_the_capture_computes_the_deferred_prefix_first():
    """A deferred loss, then an op the capture does not expect and its backward, then an in-place update:
    the deferred loss keeps the value of its line and its own backward still runs (op by op)."""
    w = sg.tensor(np.array([1.0, 2.0]), requires_grad=True)
    x = sg.tensor(np.array([3.0, 4.0]))
    tape.start_over()
    loss = _deferring_step(w, x)
    other = (w * 2.0).sum()
    assert tape.current_tape().capture is None and tape.current_tape().pending == []
    other.backward()
    with sg.no_grad():
        w.mul_(0.0)
    np.testing.assert_allclose(loss.item(), np.sin([3.0, 8.0]).sum(), rtol=1e-12)
    loss.backward()  # sin reads w * x and the product reads x: neither was modified
    np.testing.assert_allclose(w.grad.numpy(), 2.0 + np.cos([3.0, 8.0]) * [3.0, 4.0], rtol=1e-12)


# ------------------------------------------------------------------ updates nothing records (one NumPy call)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unrecorded_updates_equal_numpy_bit_for_bit(dtype):
    """`w -= lr * w.grad`, `w *= 0.5`, `w += g`, `w /= 3.0` under no_grad, with edge values: NumPy's
    numbers in the tensor's dtype, and one version step each."""
    values = np.array([0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, 1e-30], dtype)
    grads = np.array([1.0, -1.0, 0.1, 3.0, 1.0, np.inf, 2.0, 1e30], dtype)
    w = sg.tensor(values.copy(), requires_grad=True)
    w.grad = sg.tensor(grads)
    expected = values.copy()
    with sg.no_grad():
        for update in range(4):
            before = w._version.value
            if update == 0:
                w -= 0.1 * w.grad
                expected -= dtype(0.1) * grads
            elif update == 1:
                w *= 0.5
                expected *= dtype(0.5)
            elif update == 2:
                w += w.grad
                expected += grads
            else:
                w /= 3.0
                expected /= dtype(3.0)
            assert w._version.value == before + 1 and w.dtype == dtype
    np.testing.assert_array_equal(w.detach().numpy(), expected)
    s = sg.tensor(np.array(2.0, dtype))
    s *= 0.25  # 0-d
    assert s.shape == () and s.item() == 0.5


def test_updates_outside_the_one_call_path_keep_their_errors_and_promotion():
    ints = sg.tensor(np.array([1, 2]))
    with pytest.raises(RuntimeError, match="can't be cast"):
        ints -= 0.5
    w = sg.tensor(np.ones(3), requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        w *= 2.0
    with sg.no_grad(), pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        w += sg.tensor(np.ones((2, 3)))
    f32 = sg.tensor(np.ones(2, np.float32))
    f32 += sg.tensor(np.array(0.1))  # a float64 operand: computed in float64, then stored as float32
    np.testing.assert_array_equal(f32.numpy(), np.float32(1.0 + 0.1))
    assert (0.5 * f32).dtype == np.float32 and (sg.tensor(np.ones(2, np.float32)) / 4.0).dtype == np.float32


@pytest.mark.parametrize("share", ["numpy", "asarray", "data"])
def test_a_leaf_handed_to_numpy_midway_and_written_there_keeps_what_its_ops_read(share):
    """A deferred op reads a leaf's array as it is (no copy: nothing else could write it); when the array is then
    handed to NumPy (numpy(), np.asarray, .data) and written there, the op's value and gradient are those of its
    line, as PyTorch's: the deferred ops run first and their backward reads what they saved."""
    expected = [(9.0, [6.0, 12.0])] * 4 + [(225.0, [30.0, 60.0])] * 2  # PyTorch's (the write lands at step 3)
    x = sg.tensor(np.array([[1.0, 2.0]]))
    w = sg.tensor(np.array([[1.0], [1.0]]), requires_grad=True)
    for step, (value, grad) in enumerate(expected):
        p = x @ w
        loss = (p * p).sum()
        if step == 3:
            assert isinstance(loss, DeferredTensor) and not w._version.exposed
            shared = {"numpy": lambda: w.detach().numpy(), "asarray": lambda: np.asarray(w.detach()),
                      "data": lambda: w.data.numpy()}[share]()
            shared[...] = 5.0
        assert loss.item() == value
        loss.backward()
        np.testing.assert_array_equal(w.grad.numpy().ravel(), grad)
        w.grad = None


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_operators_with_a_python_float_equal_numpy_and_record_only_in_grad_mode(dtype):
    """t + c, c - t, t * c, c / t, ... with a Python float: NumPy's numbers in t's dtype where nothing records them
    (no_grad, or t not requiring grad), edge values and a 0-d tensor included; recorded otherwise."""
    values = np.array([0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, 1e-30], dtype)
    operators = [lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b, lambda a, b: a / b]
    w = sg.tensor(values, requires_grad=True)
    with np.errstate(all="ignore"):
        for op in operators:
            for c in (0.1, -0.0, float("inf")):
                with sg.no_grad():
                    pairs = [(op(w, c), op(values, dtype(c))), (op(c, w), op(dtype(c), values))]
                pairs += [(op(sg.tensor(values), c), op(values, dtype(c)))]
                for got, expected in pairs:
                    assert not got.requires_grad and got.dtype == dtype
                    np.testing.assert_array_equal(got.numpy(), expected)
        s = sg.tensor(np.array(3.0, dtype))
        assert (2.0 / s).shape == () and (2.0 / s).item() == dtype(2.0) / dtype(3.0)
    recorded = 2.0 / w[2:4] - 0.5
    assert recorded.grad_fn.name() == "SubBackward0"
    recorded.sum().backward()
    np.testing.assert_allclose(w.grad.numpy()[2:4], -2.0 / values[2:4] ** 2, rtol=1e-6)
    assert (sg.tensor(np.array([1, 2])) * 0.5).dtype == np.float64  # an integer tensor: the ordinary promotion


def test_threads_defer_their_own_steps():
    """Each thread has its tape: two training loops at once, each deferred, each right."""
    import threading
    results, errors = {}, []

    def train(seed):
        try:
            params, x, y = _data(seed)
            tensors = [sg.tensor(p, requires_grad=True) for p in params]
            deferred = 0
            for _ in range(6):
                for t in tensors:
                    t.grad = None
                loss = _forward(sg, tensors, sg.tensor(x), sg.tensor(y))[2]
                deferred += isinstance(loss, DeferredTensor)
                loss.backward()
            results[seed] = (deferred, [t.grad.numpy() for t in tensors], _functional_grads(params, x, y))
        except Exception as error:  # noqa: BLE001  (reported by the main thread)
            errors.append(error)

    threads = [threading.Thread(target=train, args=(seed,)) for seed in (20, 21)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    for deferred, grads, expected in results.values():
        assert deferred >= 3
        for g, e in zip(grads, expected):
            np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)


def test_a_comparison_midway_computes_the_prefix_and_the_step_stays_deferred():
    """An op nothing records (a comparison, on the values) is not part of the step: it computes what is
    pending, and the ops after it are deferred again."""
    params, x, y = _data(8)
    tensors = [sg.tensor(p, requires_grad=True) for p in params]
    tape.start_over()
    _captured(tensors, x, y)
    for t in tensors:
        t.grad = None
    w1, b1, w2, b2 = tensors
    hidden = sg.tanh(sg.tensor(x) @ w1 + b1)
    positive = hidden > 0
    np.testing.assert_array_equal(positive.numpy(), _numpy_forward(params, x, y)[0] > 0)
    loss = sg.nn.functional.cross_entropy(hidden @ w2 + b2, sg.tensor(y))
    assert isinstance(loss, DeferredTensor) and tape.current_tape().capture is not None
    loss.backward()
    _check_grads(tensors, params, x, y)


def test_ops_that_do_not_lead_to_the_loss_are_deferred_with_the_step(lowerings):
    """A step with ops that do not lead to the loss (an RNN's final state, a metric computed with grad on)
    defers whole from its third time: their values are the eager ones, the loss's gradients unchanged, and
    their graph is freed where it joins the loss's, as the general path frees it. A step computed midway runs
    the same function (the array only those ops read given zeros: their values are already computed)."""
    params, x, y = _data()
    tensors = [sg.tensor(p, requires_grad=True) for p in params]
    expected = _numpy_forward(params, x, y)
    offsets = np.random.default_rng(3).normal(size=expected[0].shape)  # an array only the metric reads
    _functional_grads(params, x, y)
    before = len(lowerings)  # (the reference's code, sg.grad's)
    for step in range(5):
        for t in tensors:
            t.grad = None
        w1, b1, w2, b2 = tensors
        hidden = sg.tanh(sg.tensor(x) @ w1 + b1)
        metric = (hidden * hidden).mean() + (hidden * sg.tensor(offsets)).sum()  # leads nowhere near the loss
        logits = hidden @ w2 + b2
        side = sg.exp(logits).sum()  # as well
        loss = sg.nn.functional.cross_entropy(logits, sg.tensor(y))
        assert isinstance(loss, DeferredTensor) == (step >= 2)
        assert bool(tape.current_tape().pending) == (step >= 2)
        if step == 3:  # a value read before backward: the step is computed op by op, then its backward native
            np.testing.assert_allclose(side.item(), np.exp(expected[1]).sum(), rtol=1e-12)
        loss.backward()
        assert tape.current_tape().pending == []
        np.testing.assert_allclose(loss.item(), expected[2], rtol=1e-12)
        np.testing.assert_allclose(metric.item(), np.mean(expected[0] ** 2) + np.sum(expected[0] * offsets), rtol=1e-12)
        np.testing.assert_allclose(side.item(), np.exp(expected[1]).sum(), rtol=1e-12)
        _check_grads(tensors, params, x, y)
        if step == 0:
            with pytest.raises(RuntimeError, match="backward through the graph a second time"):
                metric.backward()
    assert len(lowerings) == before + 1  # the whole step
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        metric.backward()  # the last step's, deferred: the same error as op by op


def test_an_lstm_step_defers_and_matches_the_op_by_op_step():
    """An LSTM step as a loop of tensor ops (nn.LSTM's in a double backward) computes the final state (h, c)
    beside the output the loss reads. (nn.LSTM itself records its sequence as one op: tests/test_rnn_fused.py.)"""
    from symgrad.nn.recurrence import looped
    sg.manual_seed(0)
    lstm = sg.nn.LSTM(3, 4)
    x = sg.tensor(np.random.default_rng(1).normal(size=(5, 2, 3)))
    zeros = sg.zeros(2, 4)
    seen = []
    tape.start_over()
    for step in range(5):
        lstm.zero_grad()
        output, (h, c) = looped("LSTM", x, (zeros, zeros), lstm._weights(0, 0))
        loss = output.square().sum()
        assert isinstance(loss, DeferredTensor) == (step >= 2)
        loss.backward()
        seen.append([p.grad.numpy().copy() for p in lstm.parameters()] + [t.detach().numpy() for t in (output, h, c)])
        np.testing.assert_array_equal(seen[-1][-2], seen[-1][-3][-1])  # h is the last output
    for later in seen[1:]:  # the first step ran op by op
        for value, first in zip(later, seen[0]):
            np.testing.assert_allclose(value, first, rtol=1e-10, atol=1e-13)


def test_a_deferred_conv_step_returns_only_the_values_tensors_hold(lowerings):
    """A plan's intermediate results (im2col's patches, the product before its transpose) are not outputs of
    the lowered step: only the gradients and the values of the step's tensors are (copying the patches out
    had made an eager conv step twice as slow). One lowering still serves every step."""
    from symgrad.eager import whole_backward
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 6, 6))
    w = sg.tensor(rng.standard_normal((4, 3, 3, 3)), requires_grad=True)
    expected = None
    for step in range(4):
        w.grad = None
        out = sg.nn.functional.conv2d(sg.tensor(x), w, padding=1).relu()
        loss = (out * out).sum()
        loss.backward()
        expected = out.detach().numpy() if expected is None else expected
        np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-12)
        if step == 0:
            first_grad = w.grad.numpy().copy()
        np.testing.assert_allclose(w.grad.numpy(), first_grad, rtol=1e-12)
    capture = next(c for c in whole_backward._cache.values() if c is not None)
    assert len(capture.value_slots) == 4 and len(capture.entries) == 7  # conv, relu, out * out, sum: not the product
    assert len(lowerings) == 1


def test_a_parameter_numpy_let_go_of_is_read_without_a_copy():
    """numpy() of a parameter taken once (a check, a print) and dropped: the later deferred steps read its array
    as it is (no copy each step); while an array NumPy made of it lives, even a view of a view, they copy it."""
    w = sg.tensor(np.array([0.5, -1.0]), requires_grad=True)
    x = sg.tensor(np.array([2.0, 3.0]))
    for _ in range(3):
        w.grad = None
        _deferring_step(w, x).backward()
    kept = w.detach().numpy()[::-1][1:]
    assert w._version.exposed == 1
    w.grad = None
    loss = _deferring_step(w, x)
    assert isinstance(loss, DeferredTensor) and tape.current_tape().snapshots  # a copy of w's array
    kept[0] = 100.0  # NumPy writes w: the deferred op saw the value before
    loss.backward()
    np.testing.assert_allclose(loss.item(), np.sin([1.0, -3.0]).sum(), rtol=1e-15)
    np.testing.assert_allclose(w.grad.numpy(), np.cos([1.0, -3.0]) * [2.0, 3.0], rtol=1e-15)
    del kept
    assert w._version.exposed == 0
    w.grad = None
    loss = _deferring_step(w, x)
    assert isinstance(loss, DeferredTensor) and not tape.current_tape().snapshots
    loss.backward()
    np.testing.assert_allclose(w.grad.numpy(), np.cos([200.0, -3.0]) * [2.0, 3.0], rtol=1e-15)


def test_a_step_computed_while_numpy_held_a_parameter_then_let_go():
    """A step computed op by op while NumPy held the parameter (the second, whose backward captures it), written
    through NumPy and dropped before backward: the gradient is the general path's, from what the records saved,
    as PyTorch's, not the captured function's, which would compute the forward again from the written array."""
    torch = pytest.importorskip("torch")
    results = {}
    for lib in (sg, torch):
        w = lib.tensor(np.array([0.5, -1.0]), requires_grad=True)
        x = lib.tensor(np.array([2.0, 3.0]))
        for step in range(4):
            view = w.detach().numpy()
            w.grad = None
            loss = lib.tanh(w * x).sum()
            value = loss.item()
            if step == 1:
                view += 0.5
            del view
            loss.backward()
            results.setdefault(lib.__name__, []).append((value, w.grad.numpy().copy()))
    for ours, theirs in zip(results["symgrad"], results["torch"]):
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(a, b, rtol=1e-12)


def test_numpy_of_a_tensor_keeps_its_dtype_shape_strides_and_memory():
    """numpy() hands the array out through a memoryview: the same memory, dtype, shape and strides (a
    transposed, a reversed, a 0-d, an empty, a read-only, a float16 and a bool tensor)."""
    base = np.arange(12.0).reshape(3, 4)
    arrays = [base.T, base[::-1, ::2], np.array(3.0), np.zeros((0, 2), np.float32), np.arange(4, dtype=np.float16),
              np.array([True, False])]
    readonly = np.arange(3.0)
    readonly.flags.writeable = False
    for array in arrays + [readonly]:
        t = sg.Tensor._wrap(array)
        out = t.numpy()
        assert out.dtype == array.dtype and out.shape == array.shape and out.strides == array.strides
        assert out.flags.writeable == array.flags.writeable and (array.size == 0 or np.shares_memory(out, array))
        np.testing.assert_array_equal(out, array)


@pytest.mark.parametrize("which", ["w", "v"])
def test_dot_data_assignment_on_a_leaf_between_forward_and_backward(which):
    """`.data =` on a leaf after the forward: the backward reads the leaf's new array where it saved the leaf, as
    PyTorch's saved tensors do (they are the leaf's, whose data `.data =` sets); the general path read the old one,
    from the first step on (create_graph's, which takes the leaves themselves, read the new one)."""
    torch = pytest.importorskip("torch")

    def train(lib):
        w = lib.tensor(np.array([0.5, -1.0, 2.0]), requires_grad=True)
        v = lib.tensor(np.array([0.3, 0.7, -0.2]), requires_grad=True)
        x = lib.tensor(np.array([1.0, 2.0, -0.5]))
        seen = []
        for step in range(5):
            loss = (lib.tanh(w * x) * v * w).sum()
            if step % 2 == 0:
                leaf = w if which == "w" else v
                leaf.data = leaf.data * 0.5 + 0.1
            loss.backward()
            seen.append((loss.item(), w.grad.numpy().copy(), v.grad.numpy().copy()))
            w.grad = v.grad = None
        return seen
    for ours, theirs in zip(train(sg), train(torch)):
        np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12)
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12)
        np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-12)


@pytest.mark.parametrize("loss_of", [lambda h, w: (h * h).sum(), lambda h, w: (h * h * w).sum(),
                                     lambda h, w: h.sum(), lambda h, w: (h.exp() * w).sum()])
def test_dot_data_assignment_on_an_op_result_is_read_by_later_ops_and_their_backward(loss_of):
    """`.data =` on an op's result (not a leaf), then more ops: their backward reads the new array, and the gradient
    still flows into the result's grad_fn (unchanged), whose saved output is the old array, as PyTorch's; the later
    ops' backward read the old array, from the first step on (w.grad = 2*h_old*(1-h_old^2) for (h*h).sum())."""
    torch = pytest.importorskip("torch")

    def train(lib):
        w = lib.tensor(np.array([0.5, -1.0, 2.0]), requires_grad=True)
        x = lib.tensor(np.array([1.0, 2.0, -0.5]))
        seen = []
        for step in range(5):
            h = lib.tanh(w * x)
            if step != 2:  # a step without, between steps with: the captured step must not apply to those
                h.data = lib.tensor(np.array([1.0, -1.0, 2.0]) * (step + 1))
                assert h.grad_fn.name() == "TanhBackward0"
            loss = loss_of(h, w)
            loss.backward()
            seen.append((loss.item(), w.grad.numpy().copy()))
            w.grad = None
        return seen
    for ours, theirs in zip(train(sg), train(torch)):
        np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12)
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12)


def test_dot_data_of_another_shape_on_an_op_result_as_pytorch():
    """`.data =` of another shape on an op's result is accepted, and so are the ops after it, as PyTorch's; their
    backward into the result's grad_fn (which made the old shape) is a clear RuntimeError naming both shapes, at
    each step (it was an internal ShapeError, then a TypeError from the compiled backward's signature). A leaf may
    take any shape (its gradient has the new one); an integer array on a tensor that requires grad is PyTorch's
    RuntimeError."""
    torch = pytest.importorskip("torch")
    for lib in (sg, torch):
        for step in range(3):
            x = lib.tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
            y = lib.exp(x)
            y.data = lib.zeros(2, 2, dtype=lib.float64)
            z = y * 3.0
            assert tuple(z.shape) == (2, 2) and y.grad_fn.name() == "ExpBackward0"
            with pytest.raises(RuntimeError, match=r"\[2, 2\]" if lib is torch else r"\[2, 2\].*made \[3\]"):
                z.sum().backward()
        leaf = lib.tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
        leaf.data = lib.ones(2, 2, dtype=lib.float64)
        (leaf * 2.0).sum().backward()
        np.testing.assert_array_equal(leaf.grad.numpy(), np.full((2, 2), 2.0))
        with pytest.raises(RuntimeError, match="must be floating point"):
            leaf.data = lib.tensor(np.array([1, 2]))


@pytest.mark.parametrize("saved_by", ["own record", "earlier op"])
def test_an_in_place_write_after_dot_data_on_an_op_result_is_pytorchs_error(saved_by):
    """`.data =` keeps the tensor's version counter, as PyTorch's: an in-place write after it modifies what the
    result's record (tanh saves its output) or an op before saved, PyTorch's error at backward (a counter of its own
    had left those records' versions unchanged, and the backward gave a gradient)."""
    torch = pytest.importorskip("torch")
    for lib in (sg, torch):
        w = lib.tensor(np.array([1.0, 2.0]), requires_grad=True)
        h = lib.tanh(w)
        loss = (h * h).sum() if saved_by == "earlier op" else None
        h.data = lib.tensor(np.array([0.5, 0.7]))
        h.mul_(2.0)
        loss = (h * w).sum() if loss is None else loss
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            loss.backward()
