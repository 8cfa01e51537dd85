# PyTorch's "Learn the Basics", "Automatic Differentiation with torch.autograd"
# (beginner_source/basics/autogradqs_tutorial.py), `import torch` renamed: a one-layer network with
# binary_cross_entropy_with_logits, grad_fn, backward, disabling gradient tracking (no_grad, detach), and the
# Jacobian product through backward(gradient) with retain_graph, accumulating and zeroed. Changed (marked): w and b
# drawn by NumPy's generator (symgrad's random numbers are not PyTorch's), ones/zeros of one size name their dtype
# (a bare sg.ones(5) is NumPy's array, docs/eager.md "Factories").
import numpy as np
import symgrad as sg

rng = np.random.default_rng(1)  # changed: the random numbers' source

x = sg.ones(5, dtype=sg.float)  # input tensor  # changed: dtype=
y = sg.zeros(3, dtype=sg.float)  # expected output  # changed: dtype=
w = sg.tensor(rng.standard_normal((5, 3)), dtype=sg.float, requires_grad=True)  # changed: sg.randn(5, 3, ...)
b = sg.tensor(rng.standard_normal(3), dtype=sg.float, requires_grad=True)  # changed: sg.randn(3, ...)
z = sg.matmul(x, w)+b
loss = sg.nn.functional.binary_cross_entropy_with_logits(z, y)

print(f"Gradient function for z = {z.grad_fn}")
print(f"Gradient function for loss = {loss.grad_fn}")

loss.backward()
print(w.grad)
print(b.grad)

z = sg.matmul(x, w)+b
print(z.requires_grad)

with sg.no_grad():
    z = sg.matmul(x, w)+b
print(z.requires_grad)

z = sg.matmul(x, w)+b
z_det = z.detach()
print(z_det.requires_grad)

inp = sg.eye(4, 5, requires_grad=True)
out = (inp+1).pow(2).t()
out.backward(sg.ones_like(out), retain_graph=True)
print(f"First call\n{inp.grad}")
out.backward(sg.ones_like(out), retain_graph=True)
print(f"\nSecond call\n{inp.grad}")
inp.grad.zero_()
out.backward(sg.ones_like(out), retain_graph=True)
print(f"\nCall after zeroing gradients\n{inp.grad}")
