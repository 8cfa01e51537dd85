# PyTorch's beginner tutorial "PyTorch: optim" (beginner_source/examples_nn/polynomial_optim.py), with
# `import torch` renamed. Two changes, both marked: linspace names its dtype
# (a bare sg.linspace(a, b, n) is NumPy's and gives an array, see docs/eager.md), and the Linear layer starts
# from fixed weights (symgrad's random numbers are not PyTorch's).
import math

import symgrad as sg

# Create Tensors to hold input and outputs.
x = sg.linspace(-math.pi, math.pi, 2000, dtype=sg.float)  # changed: dtype=
y = sg.sin(x)

# Prepare the input tensor (x, x^2, x^3).
p = sg.tensor([1, 2, 3])
xx = x.unsqueeze(-1).pow(p)

# Use the nn package to define our model and loss function.
model = sg.nn.Sequential(
    sg.nn.Linear(3, 1),
    sg.nn.Flatten(0, 1)
)
with sg.no_grad():  # changed: fixed initial weights
    model[0].weight.copy_(sg.tensor([[0.3, -0.2, 0.1]]))
    model[0].bias.fill_(0.05)
loss_fn = sg.nn.MSELoss(reduction='sum')

# Use the optim package to define an Optimizer that will update the weights of
# the model for us. Here we will use SGD; the optim package contains many other
# optimization algorithms. The first argument to the SGD constructor tells the
# optimizer which Tensors it should update.
learning_rate = 1e-6
optimizer = sg.optim.SGD(model.parameters(), lr=learning_rate)
for t in range(2000):
    # Forward pass: compute predicted y by passing x to the model.
    y_pred = model(xx)

    # Compute and print loss.
    loss = loss_fn(y_pred, y)
    if t % 100 == 99:
        print(t, loss.item())

    # Before the backward pass, use the optimizer object to zero all of the
    # gradients for the variables it will update (which are the learnable
    # weights of the model).
    optimizer.zero_grad()

    # Backward pass: compute gradient of the loss with respect to model
    # parameters
    loss.backward()

    # Calling the step function on an Optimizer makes an update to its
    # parameters
    optimizer.step()


linear_layer = model[0]
print(f'Result: y = {linear_layer.bias.item()} + {linear_layer.weight[:, 0].item()} x + {linear_layer.weight[:, 1].item()} x^2 + {linear_layer.weight[:, 2].item()} x^3')
