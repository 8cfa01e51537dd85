# PyTorch's "Autograd mechanics" notes (docs/source/notes/autograd.rst) and the gradient-tracking snippets of "A
# Gentle Introduction to torch.autograd", `import torch` renamed: requires_grad flags through ops, freezing part of a
# model, no_grad / enable_grad / set_grad_enabled / inference_mode, detach, in-place correctness checks, and the
# errors PyTorch raises for them (each printed as its type and first line). Changed (marked): random tensors come
# from NumPy's generator (symgrad's random numbers are not PyTorch's), and prints added to show each result.
import re

import numpy as np
import symgrad as sg
from symgrad import nn, optim

rng = np.random.default_rng(9)  # changed: the random numbers' source


def randn(*shape, **kwargs):  # changed: stands for sg.randn
    return sg.tensor(rng.standard_normal(shape), dtype=sg.float, **kwargs)


def report(f):  # changed: prints what a snippet raises: its type and the first clause of its message (symgrad's
    try:          # messages name the tensor in its own words after it, and suggest another fix than PyTorch's hint)
        f()
        print("no error")
    except Exception as e:
        print(type(e).__name__ + ":", re.split(r"[:(]", str(e))[0].strip())


# Setting requires_grad
x = randn(5, 5)  # requires_grad=False by default
y = randn(5, 5)  # requires_grad=False by default
z = randn(5, 5, requires_grad=True)
a = x + y
print(f"Does `a` require gradients?: {a.requires_grad}")
b = x + z
print(f"Does `b` require gradients?: {b.requires_grad}")
print(a.is_leaf, b.is_leaf, z.is_leaf, b.grad_fn)

# Freezing part of a model
model = nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 4))
for param in model.parameters():
    param.requires_grad = False
model.fc = nn.Linear(4, 3)
optimizer = optim.SGD(model.fc.parameters(), lr=1e-2, momentum=0.9)
print([name for name, param in model.named_parameters() if param.requires_grad])
with sg.no_grad():  # changed: fixed weights
    for param in model.parameters():
        param.copy_(sg.tensor(rng.uniform(-0.5, 0.5, tuple(param.shape))))
out = model(randn(2, 6))  # (fc joined the Sequential: it runs last)
out.sum().backward()
print(model[0].weight.grad, model.fc.bias.grad)

# Grad modes
x = randn(3, requires_grad=True)
with sg.no_grad():
    y = x * 2
print(y.requires_grad)
with sg.no_grad():
    with sg.enable_grad():
        y = x * 2
print(y.requires_grad)
is_train = False
with sg.set_grad_enabled(is_train):
    y = x * 2
print(y.requires_grad)
sg.set_grad_enabled(True)
y = x * 2
print(y.requires_grad)
with sg.inference_mode():
    y = x * 2
print(y.requires_grad)


@sg.no_grad()
def doubler(x):
    return x * 2


print(doubler(x).requires_grad)
print(x.detach().requires_grad, x.detach().is_leaf)

# In-place correctness checks
a = sg.tensor([1., 2., 3.], requires_grad=True)
b = a.sigmoid()
b.mul_(2)
print(b)
report(lambda: b.sum().backward())

c = sg.tensor([1., 2., 3.], requires_grad=True)
report(lambda: c.add_(1))
with sg.no_grad():
    c.add_(1)
print(c)

d = c * 2
d.sum().backward(retain_graph=False)
e = (c ** 2).sum()
e.backward()
report(lambda: e.backward())
print(c.grad)

report(lambda: (c * 2).backward())
report(lambda: sg.tensor([1, 2], requires_grad=True))
v = c.exp()
v.add_(1)
print(v.grad_fn)
w = c.tanh()
w[0] = 0
print(w, w.grad_fn)
report(lambda: w.sum().backward())  # tanh saved its output, which w[0] = 0 changed
print(c.grad)
report(lambda: c.numpy())
print(c.detach().numpy(), c.data)
