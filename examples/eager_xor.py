"""XOR learned from scratch: raw tensors for the weights, no nn.Module, full-batch gradient descent.

Run: python examples/eager_xor.py
"""
import numpy as np

import symgrad as sg

rng = np.random.default_rng(1)
x = sg.tensor([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
y = sg.tensor([[0.0], [1.0], [1.0], [0.0]])

w1 = sg.tensor(rng.standard_normal((2, 8)), dtype=sg.float32, requires_grad=True)
b1 = sg.tensor(np.zeros(8), dtype=sg.float32, requires_grad=True)
w2 = sg.tensor(rng.standard_normal((8, 1)), dtype=sg.float32, requires_grad=True)
b2 = sg.tensor(np.zeros(1), dtype=sg.float32, requires_grad=True)
params = [w1, b1, w2, b2]

for step in range(2001):
    hidden = sg.tanh(x @ w1 + b1)
    prob = sg.sigmoid(hidden @ w2 + b2)
    loss = -(y * sg.log(prob) + (1 - y) * sg.log(1 - prob)).mean()
    loss.backward()
    with sg.no_grad():
        for p in params:
            p -= 0.5 * p.grad
            p.grad.zero_()
    if step % 500 == 0:
        print(f"step {step:4d}  loss {loss.item():.4f}")

with sg.no_grad():
    prob = sg.sigmoid(sg.tanh(x @ w1 + b1) @ w2 + b2)
print("predictions:", [round(p, 3) for p in prob.reshape(-1).tolist()])
print("rounded:    ", [int(p > 0.5) for p in prob.reshape(-1).tolist()], " (target [0, 1, 1, 0])")
