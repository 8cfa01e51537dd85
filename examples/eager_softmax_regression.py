"""Softmax regression (a linear layer + cross-entropy) on three Gaussian blobs in 2-D, trained with Adam.

Run: python examples/eager_softmax_regression.py
"""
import numpy as np

import symgrad as sg

rng = np.random.default_rng(2)
centers = np.array([[0.0, 2.0], [-2.0, -1.0], [2.0, -1.0]])
labels = np.repeat(np.arange(3), 50)
points = centers[labels] + 0.7 * rng.standard_normal((150, 2))
x, y = sg.tensor(points), sg.tensor(labels)

weight = sg.tensor(np.zeros((2, 3)), requires_grad=True)
bias = sg.tensor(np.zeros(3), requires_grad=True)
optimizer = sg.optim.Adam([weight, bias], lr=0.1)

for step in range(101):
    optimizer.zero_grad()
    logits = x @ weight + bias
    loss = sg.nn.functional.cross_entropy(logits, y)
    loss.backward()
    optimizer.step()
    if step % 25 == 0:
        print(f"step {step:3d}  loss {loss.item():.4f}")

with sg.no_grad():
    predicted = (x @ weight + bias).argmax(1)
    accuracy = (predicted == y).float().mean().item()
    origin = sg.tensor(np.zeros((1, 2)))
    probabilities = sg.nn.functional.softmax(origin @ weight + bias, dim=1)
print(f"training accuracy {accuracy:.3f}")
print("class probabilities at (0, 0):", [round(p, 3) for p in probabilities.reshape(-1).tolist()])
