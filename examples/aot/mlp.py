"""An MLP's loss, compiled ahead of time: `symgrad compile examples/aot/mlp.py:loss ...` (see README.md).

Run as a script, it does the same through the Python API (sg.aot.compile) and checks the
loaded artifact against sg.compile:  python examples/aot/mlp.py build/mlp
"""
import sys

import numpy as np

import symgrad as sg

N_IN, N_HIDDEN, N_OUT, BATCH = 4, 8, 3, 5


def loss(w1, b1, w2, b2, x, y):
    """Softmax cross-entropy of a one-hidden-layer tanh MLP; y is one-hot."""
    h = sg.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    return -sg.mean(sg.sum(y * sg.log_softmax(logits, axis=1), axis=1))


def fixed_inputs():
    """The inputs main.c uses: w[i] = sin(i + k) / 2 style, reproducible in C without a RNG."""
    def ramp(shape, phase):
        return (0.5 * np.sin(np.arange(np.prod(shape), dtype=np.float64) + phase)).reshape(shape).astype(np.float32)
    y = np.zeros((BATCH, N_OUT), np.float32)
    y[np.arange(BATCH), np.arange(BATCH) % N_OUT] = 1.0
    return (ramp((N_IN, N_HIDDEN), 1.0), ramp((N_HIDDEN,), 2.0), ramp((N_HIDDEN, N_OUT), 3.0), ramp((N_OUT,), 4.0),
            ramp((BATCH, N_IN), 5.0), y)


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "build/mlp"
    args = fixed_inputs()
    sg.aot.compile(loss, args, grad=["w1", "b1", "w2", "b2"], value_and_grad=True, out=out)
    step = sg.load(out).value_and_grad
    value, grads = step(*args)
    expected_value, expected_grads = sg.compile(sg.value_and_grad(loss, argnums=(0, 1, 2, 3)))(*args)
    assert np.allclose(value, expected_value, rtol=1e-5)
    assert all(np.allclose(g, e, rtol=1e-4, atol=1e-6) for g, e in zip(grads, expected_grads))
    print(f"loss = {float(value):.6f}; gradients match sg.compile")
