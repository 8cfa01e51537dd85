"""The chain rule on scalars, PyTorch style: z = (w*x + b)**2, then z.backward().

Run: python examples/eager_chain_rule.py  (the same program with `import torch as sg` prints the same)
"""
import symgrad as sg

x = sg.tensor(3.0)
w = sg.tensor(2.0, requires_grad=True)
b = sg.tensor(1.0, requires_grad=True)

y = w * x + b          # y = 7
z = y ** 2             # z = 49
print("z:", z)
print("z.grad_fn:", z.grad_fn.name())

z.backward()           # dz/dw = 2*y*x = 42, dz/db = 2*y = 14
print("dz/dw:", w.grad)
print("dz/db:", b.grad)
print("x.grad (x does not require grad):", x.grad)
