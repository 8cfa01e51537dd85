"""sg.autograd.gradcheck and gradgradcheck (PyTorch's checks of custom Functions' first and second derivatives,
which the double backward tutorial calls): their verdicts on right and wrong rules, as PyTorch's."""
import importlib.util

import numpy as np
import pytest

import symgrad as sg


def functions(lib):
    """name -> (function of tensors, inputs): right rules, a wrong first derivative, a wrong second one."""
    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 2

        @staticmethod
        def backward(ctx, grad_out):
            x, = ctx.saved_tensors
            return grad_out * 2 * x

    class WrongSquare(Square):
        @staticmethod
        def backward(ctx, grad_out):
            x, = ctx.saved_tensors
            return grad_out * 2.5 * x

    class WrongSecond(lib.autograd.Function):  # x**3 whose backward is a Function with a wrong backward of its own
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, grad_out):
            x, = ctx.saved_tensors
            return WrongBackward.apply(grad_out, x)

    class WrongBackward(lib.autograd.Function):
        @staticmethod
        def forward(ctx, grad_out, x):
            ctx.save_for_backward(grad_out, x)
            return grad_out * 3 * x ** 2

        @staticmethod
        def backward(ctx, grad):
            grad_out, x = ctx.saved_tensors
            return grad * 3 * x ** 2, grad * grad_out * 5 * x  # (6 x is right)

    x = lib.tensor(np.array([[0.5, -1.5], [2.0, 0.0]]), requires_grad=True)
    y = lib.tensor(np.array([1.0, -2.0]), requires_grad=True)
    return {
        "square": (Square.apply, (x,)), "wrong square": (WrongSquare.apply, (x,)),
        "wrong second": (WrongSecond.apply, (x,)),
        "two outputs, two inputs": (lambda a, b: (a @ b, (a * a).sum() * b.exp()), (x, y)),
        "0-d": (lambda a: a.sin() * a, (lib.tensor(0.7, dtype=lib.float64, requires_grad=True),)),
        "constant input": (lambda a, b: a * b, (x, lib.tensor(np.array([[3.0, 4.0], [5.0, 6.0]])))),
    }


@pytest.mark.parametrize("name", list(functions(sg)))
def test_verdicts_match_pytorch(name):
    torch = pytest.importorskip("torch")
    verdicts = {}
    for lib in (sg, torch):
        fn, inputs = functions(lib)[name]
        verdicts[lib.__name__] = (lib.autograd.gradcheck(fn, inputs, raise_exception=False),
                                  lib.autograd.gradgradcheck(fn, inputs, raise_exception=False))
    assert verdicts["symgrad"] == verdicts["torch"]


def test_a_wrong_rule_raises_pytorchs_error():
    fn, inputs = functions(sg)["wrong square"]
    with pytest.raises(sg.autograd.GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"):
        sg.autograd.gradcheck(fn, inputs)
    assert sg.autograd.gradcheck(*functions(sg)["wrong second"])
    # (PyTorch refuses its torch.tensor(np.zeros((0, 3))), whose strides are (0, 0); torch.zeros(0, 3) passes)
    assert sg.autograd.gradcheck(lambda a: a * 2, sg.tensor(np.zeros((0, 3)), requires_grad=True))
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        sg.autograd.gradgradcheck(*functions(sg)["wrong second"])


@pytest.mark.parametrize("check", ["gradcheck", "gradgradcheck"])
def test_empty_inputs_and_outputs_pass_and_no_input_requiring_grad_is_pytorchs_error(check):
    """An empty input, or an empty output, has an empty Jacobian: True, as PyTorch's (symgrad's reshape of it
    raised a NumPy ValueError); with no input that requires grad there is nothing to check: PyTorch's ValueError
    (symgrad returned True)."""
    libraries = [sg] + ([] if importlib.util.find_spec("torch") is None else [pytest.importorskip("torch")])
    for lib in libraries:
        checked = getattr(lib.autograd, check)
        empty = lib.zeros(0, dtype=lib.float64, requires_grad=True)
        full = lib.tensor([0.5, -1.0], dtype=lib.float64, requires_grad=True)
        assert checked(lambda a: (a * 2).sum(), (empty,)) is True
        assert checked(lambda a: a[:0] * 2, (full,)) is True
        assert checked(lambda a, b: a.sum() * b ** 2, (empty, full)) is True
        with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
            checked(lambda a: a * 2, (full.detach(),))
