"""In-place ops on eager views write through to their base, as in PyTorch: without autograd the base's memory
changes (and every other view of it), and with autograd the base's history becomes the write (PyTorch's
CopySlices), so gradients are those of the values written. Checked against explicit values (so CI without
torch checks too), finite differences, and PyTorch when installed; also the errors PyTorch raises (an expanded
view, a view of a leaf that requires grad), version counters, deferred training steps, and softmax's edge rows.
"""

import numpy as np
import pytest

import symgrad as sg
from symgrad.eager.tensor import DeferredTensor

try:
    import torch
except ImportError:  # the PyTorch comparisons are skipped
    torch = None
try:
    import scipy.special as scipy_special
except ImportError:  # the SciPy comparisons are skipped
    scipy_special = None

BASE = np.arange(12.0).reshape(3, 4)
WEIGHTS = np.arange(1.0, 13.0).reshape(3, 4)  # the loss is sum(WEIGHTS * x), after the write


def _ones(lib, shape):
    return lib.ones(shape, dtype=lib.float64)


# (name, the write, the base's values after it, d(sum(WEIGHTS * x)) / d(x before)): every view kind x in-place kind
def _grad_where(kept, scale=1.0):
    """The gradient when the elements selected by `kept`'s False are overwritten by constants, the others scaled."""
    return np.where(kept, WEIGHTS * scale, 0.0)


_ROW0 = np.arange(12).reshape(3, 4) // 4 == 0
_COL0 = np.arange(12).reshape(3, 4) % 4 == 0
_DIAG = np.eye(3, 4, dtype=bool)

