# PyTorch's "Introduction to PyTorch" series, "The Fundamentals of Autograd"
# (beginner_source/introyt/autogradyt_tutorial.py), `import torch` renamed: a sine's graph walked through
# grad_fn.next_functions, gradients of a tiny model through an SGD step, accumulation and zero_grad(set_to_none=False),
# turning autograd off (requires_grad = False, no_grad, a no_grad decorator, detach), the in-place error on a leaf,
# y.backward(v) and autograd.functional's jacobian and vjp. Changed (marked): random tensors and the model's weights
# come from NumPy's generator (symgrad's random numbers are not PyTorch's); matplotlib and the profiler are left
# out; the notebook's displayed values are printed.
import math

import numpy as np
import symgrad as sg

rng = np.random.default_rng(15)  # changed: the random numbers' source


def rand(*shape, **kwargs):  # changed: stands for sg.rand
    return sg.tensor(rng.random(shape), dtype=sg.float, **kwargs)


def randn(*shape, **kwargs):  # changed: stands for sg.randn
    return sg.tensor(rng.standard_normal(shape), dtype=sg.float, **kwargs)


a = sg.linspace(0., 2. * math.pi, steps=25, requires_grad=True, dtype=sg.float)  # changed: dtype= (float64 here)
print(a)

b = sg.sin(a)
print(b)

c = 2 * b
print(c)

d = c + 1
print(d)

out = d.sum()
print(out)

print('d:')
print(d.grad_fn)
print(d.grad_fn.next_functions)
print(d.grad_fn.next_functions[0][0].next_functions)
print(d.grad_fn.next_functions[0][0].next_functions[0][0].next_functions)
print(d.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0].next_functions)
print('\nc:')
print(c.grad_fn)
print('\nb:')
print(b.grad_fn)
print('\na:')
print(a.grad_fn)

out.backward()
print(a.grad)

BATCH_SIZE = 16
DIM_IN = 1000
HIDDEN_SIZE = 100
DIM_OUT = 10


class TinyModel(sg.nn.Module):

    def __init__(self):
        super(TinyModel, self).__init__()

        self.layer1 = sg.nn.Linear(DIM_IN, HIDDEN_SIZE)
        self.relu = sg.nn.ReLU()
        self.layer2 = sg.nn.Linear(HIDDEN_SIZE, DIM_OUT)

    def forward(self, x):
        x = self.layer1(x)
        x = self.relu(x)
        x = self.layer2(x)
        return x


some_input = randn(BATCH_SIZE, DIM_IN, requires_grad=False)
ideal_output = randn(BATCH_SIZE, DIM_OUT, requires_grad=False)

model = TinyModel()
model.load_state_dict({name: sg.tensor(rng.uniform(-0.1, 0.1, tuple(p.shape)), dtype=sg.float)  # changed: fixed
                       for name, p in model.state_dict().items()})

print(model.layer2.weight[0][0:10]) # just a small slice
print(model.layer2.weight.grad)

optimizer = sg.optim.SGD(model.parameters(), lr=0.001)

prediction = model(some_input)

loss = (ideal_output - prediction).pow(2).sum()
print(loss)

loss.backward()
print(model.layer2.weight[0][0:10])
print(model.layer2.weight.grad[0][0:10])

optimizer.step()
print(model.layer2.weight[0][0:10])
print(model.layer2.weight.grad[0][0:10])

print(model.layer2.weight.grad[0][0:10])

for i in range(0, 5):
    prediction = model(some_input)
    loss = (ideal_output - prediction).pow(2).sum()
    loss.backward()

print(model.layer2.weight.grad[0][0:10])

optimizer.zero_grad(set_to_none=False)

print(model.layer2.weight.grad[0][0:10])

a = sg.ones(2, 3, requires_grad=True)
print(a)

b1 = 2 * a
print(b1)

a.requires_grad = False
b2 = 2 * a
print(b2)

a = sg.ones(2, 3, requires_grad=True) * 2
b = sg.ones(2, 3, requires_grad=True) * 3

c1 = a + b
print(c1)

with sg.no_grad():
    c2 = a + b

print(c2)

c3 = a * b
print(c3)


def add_tensors1(x, y):
    return x + y


@sg.no_grad()
def add_tensors2(x, y):
    return x + y


a = sg.ones(2, 3, requires_grad=True) * 2
b = sg.ones(2, 3, requires_grad=True) * 3

c1 = add_tensors1(a, b)
print(c1)

c2 = add_tensors2(a, b)
print(c2)

x = rand(5, requires_grad=True)
y = x.detach()

print(x)
print(y)

a = sg.linspace(0., 2. * math.pi, steps=25, requires_grad=True, dtype=sg.float)  # changed: dtype=
try:  # changed: the error printed
    sg.sin(a, out=a)
except RuntimeError as e:
    print(type(e).__name__, str(e).split("(")[0].split(".")[0])

x = randn(3, requires_grad=True)

y = x * 2
while y.data.norm() < 1000:
    y = y * 2

print(y)

v = sg.tensor([0.1, 1.0, 0.0001], dtype=sg.float) # stand-in for gradients
y.backward(v)

print(x.grad)


def exp_adder(x, y):
    return 2 * x.exp() + 3 * y


inputs = (rand(1), rand(1)) # arguments for the function
print(inputs)
print(sg.autograd.functional.jacobian(exp_adder, inputs))  # changed: printed

inputs = (rand(3), rand(3)) # arguments for the function
print(inputs)
print(sg.autograd.functional.jacobian(exp_adder, inputs))  # changed: printed


def do_some_doubling(x):
    y = x * 2
    while y.data.norm() < 1000:
        y = y * 2
    return y


inputs = randn(3)
my_gradients = sg.tensor([0.1, 1.0, 0.0001])
print(sg.autograd.functional.vjp(do_some_doubling, inputs, v=my_gradients))  # changed: printed
