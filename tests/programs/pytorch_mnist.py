# pytorch/examples mnist/main.py: a convolutional net (two Conv2d, max_pool2d, two Linear, log_softmax) trained on
# MNIST with Adadelta and StepLR, then tested. `import torch` renamed. Changed (marked): float64 synthetic images of
# MNIST's shape and normalization (8 training images in batches of 4, 8 test images, 2 epochs) through
# TensorDataset instead of torchvision's MNIST; Dropout's probability 0 (its masks are random, and symgrad's random
# numbers are not PyTorch's); the weights come from NumPy's generator; args fixed instead of argparse's.
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
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout(0.0)  # changed: 0.25
        self.dropout2 = nn.Dropout(0.0)  # changed: 0.5
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = sg.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.dropout2(x)
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
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


def test(model, device, test_loader):
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

    test_loss /= len(test_loader.dataset)

    print('\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n'.format(
        test_loss, correct, len(test_loader.dataset),
        100. * correct / len(test_loader.dataset)))


def synthetic_mnist(rng, count):  # changed: images of MNIST's shape, normalized as its transform does
    images = rng.integers(0, 256, (count, 1, 28, 28)) / 255.0
    labels = images[:, 0, 4:24, 4:24].reshape(count, 10, 40).sum(2).argmax(1)
    data = sg.tensor((images - 0.1307) / 0.3081)  # transforms.Normalize((0.1307,), (0.3081,))
    return sg.utils.data.TensorDataset(data, sg.tensor(labels))


def fixed(module, rng):  # changed: fixed weights instead of PyTorch's random ones
    module.load_state_dict({name: sg.tensor(rng.uniform(-0.05, 0.05, tuple(p.shape)))
                            for name, p in module.state_dict().items()})
    return module


def main():
    # Training settings
    args = argparse.Namespace(batch_size=4, test_batch_size=8, epochs=2, lr=1.0, gamma=0.7,  # changed: fixed
                              no_accel=True, dry_run=False, seed=1, log_interval=1, save_model=False)

    use_accel = not args.no_accel and sg.accelerator.is_available()

    sg.manual_seed(args.seed)

    if use_accel:
        device = sg.accelerator.current_accelerator()
    else:
        device = sg.device("cpu")

    train_kwargs = {'batch_size': args.batch_size}
    test_kwargs = {'batch_size': args.test_batch_size}

    rng = np.random.default_rng(0)  # changed: the random numbers' source
    dataset1 = synthetic_mnist(rng, 8)  # changed: datasets.MNIST('../data', train=True, ...)
    dataset2 = synthetic_mnist(rng, 8)  # changed: datasets.MNIST('../data', train=False, ...)
    train_loader = sg.utils.data.DataLoader(dataset1,**train_kwargs)
    test_loader = sg.utils.data.DataLoader(dataset2, **test_kwargs)

    model = fixed(Net().double(), rng).to(device)  # changed: float64, fixed weights
    optimizer = optim.Adadelta(model.parameters(), lr=args.lr)

    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    for epoch in range(1, args.epochs + 1):
        train(args, model, device, train_loader, optimizer, epoch)
        test(model, device, test_loader)
        scheduler.step()

    if args.save_model:
        sg.save(model.state_dict(), "mnist_cnn.pt")


if __name__ == '__main__':
    main()
