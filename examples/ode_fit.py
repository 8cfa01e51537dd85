"""Fit the parameters of an ODE integrated with `sg.fori_loop`, with SciPy's L-BFGS-B and symgrad's gradient.

A damped, driven pendulum  theta'' = -g sin(theta) - c theta' + a cos(t)  is integrated by 1000 RK4 steps.
The loop stays rolled in the IR (one `scan` node whose body is one step), so the first call (trace,
derivative, compile) takes a fraction of a second and each value-and-gradient call runs native code.
We recover (g, c, a) from a noisy trajectory.

Run: python examples/ode_fit.py
"""
import sys
import time

import numpy as np

import symgrad as sg

try:
    from scipy.optimize import minimize
except ImportError:
    print("SciPy is not installed; `pip install scipy` to run this example.")
    sys.exit(0)

STEPS, DT, EVERY = 1000, 0.01, 50  # 10 s of motion, observed every 0.5 s


def field(t, y, p):
    theta, omega = y[0], y[1]
    return sg.stack([omega, -p[0] * sg.sin(theta) - p[1] * omega + p[2] * sg.cos(t)])


def trajectory(p, y0):
    """RK4 from y0; returns the angle at every EVERY-th step (a scan storing one observation per block)."""
    def rk4(i, y):
        t = i * DT
        k1 = field(t, y, p)
        k2 = field(t + DT / 2, y + DT / 2 * k1, p)
        k3 = field(t + DT / 2, y + DT / 2 * k2, p)
        k4 = field(t + DT, y + DT * k3, p)
        return y + DT / 6 * (k1 + 2 * k2 + 2 * k3 + k4)

    def block(y, start):
        y = sg.fori_loop(0, EVERY, lambda j, y: rk4(start * EVERY + j, y), y)
        return y, y[0]

    _, angles = sg.scan(block, y0, np.arange(STEPS // EVERY))
    return angles


y0 = np.array([1.0, 0.0])
truth = np.array([9.81, 0.3, 1.2])
observed = trajectory(truth, y0) + np.random.default_rng(0).normal(scale=0.01, size=STEPS // EVERY)


def loss(p):
    return sg.sum((trajectory(p, y0) - observed) ** 2)


fun = sg.compile(sg.value_and_grad(loss))
p0 = np.array([8.0, 0.1, 0.5])
start = time.perf_counter()
fun(p0)
first = time.perf_counter() - start
start = time.perf_counter()
for _ in range(20):
    fun(p0)
per_call = (time.perf_counter() - start) / 20
sg.check_grads(loss, (p0,), order=1)  # forward and reverse mode against central differences

result = minimize(fun, p0, jac=True, method="L-BFGS-B")
print(f"first call (trace + derivative + compile): {first:.3f} s; then {per_call * 1e3:.3f} ms per value and gradient")
print("gradient at p0: agrees with central differences (forward and reverse mode)")
print(f"success: {result.success}, iterations: {result.nit}")
print(f"recovered (g, c, a) = {np.array2string(result.x, precision=4)}, true {truth}")
print(f"max |p* - p_true| = {np.max(np.abs(result.x - truth)):.2e}")
