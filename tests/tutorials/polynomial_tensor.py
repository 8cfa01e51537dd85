# PyTorch's "Learning PyTorch with Examples", "PyTorch: Tensors" (beginner_source/examples_tensor/polynomial_tensor.py):
# a third order polynomial fit to sin(x) with the forward and backward passes written by hand, `import torch`
# renamed. Changed (marked): fixed initial weights instead of randn (symgrad's random numbers are not PyTorch's).
import symgrad as sg
import math


dtype = sg.float
device = sg.device("cpu")
# device = sg.device("cuda:0") # Uncomment this to run on GPU

# Create random input and output data
x = sg.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
y = sg.sin(x)

# Randomly initialize weights
a = sg.tensor(0.1, device=device, dtype=dtype)  # changed: sg.randn((), device=device, dtype=dtype)
b = sg.tensor(-0.4, device=device, dtype=dtype)  # changed
c = sg.tensor(0.7, device=device, dtype=dtype)  # changed
d = sg.tensor(-0.2, device=device, dtype=dtype)  # changed

learning_rate = 1e-6
for t in range(2000):
    # Forward pass: compute predicted y
    y_pred = a + b * x + c * x ** 2 + d * x ** 3

    # Compute and print loss
    loss = (y_pred - y).pow(2).sum().item()
    if t % 100 == 99:
        print(t, loss)

    # Backprop to compute gradients of a, b, c, d with respect to loss
    grad_y_pred = 2.0 * (y_pred - y)
    grad_a = grad_y_pred.sum()
    grad_b = (grad_y_pred * x).sum()
    grad_c = (grad_y_pred * x ** 2).sum()
    grad_d = (grad_y_pred * x ** 3).sum()

    # Update weights using gradient descent
    a -= learning_rate * grad_a
    b -= learning_rate * grad_b
    c -= learning_rate * grad_c
    d -= learning_rate * grad_d


print(f'Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3')
