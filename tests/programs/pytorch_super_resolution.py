# pytorch/examples super_resolution (main.py, model.py, data.py): an efficient sub-pixel CNN (four Conv2d layers and
# nn.PixelShuffle) initialized by init.orthogonal_ with init.calculate_gain('relu'), trained by Adam on MSELoss,
# tested by PSNR (10 log10(1 / mse.item())), checkpointed every epoch. `import torch` renamed. Changed (marked):
# synthetic images (BSDS300's Y channel, 8 x 8 inputs upscaled 3 times to 24 x 24 targets, 8 to train, 4 to test)
# instead of data.py's download and transforms; float64; after orthogonal_ (whose check is printed) the weights
# come from NumPy (symgrad's random numbers are not PyTorch's); args fixed instead of argparse's; batches of 4, not
# shuffled; the checkpoint is the state_dict in a temporary directory (sg.save takes tensors, not modules).
from __future__ import print_function
import argparse
import os  # changed: the checkpoints' directory
import tempfile  # changed
from math import log10

import numpy as np  # changed: the random numbers' source
import symgrad as torch
import symgrad.nn as nn
import symgrad.nn.init as init
import symgrad.optim as optim
from symgrad.utils.data import DataLoader


class Net(nn.Module):
    def __init__(self, upscale_factor):
        super(Net, self).__init__()

        self.relu = nn.ReLU()
        self.conv1 = nn.Conv2d(1, 64, (5, 5), (1, 1), (2, 2))
        self.conv2 = nn.Conv2d(64, 64, (3, 3), (1, 1), (1, 1))
        self.conv3 = nn.Conv2d(64, 32, (3, 3), (1, 1), (1, 1))
        self.conv4 = nn.Conv2d(32, upscale_factor ** 2, (3, 3), (1, 1), (1, 1))
        self.pixel_shuffle = nn.PixelShuffle(upscale_factor)

        self._initialize_weights()

    def forward(self, x):
        x = self.relu(self.conv1(x))
        x = self.relu(self.conv2(x))
        x = self.relu(self.conv3(x))
        x = self.pixel_shuffle(self.conv4(x))
        return x

    def _initialize_weights(self):
        init.orthogonal_(self.conv1.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv2.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv3.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv4.weight)


def synthetic_images(rng, count, upscale_factor):  # changed: data.py's BSDS300 Y channels, cropped and resized
    target = rng.uniform(0, 1, (count, 1, 8 * upscale_factor, 8 * upscale_factor)).cumsum(axis=3) / 24  # changed
    input = target.reshape(count, 1, 8, upscale_factor, 8, upscale_factor).mean(axis=(3, 5))  # changed: downscaled
    return torch.utils.data.TensorDataset(torch.tensor(input), torch.tensor(target))  # changed


def get_training_set(upscale_factor):  # changed: synthetic images
    return synthetic_images(np.random.default_rng(0), 8, upscale_factor)  # changed


def get_test_set(upscale_factor):  # changed: synthetic images
    return synthetic_images(np.random.default_rng(1), 4, upscale_factor)  # changed


# Training settings
opt = argparse.Namespace(upscale_factor=3, batchSize=4, testBatchSize=4, nEpochs=2, lr=0.01, cuda=False, mps=False,
                         device='cpu', threads=4, seed=123)  # changed: fixed, not parse_args()

print(opt)

if opt.cuda and not torch.cuda.is_available():
    raise Exception("No GPU found, please run without --cuda")
if not opt.mps and torch.backends.mps.is_available():
    raise Exception("Found mps device, please run with --mps to enable macOS GPU")

torch.manual_seed(opt.seed)
use_mps = opt.mps and torch.backends.mps.is_available()

if opt.cuda:
    device = torch.device("cuda")
elif use_mps:
    device = torch.device("mps")
else:
    device = torch.device(opt.device)

print('===> Loading datasets')
train_set = get_training_set(opt.upscale_factor)
test_set = get_test_set(opt.upscale_factor)
training_data_loader = DataLoader(dataset=train_set, num_workers=opt.threads, batch_size=opt.batchSize,
                                  shuffle=False)  # changed: not shuffled (random)
testing_data_loader = DataLoader(dataset=test_set, num_workers=opt.threads, batch_size=opt.testBatchSize, shuffle=False)

print('===> Building model')
model = Net(upscale_factor=opt.upscale_factor).to(device)
for layer in (model.conv1, model.conv2, model.conv3, model.conv4):  # changed: orthogonal_'s rows, then fixed weights
    rows = layer.weight.detach().reshape(layer.weight.shape[0], -1).double()  # changed
    rows = rows if rows.shape[0] <= rows.shape[1] else rows.T  # changed: the shorter side is orthogonal
    print(torch.allclose(rows @ rows.T, torch.eye(rows.shape[0], dtype=torch.float64) * (  # changed
        2.0 if layer is not model.conv4 else 1.0), atol=1e-5))  # changed
model = model.double()  # changed: float64
rng = np.random.default_rng(2)  # changed
model.load_state_dict({name: torch.tensor(rng.uniform(-0.1, 0.1, tuple(p.shape)))  # changed: fixed weights
                       for name, p in model.state_dict().items()})  # changed
criterion = nn.MSELoss()

optimizer = optim.Adam(model.parameters(), lr=opt.lr)


def train(epoch):
    epoch_loss = 0
    for iteration, batch in enumerate(training_data_loader, 1):
        input, target = batch[0].to(device), batch[1].to(device)

        optimizer.zero_grad()
        loss = criterion(model(input), target)
        epoch_loss += loss.item()
        loss.backward()
        optimizer.step()

        print("===> Epoch[{}]({}/{}): Loss: {:.4f}".format(epoch, iteration, len(training_data_loader), loss.item()))
        print(loss.item())  # changed: all digits

    print("===> Epoch {} Complete: Avg. Loss: {:.4f}".format(epoch, epoch_loss / len(training_data_loader)))


def test():
    avg_psnr = 0
    with torch.no_grad():
        for batch in testing_data_loader:
            input, target = batch[0].to(device), batch[1].to(device)

            prediction = model(input)
            mse = criterion(prediction, target)
            psnr = 10 * log10(1 / mse.item())
            avg_psnr += psnr
    print("===> Avg. PSNR: {:.4f} dB".format(avg_psnr / len(testing_data_loader)))
    print(avg_psnr)  # changed: all digits


checkpoints = tempfile.mkdtemp()  # changed: the checkpoints' directory


def checkpoint(epoch):
    model_out_path = "model_epoch_{}.pth".format(epoch)
    torch.save(model.state_dict(), os.path.join(checkpoints, model_out_path))  # changed: the state_dict, in checkpoints
    print("Checkpoint saved to {}".format(model_out_path))

for epoch in range(1, opt.nEpochs + 1):
    train(epoch)
    test()
    checkpoint(epoch)
