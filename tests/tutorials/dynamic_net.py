# PyTorch's "Learning PyTorch with Examples", "PyTorch: Control Flow + Weight Sharing"
# (beginner_source/examples_nn/dynamic_net.py): a polynomial of random order 3 to 5 chosen at every forward pass, its
# fourth and fifth order terms sharing one parameter, trained with SGD and momentum; `import torch` renamed.
# Changed (marked): fixed initial parameters instead of randn, a seeded Python `random` (the same under both), a
# linspace that names its dtype, and 3000 steps instead of 30000 (test time).
import random
import symgrad as sg
import math

random.seed(0)  # changed: seeded


class DynamicNet(sg.nn.Module):
    def __init__(self):
        """
        In the constructor we instantiate five parameters and assign them as members.
        """
        super().__init__()
        self.a = sg.nn.Parameter(sg.tensor(0.1, dtype=sg.float))  # changed: sg.randn(())
        self.b = sg.nn.Parameter(sg.tensor(0.5, dtype=sg.float))  # changed
        self.c = sg.nn.Parameter(sg.tensor(-0.05, dtype=sg.float))  # changed
        self.d = sg.nn.Parameter(sg.tensor(-0.02, dtype=sg.float))  # changed
        self.e = sg.nn.Parameter(sg.tensor(0.001, dtype=sg.float))  # changed

    def forward(self, x):
        """
        For the forward pass of the model, we randomly choose either 4, 5
        and reuse the e parameter to compute the contribution of these orders.

        Since each forward pass builds a dynamic computation graph, we can use normal
        Python control-flow operators like loops or conditional statements when
        defining the forward pass of the model.

        Here we also see that it is perfectly safe to reuse the same parameter many
        times when defining a computational graph.
        """
        y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
        for exp in range(4, random.randint(4, 6)):
            y = y + self.e * x ** exp
        return y

    def string(self):
        """
        Just like any class in Python, you can also define custom method on PyTorch modules
        """
        return f'y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + {self.d.item()} x^3 + {self.e.item()} x^4 ? + {self.e.item()} x^5 ?'


# Create Tensors to hold input and outputs.
x = sg.linspace(-math.pi, math.pi, 2000, dtype=sg.float)  # changed: dtype=
y = sg.sin(x)

# Construct our model by instantiating the class defined above
model = DynamicNet()

# Construct our loss function and an Optimizer. Training this strange model with
# vanilla stochastic gradient descent is tough, so we use momentum
criterion = sg.nn.MSELoss(reduction='sum')
optimizer = sg.optim.SGD(model.parameters(), lr=1e-8, momentum=0.9)
for t in range(3000):  # changed: 30000
    # Forward pass: Compute predicted y by passing x to the model
    y_pred = model(x)

    # Compute and print loss
    loss = criterion(y_pred, y)
    if t % 200 == 199:  # changed: t % 2000 == 1999
        print(t, loss.item())

    # Zero gradients, perform a backward pass, and update the weights.
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f'Result: {model.string()}')
