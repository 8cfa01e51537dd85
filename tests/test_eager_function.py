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


def _exp_saving_output(lib):
    """PyTorch's pattern of saving the output: backward reads exp(x) back as y, and x."""

    class ExpSavingOutput(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y, x)
            return y

        @staticmethod
        def backward(ctx, grad_output):
            y, x = ctx.saved_tensors
            return grad_output * y * x

    return ExpSavingOutput


def _second_derivative_through_saved_output(lib):
    x = lib.tensor([0.3, -0.6], dtype=lib.float64, requires_grad=True)
    g, = lib.autograd.grad(_exp_saving_output(lib).apply(x).sum(), x, create_graph=True)
    h, = lib.autograd.grad(g.sum(), x)
    return g.detach().numpy(), h.numpy()


def test_a_saved_output_is_part_of_the_graph_under_create_graph():
    """g = y x with y the saved output, whose derivative is this Function's backward (y x):
    dg/dx = x (y x) + y = exp(x) (1 + x^2); reading y as a constant would give exp(x)."""
    g, h = _second_derivative_through_saved_output(sg)
    x = np.array([0.3, -0.6])
    np.testing.assert_allclose(g, x * np.exp(x), rtol=1e-14)
    np.testing.assert_allclose(h, np.exp(x) * (1 + x * x), rtol=1e-14)


def test_a_saved_output_matches_torch():
    torch = pytest.importorskip("torch")
    for ours, theirs in zip(_second_derivative_through_saved_output(sg),
                            _second_derivative_through_saved_output(torch)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-14)


def test_an_in_place_change_of_a_saved_output_is_an_error():
    """The output shares its data and version counter with what forward saved: changing it is caught."""
    x = sg.tensor([0.3, 0.6], requires_grad=True)
    y = _exp_saving_output(sg).apply(x)
    y.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


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


def _product_function(lib, backward):
    """forward(a, b) = a * b with the given backward(grad_output) -> what the test returns."""
    class MyFn(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, grad_output):
            return backward(lib, grad_output)

    return MyFn


def _ones(lib, *shape):
    return lib.tensor(np.ones(shape))


# backward(lib, g) -> (its result, the error PyTorch raises or the gradients of a and b)
BACKWARDS = {
    "one gradient for two inputs": (lambda lib, g: (g,), r"incorrect number of gradients \(expected 2, got 1\)"),
    "a bare tensor for two inputs": (lambda lib, g: g, r"incorrect number of gradients \(expected 2, got 1\)"),
    "three gradients": (lambda lib, g: (g, g, g), r"incorrect number of gradients \(expected 2, got 3\)"),
    "trailing Nones are dropped": (lambda lib, g: (g, g * 2, None, None), ([1.0, 1.0], [2.0, 2.0])),
    "wrong shape": (lambda lib, g: (_ones(lib, 3), g),
                    r"MyFnBackward returned an invalid gradient at index 0 - got \[3\] but expected shape "
                    r"compatible with \[2\]"),
    "wrong shape at index 1": (lambda lib, g: (g, _ones(lib, 2, 3)),
                               r"invalid gradient at index 1 - got \[2, 3\] but expected shape compatible with \[2\]"),
    "0-d for a vector": (lambda lib, g: (g.sum(), g), r"got \[\] but expected shape compatible with \[2\]"),
    "a broadcast shape is summed": (lambda lib, g: (_ones(lib, 3, 2), g), ([3.0, 3.0], [1.0, 1.0])),
    "None for an input": (lambda lib, g: (None, g), (None, [1.0, 1.0])),
}


def _run_product(lib, backward):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([3.0, 4.0], requires_grad=True)
    _product_function(lib, backward).apply(a, b).sum().backward()
    return tuple(None if t.grad is None else t.grad.tolist() for t in (a, b))


@pytest.mark.parametrize("case", sorted(BACKWARDS))
def test_function_backward_results_are_checked_as_in_pytorch(case):
    backward, expected = BACKWARDS[case]
    if isinstance(expected, str):
        with pytest.raises(RuntimeError, match=expected):
            _run_product(sg, backward)
    else:
        assert _run_product(sg, backward) == expected


