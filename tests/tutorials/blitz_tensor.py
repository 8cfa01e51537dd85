# The earlier text of PyTorch's 60-minute blitz, "What is PyTorch?" (beginner_source/blitz/tensor_tutorial.py before
# it became the Basics tensors tutorial), `import torch` renamed: empty/zeros/tensor, new_ones, *_like, size(),
# addition three ways (with out=) and in place, indexing, view, item(), the NumPy bridge both ways. Changed (marked):
# random tensors come from NumPy's generator (symgrad's random numbers are not PyTorch's), empty() is printed
# after filling it (its values are whatever memory held), and the CUDA part is left out.
from __future__ import print_function
import numpy as np
import symgrad as sg

rng = np.random.default_rng(10)  # changed: the random numbers' source

x = sg.empty(5, 3)
print(x.fill_(0.5))  # changed: filled before printing

x = sg.tensor(rng.random((5, 3)), dtype=sg.float)  # changed: sg.rand(5, 3)
print(x)

x = sg.zeros(5, 3, dtype=sg.long)
print(x)

x = sg.tensor([5.5, 3])
print(x)

x = x.new_ones(5, 3, dtype=sg.double)      # new_* methods take in sizes
print(x)

x = sg.tensor(rng.standard_normal((5, 3)), dtype=sg.float)  # changed: sg.randn_like(x, dtype=sg.float)
print(x)                                      # result has the same size

print(x.size())

y = sg.tensor(rng.random((5, 3)), dtype=sg.float)  # changed: sg.rand(5, 3)
print(x + y)

print(sg.add(x, y))

result = sg.empty(5, 3)
sg.add(x, y, out=result)
print(result)

# adds x to y
y.add_(x)
print(y)

print(x[:, 1])

x = sg.tensor(rng.standard_normal((4, 4)), dtype=sg.float)  # changed: sg.randn(4, 4)
y = x.view(16)
z = x.view(-1, 8)  # the size -1 is inferred from other dimensions
print(x.size(), y.size(), z.size())

x = sg.tensor(rng.standard_normal(1), dtype=sg.float)  # changed: sg.randn(1)
print(x)
print(x.item())

a = sg.ones(5, dtype=sg.float)  # changed: dtype= (a bare sg.ones(5) is NumPy's array)
print(a)

b = a.numpy()
print(b)

a.add_(1)
print(a)
print(b)

a = np.ones(5)
b = sg.from_numpy(a)
np.add(a, 1, out=a)
print(a)
print(b)
