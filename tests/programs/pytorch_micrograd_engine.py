# karpathy/micrograd test/test_engine.py (MIT License, Copyright (c) 2020 Andrej Karpathy): the PyTorch halves of its
# two tests, which check micrograd's scalar engine against PyTorch (torch.Tensor([...]).double(), requires_grad set
# as an attribute, relu, powers, a reflected division 10.0 / f, += rebinding, backward of a 1-element tensor).
# `import torch` renamed. Changed (marked): micrograd's halves and the asserts left out (micrograd is not installed);
# the values and gradients printed instead.
import symgrad as torch  # changed: import torch

def test_sanity_check():

    x = torch.Tensor([-4.0]).double()
    x.requires_grad = True
    z = 2 * x + 2 + x
    q = z.relu() + z * x
    h = (z * z).relu()
    y = h + q + q * x
    y.backward()
    xpt, ypt = x, y

    print(ypt.data.item(), xpt.grad.item())  # changed: printed, not compared with micrograd's

def test_more_ops():

    a = torch.Tensor([-4.0]).double()
    b = torch.Tensor([2.0]).double()
    a.requires_grad = True
    b.requires_grad = True
    c = a + b
    d = a * b + b**3
    c = c + c + 1
    c = c + 1 + c + (-a)
    d = d + d * 2 + (b + a).relu()
    d = d + 3 * d + (b - a).relu()
    e = c - d
    f = e**2
    g = f / 2.0
    g = g + 10.0 / f
    g.backward()
    apt, bpt, gpt = a, b, g

    print(gpt.data.item())  # changed: printed, not compared with micrograd's
    print(apt.grad.item(), bpt.grad.item())  # changed: printed

test_sanity_check()  # changed: called
test_more_ops()  # changed: called
