"""autograd.Function: user forward/backward, saved tensors, needs_input_grad, higher order, errors."""
import numpy as np
import pytest

import symgrad as sg


class MyReLU(sg.autograd.Function):
    """PyTorch's tutorial version: backward clones the gradient and zeroes it with a mask."""

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input < 0] = 0
        return grad_input


class LegendreP3(sg.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return 0.5 * (5 * input ** 3 - 3 * input)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        return grad_output * 1.5 * (5 * input ** 2 - 1)


class ScaleBy(sg.autograd.Function):
    """A non-tensor argument: its gradient slot is None, and needs_input_grad says so."""

    @staticmethod
    def forward(ctx, x, factor):
        ctx.factor = factor
        ctx.flags = ctx.needs_input_grad
        return x * factor

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.factor, None


def test_custom_relu_inside_compiled_runs():
    x = sg.tensor([-1.0, 0.5, 2.0], requires_grad=True)
    for _ in range(3):  # the runs around the Python backward are cached and compiled
        y = (MyReLU.apply(x * 2) ** 2).sum()
        y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * np.array([0.0, 4.0, 16.0]))
    assert MyReLU.apply(x).grad_fn.name() == "MyReLUBackward"


def test_legendre_first_and_second_derivatives():
    x = sg.tensor([-1.0, 0.5, 2.0], requires_grad=True)
    g, = sg.autograd.grad(LegendreP3.apply(x).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 1.5 * (5 * x.detach().numpy() ** 2 - 1))
    h, = sg.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), 15 * x.detach().numpy())


def test_non_tensor_arguments_and_needs_input_grad():
    x = sg.tensor([1.0, 2.0], requires_grad=True)
    y = ScaleBy.apply(x, 3.0)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])
    assert y.grad_fn.ctx.flags == (True, False)


def test_saved_tensors_are_freed_and_version_checked():
    x = sg.tensor([1.0, 2.0], requires_grad=True)
    y = LegendreP3.apply(x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()
    h = x * 1
    z = LegendreP3.apply(h).sum()
    h.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.backward()


def test_wrong_gradient_shape_is_an_error():
    class Bad(sg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output.sum()

    x = sg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="invalid gradient"):
        Bad.apply(x).sum().backward()
