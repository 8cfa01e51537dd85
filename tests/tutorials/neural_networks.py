# PyTorch's 60-minute blitz, "Neural Networks" (beginner_source/blitz/neural_networks_tutorial.py), `import torch`
# renamed: LeNet with conv2d, max_pool2d and flatten, net.parameters(), a backward with a random gradient, MSELoss,
# walking loss.grad_fn.next_functions, zero_grad, a manual update through .data and one SGD step. Changed (marked):
# the parameters, the input and the targets come from NumPy's generator (symgrad's random numbers are not
# PyTorch's); a few values printed after the updates.
import numpy as np
import symgrad as sg
import symgrad.nn as nn
import symgrad.nn.functional as F

rng = np.random.default_rng(3)  # changed: the random numbers' source


class Net(nn.Module):

    def __init__(self):
        super(Net, self).__init__()
        # 1 input image channel, 6 output channels, 5x5 square convolution
        # kernel
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        # an affine operation: y = Wx + b
        self.fc1 = nn.Linear(16 * 5 * 5, 120)  # 5*5 from image dimension
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, input):
        # Convolution layer C1: 1 input image channel, 6 output channels,
        # 5x5 square convolution, it uses RELU activation function, and
        # outputs a Tensor with size (N, 6, 28, 28), where N is the size of the batch
        c1 = F.relu(self.conv1(input))
        # Subsampling layer S2: 2x2 grid, purely functional,
        # this layer does not have any parameter, and outputs a (N, 6, 14, 14) Tensor
        s2 = F.max_pool2d(c1, (2, 2))
        # Convolution layer C3: 6 input channels, 16 output channels,
        # 5x5 square convolution, it uses RELU activation function, and
        # outputs a (N, 16, 10, 10) Tensor
        c3 = F.relu(self.conv2(s2))
        # Subsampling layer S4: 2x2 grid, purely functional,
        # this layer does not have any parameter, and outputs a (N, 16, 5, 5) Tensor
        s4 = F.max_pool2d(c3, 2)
        # Flatten operation: purely functional, outputs a (N, 400) Tensor
        s4 = sg.flatten(s4, 1)
        # Fully connected layer F5: (N, 400) Tensor input,
        # and outputs a (N, 120) Tensor, it uses RELU activation function
        f5 = F.relu(self.fc1(s4))
        # Fully connected layer F6: (N, 120) Tensor input,
        # and outputs a (N, 84) Tensor, it uses RELU activation function
        f6 = F.relu(self.fc2(f5))
        # Gaussian layer OUTPUT: (N, 84) Tensor input, and
        # outputs a (N, 10) Tensor
        output = self.fc3(f6)
        return output


net = Net()
with sg.no_grad():  # changed: fixed weights
    for p in net.parameters():
        p.copy_(sg.tensor(rng.uniform(-0.3, 0.3, tuple(p.shape))))
print(net)

params = list(net.parameters())
print(len(params))
print(params[0].size())  # conv1's .weight

input = sg.tensor(rng.standard_normal((1, 1, 32, 32)), dtype=sg.float)  # changed: sg.randn(1, 1, 32, 32)
out = net(input)
print(out)

net.zero_grad()
out.backward(sg.tensor(rng.standard_normal((1, 10)), dtype=sg.float))  # changed: sg.randn(1, 10)
print(net.fc3.bias.grad)  # changed: printed

output = net(input)
target = sg.tensor(rng.standard_normal(10), dtype=sg.float)  # a dummy target, for example  # changed: sg.randn(10)
target = target.view(1, -1)  # make it the same shape as output
criterion = nn.MSELoss()

loss = criterion(output, target)
print(loss)

print(loss.grad_fn)  # MSELoss
print(loss.grad_fn.next_functions[0][0])  # Linear
print(loss.grad_fn.next_functions[0][0].next_functions[0][0])  # ReLU

net.zero_grad()     # zeroes the gradient buffers of all parameters

print('conv1.bias.grad before backward')
print(net.conv1.bias.grad)

loss.backward()

print('conv1.bias.grad after backward')
print(net.conv1.bias.grad)

learning_rate = 0.01
for f in net.parameters():
    f.data.sub_(f.grad.data * learning_rate)
print(net.conv1.bias)  # changed: printed

import symgrad.optim as optim

# create your optimizer
optimizer = optim.SGD(net.parameters(), lr=0.01)

# in your training loop:
optimizer.zero_grad()   # zero the gradient buffers
output = net(input)
loss = criterion(output, target)
loss.backward()
optimizer.step()    # Does the update
print(loss.item(), criterion(net(input), target).item())  # changed: printed
