"""One-element gradients and parameters updated in place by Python's float arithmetic (engine.update_in_place) hold
NumPy's bits: accumulation into .grad, `b -= lr * b.grad`, `+=` and `-=` of a tensor."""
import itertools

import numpy as np
import pytest

import symgrad as sg
from symgrad.eager.engine import update_in_place

SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 3.4e38, -3.4e38, 1.0, 2.0 ** -149, 1e300]


@pytest.mark.parametrize("data_dtype, value_dtype", list(itertools.product([np.float32, np.float64], repeat=2)))
@pytest.mark.parametrize("ufunc", [np.add, np.subtract])
def test_the_bits_of_numpys_in_place_ufunc(data_dtype, value_dtype, ufunc):
    rng = np.random.default_rng(1)
    firsts = np.concatenate([rng.standard_normal(300) * 10.0 ** rng.integers(-40, 40, 300), SPECIALS])
    seconds = np.concatenate([rng.standard_normal(300) * 10.0 ** rng.integers(-40, 40, 300), SPECIALS[::-1]])
    with np.errstate(all="ignore"):
        for a, b in zip(firsts.astype(data_dtype), seconds.astype(value_dtype)):
            for shape, value_shape in [((1, 1), (1,)), ((), ()), ((1,), (1,)), ((1, 1), ())]:
                expected, got = np.full(shape, a, data_dtype), np.full(shape, a, data_dtype)
                value = np.full(value_shape, b, value_dtype)
                ufunc(expected, value, out=expected)
                update_in_place(ufunc, got, value)
                assert expected.tobytes() == got.tobytes(), (a, b, shape)


def test_a_value_that_does_not_broadcast_is_numpys_error():
    with pytest.raises(ValueError):
        update_in_place(np.add, np.zeros(1, np.float32), np.ones((1, 1), np.float32))


def test_accumulation_and_updates_of_one_element_parameters_against_pytorch():
    torch = pytest.importorskip("torch")
    x = np.array([[0.5], [-1.5], [2.0]])
    y = np.array([[1.0], [0.0], [-3.0]])
    ours = [sg.tensor(np.array([[0.3]]), requires_grad=True), sg.tensor(np.array([-0.0]), requires_grad=True)]
    theirs = [torch.tensor(np.array([[0.3]]), requires_grad=True), torch.tensor(np.array([-0.0]), requires_grad=True)]
    for lib, (w, b), xs, ys in ((sg, ours, sg.tensor(x), sg.tensor(y)), (torch, theirs, torch.tensor(x),
                                                                         torch.tensor(y))):
        for step in range(6):
            loss = ((xs @ w + b - ys) ** 2).mean() * (0.0 if step == 2 else 1.0)
            loss.backward()
            if step % 2:  # accumulated over two steps
                with lib.no_grad():
                    w -= 0.1 * w.grad
                    b -= 0.1 * b.grad
                w.grad.zero_()
                b.grad.zero_()
    for a, t in zip(ours, theirs):
        assert a.detach().numpy().tobytes() == t.detach().numpy().tobytes()
        assert a.grad.numpy().tobytes() == t.grad.numpy().tobytes()  # 0.0 (a zeroed .grad plus -0.0 is 0.0)
