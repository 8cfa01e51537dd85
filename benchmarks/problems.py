"""The benchmark problems: each loss written once against a NumPy-like namespace, plus its
hand-written NumPy value-and-gradient, so every framework and the baseline do the same work.

A loss is `loss(ns, *args)`; `ns` is `symgrad`, or an adapter giving JAX, PyTorch, PyTensor
or NumPy the few names the losses use (sum, mean, sin, cos, exp, tanh, log1p, softplus,
log_softmax). `make_args(rng, small)` builds the inputs: the benchmark sizes, or small ones
for finite-difference tests of the hand-written gradients (tests/test_benchmark_problems.py).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class Problem:
    """One benchmark: a loss, which arguments to differentiate, inputs, hand-written gradient."""

    name: str
    title: str
    loss: Callable           # loss(ns, *args) -> scalar
    argnums: tuple           # differentiated arguments
    make_args: Callable      # make_args(rng, small: bool) -> tuple of arrays
    hand: Callable           # hand(*args) -> (value, tuple of gradients), NumPy only
    target: float            # issue 3's target for symgrad, seconds per value-and-gradient call


# ----------------------------------------------------------------------------- Rosenbrock

def rosen(ns, x):
    return ns.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def rosen_hand(x):
    d = x[1:] - x[:-1] ** 2
    e = 1.0 - x[:-1]
    value = np.sum(100.0 * d * d + e * e)
    g = np.zeros_like(x)
    g[1:] = 200.0 * d
    g[:-1] += -400.0 * x[:-1] * d - 2.0 * e
    return value, (g,)


def rosen_args(n):
    return lambda rng, small: (rng.normal(size=7 if small else n),)


# ----------------------------------------------------------------------------- double pendulum

# Fixed parameters of the double pendulum: arm lengths and gravity.
L1, L2, GRAVITY = 1.0, 0.7, 9.81


def pendulum(ns, q):
    """Lagrangian T - V of a double pendulum from Cartesian heights and velocities, as a
    physicist writes it (~50 ops); q = (theta1, theta2, omega1, omega2, m1, m2)."""
    th1, th2, w1, w2, m1, m2 = q[0], q[1], q[2], q[3], q[4], q[5]
    y1 = -L1 * ns.cos(th1)
    y2 = y1 - L2 * ns.cos(th2)
    vx1, vy1 = L1 * w1 * ns.cos(th1), L1 * w1 * ns.sin(th1)
    vx2, vy2 = vx1 + L2 * w2 * ns.cos(th2), vy1 + L2 * w2 * ns.sin(th2)
    kinetic = 0.5 * m1 * (vx1 * vx1 + vy1 * vy1) + 0.5 * m2 * (vx2 * vx2 + vy2 * vy2)
    potential = m1 * GRAVITY * y1 + m2 * GRAVITY * y2
    return kinetic - potential


def pendulum_hand(q):
    """The closed-form gradient, derived by hand; scalar math on Python floats (fastest in Python)."""
    th1, th2, w1, w2, m1, m2 = q.tolist()
    c1, s1, c2, s2 = math.cos(th1), math.sin(th1), math.cos(th2), math.sin(th2)
    cd, sd = math.cos(th1 - th2), math.sin(th1 - th2)
    k1 = L1 * L1 * w1 * w1
    coupling = L1 * L2 * w1 * w2
    m12 = m1 + m2
    value = (0.5 * m12 * k1 + 0.5 * m2 * (L2 * L2 * w2 * w2 + 2.0 * coupling * cd)
             + GRAVITY * (m12 * L1 * c1 + m2 * L2 * c2))
    grad = np.array([
        -m2 * coupling * sd - m12 * GRAVITY * L1 * s1,
        m2 * coupling * sd - m2 * GRAVITY * L2 * s2,
        m12 * L1 * L1 * w1 + m2 * L1 * L2 * w2 * cd,
        m2 * L2 * L2 * w2 + m2 * L1 * L2 * w1 * cd,
        0.5 * k1 + GRAVITY * L1 * c1,
        0.5 * (k1 + L2 * L2 * w2 * w2 + 2.0 * coupling * cd) + GRAVITY * (L1 * c1 + L2 * c2),
    ])
    return value, (grad,)


def pendulum_args(rng, small):
    return (np.concatenate([rng.uniform(-1.0, 1.0, 4), rng.uniform(0.5, 2.0, 2)]),)


# ----------------------------------------------------------------------------- elementwise chain

def ew_chain(ns, x):
    return ns.sum(ns.sin(x) * ns.exp(-x * x) + ns.log1p(x * x) + ns.tanh(x))


def ew_chain_hand(x):
    x2 = x * x
    e = np.exp(-x2)
    s = np.sin(x)
    t = np.tanh(x)
    value = np.sum(s * e + np.log1p(x2) + t)
    grad = (np.cos(x) - 2.0 * x * s) * e + 2.0 * x / (1.0 + x2) + (1.0 - t * t)
    return value, (grad,)


def ew_chain_args(rng, small):
    return (rng.normal(size=9 if small else 1_000_000),)


# ----------------------------------------------------------------------------- MLP

def mlp(ns, w1, b1, w2, b2, x, y):
    """Softmax cross-entropy of a one-hidden-layer tanh MLP; y is one-hot."""
    h = ns.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    return -ns.mean(ns.sum(y * ns.log_softmax(logits, axis=1), axis=1))


def mlp_hand(w1, b1, w2, b2, x, y):
    h = np.tanh(x @ w1 + b1)
    z = h @ w2 + b2
    z = z - z.max(axis=1, keepdims=True)
    log_p = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    n = x.shape[0]
    value = -np.sum(y * log_p) / n
    dz = (np.exp(log_p) * y.sum(axis=1, keepdims=True) - y) / n
    dh = (dz @ w2.T) * (1 - h * h)
    return value, (x.T @ dh, dh.sum(axis=0), h.T @ dz, dz.sum(axis=0))


def mlp_args(rng, small):
    n_in, n_hidden, n_out, batch = (5, 4, 3, 6) if small else (64, 128, 10, 256)
    f32 = np.float32
    w1 = (rng.normal(size=(n_in, n_hidden)) / math.sqrt(n_in)).astype(f32)
    b1 = (0.1 * rng.normal(size=n_hidden)).astype(f32)
    w2 = (rng.normal(size=(n_hidden, n_out)) / math.sqrt(n_hidden)).astype(f32)
    b2 = (0.1 * rng.normal(size=n_out)).astype(f32)
    x = rng.normal(size=(batch, n_in)).astype(f32)
    y = np.eye(n_out, dtype=f32)[rng.integers(0, n_out, size=batch)]
    return w1, b1, w2, b2, x, y


# ----------------------------------------------------------------------------- logistic regression

def logreg(ns, w, b, X, y):
    """Mean binary cross-entropy of logistic regression on logits, stable: softplus(z) - y z."""
    z = X @ w + b
    return ns.mean(ns.softplus(z) - y * z)


def logreg_hand(w, b, X, y):
    z = X @ w + b
    softplus = np.logaddexp(0.0, z)
    value = np.mean(softplus - y * z)
    r = (np.exp(z - softplus) - y) / z.shape[0]  # sigmoid(z) = exp(z - softplus(z)), no overflow
    return value, (X.T @ r, np.sum(r))


def logreg_args(rng, small):
    n, d = (12, 4) if small else (10_000, 100)
    X = rng.normal(size=(n, d))
    w = rng.normal(size=d) / math.sqrt(d)
    y = (rng.random(n) < 0.5).astype(np.float64)
    return w, np.array(0.1), X, y


PROBLEMS = [
    Problem("rosen10", "Rosenbrock N=10, f64", rosen, (0,), rosen_args(10), rosen_hand, 1.0e-6),
    Problem("tiny", "double-pendulum Lagrangian, f64[6]", pendulum, (0,), pendulum_args, pendulum_hand, 2.0e-6),
    Problem("rosen1m", "Rosenbrock N=1e6, f64", rosen, (0,), rosen_args(1_000_000), rosen_hand, 1.2e-3),
    Problem("ew1m", "sum(sin(x)exp(-x^2)+log1p(x^2)+tanh(x)), N=1e6, f64", ew_chain, (0,), ew_chain_args,
            ew_chain_hand, 10e-3),
    Problem("mlp", "MLP 64-128 tanh-10, softmax CE, batch 256, f32", mlp, (0, 1, 2, 3), mlp_args, mlp_hand,
            170e-6),
    Problem("logreg", "logistic regression, X 10000x100, mean BCE, f64", logreg, (0, 1), logreg_args,
            logreg_hand, 280e-6),
]
BY_NAME = {p.name: p for p in PROBLEMS}
