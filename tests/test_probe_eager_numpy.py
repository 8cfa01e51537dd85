"""NumPy's view of an eager tensor that requires grad: numpy(force=True) reads it in grad mode, as PyTorch's does
(numpy() and np.asarray(t) refuse it there), and without a copy."""
import numpy as np
import pytest

import symgrad as sg


def test_numpy_force_reads_a_tensor_that_requires_grad():
    t = sg.tensor([1.5, -0.0, np.inf], requires_grad=True)
    with pytest.raises(RuntimeError, match="requires grad"):
        t.numpy()
    with pytest.raises(RuntimeError, match="requires grad"):
        np.asarray(t)
    array = t.numpy(force=True)
    np.testing.assert_array_equal(array, [1.5, -0.0, np.inf])
    assert np.signbit(array[1]) and np.shares_memory(array, t.detach().numpy())
    h = (t * 2.0).sum()
    assert h.numpy(force=True) == np.inf


def test_numpy_force_matches_pytorch():
    torch = pytest.importorskip("torch")
    values = np.array([[0.5, -2.0], [3.0, 1e-310]])
    ours, theirs = sg.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
    np.testing.assert_array_equal((ours * 3.0).numpy(force=True), (theirs * 3.0).numpy(force=True))


@pytest.mark.parametrize("write_input, write_weight, read_first", [(1, 0, 0), (0, 1, 0), (1, 1, 0), (1, 0, 1),
                                                                   (0, 1, 1)])
def test_numpy_write_between_forward_and_backward_of_a_deferred_step(write_input, write_weight, read_first):
    """NumPy writing an input or a weight shared with it, after the forward and before its backward: PyTorch's
    backward reads the saved tensors as NumPy left them (the forward's values are from before). The first steps
    (op by op) did; from the third (deferred, the forward's arrays copied) symgrad's gradient came from the copies
    (random_programs_eager.py: W.grad off by up to 1.75). `read_first`: loss.item() computed the step first."""
    torch = pytest.importorskip("torch")

    def train(lib):
        w_np = np.arange(6.0).reshape(2, 3) / 7
        w = lib.from_numpy(w_np).requires_grad_()
        x_np = np.linspace(-1, 1, 8).reshape(4, 2)
        x = lib.from_numpy(x_np)
        seen = []
        for step in range(5):
            loss = (lib.tanh(x @ w) ** 2).sum() + (w * w).sum()
            if read_first:
                loss.item()
            x_np[0, 0] += write_input
            w_np[0, 1] -= 0.5 * write_weight
            loss.backward()
            seen.append((loss.item(), w.grad.numpy().copy()))
            w.grad = None
        return seen
    for (ours, our_grad), (theirs, their_grad) in zip(train(sg), train(torch)):
        assert ours == pytest.approx(theirs, rel=1e-12)
        np.testing.assert_allclose(our_grad, their_grad, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("rows", [2, 5000])
@pytest.mark.parametrize("written, elsewhere", [(-0.0, 3.0), (2.5, 3.0), (-0.0, np.nan), (2.5, np.nan)])
def test_numpy_writes_seen_by_their_bits_between_forward_and_backward(written, elsewhere, rows):
    """A write is what changes an array's bits: -0.0 over 0.0 is one (the gradient's sign follows it, as PyTorch's);
    an array holding a NaN is compared as well (by value, a NaN is never equal to itself). Small arrays and large
    ones are compared in two ways."""
    torch = pytest.importorskip("torch")

    def train(lib):
        x_np = np.ones((rows, 2))
        x_np[:2] = [[0.0, 1.5], [elsewhere, -2.0]]
        x = lib.from_numpy(x_np)
        w = lib.tensor(np.linspace(-1.0, 3.0, 2 * rows).reshape(rows, 2), requires_grad=True)
        seen = []
        for step in range(6):
            loss = (x * w).sum()
            if step % 2:
                x_np[0, 0] = written
            loss.backward()
            seen.append(w.grad.numpy().copy())
            w.grad = None
            x_np[0, 0] = 0.0
        return seen
    for ours, theirs in zip(train(sg), train(torch)):
        np.testing.assert_array_equal(ours, theirs)
        np.testing.assert_array_equal(np.signbit(ours), np.signbit(theirs))


@pytest.mark.parametrize("first, written", [(0.0, -0.0), (-0.0, 0.0)])
def test_numpy_write_of_a_signed_zero_between_two_reads_of_a_leaf(first, written):
    """A leaf NumPy may write is read by a step's deferred ops from one copy while its bits stay: -0.0 written over
    0.0 between two reads is a write (the second read's atan2 was pi off, from the copy compared by value)."""
    torch = pytest.importorskip("torch")

    def train(lib):
        w_np = np.array([first, 1.5, -2.0])
        w = lib.from_numpy(w_np).requires_grad_()
        x, minus_one = lib.tensor(np.array([0.5, 2.0, 3.0])), lib.tensor(np.array([-1.0, -1.0, -1.0]))
        seen = []
        for step in range(6):
            w_np[0] = first
            loss = (w * x).sum()
            if step % 2:
                w_np[0] = written
            loss = loss + (lib.atan2(w, minus_one) * x).sum()  # atan2(+-0.0, -1) is +-pi
            loss.backward()
            seen.append((loss.item(), w.grad.numpy().copy()))
            w.grad = None
        return seen
    for (ours, our_grad), (theirs, their_grad) in zip(train(sg), train(torch)):
        assert ours == pytest.approx(theirs, rel=1e-12)
        np.testing.assert_allclose(our_grad, their_grad, rtol=1e-12)


@pytest.mark.parametrize("padding_idx", [None, 2])
def test_embedding_backward_reads_indices_numpy_wrote_after_the_forward(padding_idx):
    """F.embedding looked rows up through a copy of its int64 indices, so NumPy writing them (from_numpy) between
    forward and backward left the gradient on the old rows; PyTorch's backward reads the indices' memory: the old
    rows' values land on the new rows (random_programs_eager seed 2011, from the loop's first step)."""
    torch = pytest.importorskip("torch")

    def train(lib):
        table = lib.tensor(np.arange(12.0).reshape(4, 3) / 10, requires_grad=True)
        i_np = np.array([0, 1, 1, 2])
        indices = lib.from_numpy(i_np)
        grads = []
        for step in range(4):
            loss = (lib.nn.functional.embedding(indices, table, padding_idx=padding_idx) ** 2).sum()
            i_np[0] = 3 - i_np[0]
            loss.backward()
            grads.append(table.grad.numpy().copy())
            table.grad = None
        return grads
    for ours, theirs in zip(train(sg), train(torch)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)
