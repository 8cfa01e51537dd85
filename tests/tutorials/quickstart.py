# PyTorch's "Learn the Basics", "Quickstart" (beginner_source/basics/quickstart_tutorial.py), `import torch` renamed:
# a FashionMNIST-shaped data set through DataLoader, an nn.Flatten + nn.Sequential network, train and test loops
# printing the loss and accuracy, saving and loading the state dict, a prediction. Changed (marked): FashionMNIST is a
# synthetic data set of the same shapes and types (1x28x28 float32 images from ToTensor, int labels; each class a
# pattern plus noise from NumPy's generator), 512 training and 128 test images, 3 epochs and the loss printed every 4
# batches instead of 5 epochs and every 100; fixed initial weights (symgrad's random numbers are not PyTorch's);
# the model is saved in a temporary directory.
import os
import tempfile

import numpy as np
import symgrad as sg
from symgrad import nn
from symgrad.utils.data import DataLoader, Dataset

rng = np.random.default_rng(5)  # changed: the random numbers' source
patterns = rng.random((10, 28, 28))


class FashionMNIST(Dataset):  # changed: stands for torchvision.datasets.FashionMNIST(transform=ToTensor())
    def __init__(self, n):
        self.labels = rng.integers(0, 10, n)
        self.images = (0.6 * patterns[self.labels] + 0.4 * rng.random((n, 28, 28))).astype(np.float32)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, idx):
        return sg.tensor(self.images[idx][None]), int(self.labels[idx])


# Download training data from open datasets.
training_data = FashionMNIST(512)  # changed

# Download test data from open datasets.
test_data = FashionMNIST(128)  # changed

batch_size = 64

# Create data loaders.
train_dataloader = DataLoader(training_data, batch_size=batch_size)
test_dataloader = DataLoader(test_data, batch_size=batch_size)

for X, y in test_dataloader:
    print(f"Shape of X [N, C, H, W]: {X.shape}")
    print(f"Shape of y: {y.shape} {y.dtype}")
    break

device = sg.accelerator.current_accelerator().type if sg.accelerator.is_available() else "cpu"
print(f"Using {device} device")


# Define model
class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(28*28, 512),
            nn.ReLU(),
            nn.Linear(512, 512),
            nn.ReLU(),
            nn.Linear(512, 10)
        )
        with sg.no_grad():  # changed: fixed weights, PyTorch's default bounds
            for p in self.parameters():
                bound = 1 / np.sqrt(p.shape[-1] if p.dim() > 1 else 512)
                p.copy_(sg.tensor(rng.uniform(-bound, bound, tuple(p.shape))))

    def forward(self, x):
        x = self.flatten(x)
        logits = self.linear_relu_stack(x)
        return logits


model = NeuralNetwork().to(device)
print(model)

loss_fn = nn.CrossEntropyLoss()
optimizer = sg.optim.SGD(model.parameters(), lr=1e-3)


def train(dataloader, model, loss_fn, optimizer):
    size = len(dataloader.dataset)
    model.train()
    for batch, (X, y) in enumerate(dataloader):
        X, y = X.to(device), y.to(device)

        # Compute prediction error
        pred = model(X)
        loss = loss_fn(pred, y)

        # Backpropagation
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

        if batch % 4 == 0:  # changed: 100
            loss, current = loss.item(), (batch + 1) * len(X)
            print(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")


def test(dataloader, model, loss_fn):
    size = len(dataloader.dataset)
    num_batches = len(dataloader)
    model.eval()
    test_loss, correct = 0, 0
    with sg.no_grad():
        for X, y in dataloader:
            X, y = X.to(device), y.to(device)
            pred = model(X)
            test_loss += loss_fn(pred, y).item()
            correct += (pred.argmax(1) == y).type(sg.float).sum().item()
    test_loss /= num_batches
    correct /= size
    print(f"Test Error: \n Accuracy: {(100*correct):>0.1f}%, Avg loss: {test_loss:>8f} \n")


epochs = 3  # changed: 5
for t in range(epochs):
    print(f"Epoch {t+1}\n-------------------------------")
    train(train_dataloader, model, loss_fn, optimizer)
    test(test_dataloader, model, loss_fn)
print("Done!")

directory = tempfile.TemporaryDirectory()  # changed: a temporary directory
sg.save(model.state_dict(), os.path.join(directory.name, "model.pth"))
print("Saved PyTorch Model State to model.pth")

model = NeuralNetwork().to(device)
model.load_state_dict(sg.load(os.path.join(directory.name, "model.pth"), weights_only=True))
directory.cleanup()

classes = [
    "T-shirt/top",
    "Trouser",
    "Pullover",
    "Dress",
    "Coat",
    "Sandal",
    "Shirt",
    "Sneaker",
    "Bag",
    "Ankle boot",
]

model.eval()
x, y = test_data[0][0], test_data[0][1]
with sg.no_grad():
    x = x.to(device)
    pred = model(x)
    predicted, actual = classes[pred[0].argmax(0)], classes[y]
    print(f'Predicted: "{predicted}", Actual: "{actual}"')