CASES = [
    ("getitem mul_", lambda lib, x: x[0].mul_(10), np.where(_ROW0, BASE * 10, BASE), np.where(_ROW0, 10, 1) * WEIGHTS),
    ("chained setitem", lambda lib, x: x[0].__setitem__(1, 5.0), np.where(np.arange(12).reshape(3, 4) == 1, 5, BASE),
     np.where(np.arange(12).reshape(3, 4) == 1, 0, WEIGHTS)),
    ("view setitem", lambda lib, x: x.view(-1).__setitem__(3, 0.0), np.where(np.arange(12).reshape(3, 4) == 3, 0, BASE),
     np.where(np.arange(12).reshape(3, 4) == 3, 0, WEIGHTS)),
    ("T add_", lambda lib, x: x.T.add_(1), BASE + 1, WEIGHTS),
    ("column zero_", lambda lib, x: x[:, 0].zero_(), np.where(_COL0, 0, BASE), _grad_where(~_COL0)),
    ("narrow copy_", lambda lib, x: x.narrow(0, 0, 2).copy_(_ones(lib, (2, 4))),
     np.where(np.arange(12).reshape(3, 4) < 8, 1, BASE), np.where(np.arange(12).reshape(3, 4) < 8, 0, WEIGHTS)),
    ("row +=", lambda lib, x: x[0].__iadd__(1), np.where(_ROW0, BASE + 1, BASE), WEIGHTS),
    ("T row zero_", lambda lib, x: x.T[0].zero_(), np.where(_COL0, 0, BASE), _grad_where(~_COL0)),
    ("select fill_", lambda lib, x: x.select(1, 0).fill_(7), np.where(_COL0, 7, BASE), _grad_where(~_COL0)),
    ("diagonal sub_", lambda lib, x: x.diagonal().sub_(3), np.where(_DIAG, BASE - 3, BASE), WEIGHTS),
    ("unsqueeze mul_", lambda lib, x: x.unsqueeze(0).mul_(x.unsqueeze(0).clone()), BASE * BASE, 2 * BASE * WEIGHTS),
    ("flatten pow_", lambda lib, x: x.flatten().pow_(2), BASE ** 2, 2 * BASE * WEIGHTS),
    ("stride slice div_", lambda lib, x: x[::2, 1:3].div_(2),
     np.where((np.arange(12).reshape(3, 4) // 4 != 1) & (np.arange(12).reshape(3, 4) % 4 % 3 != 0), BASE / 2, BASE),
     np.where((np.arange(12).reshape(3, 4) // 4 != 1) & (np.arange(12).reshape(3, 4) % 4 % 3 != 0), 0.5, 1) * WEIGHTS),
    ("expanded row add_", lambda lib, x: x[0:1].expand(3, 4)[1].add_(1), np.where(_ROW0, BASE + 1, BASE), WEIGHTS),
    ("permute slice clamp_", lambda lib, x: x.permute(1, 0)[2:].clamp_(0, 6),
     np.where(np.arange(12).reshape(3, 4) % 4 >= 2, np.clip(BASE, 0, 6), BASE),
     np.where((np.arange(12).reshape(3, 4) % 4 >= 2) & (BASE > 6), 0, WEIGHTS)),
]


def _run(lib, write, grad):
    """The base after `write` on one of its views, and (with grad) the leaf's gradient of sum(WEIGHTS * base)."""
    leaf = lib.tensor(BASE.copy(), dtype=lib.float64, requires_grad=grad)
    x = leaf * 1 if grad else leaf
    write(lib, x)
    if not grad:
        return x.numpy().copy(), None
    (x * lib.tensor(WEIGHTS, dtype=lib.float64)).sum().backward()
    return x.detach().numpy().copy(), leaf.grad.numpy().copy()


@pytest.mark.parametrize("grad", [False, True], ids=["no_autograd", "autograd"])
@pytest.mark.parametrize("name, write, values, gradient", CASES, ids=[c[0] for c in CASES])
def test_a_write_to_a_view_reaches_its_base(name, write, values, gradient, grad):
    got, got_grad = _run(sg, write, grad)
    np.testing.assert_array_equal(got, values)
    if grad:
        np.testing.assert_allclose(got_grad, gradient, rtol=1e-14)
    if torch is not None:
        want, want_grad = _run(torch, write, grad)
        np.testing.assert_array_equal(got, want)
        if grad:
            np.testing.assert_allclose(got_grad, want_grad, rtol=1e-14)


def test_every_other_view_sees_the_write_and_the_version_is_shared():
    x = sg.tensor(BASE.copy())
    row, column, flat = x[1], x[:, 2], x.view(-1)
    start = x._version.value
    column.mul_(-1)
    assert x._version.value == start + 1 and row._version is x._version and flat._version is x._version
    assert row[2].item() == -6 and flat[10].item() == -10 and x[2, 2].item() == -10
    flat[4] = 100.0  # row 1, column 0
    assert row[0].item() == 100 and x._version.value == start + 2
    assert row._base is x and flat[4:6]._base is x and x._base is None


def test_a_tensor_with_views_is_written_in_place_whatever_its_array():
    """A gathered tensor's array is a NumPy view of a temporary: once views of the tensor exist, a write to the tensor
    still reaches them (its memory is theirs), as in PyTorch."""
    t = sg.tensor(BASE.copy())
    gathered = t[:, [0, 2]]
    row = gathered[0]
    gathered.add_(1)
    row.mul_(10)
    np.testing.assert_array_equal(gathered.numpy(), [[10, 30], [5, 7], [9, 11]])
    np.testing.assert_array_equal(row.numpy(), [10, 30])
    np.testing.assert_array_equal(t.numpy(), BASE)  # a gather is a copy, as in PyTorch


def test_gradients_of_writes_through_views_match_finite_differences():
    """x = a * b, then x[1] *= x[0] and x.T[2] = sin(x[:, 0]): the gradient of a loss of x, in a and b."""
    rng = np.random.default_rng(0)
    a0, b0 = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))

    def loss_value(a, b):
        x = a * b
        x[1] = x[1] * x[0]
        x[:, 2] = np.sin(x[:, 0])
        return float(np.sum(np.tanh(x) * WEIGHTS))

    a, b = sg.tensor(a0, requires_grad=True), sg.tensor(b0, requires_grad=True)
    x = a * b
    x[1].mul_(x[0].clone())  # (x[0] itself would be saved by the mul, then overwritten: the version error)
    x.T[2] = sg.sin(x[:, 0].clone())
    loss = (sg.tanh(x) * sg.tensor(WEIGHTS)).sum()
    assert loss.item() == pytest.approx(loss_value(a0, b0), rel=1e-14)
    loss.backward()
    for tensor, value, other in ((a, a0, b0), (b, b0, a0)):
        expected = np.zeros_like(value)
        for index in np.ndindex(value.shape):
            step = np.zeros_like(value)
            step[index] = 1e-6
            plus = loss_value(value + step, other) if tensor is a else loss_value(other, value + step)
            minus = loss_value(value - step, other) if tensor is a else loss_value(other, value - step)
            expected[index] = (plus - minus) / 2e-6
        np.testing.assert_allclose(tensor.grad.numpy(), expected, rtol=1e-6, atol=1e-8)


def test_a_view_taken_before_its_base_changed_is_rebased():
    """PyTorch replays a view on its base's new history: using it after the base's in-place op works."""
    leaf = sg.tensor(BASE.copy(), requires_grad=True)
    x = leaf * 1
    row = x[1]
    x.mul_(2)
    row.add_(1)  # on the rebased row: x's row 1 is 2 * leaf + 1
    (row * row).sum().backward()
    expected = np.zeros_like(BASE)
    expected[1] = 2 * 2 * (2 * BASE[1] + 1)
    np.testing.assert_allclose(leaf.grad.numpy(), expected)
    np.testing.assert_array_equal(x[1].detach().numpy(), 2 * BASE[1] + 1)


def test_writes_through_views_of_zero_d_and_empty_tensors():
    scalar = sg.tensor(2.0, requires_grad=True)
    y = scalar * 3
    y.unsqueeze(0).mul_(y.unsqueeze(0).clone())  # y = (3 s)^2 through a (1,) view
    y.backward()
    assert y.item() == 36 and scalar.grad.item() == pytest.approx(36.0)
    empty = sg.tensor(np.zeros((0, 3)), requires_grad=True) * 1
    empty[:, 1].add_(5)
    empty.sum().backward()
    assert empty.shape == (0, 3)
    z = sg.tensor(BASE.copy())
    z[2:2].fill_(1.0)  # an empty view: nothing changes
    np.testing.assert_array_equal(z.numpy(), BASE)


def test_a_write_to_an_expanded_view_is_pytorchs_error():
    for grad in (False, True):
        x = sg.tensor(BASE.copy(), requires_grad=grad) * 1
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor refers to a single"):
            x[0:1].expand(3, 4).add_(1)
        np.testing.assert_array_equal(x.detach().numpy(), BASE)


def test_a_recorded_write_to_a_view_of_a_leaf_that_requires_grad_is_pytorchs_error():
    w = sg.tensor(BASE.copy(), requires_grad=True)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used in an in-place"):
        w[0].mul_(2)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable"):
        w.T[0] = 1.0
    np.testing.assert_array_equal(w.detach().numpy(), BASE)
    with sg.no_grad():  # an update of a parameter through a view, as an initializer writes it
        w[:, 0].zero_()
        w.view(-1)[1] = -1.0
    assert w[0, 0].item() == 0 and w[0, 1].item() == -1 and w.is_leaf and w.requires_grad


def test_a_view_made_under_no_grad_written_with_grad_is_pytorchs_error():
    x = sg.tensor(BASE.copy(), requires_grad=True) * 1
    with sg.no_grad():
        row = x[0]
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode and is being modified inplace"):
        row.mul_(2)


def test_a_saved_view_whose_base_changed_is_the_version_error_at_backward():
    leaf = sg.tensor(BASE.copy(), requires_grad=True)
    x = leaf * 1
    row = x[0]
    y = (row * row).sum()  # saves row
    x[0, 1] = 7.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_from_numpy_and_numpy_share_memory_with_views_as_in_pytorch():
    buffer = np.arange(12.0).reshape(3, 4)
    window = buffer[1:]
    t = sg.from_numpy(window)
    t[0].fill_(-1.0)  # writes the NumPy array, as torch.from_numpy(...)[0].fill_(-1) does
    np.testing.assert_array_equal(buffer[1], -1.0)
    shared = t.numpy()
    t.T[3].zero_()
    assert shared[1, 3] == 0 and buffer[2, 3] == 0


def _view_writing_loop(lib, steps=6, grad_mode_write=True):
    """A training loop writing through views each step: of an activation under grad mode (when asked) and of the
    parameters under no_grad. Returns the losses, the parameters, and whether each step's loss was deferred."""
    rng = np.random.default_rng(1)
    w = lib.tensor(rng.standard_normal((3, 4)), dtype=lib.float64, requires_grad=True)
    b = lib.tensor(rng.standard_normal(4), dtype=lib.float64, requires_grad=True)
    x = lib.tensor(rng.standard_normal((5, 3)), dtype=lib.float64)
    losses, deferred = [], []
    for _ in range(steps):
        h = x @ w + b
        if grad_mode_write:
            h[:, 0].mul_(2)
            row = h[1]
            row += 1
        loss = (h.tanh() ** 2).sum()
        deferred.append(isinstance(loss, DeferredTensor))
        loss.backward()
        losses.append(loss.item())
        with lib.no_grad():
            w -= 0.1 * w.grad
            w[:, 0].mul_(0.5)
            b.view(2, 2)[0].zero_()
            w.grad.zero_()
            b.grad.zero_()
    return np.array(losses), w.detach().numpy().copy(), b.detach().numpy().copy(), deferred


@pytest.mark.parametrize("grad_mode_write", [False, True], ids=["no_grad_writes", "recorded_writes"])
def test_training_loops_writing_through_views_match_pytorch_and_the_op_by_op_path(
        grad_mode_write, lowerings, monkeypatch):
    losses, w, b, deferred = _view_writing_loop(sg, grad_mode_write=grad_mode_write)
    if not grad_mode_write:  # the step repeats: captured, then deferred (and its no_grad writes force nothing wrong)
        assert deferred[2:] == [True] * 4
    from symgrad.eager import engine, tape
    monkeypatch.setattr(engine, "try_backward", lambda *args: (False, None))  # the general path, op by op
    tape.start_over()
    plain = _view_writing_loop(sg, grad_mode_write=grad_mode_write)
    assert not any(plain[3])
    for got, want in zip((losses, w, b), plain[:3]):
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-14)
    if torch is not None:
        for got, want in zip((losses, w, b), _view_writing_loop(torch, grad_mode_write=grad_mode_write)[:3]):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_a_view_of_a_parameter_kept_across_deferred_steps_sees_the_updates(lowerings):
    w = sg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    x = sg.tensor(np.ones((4, 2)))
    for _ in range(5):
        row = w[0]
        loss = ((x @ w) * row).sum()
        loss.backward()
        with sg.no_grad():
            w -= 0.01 * w.grad
            w.grad.zero_()
        np.testing.assert_array_equal(row.detach().numpy(), w.detach().numpy()[0])
        with sg.no_grad():
            row.mul_(0.5)  # reaches w
        np.testing.assert_array_equal(row.detach().numpy(), w.detach().numpy()[0])


INF = np.inf
EDGE_ROWS = [[INF, -INF], [INF, 1.0], [INF, INF], [-INF, -INF], [np.nan, 1.0], [-INF, 1.0], [1.0, 2.0]]
# PyTorch's (and SciPy's) values: softmax and log_softmax shift by the row's max, so +inf anywhere gives NaN
SOFTMAX = {0: [np.nan, np.nan], 1: [np.nan, np.nan], 2: [np.nan, np.nan], 3: [np.nan, np.nan], 4: [np.nan, np.nan],
           5: [0.0, 1.0]}
LOGSUMEXP = {0: INF, 1: INF, 2: INF, 3: -INF, 4: np.nan, 5: 1.0}


@pytest.mark.parametrize("row", range(len(EDGE_ROWS)))
def test_softmax_family_at_infinite_and_nan_logits_is_pytorchs(row):
    logits = np.array([EDGE_ROWS[row]])
    with np.errstate(all="ignore"):
        shifted = logits - logits.max(axis=1, keepdims=True)
        softmax = np.exp(shifted) / np.exp(shifted).sum(axis=1, keepdims=True)
        log_softmax = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    if row in SOFTMAX:
        np.testing.assert_array_equal(softmax[0], SOFTMAX[row])  # the reference formula is PyTorch's
    lse = LOGSUMEXP.get(row, float(np.log(np.exp(logits).sum())))
    functional = sg.nn.functional
    paths = {
        "softmax": (softmax, [sg.softmax(logits, axis=1), sg.softmax(sg.tensor(logits), 1).numpy(),
                              functional.softmax(sg.tensor(logits), dim=1).numpy(),
                              sg.compile(lambda v: sg.softmax(v, axis=1))(logits),
                              sg.compile(lambda v: sg.softmax(v, axis=1), backend="numpy")(logits),
                              sg.compile(lambda v: functional.softmax(v, dim=1))(logits)]),
        "log_softmax": (log_softmax, [sg.log_softmax(logits, axis=1), functional.log_softmax(sg.tensor(logits), 1).numpy(),
                                      sg.compile(lambda v: sg.log_softmax(v, axis=1))(logits),
                                      sg.compile(lambda v: sg.log_softmax(v, axis=1), backend="numpy")(logits),
                                      sg.compile(lambda v: functional.log_softmax(v, dim=1), backend="numpy")(logits)]),
        "logsumexp": (np.array([lse]), [sg.logsumexp(logits, axis=1), sg.tensor(logits).logsumexp(1).numpy(),
                                        sg.compile(lambda v: sg.logsumexp(v, axis=1))(logits),
                                        sg.compile(lambda v: sg.logsumexp(v, axis=1), backend="numpy")(logits)]),
        "cross_entropy": (-log_softmax[:, 1], [functional.cross_entropy(sg.tensor(logits), sg.tensor([1])).numpy()]),
    }
    for name, (want, got) in paths.items():
        for value in got:
            np.testing.assert_allclose(np.asarray(value).reshape(want.shape), want, rtol=1e-14, err_msg=name)
    if scipy_special is not None:  # SciPy's own conventions, in sg.scipy.special (its log_softmax shifts by a finite max)
        for name in ("softmax", "log_softmax", "logsumexp"):
            with np.errstate(all="ignore"):
                want = getattr(scipy_special, name)(logits, axis=1)
            np.testing.assert_allclose(getattr(sg.scipy.special, name)(logits, axis=1), want, rtol=1e-14, err_msg=name)
    if torch is not None:
        t = torch.tensor(logits)
        np.testing.assert_allclose(torch.softmax(t, 1).numpy(), softmax, rtol=1e-14)
        np.testing.assert_allclose(torch.log_softmax(t, 1).numpy(), log_softmax, rtol=1e-14)
        np.testing.assert_allclose(torch.logsumexp(t, 1).numpy(), [lse], rtol=1e-14)
        np.testing.assert_allclose(torch.nn.functional.cross_entropy(t, torch.tensor([1])).numpy(),
                                   -log_softmax[0, 1], rtol=1e-14)


def _loop_holding_views(lib, steps=6, check=None):
    """A step whose forward holds views (of an activation and of a parameter), written through after backward."""
    rng = np.random.default_rng(2)
    w = lib.tensor(rng.standard_normal((3, 4)), dtype=lib.float64, requires_grad=True)
    x = lib.tensor(rng.standard_normal((5, 3)), dtype=lib.float64)
    losses, deferred = [], []
    for _ in range(steps):
        h = (x @ w).tanh()
        flat = h.view(-1)
        column = w[:, 1]
        loss = (flat * flat).sum() + (column * column).sum()
        deferred.append(isinstance(loss, DeferredTensor))
        loss.backward()
        losses.append(loss.item())
        if check is not None:
            check(h, flat, w, column)
        with lib.no_grad():
            flat[0] = 10.0  # reaches h
            losses.append(h[0, 0].item())
            w -= 0.1 * w.grad
            column.mul_(0.5)  # reaches w
            w.grad.zero_()
    return np.array(losses), w.detach().numpy().copy(), deferred


def test_deferred_views_are_views_of_their_operands_memory(lowerings):
    def check(h, flat, w, column):
        assert np.shares_memory(flat.detach().numpy(), h.detach().numpy()) and flat._base is h
        assert np.shares_memory(column.detach().numpy(), w.detach().numpy()) and column._base is w
        assert flat._version is h._version and column._version is w._version

    losses, w, deferred = _loop_holding_views(sg, check=check)
    assert deferred[2:] == [True] * 4
    if torch is not None:
        want_losses, want_w, _ = _loop_holding_views(torch)
        np.testing.assert_allclose(losses, want_losses, rtol=1e-13)
        np.testing.assert_allclose(w, want_w, rtol=1e-13)


def test_a_deferred_view_forced_before_backward_is_a_view(lowerings):
    rng = np.random.default_rng(3)
    w = sg.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    x = sg.tensor(rng.standard_normal((5, 3)))
    for step in range(4):
        h = x @ w
        row = h[2]
        second = w.view(-1)[4:8]  # w's row 1
        loss = (row * second).sum()
        if step >= 2:
            assert isinstance(row, DeferredTensor) and isinstance(second, DeferredTensor)
            np.testing.assert_array_equal(row.detach().numpy(), (x.numpy() @ w.detach().numpy())[2])  # forces
            assert np.shares_memory(row.detach().numpy(), h.detach().numpy())
            assert np.shares_memory(second.detach().numpy(), w.detach().numpy())
        loss.backward()
        expected = np.outer(x.numpy()[2], w.detach().numpy()[1])
        expected[1] += (x.numpy() @ w.detach().numpy())[2]
        np.testing.assert_allclose(w.grad.numpy(), expected, rtol=1e-13)
        w.grad = None


def _loop_changing_a_viewed_base(lib, steps=5):
    """Steps that repeat (captured, then deferred), the last of which changes the base of a view it holds in place."""
    rng = np.random.default_rng(4)
    w = lib.tensor(rng.standard_normal((3, 4)), dtype=lib.float64, requires_grad=True)
    x = lib.tensor(rng.standard_normal((5, 3)), dtype=lib.float64)
    results = []
    for step in range(steps):
        h = x @ w
        row = h[1]
        if step == steps - 1:
            h.mul_(3)  # row is rebased on h's new history, as PyTorch's view
        loss = (row * row).sum() + h.sum()
        loss.backward()
        results += [loss.item(), w.grad.numpy().copy()]
        w.grad = None
    return results


def test_a_deferred_view_whose_base_changes_in_place_is_rebased(lowerings):
    got = _loop_changing_a_viewed_base(sg)
    rng = np.random.default_rng(4)
    w, x = rng.standard_normal((3, 4)), rng.standard_normal((5, 3))
    h = 3 * x @ w
    ones = np.ones_like(h)
    ones[1] += 2 * h[1]
    np.testing.assert_allclose(got[-1], 3 * x.T @ ones, rtol=1e-13)
    if torch is not None:
        for a, b in zip(got, _loop_changing_a_viewed_base(torch)):
            np.testing.assert_allclose(a, b, rtol=1e-13)


def test_diagonal_and_select_of_a_parameter_stay_views_across_repeated_steps(lowerings):
    w = sg.tensor(np.arange(9.0).reshape(3, 3), requires_grad=True)
    for _ in range(5):
        diagonal, row = w.diagonal(), w.select(0, 1)
        ((diagonal * diagonal).sum() + (row * row).sum()).backward()
        with sg.no_grad():
            w -= 0.1 * w.grad
            w.grad.zero_()
            np.testing.assert_array_equal(diagonal.detach().numpy(), np.diagonal(w.detach().numpy()))
            np.testing.assert_array_equal(row.detach().numpy(), w.detach().numpy()[1])
            row.mul_(0.5)
            diagonal.fill_(1.0)
        assert w[1, 1].item() == 1.0 and w[1, 0].item() == row[0].item()


def test_contiguous_copies_a_view_that_is_not_row_major_as_in_pytorch():
    x = sg.tensor(BASE.copy())
    transposed = x.T.contiguous()
    transposed[0, 0] = 100.0  # a copy: x does not change
    row = x[1].contiguous()
    row[0] = -1.0  # x's row is row-major: itself, so x changes
    assert x[0, 0].item() == 0 and x[1, 0].item() == -1
    assert not x.T.is_contiguous() and x[1].is_contiguous() and not x[:, 1].is_contiguous()


def test_clone_of_what_nothing_records_is_a_copy_laid_out_as_pytorchs():
    """clone()/contiguous() of a constant (and under no_grad) copy the array without an op: same values and dtype,
    memory of its own, laid out as the source (clone) or row-major (contiguous), no history, as PyTorch's."""
    sources = (sg.tensor(BASE.copy()), sg.tensor(BASE.astype(np.int32)), sg.tensor(BASE.copy(), requires_grad=True))
    for source in sources:
        with sg.no_grad():
            for copy, layout in ((source.T.clone(), "F"), (source.T.contiguous(), "C")):
                assert copy.dtype == source.dtype and copy.grad_fn is None and not copy.requires_grad
                np.testing.assert_array_equal(copy.numpy(), source.detach().numpy().T)
                assert copy.numpy().flags[layout + "_CONTIGUOUS"]
                assert not np.shares_memory(copy.numpy(), source.detach().numpy())
    recorded = sg.tensor(BASE.copy(), requires_grad=True).clone()
    assert type(recorded.grad_fn).__name__ == "CloneBackward0"



def test_clone_of_an_expanded_tensor_is_laid_out_as_pytorchs():
    """An expanded (stride 0) constant's clone is laid out as PyTorch's (NumPy's order "K" put the broadcast axis
    first: a column-major copy whose view(-1) raised a false RuntimeError)."""
    for requires_grad in (False, True):
        row = sg.tensor(BASE[:1].copy(), requires_grad=requires_grad)
        copy = row.expand(3, BASE.shape[1]).clone()
        assert copy.is_contiguous() and copy.detach().numpy().flags.c_contiguous
        np.testing.assert_array_equal(copy.view(-1).detach().numpy(), np.tile(BASE[0], 3))

def _loop_with_contiguous(lib, steps=5):
    rng = np.random.default_rng(5)
    w = lib.tensor(rng.standard_normal((3, 4)), dtype=lib.float64, requires_grad=True)
    x = lib.tensor(rng.standard_normal((5, 3)), dtype=lib.float64)
    losses = []
    for _ in range(steps):
        packed = (x @ w).T.contiguous().view(-1)
        loss = (packed[:7] ** 2).sum()
        loss.backward()
        losses.append(loss.item())
        with lib.no_grad():
            w -= 0.1 * w.grad
            w.grad.zero_()
    return np.array(losses)


def test_a_repeated_step_with_contiguous_views_matches_pytorch(lowerings):
    losses = _loop_with_contiguous(sg)
    rng = np.random.default_rng(5)
    w, x = rng.standard_normal((3, 4)), rng.standard_normal((5, 3))
    assert losses[0] == pytest.approx(float(((x @ w).T.reshape(-1)[:7] ** 2).sum()), rel=1e-14)
    if torch is not None:
        np.testing.assert_allclose(losses, _loop_with_contiguous(torch), rtol=1e-13)


_CHAIN_VIEWS = [
    lambda t: t[0] if t.dim() >= 1 and t.shape[0] > 0 else None,
    lambda t: t[:, -1] if t.dim() >= 2 and t.shape[1] > 0 else None,
    lambda t: t.T if t.dim() == 2 else None,
    lambda t: t.reshape(-1) if t.is_contiguous() else None,
    lambda t: t.unsqueeze(0),
    lambda t: t.narrow(0, 1, t.shape[0] - 1) if t.dim() >= 1 and t.shape[0] > 1 else None,
    lambda t: t[::2] if t.dim() >= 1 else None,
    lambda t: t.diagonal() if t.dim() == 2 else None,
    lambda t: t.select(-1, 0) if t.dim() >= 1 and t.shape[-1] > 0 else None,
]
_CHAIN_WRITES = [
    lambda lib, v: v.add_(lib.tensor(np.linspace(0.5, 1.5, v.numel()).reshape(tuple(v.shape)), dtype=lib.float64)),
    lambda lib, v: v.mul_(lib.tensor(np.linspace(0.5, 1.5, v.numel()).reshape(tuple(v.shape)), dtype=lib.float64)),
    lambda lib, v: v.zero_(),
    lambda lib, v: v.fill_(3.0),
    lambda lib, v: v.__setitem__(0, 7.0) if v.dim() >= 1 and v.shape[0] > 0 else None,
    lambda lib, v: v.__iadd__(2.0),
    lambda lib, v: v.pow_(2),
]


def _chain_program(lib, program, grad):
    """Writes through chains of views (the views kept and used in the loss after later writes): the base, the views
    and (with grad) the leaf's gradient."""
    leaf = lib.tensor(np.arange(1.0, 13.0).reshape(3, 4) / 7, dtype=lib.float64, requires_grad=grad)
    x = leaf * 1 if grad else leaf
    held = []
    for chain, write in program:
        view = x
        for index in chain:
            view = _CHAIN_VIEWS[index](view) if view is not None else None
        view = x if view is None else view
        held.append(view)
        _CHAIN_WRITES[write](lib, view)
    loss = (x * lib.tensor(WEIGHTS, dtype=lib.float64)).sum() + sum((v * v).sum() for v in held)
    values = [x.detach().numpy().copy()] + [v.detach().numpy().copy() for v in held]
    if grad:
        loss.backward()
        values.append(leaf.grad.numpy().copy())
    return values


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
def test_random_chains_of_views_and_writes_match_pytorch():
    rng = np.random.default_rng(7)
    for _ in range(60):
        program = [(list(rng.integers(0, len(_CHAIN_VIEWS), rng.integers(1, 4))), int(rng.integers(0, len(_CHAIN_WRITES))))
                   for _ in range(rng.integers(1, 4))]
        grad = bool(rng.integers(0, 2))
        for got, want in zip(_chain_program(sg, program, grad), _chain_program(torch, program, grad), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15, err_msg=str((program, grad)))


@pytest.mark.parametrize("make_source", [lambda a: a, lambda a: a * 2.0, lambda a: a ** 3])
def test_copy_of_a_tensor_that_needs_no_conversion_keeps_its_gradient(make_source):
    """y.copy_(a) with a of y's shape and dtype made y take over a's own record (broadcast_to and astype gave a
    itself): sum(y * a) had the gradient y (a's leaf has no record), not 2 y; the copy is a `where` now."""
    x = np.array([0.5, -1.0, 2.0, -0.0])
    a = sg.tensor(x, requires_grad=True)
    source = make_source(a)
    y = sg.tensor(np.zeros(4))
    y.copy_(source)
    (y * a).sum().backward()
    expected_source = make_source(x)
    np.testing.assert_array_equal(y.detach().numpy(), expected_source)
    assert np.signbit(y.detach().numpy()[3]) == np.signbit(expected_source[3])
    h = 1e-6
    fd = [(np.sum(make_source(x + h * e) * (x + h * e)) - np.sum(make_source(x - h * e) * (x - h * e))) / (2 * h)
          for e in np.eye(4)]
    np.testing.assert_allclose(a.grad.numpy(), fd, rtol=1e-8, atol=1e-10)
    if torch is not None:
        t = torch.tensor(x, requires_grad=True)
        z = torch.zeros(4, dtype=torch.float64)
        z.copy_(make_source(t))
        (z * t).sum().backward()
        np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-14)


def test_fill_of_a_zero_d_tensor_by_one_that_requires_grad_keeps_its_gradient():
    """y.fill_(a) for 0-d y and a had copy_'s lost gradient: (y * a) gave d/da = a, not 2 a."""
    a = sg.tensor(np.array(1.5), requires_grad=True)
    y = sg.tensor(np.array(0.0))
    y.fill_(a)
    (y * a).backward()
    assert a.grad.item() == 3.0
    z = sg.tensor(np.array([1.0, 2.0]))
    z.fill_(-0.0)  # a constant fill keeps its bits
    assert np.signbit(z.numpy()).all()


@pytest.mark.parametrize("shape, shifts, dims", [((2, 1), 1, 1), ((2, 3), 3, 1), ((2, 3), 0, 0), ((), 1, None),
                                                 ((0, 2), 1, 0), ((2, 3), (2, 3), (0, 1))])
def test_a_roll_that_moves_nothing_is_a_new_tensor(shape, shifts, dims):
    """torch.roll and np.roll always copy: makemore's `idx = torch.roll(idx, 1, 1); idx[:, 0] = blank` on a
    one-column idx wrote over its caller's tensor when the roll was the input itself."""
    x = sg.tensor(np.arange(float(np.prod(shape))).reshape(shape), requires_grad=True)
    rolled = sg.roll(x, shifts, dims)
    assert rolled is not x and x.roll(shifts, dims) is not x
    before = x.detach().clone()
    with sg.no_grad():
        rolled.fill_(-1.0)
    assert np.array_equal(x.detach().numpy(), before.numpy())
    (sg.roll(x, shifts, dims) * 2.0).sum().backward()
    assert np.array_equal(x.grad.numpy(), np.full(shape, 2.0))
    array = np.ones(shape)
    assert sg.roll(array, shifts, dims) is not array


def test_as_tensor_shares_a_numpy_arrays_memory_and_passes_a_tensor_through_as_pytorch():
    """torch.as_tensor: a NumPy array of the tensor's dtype is shared (a NumPy write shows), another dtype or a list
    is copied, a tensor of the dtype is itself (its history kept), another dtype its recorded conversion."""
    array = np.arange(4.0)
    shared = sg.as_tensor(array)
    array[0] = 7.0
    assert shared[0].item() == 7.0 and shared.dtype == np.float64
    copied = sg.as_tensor(array, dtype=sg.float32)
    array[1] = 9.0
    assert copied.dtype == np.float32 and copied[1].item() == 1.0
    listed = sg.as_tensor([1, 2])
    assert listed.dtype == sg.tensor([1, 2]).dtype and listed.tolist() == [1, 2]
    x = sg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    assert sg.as_tensor(y) is y
    z = sg.as_tensor(y, dtype=sg.float32)
    z.sum().backward()
    assert z.dtype == np.float32 and x.grad.tolist() == [3.0, 3.0]
