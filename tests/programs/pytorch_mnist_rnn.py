# pytorch/examples mnist_rnn/main.py: MNIST's rows read by a batch_first nn.LSTM, its last output through
# BatchNorm1d, Dropout2d, two Linear and log_softmax, trained with Adadelta and StepLR. `import torch` renamed.
# Changed (marked): float64 synthetic images of MNIST's shape and normalization (12 training images in batches of
# 4, 8 test images, 2 epochs) through TensorDataset instead of torchvision's MNIST, not shuffled; Dropout2d's
# probability 0 (its masks are random, and symgrad's random numbers are not PyTorch's); the weights come from
# NumPy's generator; args fixed instead of argparse's.
from __future__ import print_function

import argparse

import numpy as np  # changed: the random numbers' source
import symgrad as sg
import symgrad.nn as nn
import symgrad.nn.functional as F
import symgrad.optim as optim
from symgrad.optim.lr_scheduler import StepLR


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.rnn = nn.LSTM(input_size=28, hidden_size=64, batch_first=True)
        self.batchnorm = nn.BatchNorm1d(64)
        self.dropout1 = nn.Dropout2d(0.0)  # changed: 0.25
        self.dropout2 = nn.Dropout2d(0.0)  # changed: 0.5
        self.fc1 = nn.Linear(64, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, input):
        input = input.reshape(-1, 28, 28)
        output, hidden = self.rnn(input)

        output = output[:, -1, :]
        output = self.batchnorm(output)
        output = self.dropout1(output)
        output = self.fc1(output)
        output = F.relu(output)
        output = self.dropout2(output)
        output = self.fc2(output)
        output = F.log_softmax(output, dim=1)
        return output


def train(args, model, device, train_loader, optimizer, epoch):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        if batch_idx % args.log_interval == 0:
            print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                epoch, batch_idx * len(data), len(train_loader.dataset),
                       100. * batch_idx / len(train_loader), loss.item()))
            if args.dry_run:
                break


def test(args, model, device, test_loader):
    model.eval()
    test_loss = 0
    correct = 0
    with sg.no_grad():
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction='sum').item()  # sum up batch loss
            pred = output.argmax(dim=1, keepdim=True)  # get the index of the max log-probability
            correct += pred.eq(target.view_as(pred)).sum().item()
            if args.dry_run:
                break

    test_loss /= len(test_loader.dataset)

    print('\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n'.format(
        test_loss, correct, len(test_loader.dataset),
        100. * correct / len(test_loader.dataset)))
    print('test loss', test_loss)  # changed: all digits


def synthetic_mnist(rng, count):  # changed: images of MNIST's shape, normalized as its transform does
    images = rng.integers(0, 256, (count, 1, 28, 28)) / 255.0
    labels = images[:, 0, 4:24, 4:24].reshape(count, 10, 40).sum(2).argmax(1)
    data = sg.tensor((images - 0.1307) / 0.3081)  # transforms.Normalize((0.1307,), (0.3081,))
    return sg.utils.data.TensorDataset(data, sg.tensor(labels))


def main():
    args = argparse.Namespace(batch_size=4, test_batch_size=8, epochs=2, lr=0.1, gamma=0.7, accel=False,
                              dry_run=False, seed=1, log_interval=1, save_model=False)  # changed: fixed

    if args.accel:
        device = sg.accelerator.current_accelerator()
    else:
        device = sg.device("cpu")

    sg.manual_seed(args.seed)

    rng = np.random.default_rng(0)  # changed: the random numbers' source
    kwargs = {'num_workers': 1, 'pin_memory': True} if args.accel else {}
    train_loader = sg.utils.data.DataLoader(
        synthetic_mnist(rng, 12),  # changed: datasets.MNIST('../data', train=True, ...)
        batch_size=args.batch_size, shuffle=False, **kwargs)  # changed: not shuffled (random)
    test_loader = sg.utils.data.DataLoader(
        synthetic_mnist(rng, 8),  # changed: datasets.MNIST('../data', train=False, ...)
        batch_size=args.test_batch_size, shuffle=False, **kwargs)  # changed: not shuffled (random)

    model = Net().double().to(device)  # changed: float64
    model.load_state_dict({name: sg.tensor(rng.uniform(-0.2, 0.2, tuple(p.shape)))  # changed: fixed weights
                           for name, p in model.named_parameters()}, strict=False)
    optimizer = optim.Adadelta(model.parameters(), lr=args.lr)

    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    for epoch in range(1, args.epochs + 1):
        train(args, model, device, train_loader, optimizer, epoch)
        test(args, model, device, test_loader)
        scheduler.step()

    if args.save_model:
        sg.save(model.state_dict(), "mnist_rnn.pt")


if __name__ == '__main__':
    main()
