"""Linear regression by plain gradient descent on synthetic data y = 2x + 1 + noise.

Parameters are updated by hand under no_grad(), as in the classic PyTorch tutorial.
Run: python examples/eager_linear_regression.py
"""
import numpy as np

import symgrad as sg

rng = np.random.default_rng(0)
x_np = rng.uniform(-1, 1, size=(100, 1))
y_np = 2 * x_np + 1 + 0.05 * rng.standard_normal((100, 1))
x, y = sg.tensor(x_np, dtype=sg.float32), sg.tensor(y_np, dtype=sg.float32)

w = sg.tensor([[0.0]], requires_grad=True)
b = sg.tensor([0.0], requires_grad=True)
learning_rate = 0.1

for epoch in range(201):
    prediction = x @ w + b
    loss = ((prediction - y) ** 2).mean()
    loss.backward()
    with sg.no_grad():
        w -= learning_rate * w.grad
        b -= learning_rate * b.grad
    w.grad.zero_()
    b.grad.zero_()
    if epoch % 50 == 0:
        print(f"epoch {epoch:3d}  loss {loss.item():.6f}")

print(f"learned w = {w.item():.4f}, b = {b.item():.4f}  (true w = 2, b = 1)")
