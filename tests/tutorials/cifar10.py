# PyTorch's 60-minute blitz, "Training a Classifier" (beginner_source/blitz/cifar10_tutorial.py), `import torch`
# renamed: a DataLoader of 3x32x32 images in batches of 4, the tutorial's convolutional network, CrossEntropyLoss,
# SGD with momentum, saving and loading the state dict, torch.max for the predictions, accuracy overall and per
# class. Changed (marked): CIFAR10 is a synthetic data set of the same shapes (no downloads; each class a pattern plus
# noise, from NumPy's generator), 400 training and 80 test images, the loss printed every 50 batches instead of 2000;
# the training loader does not shuffle and the network starts from fixed weights (symgrad's random numbers are not
# PyTorch's); the file is saved in a temporary directory; the image display (matplotlib) is left out.
import os
import tempfile

import numpy as np
import symgrad as sg

rng = np.random.default_rng(4)  # changed: the random numbers' source
patterns = rng.uniform(-1, 1, (10, 3, 32, 32))


def synthetic_cifar10(n):  # changed: stands for torchvision.datasets.CIFAR10 with ToTensor and Normalize
    labels = rng.integers(0, 10, n)
    images = (patterns[labels] + 0.5 * rng.standard_normal((n, 3, 32, 32))).clip(-1, 1)
    return sg.utils.data.TensorDataset(sg.tensor(images, dtype=sg.float), sg.tensor(labels))


batch_size = 4

trainset = synthetic_cifar10(400)  # changed
trainloader = sg.utils.data.DataLoader(trainset, batch_size=batch_size,
                                       shuffle=False, num_workers=2)  # changed: shuffle=True

testset = synthetic_cifar10(80)  # changed
testloader = sg.utils.data.DataLoader(testset, batch_size=batch_size,
                                      shuffle=False, num_workers=2)

classes = ('plane', 'car', 'bird', 'cat',
           'deer', 'dog', 'frog', 'horse', 'ship', 'truck')

# get some random training images
dataiter = iter(trainloader)
images, labels = next(dataiter)

# print labels
print(' '.join(f'{classes[labels[j]]:5s}' for j in range(batch_size)))

########################################################################
# 2. Define a Convolutional Neural Network
import symgrad.nn as nn
import symgrad.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = sg.flatten(x, 1) # flatten all dimensions except batch
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


net = Net()
with sg.no_grad():  # changed: fixed weights, PyTorch's default bounds
    for p in net.parameters():
        bound = 1 / np.sqrt(np.prod(p.shape[1:])) if p.dim() > 1 else 0.05
        p.copy_(sg.tensor(rng.uniform(-bound, bound, tuple(p.shape))))
print(net)  # changed: printed

########################################################################
# 3. Define a Loss function and optimizer
import symgrad.optim as optim

criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)

########################################################################
# 4. Train the network
for epoch in range(2):  # loop over the dataset multiple times

    running_loss = 0.0
    for i, data in enumerate(trainloader, 0):
        # get the inputs; data is a list of [inputs, labels]
        inputs, labels = data

        # zero the parameter gradients
        optimizer.zero_grad()

        # forward + backward + optimize
        outputs = net(inputs)
        loss = criterion(outputs, labels)
        loss.backward()
        optimizer.step()

        # print statistics
        running_loss += loss.item()
        if i % 50 == 49:    # print every 50 mini-batches  # changed: 2000
            print(f'[{epoch + 1}, {i + 1:5d}] loss: {running_loss / 50:.3f}')
            running_loss = 0.0

print('Finished Training')

directory = tempfile.TemporaryDirectory()  # changed: a temporary directory
PATH = os.path.join(directory.name, 'cifar_net.pth')
sg.save(net.state_dict(), PATH)

########################################################################
# 5. Test the network on the test data
dataiter = iter(testloader)
images, labels = next(dataiter)

# print images
print('GroundTruth: ', ' '.join(f'{classes[labels[j]]:5s}' for j in range(4)))

net = Net()
net.load_state_dict(sg.load(PATH, weights_only=True))

outputs = net(images)

_, predicted = sg.max(outputs, 1)

print('Predicted: ', ' '.join(f'{classes[predicted[j]]:5s}'
                              for j in range(4)))

correct = 0
total = 0
# since we're not training, we don't need to calculate the gradients for our outputs
with sg.no_grad():
    for data in testloader:
        images, labels = data
        # calculate outputs by running images through the network
        outputs = net(images)
        # the class with the highest energy is what we choose as prediction
        _, predicted = sg.max(outputs, 1)
        total += labels.size(0)
        correct += (predicted == labels).sum().item()

print(f'Accuracy of the network on the 80 test images: {100 * correct // total} %')  # changed: 80, not 10000

# prepare to count predictions for each class
correct_pred = {classname: 0 for classname in classes}
total_pred = {classname: 0 for classname in classes}

# again no gradients needed
with sg.no_grad():
    for data in testloader:
        images, labels = data
        outputs = net(images)
        _, predictions = sg.max(outputs, 1)
        # collect the correct predictions for each class
        for label, prediction in zip(labels, predictions):
            if label == prediction:
                correct_pred[classes[label]] += 1
            total_pred[classes[label]] += 1


# print accuracy for each class
for classname, correct_count in correct_pred.items():
    accuracy = 100 * float(correct_count) / total_pred[classname]
    print(f'Accuracy for class: {classname:5s} is {accuracy:.1f} %')

########################################################################
# Training on GPU
device = sg.device('cuda:0' if sg.cuda.is_available() else 'cpu')

# Assuming that we are on a CUDA machine, this should print a CUDA device:

print(device)
directory.cleanup()  # changed: the temporary directory removed
