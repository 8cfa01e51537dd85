# pytorch/examples vae/main.py: a variational autoencoder (784-400-20 encoder, reparameterization, 20-400-784
# decoder with sigmoid) trained with Adam on binary_cross_entropy(reduction='sum') plus the KL divergence, tested
# under no_grad, then decoding random codes. `import torch` renamed. Changed (marked): float64 synthetic images of
# MNIST's shape in [0, 1] (48 training and 16 test images, batches of 16, 2 epochs) through TensorDataset instead of
# torchvision's MNIST; the reparameterization's noise, the samples' codes and the weights come from NumPy's
# generator (symgrad's random numbers are not PyTorch's); the saved images' sums printed instead; args fixed.
from __future__ import print_function
import argparse
import numpy as np  # changed: the random numbers' source
import symgrad as sg
import symgrad.utils.data
from symgrad import nn, optim
from symgrad.nn import functional as F


args = argparse.Namespace(batch_size=16, epochs=2, no_accel=True, seed=1, log_interval=1)  # changed: fixed

use_accel = not args.no_accel and sg.accelerator.is_available()

sg.manual_seed(args.seed)
rng = np.random.default_rng(0)  # changed: the random numbers' source


if use_accel:
    device = sg.accelerator.current_accelerator()
else:
    device = sg.device("cpu")

print(f"Using device: {device}")


def synthetic_mnist(count):  # changed: images of MNIST's shape in [0, 1], and labels
    images = sg.tensor(rng.beta(0.3, 0.6, (count, 1, 28, 28)))
    return sg.utils.data.TensorDataset(images, sg.zeros(count, dtype=sg.long))


kwargs = {'num_workers': 1, 'pin_memory': True} if use_accel else {}
train_loader = sg.utils.data.DataLoader(
    synthetic_mnist(48),  # changed: datasets.MNIST('../data', train=True, ...)
    batch_size=args.batch_size, shuffle=False, **kwargs)  # changed: not shuffled (random)
test_loader = sg.utils.data.DataLoader(
    synthetic_mnist(16),  # changed: datasets.MNIST('../data', train=False, ...)
    batch_size=args.batch_size, shuffle=False, **kwargs)


class VAE(nn.Module):
    def __init__(self):
        super(VAE, self).__init__()

        self.fc1 = nn.Linear(784, 400)
        self.fc21 = nn.Linear(400, 20)
        self.fc22 = nn.Linear(400, 20)
        self.fc3 = nn.Linear(20, 400)
        self.fc4 = nn.Linear(400, 784)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = sg.exp(0.5*logvar)
        eps = sg.tensor(rng.standard_normal(tuple(std.shape)))  # changed: sg.randn_like(std)
        return mu + eps*std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return sg.sigmoid(self.fc4(h3))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 784))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


model = VAE().double().to(device)  # changed: float64
model.load_state_dict({name: sg.tensor(rng.uniform(-0.05, 0.05, tuple(p.shape)))  # changed: fixed weights
                       for name, p in model.state_dict().items()})
optimizer = optim.Adam(model.parameters(), lr=1e-3)


# Reconstruction + KL divergence losses summed over all elements and batch
def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, 784), reduction='sum')

    # see Appendix B from VAE paper:
    # Kingma and Welling. Auto-Encoding Variational Bayes. ICLR, 2014
    # https://arxiv.org/abs/1312.6114
    # 0.5 * sum(1 + log(sigma^2) - mu^2 - sigma^2)
    KLD = -0.5 * sg.sum(1 + logvar - mu.pow(2) - logvar.exp())

    return BCE + KLD


def train(epoch):
    model.train()
    train_loss = 0
    for batch_idx, (data, _) in enumerate(train_loader):
        data = data.to(device)
        optimizer.zero_grad()
        recon_batch, mu, logvar = model(data)
        loss = loss_function(recon_batch, data, mu, logvar)
        loss.backward()
        train_loss += loss.item()
        optimizer.step()
        if batch_idx % args.log_interval == 0:
            print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                epoch, batch_idx * len(data), len(train_loader.dataset),
                100. * batch_idx / len(train_loader),
                loss.item() / len(data)))

    print('====> Epoch: {} Average loss: {:.4f}'.format(
          epoch, train_loss / len(train_loader.dataset)))


def test(epoch):
    model.eval()
    test_loss = 0
    with sg.no_grad():
        for i, (data, _) in enumerate(test_loader):
            data = data.to(device)
            recon_batch, mu, logvar = model(data)
            test_loss += loss_function(recon_batch, data, mu, logvar).item()
            if i == 0:
                n = min(data.size(0), 8)
                comparison = sg.cat([data[:n],
                                      recon_batch.view(args.batch_size, 1, 28, 28)[:n]])
                print('reconstruction', comparison.shape, comparison.sum().item())  # changed: save_image

    test_loss /= len(test_loader.dataset)
    print('====> Test set loss: {:.4f}'.format(test_loss))

if __name__ == "__main__":
    for epoch in range(1, args.epochs + 1):
        train(epoch)
        test(epoch)
        with sg.no_grad():
            sample = sg.tensor(rng.standard_normal((64, 20))).to(device)  # changed: sg.randn(64, 20)
            sample = model.decode(sample).cpu()
            print('sample', sample.view(64, 1, 28, 28).sum().item())  # changed: save_image
