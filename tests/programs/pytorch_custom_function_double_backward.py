# pytorch/tutorials intermediate_source/custom_function_double_backward_tutorial.rst ("Double Backward with Custom
# Functions", Soumith Chintala's and Jeffrey Wan's): custom autograd Functions whose backward is recorded so that
# it can be differentiated again: saving an input (Square), an output (Exp), intermediate results returned as
# extra outputs (Sinh), what not to do (SinhBad: intermediates kept on ctx, so the gradient has no graph), and a
# backward that is itself a custom Function (Cube, CubeBackward); each checked by gradcheck and gradgradcheck.
# `import torch` renamed. Changed (marked): torch.rand's values from NumPy (symgrad's random numbers are not
# PyTorch's); each gradcheck's result printed; the torchviz graphs (make_dot) not drawn: the gradients they show
# printed instead, with whether they carry a graph (requires_grad) and their own gradient where they do.
import numpy as np  # changed: the random numbers' source
import symgrad as torch

rng = np.random.default_rng(0)  # changed


def rand(*size, requires_grad, dtype):  # changed: torch.rand's values from NumPy
    return torch.tensor(rng.uniform(0, 1, size), dtype=dtype, requires_grad=requires_grad)  # changed


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        # Because we are saving one of the inputs use `save_for_backward`
        # Save non-tensors and non-inputs/non-outputs directly on ctx
        ctx.save_for_backward(x)
        return x**2

    @staticmethod
    def backward(ctx, grad_out):
        # A function support double backward automatically if autograd
        # is able to record the computations performed in backward
        x, = ctx.saved_tensors
        return grad_out * 2 * x

# Use double precision because finite differencing method magnifies errors
x = rand(3, 3, requires_grad=True, dtype=torch.double)  # changed: torch.rand
print(torch.autograd.gradcheck(Square.apply, x))  # changed: printed
# Use gradcheck to verify second-order derivatives
print(torch.autograd.gradgradcheck(Square.apply, x))  # changed: printed

x = torch.tensor(1., requires_grad=True).clone()
out = Square.apply(x)
grad_x, = torch.autograd.grad(out, x, create_graph=True)
print(grad_x, grad_x.requires_grad, torch.autograd.grad(grad_x, x))  # changed: not drawn by torchviz.make_dot


class Exp(torch.autograd.Function):
    # Simple case where everything goes well
    @staticmethod
    def forward(ctx, x):
        # This time we save the output
        result = torch.exp(x)
        # Note that we should use `save_for_backward` here when
        # the tensor saved is an ouptut (or an input).
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_out):
        result, = ctx.saved_tensors
        return result * grad_out

x = torch.tensor(1., requires_grad=True, dtype=torch.double).clone()
# Validate our gradients using gradcheck
print(torch.autograd.gradcheck(Exp.apply, x))  # changed: printed
print(torch.autograd.gradgradcheck(Exp.apply, x))  # changed: printed

out = Exp.apply(x)
grad_x, = torch.autograd.grad(out, x, create_graph=True)
print(grad_x, grad_x.requires_grad, torch.autograd.grad(grad_x, x))  # changed: not drawn by torchviz.make_dot


class Sinh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        expx = torch.exp(x)
        expnegx = torch.exp(-x)
        ctx.save_for_backward(expx, expnegx)
        # In order to be able to save the intermediate results, a trick is to
        # include them as our outputs, so that the backward graph is constructed
        return (expx - expnegx) / 2, expx, expnegx

    @staticmethod
    def backward(ctx, grad_out, _grad_out_exp, _grad_out_negexp):
        expx, expnegx = ctx.saved_tensors
        grad_input = grad_out * (expx + expnegx) / 2
        # We cannot skip accumulating these even though we won't use the outputs
        # directly. They will be used later in the second backward.
        grad_input += _grad_out_exp * expx
        grad_input -= _grad_out_negexp * expnegx
        return grad_input

def sinh(x):
    # Create a wrapper that only returns the first output
    return Sinh.apply(x)[0]

x = rand(3, 3, requires_grad=True, dtype=torch.double)  # changed: torch.rand
print(torch.autograd.gradcheck(sinh, x))  # changed: printed
print(torch.autograd.gradgradcheck(sinh, x))  # changed: printed

out = sinh(x)
grad_x, = torch.autograd.grad(out.sum(), x, create_graph=True)
print(grad_x, grad_x.requires_grad, torch.autograd.grad(grad_x.sum(), x))  # changed: not drawn by make_dot


class SinhBad(torch.autograd.Function):
    # This is an example of what NOT to do!
    @staticmethod
    def forward(ctx, x):
        expx = torch.exp(x)
        expnegx = torch.exp(-x)
        ctx.expx = expx
        ctx.expnegx = expnegx
        return (expx - expnegx) / 2

    @staticmethod
    def backward(ctx, grad_out):
        expx = ctx.expx
        expnegx = ctx.expnegx
        grad_input = grad_out * (expx + expnegx) / 2
        return grad_input

out = SinhBad.apply(x)
grad_x, = torch.autograd.grad(out.sum(), x, create_graph=True)
print(grad_x, grad_x.requires_grad)  # changed: not drawn by torchviz.make_dot: grad_x has no graph


def cube_forward(x):
    return x**3

def cube_backward(grad_out, x):
    return grad_out * 3 * x**2

def cube_backward_backward(grad_out, sav_grad_out, x):
    return grad_out * sav_grad_out * 6 * x

def cube_backward_backward_grad_out(grad_out, x):
    return grad_out * 3 * x**2

class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return cube_forward(x)

    @staticmethod
    def backward(ctx, grad_out):
        x, = ctx.saved_tensors
        return CubeBackward.apply(grad_out, x)

class CubeBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, grad_out, x):
        ctx.save_for_backward(x, grad_out)
        return cube_backward(grad_out, x)

    @staticmethod
    def backward(ctx, grad_out):
        x, sav_grad_out = ctx.saved_tensors
        dx = cube_backward_backward(grad_out, sav_grad_out, x)
        dgrad_out = cube_backward_backward_grad_out(grad_out, x)
        return dgrad_out, dx

x = torch.tensor(2., requires_grad=True, dtype=torch.double)

print(torch.autograd.gradcheck(Cube.apply, x))  # changed: printed
print(torch.autograd.gradgradcheck(Cube.apply, x))  # changed: printed

out = Cube.apply(x)
grad_x, = torch.autograd.grad(out, x, create_graph=True)
print(grad_x, grad_x.requires_grad, torch.autograd.grad(grad_x, x))  # changed: not drawn by torchviz.make_dot
