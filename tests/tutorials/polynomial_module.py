# PyTorch's "Learning PyTorch with Examples", "PyTorch: Custom nn Modules"
# (beginner_source/examples_nn/polynomial_module.py), with `import torch` renamed. Changed (marked): fixed initial
# parameters instead of randn (symgrad's random numbers are not PyTorch's), linspace names its dtype (a bare
# sg.linspace is NumPy's), and the module and its parameters are printed.
import symgrad as sg
import math


class Polynomial3(sg.nn.Module):
    def __init__(self):
        """
        In the constructor we instantiate four parameters and assign them as
        member parameters.
        """
        super().__init__()
        self.a = sg.nn.Parameter(sg.tensor(0.2))  # changed: sg.randn(())
        self.b = sg.nn.Parameter(sg.tensor(-0.6))  # changed
        self.c = sg.nn.Parameter(sg.tensor(0.3))  # changed
        self.d = sg.nn.Parameter(sg.tensor(0.1))  # changed

    def forward(self, x):
        """
        In the forward function we accept a Tensor of input data and we must return
        a Tensor of output data. We can use Modules defined in the constructor as
        well as arbitrary operators on Tensors.
        """
        return self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3

    def string(self):
        """
        Just like any class in Python, you can also define custom method on PyTorch modules
        """
        return f'y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + {self.d.item()} x^3'


# Create Tensors to hold input and outputs.
x = sg.linspace(-math.pi, math.pi, 2000, dtype=sg.float)  # changed: dtype=
y = sg.sin(x)

# Construct our model by instantiating the class defined above
model = Polynomial3()
print(model)  # changed: printed
for name, param in model.named_parameters():  # changed: printed
    print(name, param)

# Construct our loss function and an Optimizer. The call to model.parameters()
# in the SGD constructor will contain the learnable parameters (defined
# with torch.nn.Parameter) which are members of the model.
criterion = sg.nn.MSELoss(reduction='sum')
optimizer = sg.optim.SGD(model.parameters(), lr=1e-6)
for t in range(2000):
    # Forward pass: Compute predicted y by passing x to the model
    y_pred = model(x)

    # Compute and print loss
    loss = criterion(y_pred, y)
    if t % 100 == 99:
        print(t, loss.item())

    # Zero gradients, perform a backward pass, and update the weights.
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f'Result: {model.string()}')
