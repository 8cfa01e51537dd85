# pytorch/examples mnist_forward_forward/main.py (based on Mohammad Pezeshki's pytorch_forward_forward, MIT License;
# modified by Vivek V Patel): Hinton's forward-forward training, layer by layer, each a subclass of nn.Linear with
# its own Adam, on the goodness of label-overlaid inputs (a slice scaled in place by *= 0.0, an advanced-index write
# x_[range(n), y] = x.max() with a tensor or an int y, x.norm(2, 1, keepdim=True), log1p of exp, Python's sum of
# tensors); Net.train(x_pos, x_neg) overrides Module.train. `import torch` renamed. Changed (marked): synthetic
# images of MNIST's shape (64 training, 32 test; beta draws, normalized) instead of torchvision's MNIST; hidden
# layers of 50 (not 500), 30 epochs (not 1000); float64 and fixed weights; the negative labels' draws are NumPy's.
# This code is based on the implementation of Mohammad Pezeshki available at
# https://github.com/mohammadpz/pytorch_forward_forward and licensed under the MIT License.
# Modifications/Improvements to the original code have been made by Vivek V Patel.

import argparse
import numpy as np  # changed: the random numbers' source
import symgrad as torch  # changed: import torch
import symgrad.nn as nn
from symgrad.utils.data import DataLoader, TensorDataset  # changed: torchvision's MNIST not used
from symgrad.optim import Adam

rng = np.random.default_rng(1)  # changed: the random numbers' source


def get_y_neg(y):
    y_neg = y.clone()
    for idx, y_samp in enumerate(y):
        allowed_indices = list(range(10))
        allowed_indices.remove(y_samp.item())
        y_neg[idx] = torch.tensor(allowed_indices)[
            torch.tensor(rng.integers(len(allowed_indices), size=(1,)))  # changed: torch.randint(...)
        ].item()
    return y_neg.to(device)


def overlay_y_on_x(x, y, classes=10):
    x_ = x.clone()
    x_[:, :classes] *= 0.0
    x_[range(x.shape[0]), y] = x.max()
    return x_


class Net(torch.nn.Module):
    def __init__(self, dims):

        super().__init__()
        self.layers = []
        for d in range(len(dims) - 1):
            self.layers = self.layers + [Layer(dims[d], dims[d + 1]).to(device, torch.float64)]  # changed: float64
            self.layers[-1].load_state_dict({"weight": torch.tensor(rng.uniform(-0.1, 0.1, (dims[d + 1], dims[d]))),
                                             "bias": torch.tensor(rng.uniform(-0.1, 0.1, dims[d + 1]))})  # changed

    def predict(self, x):
        goodness_per_label = []
        for label in range(10):
            h = overlay_y_on_x(x, label)
            goodness = []
            for layer in self.layers:
                h = layer(h)
                goodness = goodness + [h.pow(2).mean(1)]
            goodness_per_label += [sum(goodness).unsqueeze(1)]
        goodness_per_label = torch.cat(goodness_per_label, 1)
        return goodness_per_label.argmax(1)

    def train(self, x_pos, x_neg):
        h_pos, h_neg = x_pos, x_neg
        for i, layer in enumerate(self.layers):
            print("training layer: ", i)
            h_pos, h_neg = layer.train(h_pos, h_neg)


class Layer(nn.Linear):
    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__(in_features, out_features, bias, device, dtype)
        self.relu = torch.nn.ReLU()
        self.opt = Adam(self.parameters(), lr=args.lr)
        self.threshold = args.threshold
        self.num_epochs = args.epochs

    def forward(self, x):
        x_direction = x / (x.norm(2, 1, keepdim=True) + 1e-4)
        return self.relu(torch.mm(x_direction, self.weight.T) + self.bias.unsqueeze(0))

    def train(self, x_pos, x_neg):
        for i in range(self.num_epochs):
            g_pos = self.forward(x_pos).pow(2).mean(1)
            g_neg = self.forward(x_neg).pow(2).mean(1)
            loss = torch.log1p(
                torch.exp(
                    torch.cat([-g_pos + self.threshold, g_neg - self.threshold])
                )
            ).mean()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            if i % args.log_interval == 0:
                print("Loss: ", loss.item())
        return self.forward(x_pos).detach(), self.forward(x_neg).detach()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--epochs",
        type=int,
        default=1000,
        metavar="N",
        help="number of epochs to train (default: 1000)",
    )
    parser.add_argument(
        "--lr",
        type=float,
        default=0.03,
        metavar="LR",
        help="learning rate (default: 0.03)",
    )
    parser.add_argument(
        "--no_accel", action="store_true", help="disables accelerator"
    )
    parser.add_argument(
        "--seed", type=int, default=1, metavar="S", help="random seed (default: 1)"
    )
    parser.add_argument(
        "--save_model",
        action="store_true",
        help="For saving the current Model",
    )
    parser.add_argument(
        "--train_size", type=int, default=50000, help="size of training set"
    )
    parser.add_argument(
        "--threshold", type=float, default=2, help="threshold for training"
    )
    parser.add_argument("--test_size", type=int, default=10000, help="size of test set")
    parser.add_argument(
        "--save-model",
        action="store_true",
        help="For Saving the current Model",
    )
    parser.add_argument(
        "--log-interval",
        type=int,
        default=10,
        metavar="N",
        help="how many batches to wait before logging training status",
    )
    args = parser.parse_args(["--epochs", "30", "--train_size", "64", "--test_size", "32"])  # changed: small
    use_accel = not args.no_accel and torch.accelerator.is_available()
    if use_accel:
        device = torch.accelerator.current_accelerator()
    else:
        device = torch.device("cpu")

    train_kwargs = {"batch_size": args.train_size}
    test_kwargs = {"batch_size": args.test_size}

    if use_accel:
        accel_kwargs = {"num_workers": 1, "pin_memory": True, "shuffle": True}
        train_kwargs.update(accel_kwargs)
        test_kwargs.update(accel_kwargs)

    def synthetic_mnist(count):  # changed: flattened, normalized images of MNIST's shape, and labels
        images = (rng.beta(0.3, 0.6, (count, 784)) - 0.1307) / 0.3081
        return TensorDataset(torch.tensor(images), torch.tensor(rng.integers(0, 10, count)))
    train_loader = DataLoader(synthetic_mnist(64), **train_kwargs)  # changed: MNIST("./data/", train=True, ...)
    test_loader = DataLoader(synthetic_mnist(32), **test_kwargs)  # changed: MNIST("./data/", train=False, ...)
    net = Net([784, 50, 50])  # changed: 500, 500
    x, y = next(iter(train_loader))
    x, y = x.to(device), y.to(device)
    x_pos = overlay_y_on_x(x, y)
    y_neg = get_y_neg(y)
    x_neg = overlay_y_on_x(x, y_neg)
    net.train(x_pos, x_neg)
    print("train error:", 1.0 - net.predict(x).eq(y).float().mean().item())
    x_te, y_te = next(iter(test_loader))
    x_te, y_te = x_te.to(device), y_te.to(device)
    if args.save_model:
        torch.save(net.state_dict(), "mnist_ff.pt")
    print("test error:", 1.0 - net.predict(x_te).eq(y_te).float().mean().item())
