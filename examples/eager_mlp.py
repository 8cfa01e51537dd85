"""A small MLP trained with sg.nn and sg.optim.SGD on a synthetic regression task (y = sin(3x)).

Weights start from a seeded NumPy draw so that PyTorch, given the same program, prints the same.
Run: python examples/eager_mlp.py
"""
import numpy as np

import symgrad as sg

rng = np.random.default_rng(0)
x_np = np.linspace(-1, 1, 64).reshape(-1, 1)
x = sg.tensor(x_np, dtype=sg.float32)
y = sg.tensor(np.sin(3 * x_np), dtype=sg.float32)

model = sg.nn.Sequential(
    sg.nn.Linear(1, 32, dtype=sg.float32),
    sg.nn.Tanh(),
    sg.nn.Linear(32, 1, dtype=sg.float32),
)
with sg.no_grad():
    for p in model.parameters():
        p.copy_(sg.tensor(rng.uniform(-0.5, 0.5, size=tuple(p.shape)), dtype=sg.float32))

loss_fn = sg.nn.MSELoss()
optimizer = sg.optim.SGD(model.parameters(), lr=0.2, momentum=0.9)
print(model)

for step in range(301):
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    if step % 100 == 0:
        print(f"step {step:3d}  loss {loss.item():.5f}")

with sg.no_grad():
    final = loss_fn(model(x), y).item()
print(f"final loss {final:.5f}")
