"""An eager tensor that requires grad given as an argument to a transform (sg.compile, sg.grad, jvp, vjp,
check_grads) is its values, as a closed-over one is: refusing NumPy's conversion of such a tensor (its history
would be lost) had made every transform raise "Can't call numpy() on Tensor that requires grad" for it."""
import numpy as np
import pytest

import symgrad as sg

X = np.array([[1.0, -2.0], [0.5, 0.0], [-0.0, 3.0]])
VALUES = np.array([[0.1, -0.2, 0.0], [0.4, 1e-310, -1.5]])


def loss(w):
    return sg.sum(sg.tanh(X @ w) ** 2)


def test_transforms_take_a_tensor_that_requires_grad_as_its_values():
    w = sg.tensor(VALUES, requires_grad=True)
    value, gradient = sg.value_and_grad(loss)(VALUES)
    compiled = sg.compile(loss)
    for _ in range(3):  # the first call traces, the later ones take the fast entry
        np.testing.assert_array_equal(compiled(w), value)
    np.testing.assert_array_equal(sg.grad(loss)(w), gradient)
    np.testing.assert_array_equal(sg.compile(sg.grad(loss))(w), sg.compile(sg.grad(loss))(VALUES))
    np.testing.assert_array_equal(sg.jvp(loss, (w,), (np.ones_like(VALUES),))[1],
                                  sg.jvp(loss, (VALUES,), (np.ones_like(VALUES),))[1])
    np.testing.assert_array_equal(sg.vjp(loss, w)[1](1.0)[0], gradient)
    sg.check_grads(loss, (w,), order=1)
    assert w.grad is None  # the transform differentiates its own argument, not the tensor's history


def test_the_gradient_is_pytorchs():
    torch = pytest.importorskip("torch")
    t = torch.tensor(VALUES, requires_grad=True)
    (torch.tanh(torch.tensor(X) @ t) ** 2).sum().backward()
    np.testing.assert_allclose(sg.grad(loss)(sg.tensor(VALUES, requires_grad=True)), t.grad.numpy(), rtol=1e-14)
