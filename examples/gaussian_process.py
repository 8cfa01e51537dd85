"""Gaussian-process regression: fit the kernel's hyperparameters by the marginal likelihood, with sg.linalg.

The negative log marginal likelihood of y under a squared-exponential kernel K = L L^T,
    0.5 y^T K^-1 y + sum(log diag L) + n/2 log(2 pi),
is written with sg.linalg.cholesky and sg.scipy.linalg.cho_solve; its gradient in the log length scale,
signal and noise comes from their derivative rules, compiled once with the value.
Run: python examples/gaussian_process.py
"""
import math

import numpy as np

import symgrad as sg

rng = np.random.default_rng(0)
x = np.sort(rng.uniform(-3.0, 3.0, 40))
y = np.sin(2.0 * x) + 0.1 * rng.normal(size=x.size)


def kernel(a, b, length, signal):
    return signal ** 2 * sg.exp(-0.5 * (a[:, None] - b[None, :]) ** 2 / length ** 2)


def negative_log_likelihood(log_params):
    length, signal, noise = sg.exp(log_params[0]), sg.exp(log_params[1]), sg.exp(log_params[2])
    factor = sg.linalg.cholesky(kernel(x, x, length, signal) + noise ** 2 * np.eye(x.size))
    alpha = sg.scipy.linalg.cho_solve((factor, True), y)
    return 0.5 * sg.sum(y * alpha) + sg.sum(sg.log(sg.diagonal(factor))) + 0.5 * x.size * math.log(2 * math.pi)


step = sg.compile(sg.value_and_grad(negative_log_likelihood))
params = np.log([1.0, 1.0, 0.5])
value, grad = step(params)
eps = 1e-6
central = np.array([(negative_log_likelihood(params + eps * e) - negative_log_likelihood(params - eps * e)) / (2 * eps)
                    for e in np.eye(3)])
print(f"gradient agrees with central differences: max |difference| = {np.max(np.abs(grad - central)):.1e}")

try:
    from scipy.optimize import minimize
    params = minimize(step, params, jac=True, method="L-BFGS-B").x
except ImportError:  # SciPy is optional: plain gradient descent
    for _ in range(2000):
        params = params - 0.01 * step(params)[1]
length, signal, noise = np.exp(params)
print(f"negative log likelihood: {value:.3f} -> {step(params)[0]:.3f}")
print(f"length scale {length:.3f}, signal {signal:.3f}, noise std {noise:.3f} (the data's noise: 0.1)")

grid = np.linspace(-2.5, 2.5, 11)
factor = sg.linalg.cholesky(kernel(x, x, length, signal) + noise ** 2 * np.eye(x.size))
mean = kernel(grid, x, length, signal) @ sg.scipy.linalg.cho_solve((factor, True), y)
print(f"posterior mean vs sin(2x) on a grid: max |error| = {np.max(np.abs(mean - np.sin(2 * grid))):.3f}")
