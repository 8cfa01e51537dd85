"""Custom autograd.Functions: a forward and a hand-written backward, as in the PyTorch tutorial.

Run: python examples/eager_custom_function.py
"""
import symgrad as sg


class MyReLU(sg.autograd.Function):
    """ReLU with the tutorial's backward: copy the gradient, zero it where the input was negative."""

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


class LegendrePolynomial3(sg.autograd.Function):
    """P3(x) = (5x^3 - 3x) / 2, with P3'(x) = 1.5 (5x^2 - 1)."""

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return 0.5 * (5 * input ** 3 - 3 * input)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        return grad_output * 1.5 * (5 * input ** 2 - 1)


x = sg.tensor([-2.0, -0.5, 0.5, 2.0], requires_grad=True)
y = MyReLU.apply(x * 3)
print("MyReLU(3x):", y.detach())
print("grad_fn:", y.grad_fn.name())
(y ** 2).sum().backward()
print("d/dx sum(MyReLU(3x)^2):", x.grad)

x.grad = None
p = LegendrePolynomial3.apply(x)
print("P3(x):", p.detach())
p.sum().backward()
print("P3'(x):", x.grad)

# The hand-written backward is differentiable too (it is made of tensor ops)
g, = sg.autograd.grad(LegendrePolynomial3.apply(x).sum(), x, create_graph=True)
h, = sg.autograd.grad(g.sum(), x)
print("P3''(x) = 15x:", h)
