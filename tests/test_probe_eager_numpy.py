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
