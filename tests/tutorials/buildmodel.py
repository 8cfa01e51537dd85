# PyTorch's "Learn the Basics", "Build the Neural Network" (beginner_source/basics/buildmodel_tutorial.py), `import
# torch` renamed: the NeuralNetwork module, Softmax over its logits, nn.Flatten, nn.Linear, nn.ReLU, nn.Sequential,
# and its parameters printed by named_parameters(). Changed (marked): the inputs and the weights come from NumPy's
# generator (symgrad's random numbers are not PyTorch's).
import os
import numpy as np
import symgrad as sg
from symgrad import nn

rng = np.random.default_rng(6)  # changed: the random numbers' source


def fixed(module):  # changed: fixed weights instead of PyTorch's random ones
    with sg.no_grad():
        for p in module.parameters():
            p.copy_(sg.tensor(rng.uniform(-0.05, 0.05, tuple(p.shape))))
    return module


device = sg.accelerator.current_accelerator().type if sg.accelerator.is_available() else "cpu"
print(f"Using {device} device")


class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(28*28, 512),
            nn.ReLU(),
            nn.Linear(512, 512),
            nn.ReLU(),
            nn.Linear(512, 10),
        )

    def forward(self, x):
        x = self.flatten(x)
        logits = self.linear_relu_stack(x)
        return logits


model = fixed(NeuralNetwork()).to(device)  # changed: fixed()
print(model)

X = sg.tensor(rng.random((1, 28, 28)), dtype=sg.float, device=device)  # changed: sg.rand(1, 28, 28, device=device)
logits = model(X)
pred_probab = nn.Softmax(dim=1)(logits)
y_pred = pred_probab.argmax(1)
print(f"Predicted class: {y_pred}")

input_image = sg.tensor(rng.random((3, 28, 28)), dtype=sg.float)  # changed: sg.rand(3,28,28)
print(input_image.size())

flatten = nn.Flatten()
flat_image = flatten(input_image)
print(flat_image.size())

layer1 = fixed(nn.Linear(in_features=28*28, out_features=20))  # changed: fixed()
hidden1 = layer1(flat_image)
print(hidden1.size())

print(f"Before ReLU: {hidden1}\n\n")
hidden1 = nn.ReLU()(hidden1)
print(f"After ReLU: {hidden1}")

seq_modules = nn.Sequential(
    flatten,
    layer1,
    nn.ReLU(),
    fixed(nn.Linear(20, 10))  # changed: fixed()
)
input_image = sg.tensor(rng.random((3, 28, 28)), dtype=sg.float)  # changed: sg.rand(3,28,28)
logits = seq_modules(input_image)

softmax = nn.Softmax(dim=1)
pred_probab = softmax(logits)
print(pred_probab)  # changed: printed

print(f"Model structure: {model}\n\n")

for name, param in model.named_parameters():
    print(f"Layer: {name} | Size: {param.size()} | Values : {param[:2]} \n")
