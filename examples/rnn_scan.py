"""Train a small recurrent network over a sequence with `sg.scan`: one step of the cell is traced once.

An Elman RNN  h_t = tanh(W h_{t-1} + U x_t + b),  y_t = V h_t  learns to predict the next sample of a
noisy sum of sines, 200 steps long. The scan's reverse mode stores one hidden state per step and
recomputes the cell from it. Gradients are checked against central differences before training.

Run: python examples/rnn_scan.py
"""
import time

import numpy as np

import symgrad as sg

HIDDEN, LENGTH = 16, 200
rng = np.random.default_rng(0)
t = np.arange(LENGTH + 1) * 0.1
signal = np.sin(t) + 0.5 * np.sin(2.3 * t) + rng.normal(scale=0.02, size=t.shape)
inputs, targets = signal[:-1, None], signal[1:]


def init_params():
    return {"W": rng.normal(scale=0.3 / np.sqrt(HIDDEN), size=(HIDDEN, HIDDEN)),
            "U": rng.normal(scale=0.5, size=(HIDDEN, 1)), "b": np.zeros(HIDDEN),
            "V": rng.normal(scale=0.3 / np.sqrt(HIDDEN), size=HIDDEN)}


def predictions(params, xs):
    def cell(h, x):
        h = sg.tanh(params["W"] @ h + params["U"] @ x + params["b"])
        return h, params["V"] @ h
    _, ys = sg.scan(cell, np.zeros(HIDDEN), xs)
    return ys


def loss(params):
    return sg.mean((predictions(params, inputs) - targets) ** 2)


params = init_params()
step = sg.compile(sg.value_and_grad(loss))
start = time.perf_counter()
first_loss, _ = step(params)
print(f"first call (trace + derivative + compile): {time.perf_counter() - start:.3f} s")
sg.check_grads(loss, (params,), order=1, modes="rev")
print(f"gradient: agrees with central differences; initial loss {first_loss:.4f}")

# Adam, written out
moments = {k: (np.zeros_like(v), np.zeros_like(v)) for k, v in params.items()}
start = time.perf_counter()
for iteration in range(1, 301):
    value, grads = step(params)
    for k in params:
        m, v = moments[k]
        m[:] = 0.9 * m + 0.1 * grads[k]
        v[:] = 0.999 * v + 0.001 * grads[k] ** 2
        params[k] = params[k] - 0.02 * (m / (1 - 0.9 ** iteration)) / (np.sqrt(v / (1 - 0.999 ** iteration)) + 1e-8)
elapsed = time.perf_counter() - start
final_loss, _ = step(params)
print(f"300 Adam steps in {elapsed:.2f} s ({elapsed / 300 * 1e3:.2f} ms per step)")
print(f"loss: {first_loss:.4f} -> {final_loss:.4f}")
assert final_loss < first_loss / 5
