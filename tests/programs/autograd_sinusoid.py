# HIPS/autograd examples/sinusoid.py: first and second derivatives of sin by grad of grad, mapped over scalars, and
# of its Taylor series summed in a Python loop that stops when a term is small. `autograd.numpy` is
# `symgrad.numpy`, autograd's grad is `sg`'s. Changed (marked): values printed instead of plotted (20 points, not
# 100); the Taylor series' `if np.abs(currterm) < 0.2: break` branches on the value being differentiated, which
# autograd's grad and JAX's (un-jitted: its reverse-mode values are concrete) run, and symgrad refuses (it traces
# ahead; a TracerError naming the line, suggesting sg.where/sg.cond/sg.while_loop): the series is evaluated at a
# Python float only.
import symgrad.numpy as np
from symgrad import grad


def fun(x):
    return np.sin(x)


d_fun = grad(fun)  # First derivative
dd_fun = grad(d_fun)  # Second derivative

x = np.linspace(-10, 10, 20)  # changed: 100 points
print(np.array(list(map(fun, x))))  # changed: printed, not plotted
print(np.array(list(map(d_fun, x))))  # changed
print(np.array(list(map(dd_fun, x))))  # changed


# Taylor approximation to sin function
def fun(x):
    currterm = x
    ans = currterm
    for i in range(1000):
        print(i, end=" ")
        currterm = -currterm * x**2 / ((2 * i + 3) * (2 * i + 2))
        ans = ans + currterm
        if np.abs(currterm) < 0.2:
            break  # (Very generous tolerance!)

    return ans


d_fun = grad(fun)
dd_fun = grad(d_fun)

print(fun(2.5))  # changed: the loop on a Python float; grad(fun) is refused (see the header)
