# pytorch/tutorials intermediate_source/spatial_transformer_tutorial.py ("Spatial Transformer Networks Tutorial",
# Ghassen Hamrouni): a localization CNN (Conv2d, MaxPool2d, ReLU(True)) and a Linear regressor of a 2 x 3 affine
# matrix initialized to the identity (`weight.data.zero_()`, `bias.data.copy_`), F.affine_grid and F.grid_sample
# (bilinear, zeros padding, align_corners False) in front of the MNIST classifier, trained end to end by SGD on
# nll_loss; the test sums `F.nll_loss(..., size_average=False)` and counts `pred.eq(target.view_as(pred))`.
# `import torch` renamed. Changed (marked): synthetic images of MNIST's shape, normalized as its transform does;
# float64; the weights from NumPy (symgrad's random numbers are not PyTorch's) but the regressor's start, near the
# identity rather than at it (the identity samples each pixel exactly, where the grid's gradient is one-sided and
# which side depends on the last bit of (x + 1) * W / 2 - 1 / 2: PyTorch's CPU kernel rounds it through a fused
# multiply-add where the machine has one);
# Dropout2d and dropout with p=0 (random); batches of 8 (not 64), not shuffled, 16 training and 8 test images, 2
# epochs (not 20), every batch logged; the STN's output summed and printed rather than drawn by torchvision's
# make_grid and matplotlib.
import numpy as np  # changed: the random numbers' source
import symgrad as torch
import symgrad.nn as nn
import symgrad.nn.functional as F
import symgrad.optim as optim

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def synthetic_mnist(rng, count):  # changed: images of MNIST's shape, normalized as its transform does
    images = rng.integers(0, 256, (count, 1, 28, 28)) / 255.0
    labels = images[:, 0, 4:24, 4:24].reshape(count, 10, 40).sum(2).argmax(1)
    data = torch.tensor((images - 0.1307) / 0.3081)  # transforms.Normalize((0.1307,), (0.3081,))
    return torch.utils.data.TensorDataset(data, torch.tensor(labels))


rng = np.random.default_rng(0)  # changed: the random numbers' source
# Training dataset
train_loader = torch.utils.data.DataLoader(
    synthetic_mnist(rng, 16), batch_size=8, shuffle=False, num_workers=4)  # changed: datasets.MNIST, 64, shuffled
# Test dataset
test_loader = torch.utils.data.DataLoader(
    synthetic_mnist(rng, 8), batch_size=8, shuffle=False, num_workers=4)  # changed: datasets.MNIST, 64, shuffled


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.conv2_drop = nn.Dropout2d(0.0)  # changed: 0.5 (random)
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)

        # Spatial transformer localization-network
        self.localization = nn.Sequential(
            nn.Conv2d(1, 8, kernel_size=7),
            nn.MaxPool2d(2, stride=2),
            nn.ReLU(True),
            nn.Conv2d(8, 10, kernel_size=5),
            nn.MaxPool2d(2, stride=2),
            nn.ReLU(True)
        )

        # Regressor for the 3 * 2 affine matrix
        self.fc_loc = nn.Sequential(
            nn.Linear(10 * 3 * 3, 32),
            nn.ReLU(True),
            nn.Linear(32, 3 * 2)
        )

        # Initialize the weights/bias with identity transformation
        self.fc_loc[2].weight.data.zero_()
        self.fc_loc[2].bias.data.copy_(torch.tensor([1, 0, 0, 0, 1, 0], dtype=torch.float))

    # Spatial transformer network forward function
    def stn(self, x):
        xs = self.localization(x)
        xs = xs.view(-1, 10 * 3 * 3)
        theta = self.fc_loc(xs)
        theta = theta.view(-1, 2, 3)

        grid = F.affine_grid(theta, x.size())
        x = F.grid_sample(x, grid)

        return x

    def forward(self, x):
        # transform the input
        x = self.stn(x)

        # Perform the usual forward pass
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x.view(-1, 320)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, p=0.0, training=self.training)  # changed: p=0.5 (random)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


model = Net().double().to(device)  # changed: float64
model.load_state_dict({name: torch.tensor(rng.uniform(-0.2, 0.2, tuple(p.shape)))  # changed: fixed weights
                       for name, p in model.named_parameters() if not name.startswith('fc_loc.2')}, strict=False)
model.fc_loc[2].bias.data.add_(torch.tensor([0, 0.02, 0.01, -0.03, 0, 0.02], dtype=torch.float64))  # changed

optimizer = optim.SGD(model.parameters(), lr=0.01)


def train(epoch):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)

        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        if batch_idx % 1 == 0:  # changed: 500
            print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                epoch, batch_idx * len(data), len(train_loader.dataset),
                100. * batch_idx / len(train_loader), loss.item()))
            print(loss.item(), model.fc_loc[2].bias.tolist())  # changed: all digits, and the affine part learnt
#
# A simple test procedure to measure the STN performances on MNIST.
#


def test():
    with torch.no_grad():
        model.eval()
        test_loss = 0
        correct = 0
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)

            # sum up batch loss
            test_loss += F.nll_loss(output, target, size_average=False).item()
            # get the index of the max log-probability
            pred = output.max(1, keepdim=True)[1]
            correct += pred.eq(target.view_as(pred)).sum().item()

        test_loss /= len(test_loader.dataset)
        print('\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n'
              .format(test_loss, correct, len(test_loader.dataset),
                      100. * correct / len(test_loader.dataset)))
        print(test_loss)  # changed: all digits


def visualize_stn():
    with torch.no_grad():
        # Get a batch of training data
        data = next(iter(test_loader))[0].to(device)

        input_tensor = data.cpu()
        transformed_input_tensor = model.stn(data).cpu()

        print(input_tensor.sum().item(), transformed_input_tensor.sum().item())  # changed: not drawn
        print(transformed_input_tensor[0, 0, 10, 8:14])  # changed: not drawn


for epoch in range(1, 2 + 1):  # changed: 20
    train(epoch)
    test()

# Visualize the STN transformation on some input batch
visualize_stn()
