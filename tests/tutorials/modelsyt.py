# PyTorch's "Introduction to PyTorch" series, "Building Models with PyTorch"
# (beginner_source/introyt/modelsyt_tutorial.py), `import torch` renamed: a module printed with its layers and
# parameters, a Linear layer's weight, bias and output, LeNet, max pooling, BatchNorm1d and Dropout. Changed
# (marked): random tensors and weights come from NumPy's generator (symgrad's random numbers are not PyTorch's), the
# models are run on an input and Dropout's masks (drawn by another generator) are shown in eval mode.
import numpy as np
import symgrad as sg
import symgrad.nn.functional as F

rng = np.random.default_rng(17)  # changed: the random numbers' source


def rand(*shape):  # changed: stands for sg.rand
    return sg.tensor(rng.random(shape), dtype=sg.float)


def fixed(module):  # changed: fixed weights instead of PyTorch's random ones
    module.load_state_dict({name: sg.tensor(rng.uniform(-0.2, 0.2, tuple(p.shape)), dtype=sg.float)
                            for name, p in module.state_dict().items()})
    return module


class TinyModel(sg.nn.Module):

    def __init__(self):
        super(TinyModel, self).__init__()

        self.linear1 = sg.nn.Linear(100, 200)
        self.activation = sg.nn.ReLU()
        self.linear2 = sg.nn.Linear(200, 10)
        self.softmax = sg.nn.Softmax(dim=1)  # changed: dim= (PyTorch warns about the implicit choice)

    def forward(self, x):
        x = self.linear1(x)
        x = self.activation(x)
        x = self.linear2(x)
        x = self.softmax(x)
        return x


tinymodel = fixed(TinyModel())  # changed: fixed()

print('The model:')
print(tinymodel)

print('\n\nJust one layer:')
print(tinymodel.linear2)

print('\n\nModel params:')
for param in tinymodel.parameters():
    print(param.shape, param[0, :4] if param.dim() > 1 else param[:4])  # changed: the first values, not all

print('\n\nLayer params:')
for param in tinymodel.linear2.parameters():
    print(param.shape)
print(tinymodel(rand(2, 100)))  # changed: run

lin = fixed(sg.nn.Linear(3, 2))  # changed: fixed()
x = rand(1, 3)
print('Input:')
print(x)

print('\n\nWeight and Bias parameters:')
for param in lin.parameters():
    print(param)

y = lin(x)
print('\n\nOutput:')
print(y)


class LeNet(sg.nn.Module):

    def __init__(self):
        super(LeNet, self).__init__()
        # 1 input image channel (black & white), 6 output channels, 5x5 square convolution
        # kernel
        self.conv1 = sg.nn.Conv2d(1, 6, 5)
        self.conv2 = sg.nn.Conv2d(6, 16, 3)
        # an affine operation: y = Wx + b
        self.fc1 = sg.nn.Linear(16 * 6 * 6, 120)  # 6*6 from image dimension
        self.fc2 = sg.nn.Linear(120, 84)
        self.fc3 = sg.nn.Linear(84, 10)

    def forward(self, x):
        # Max pooling over a (2, 2) window
        x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
        # If the size is a square you can only specify a single number
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.view(-1, self.num_flat_features(x))
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x

    def num_flat_features(self, x):
        size = x.size()[1:]  # all dimensions except the batch dimension
        num_features = 1
        for s in size:
            num_features *= s
        return num_features


net = fixed(LeNet())  # changed: built, fixed and run
print(net)
print(net(rand(2, 1, 32, 32)))

my_tensor = rand(1, 6, 6)
print(my_tensor)

maxpool_layer = sg.nn.MaxPool2d(3)
print(maxpool_layer(my_tensor))

my_tensor = rand(1, 4, 4) * 20 + 5
print(my_tensor)

print(my_tensor.mean())

norm_layer = sg.nn.BatchNorm1d(4)
normed_tensor = norm_layer(my_tensor)
print(normed_tensor)

print(normed_tensor.mean())
print(norm_layer.running_mean, norm_layer.running_var)  # changed: printed

my_tensor = rand(1, 4, 4)

dropout = sg.nn.Dropout(p=0.4)
dropout.eval()  # changed: eval mode (the masks come from another generator)
print(dropout(my_tensor))
print(dropout)
