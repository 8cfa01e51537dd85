# HIPS/autograd examples/define_gradient.py: a function with a gradient of its own (logsumexp, a primitive with a
# vjp written by hand) inside a larger function, its gradient checked to second order. `autograd.numpy` is
# `symgrad.numpy`; autograd's `@primitive` and `defvjp` are `sg.custom_vjp` and its `defvjp` (JAX's names).
# Changed (marked): the custom vjp in JAX's form (a forward rule saving residuals, a backward rule), check_grads
# in JAX's call form, seeded inputs, and the check's points' values printed.
import numpy.random as npr  # changed: autograd.numpy.random is NumPy's

import symgrad.numpy as np
import symgrad as sg  # changed: autograd's grad and check_grads are sg's


# @primitive tells Autograd not to look inside this function, but instead
# to treat it as a black box, whose gradient might be specified later.
# Functions with this decorator can contain anything that Python knows
# how to execute, and you can do things like in-place operations on arrays.
@sg.custom_vjp  # changed: @primitive
def logsumexp(x):
    """Numerically stable log(sum(exp(x))), also defined in scipy.special"""
    max_x = np.max(x)
    return max_x + np.log(np.sum(np.exp(x - max_x)))


# Next, we write a function that specifies the gradient with a closure.
# The reason for the closure is so that the gradient can depend
# on both the input to the original function (x), and the output of the
# original function (ans).


def logsumexp_vjp(ans, x):
    # If you want to be able to take higher-order derivatives, then all the
    # code inside this function must be itself differentiable by Autograd.
    # This closure multiplies g with the Jacobian of logsumexp (d_ans/d_x).
    # Because Autograd uses reverse-mode differentiation, g contains
    # the gradient of the objective w.r.t. ans, the output of logsumexp.
    # This returned VJP function doesn't close over `x`, so Python can
    # garbage-collect `x` if there are no references to it elsewhere.
    x_shape = x.shape
    return lambda g: np.full(x_shape, g) * np.exp(x - np.full(x_shape, ans))


def logsumexp_fwd(x):  # changed: JAX's form of defvjp's rule, the residuals (ans, x)
    ans = logsumexp(x)
    return ans, (ans, x)


def logsumexp_bwd(residuals, g):  # changed: JAX's form of defvjp's rule, a tuple of cotangents
    return (logsumexp_vjp(*residuals)(g),)


# Now we tell Autograd that logsumexmp has a gradient-making function.
logsumexp.defvjp(logsumexp_fwd, logsumexp_bwd)  # changed: defvjp(logsumexp, logsumexp_vjp)

if __name__ == "__main__":
    npr.seed(0)  # changed: seeded

    # Now we can use logsumexp() inside a larger function that we want
    # to differentiate.
    def example_func(y):
        z = y**2
        lse = logsumexp(z)
        return np.sum(lse)

    grad_of_example = sg.grad(example_func)
    print("Gradient: \n", grad_of_example(npr.randn(10)))

    # Check the gradients numerically, just to be safe.
    y = npr.randn(10)  # changed: named
    sg.check_grads(example_func, (y,), order=2, modes=["rev"])  # changed: JAX's call form (autograd's order is 2)
    hessian = sg.jacrev(sg.grad(example_func))(y)  # changed: printed
    print("value", example_func(y), "Hessian diagonal", np.diag(hessian))  # changed: printed
