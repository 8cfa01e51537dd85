# PyTorch's 60-minute blitz, "A Gentle Introduction to torch.autograd" (beginner_source/blitz/autograd_tutorial.py),
# `import torch` renamed: a training step, differentiation in autograd with backward(gradient=), the exclusion from
# the DAG and freezing a model for finetuning. Changed (marked): torchvision's pretrained resnet18 is a small
# convolutional network defined here (no downloads), with 10 classes instead of 1000; data, labels and the weights
# come from NumPy's generator (symgrad's random numbers are not PyTorch's); printed values added.
import numpy as np
import symgrad as sg

rng = np.random.default_rng(2)  # changed: the random numbers' source


def resnet18():  # changed: a small network with resnet18's last layer name, weights from `rng`
    model = sg.nn.Sequential(sg.nn.Conv2d(3, 4, 3, padding=1), sg.nn.BatchNorm2d(4), sg.nn.ReLU(),
                             sg.nn.AdaptiveAvgPool2d((1, 1)), sg.nn.Flatten())
    model.fc = sg.nn.Linear(4, 10)
    with sg.no_grad():
        for param in model.parameters():
            param.copy_(sg.tensor(rng.uniform(-0.5, 0.5, tuple(param.shape))))
    return model


model = resnet18()
data = sg.tensor(rng.random((1, 3, 8, 8)), dtype=sg.float)  # changed: sg.rand(1, 3, 64, 64)
labels = sg.tensor(rng.random((1, 10)), dtype=sg.float)  # changed: sg.rand(1, 1000)

prediction = model(data) # forward pass
print(prediction.shape)  # changed: printed

loss = (prediction - labels).sum()
loss.backward() # backward pass
print(loss.item(), model.fc.weight.grad.norm().item())  # changed: printed

optim = sg.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
optim.step() #gradient descent
print(model.fc.bias)  # changed: printed

######################################################################
# Differentiation in Autograd
a = sg.tensor([2., 3.], requires_grad=True)
b = sg.tensor([6., 4.], requires_grad=True)

Q = 3*a**3 - b**2
external_grad = sg.tensor([1., 1.])
Q.backward(gradient=external_grad)

# check if collected gradients are correct
print(9*a**2 == a.grad)
print(-2*b == b.grad)

######################################################################
# Exclusion from the DAG
x = sg.tensor(rng.random((5, 5)), dtype=sg.float)  # changed: sg.rand(5, 5)
y = sg.tensor(rng.random((5, 5)), dtype=sg.float)  # changed
z = sg.tensor(rng.random((5, 5)), dtype=sg.float, requires_grad=True)  # changed: sg.rand((5, 5), requires_grad=True)

a = x + y
print(f"Does `a` require gradients?: {a.requires_grad}")
b = x + z
print(f"Does `b` require gradients?: {b.requires_grad}")

from symgrad import nn, optim

model = resnet18()

# Freeze all the parameters in the network
for param in model.parameters():
    param.requires_grad = False

model.fc = nn.Linear(4, 10)  # changed: nn.Linear(512, 10)
print(model)  # changed: printed
print([name for name, param in model.named_parameters() if param.requires_grad])  # changed: printed

# Optimize only the classifier
optimizer = optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
print(len(optimizer.param_groups[0]["params"]))  # changed: printed
