# The loop of PyTorch's "What is torch.nn really?" (beginner_source/nn_tutorial.py) with `import torch` renamed,
# on a synthetic data set instead of MNIST: tensors from NumPy, manual updates with no_grad, nn.Module and
# nn.Parameter, F.cross_entropy, optim.SGD, TensorDataset and DataLoader, fit() with a validation loader, then
# AdamW with a StepLR schedule. Changed from the tutorial: fixed initial weights instead of randn (symgrad's
# random numbers are not PyTorch's), and no shuffling of the training set (its order would come from the same
# generators), both marked.
import math

import numpy as np

import symgrad as sg

nn, F, optim = sg.nn, sg.nn.functional, sg.optim
TensorDataset, DataLoader = sg.utils.data.TensorDataset, sg.utils.data.DataLoader

rng = np.random.default_rng(0)
truth = rng.standard_normal((20, 4))
inputs = rng.standard_normal((320, 20))
labels = np.argmax(inputs @ truth + 0.5 * rng.standard_normal((320, 4)), axis=1)
inputs = inputs.astype(np.float32)  # as MNIST's pixels
x_train, y_train, x_valid, y_valid = map(sg.tensor, (inputs[:256], labels[:256], inputs[256:], labels[256:]))
n, c = x_train.shape
print(n, c, y_train.min().item(), y_train.max().item())

weights = sg.tensor(rng.standard_normal((20, 4)), dtype=sg.float) / math.sqrt(20)  # changed: fixed weights
weights.requires_grad_()
bias = sg.zeros(4, requires_grad=True)


def log_softmax(x):
    return x - x.exp().sum(-1).log().unsqueeze(-1)


def model(xb):
    return log_softmax(xb @ weights + bias)


def nll(input, target):
    return -input[range(target.shape[0]), target].mean()


loss_func = nll


def accuracy(out, yb):
    preds = sg.argmax(out, dim=1)
    return (preds == yb).float().mean()


bs = 64
xb, yb = x_train[0:bs], y_train[0:bs]
preds = model(xb)
print(preds[0].shape, loss_func(preds, yb).item(), accuracy(preds, yb).item())

lr, epochs = 0.5, 2
for epoch in range(epochs):
    for i in range((n - 1) // bs + 1):
        start_i = i * bs
        end_i = start_i + bs
        xb = x_train[start_i:end_i]
        yb = y_train[start_i:end_i]
        pred = model(xb)
        loss = loss_func(pred, yb)

        loss.backward()
        with sg.no_grad():
            weights -= weights.grad * lr
            bias -= bias.grad * lr
            weights.grad.zero_()
            bias.grad.zero_()
print(loss_func(model(xb), yb).item(), accuracy(model(xb), yb).item())


class Mnist_Logistic(nn.Module):
    def __init__(self):
        super().__init__()
        self.weights = nn.Parameter(sg.tensor(rng.standard_normal((20, 4)), dtype=sg.float) / math.sqrt(20))
        self.bias = nn.Parameter(sg.zeros(4, dtype=sg.float))

    def forward(self, xb):
        return xb @ self.weights + self.bias


loss_func = F.cross_entropy


def get_model():
    model = Mnist_Logistic()
    return model, optim.SGD(model.parameters(), lr=lr, momentum=0.9)


def loss_batch(model, loss_func, xb, yb, opt=None):
    loss = loss_func(model(xb), yb)

    if opt is not None:
        loss.backward()
        opt.step()
        opt.zero_grad()

    return loss.item(), len(xb)


def fit(epochs, model, loss_func, opt, train_dl, valid_dl, scheduler=None):
    for epoch in range(epochs):
        model.train()
        for xb, yb in train_dl:
            loss_batch(model, loss_func, xb, yb, opt)
        if scheduler is not None:
            scheduler.step()

        model.eval()
        with sg.no_grad():
            losses, nums = zip(
                *[loss_batch(model, loss_func, xb, yb) for xb, yb in valid_dl]
            )
        val_loss = np.sum(np.multiply(losses, nums)) / np.sum(nums)

        print(epoch, val_loss)


def get_data(train_ds, valid_ds, bs):
    return (
        DataLoader(train_ds, batch_size=bs, shuffle=False),  # changed: shuffle=True
        DataLoader(valid_ds, batch_size=bs * 2),
    )


train_ds, valid_ds = TensorDataset(x_train, y_train), TensorDataset(x_valid, y_valid)
train_dl, valid_dl = get_data(train_ds, valid_ds, bs)
model, opt = get_model()
fit(3, model, loss_func, opt, train_dl, valid_dl)

model = nn.Sequential(nn.Linear(20, 16), nn.ReLU(), nn.Linear(16, 4))
model.load_state_dict({name: sg.tensor(rng.uniform(-0.25, 0.25, tuple(p.shape)))  # changed: fixed weights
                       for name, p in model.state_dict().items()})
opt = optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.05)
fit(4, model, loss_func, opt, train_dl, valid_dl, optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5))
print(accuracy(model(x_valid), y_valid).item(), opt.param_groups[0]["lr"])
