# PyTorch's "Learn the Basics", "Optimizing Model Parameters" (beginner_source/basics/optimization_tutorial.py),
# `import torch` renamed: hyperparameters, CrossEntropyLoss, SGD, train_loop and test_loop. Changed (marked):
# FashionMNIST is a TensorDataset of synthetic images of the same shapes (no downloads; each class a pattern plus
# noise from NumPy's generator), 256 training and 64 test images, 3 epochs instead of 10, the loss printed every 2
# batches instead of 100; fixed initial weights (symgrad's random numbers are not PyTorch's).
import numpy as np
import symgrad as sg
from symgrad import nn
from symgrad.utils.data import DataLoader, TensorDataset

rng = np.random.default_rng(13)  # changed: the random numbers' source
patterns = rng.random((10, 1, 28, 28))


def fashion_mnist(n):  # changed: stands for datasets.FashionMNIST(transform=ToTensor())
    labels = rng.integers(0, 10, n)
    images = 0.5 * patterns[labels] + 0.5 * rng.random((n, 1, 28, 28))
    return TensorDataset(sg.tensor(images, dtype=sg.float), sg.tensor(labels))


training_data = fashion_mnist(256)  # changed
test_data = fashion_mnist(64)  # changed

train_dataloader = DataLoader(training_data, batch_size=64)
test_dataloader = DataLoader(test_data, batch_size=64)


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


model = NeuralNetwork()
with sg.no_grad():  # changed: fixed weights, PyTorch's default bounds
    for p in model.parameters():
        bound = 1 / np.sqrt(p.shape[-1] if p.dim() > 1 else 512)
        p.copy_(sg.tensor(rng.uniform(-bound, bound, tuple(p.shape))))

learning_rate = 1e-3
batch_size = 64
epochs = 5

# Initialize the loss function
loss_fn = nn.CrossEntropyLoss()

optimizer = sg.optim.SGD(model.parameters(), lr=learning_rate)


def train_loop(dataloader, model, loss_fn, optimizer):
    size = len(dataloader.dataset)
    # Set the model to training mode - important for batch normalization and dropout layers
    # Unnecessary in this situation but added for best practices
    model.train()
    for batch, (X, y) in enumerate(dataloader):
        # Compute prediction and loss
        pred = model(X)
        loss = loss_fn(pred, y)

        # Backpropagation
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

        if batch % 2 == 0:  # changed: 100
            loss, current = loss.item(), batch * batch_size + len(X)
            print(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")


def test_loop(dataloader, model, loss_fn):
    # Set the model to evaluation mode - important for batch normalization and dropout layers
    # Unnecessary in this situation but added for best practices
    model.eval()
    size = len(dataloader.dataset)
    num_batches = len(dataloader)
    test_loss, correct = 0, 0

    # Evaluating the model with torch.no_grad() ensures that no gradients are computed during test mode
    # also serves to reduce unnecessary gradient computations and memory usage for tensors with requires_grad=True
    with sg.no_grad():
        for X, y in dataloader:
            pred = model(X)
            test_loss += loss_fn(pred, y).item()
            correct += (pred.argmax(1) == y).type(sg.float).sum().item()

    test_loss /= num_batches
    correct /= size
    print(f"Test Error: \n Accuracy: {(100*correct):>0.1f}%, Avg loss: {test_loss:>8f} \n")


loss_fn = nn.CrossEntropyLoss()
optimizer = sg.optim.SGD(model.parameters(), lr=learning_rate)

epochs = 3  # changed: 10
for t in range(epochs):
    print(f"Epoch {t+1}\n-------------------------------")
    train_loop(train_dataloader, model, loss_fn, optimizer)
    test_loop(test_dataloader, model, loss_fn)
print("Done!")
