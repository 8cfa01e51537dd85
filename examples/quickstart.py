"""symgrad in one page: trace a loss, look at its IR, differentiate it, check it, compile it.

Run: python examples/quickstart.py
"""
import numpy as np

import symgrad as sg


def loss(w, b, x, y):
    """Mean squared error of a one-layer tanh model: ordinary NumPy-style code against `sg`."""
    pred = sg.tanh(x @ w + b)
    return sg.mean((pred - y) ** 2)


rng = np.random.default_rng(0)
w, b = rng.normal(size=(3, 2)), rng.normal(size=2)
x, y = rng.normal(size=(5, 3)), rng.normal(size=(5, 2))

# 1. Tracing runs the Python function once on these shapes/dtypes and records a static SSA graph.
print("== forward IR ==")
print(sg.trace(loss, w, b, x, y))

# 2. Transforms return ordinary functions, so the gradient program can be traced and printed too:
#    it holds the forward pass and the adjoint pass derived from it.
value_and_grad = sg.value_and_grad(loss, argnums=(0, 1))
print("\n== value-and-gradient IR ==")
print(sg.trace(value_and_grad, w, b, x, y))

# 3. Called on arrays, the transform compiles once per signature and returns NumPy arrays.
value, (dw, db) = value_and_grad(w, b, x, y)
print(f"\nloss = {value:.6f}")


# 4. Trust, but verify: central finite differences on every entry of w and b.
def numeric_grad(f, a, eps=1e-6):
    g = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        bump = np.zeros_like(a)
        bump[i] = eps
        g[i] = (f(a + bump) - f(a - bump)) / (2 * eps)
    return g


def np_loss(w, b):
    return np.mean((np.tanh(x @ w + b) - y) ** 2)


err_w = np.max(np.abs(dw - numeric_grad(lambda w_: np_loss(w_, b), w)))
err_b = np.max(np.abs(db - numeric_grad(lambda b_: np_loss(w, b_), b)))
print(f"max |grad - finite difference|: dw {err_w:.2e}, db {err_b:.2e}")
assert max(err_w, err_b) < 1e-8, "gradient disagrees with finite differences"

# 5. The NumPy backend emits plain Python you can read (and keep): forward and adjoint in one function.
step = sg.compile(value_and_grad, backend="numpy")
print("\n== generated NumPy source ==")
print(step.lower(w, b, x, y).source)