@pytest.mark.parametrize("case", sorted(BACKWARDS))
def test_function_backward_checks_match_torch(case):
    torch = pytest.importorskip("torch")
    backward, expected = BACKWARDS[case]
    if isinstance(expected, str):
        with pytest.raises(RuntimeError, match=expected):
            _run_product(torch, backward)
    else:
        assert _run_product(torch, backward) == expected


def test_a_gradient_for_a_non_tensor_input_is_an_error_and_non_requiring_inputs_are_ignored():
    class Scale(sg.autograd.Function):
        @staticmethod
        def forward(ctx, x, factor):
            return x * factor

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * 3.0, grad_output

    x = sg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="gradient different than None at position 2, but the corresponding "
                                           "forward input was not a Tensor"):
        Scale.apply(x, 3.0).sum().backward()
    constant = sg.tensor([3.0, 4.0])  # a tensor that does not require grad: its gradient is ignored
    _product_function(sg, lambda lib, g: (g * 2, _ones(lib, 5))).apply(x, constant).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0] and constant.grad is None


def test_summed_gradient_is_differentiable_under_create_graph():
    """A broadcast-shaped gradient from a custom backward is summed by a recorded op, so it has a second derivative."""
    class Square(sg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad_output):
            x, = ctx.saved_tensors
            return sg.stack([grad_output * x, grad_output * x])  # shape (2, n): summed to (n,) = 2x

    x = sg.tensor([1.0, 3.0], requires_grad=True)
    g, = sg.autograd.grad(Square.apply(x).sum(), x, create_graph=True)
    assert g.tolist() == [2.0, 6.0] and g.requires_grad
    h, = sg.autograd.grad(g.sum(), x)
    assert h.tolist() == [2.0, 2.0]


def _hooked(lib, hook, on_leaf, create_graph=False):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    (x if on_leaf else y).register_hook(hook)
    (y * y).sum().backward(create_graph=create_graph)
    return x.grad


def _longer(g):
    """A hook returning three values for a gradient of two (of the gradient's dtype)."""
    ones = sg.tensor(np.ones(3)) if isinstance(g, sg.Tensor) else _torch_tensor(np.ones(3))
    return ones * g.sum()


@pytest.mark.parametrize("on_leaf", [False, True], ids=["non-leaf", "leaf"])
@pytest.mark.parametrize("create_graph", [False, True])
def test_a_hook_that_changes_the_shape_is_an_error(on_leaf, create_graph):
    with pytest.raises(RuntimeError, match=r"hook '_longer' has changed the size of value \(from \[2\] to \[3\]\)"):
        _hooked(sg, _longer, on_leaf, create_graph)
    with pytest.raises(RuntimeError, match=r"hook '<lambda>' has changed the size of value"):
        _hooked(sg, lambda g: g.sum(), on_leaf, create_graph)


def _torch_tensor(array):
    import torch
    return torch.tensor(array, dtype=torch.float32)


@pytest.mark.parametrize("on_leaf", [False, True], ids=["non-leaf", "leaf"])
def test_a_hook_that_changes_the_dtype_is_an_error(on_leaf):
    with pytest.raises(RuntimeError, match=r"hook '<lambda>' has changed the type of value \(was float64 got "
                                           r"float32\)"):
        _hooked(sg, lambda g: g.to(sg.float32) * 2, on_leaf)
    assert _hooked(sg, lambda g: g.to(sg.float64) * 2, on_leaf).tolist() == [16.0, 32.0]


@pytest.mark.parametrize("on_leaf", [False, True], ids=["non-leaf", "leaf"])
def test_hook_checks_match_torch(on_leaf):
    torch = pytest.importorskip("torch")

    def hooked(hook):
        x = torch.tensor([1.0, 2.0], requires_grad=True)  # float32, as _longer's result
        y = x * 2
        (x if on_leaf else y).register_hook(hook)
        (y * y).sum().backward()

    with pytest.raises(RuntimeError, match=r"hook '_longer' has changed the size of value"):
        hooked(_longer)
    with pytest.raises(RuntimeError, match=r"hook '<lambda>' has changed the type of value"):
        hooked(lambda g: g.to(torch.float64))
