"""Differentiate through a Newton solve that stops at a tolerance: reverse mode through `sg.while_loop`.

The root of  f(x; a) = x^3 + a1 x - a0  is found by Newton's iteration, run until |f| < 1e-12, a number
of steps known only at run time. JAX cannot differentiate its while_loop in reverse mode; symgrad keeps
the carries (or, with `checkpoints=`, a bounded number of them) and pulls the gradient back through
the iterations. At convergence it matches the implicit function theorem: dx/da = -(df/da) / (df/dx).

Run: python examples/newton_while.py
"""
import numpy as np

import symgrad as sg


def solve(a, checkpoints=None):
    def not_converged(state):
        x, steps = state
        return (sg.abs(x ** 3 + a[1] * x - a[0]) > 1e-12) & (steps < 50)

    def newton(state):
        x, steps = state
        return x - (x ** 3 + a[1] * x - a[0]) / (3 * x ** 2 + a[1]), steps + 1

    x, steps = sg.while_loop(not_converged, newton, (1.0, np.int64(0)), checkpoints=checkpoints)
    return x, steps


a = np.array([10.0, 2.0])
x, steps = sg.compile(solve)(a)
print(f"root x = {x:.12f} after {steps} Newton steps; f(x) = {x ** 3 + a[1] * x - a[0]:.1e}")

grad = sg.compile(sg.grad(lambda a: solve(a)[0]))(a)
implicit = np.array([1.0, -x]) / (3 * x ** 2 + a[1])  # -(df/da) / (df/dx), df/da = (-1, x)
print(f"reverse mode through the while loop: dx/da = {grad}")
print(f"implicit function theorem:           dx/da = {implicit}")
print(f"max difference: {np.max(np.abs(grad - implicit)):.1e}")

checkpointed = sg.grad(lambda a: solve(a, checkpoints=2)[0])(a)
print(f"with checkpoints=2 (recomputing between them): max difference {np.max(np.abs(checkpointed - grad)):.1e}")
assert np.allclose(grad, implicit, rtol=1e-9) and np.allclose(checkpointed, grad, rtol=1e-12)
