# caogang/wgan-gp gan_toy.py (MIT License, Copyright (c) 2017 Ishaan Gulrajani): a WGAN-GP on the 8gaussians toy
# set, a 4-layer ReLU(True) MLP generator and critic initialized by weights_init through apply (classname.find,
# .data.normal_, .data.fill_), the critic's Adam steps from backward(mone)/backward(one) of its means and the
# gradient penalty: autograd.grad of the critic at interpolates with create_graph=True, ((norm(2, dim=1) - 1) ** 2)
# backpropagated into the critic's parameters; the critic's requires_grad switched off for the generator's step.
# `import torch` renamed. Changed (marked): Python 3 (print(), range, next()), no tflib/matplotlib/sklearn; float64
# (one and mone scalars: PyTorch 2 refuses a [1] gradient for a 0-d output); no CUDA; the weights' normal numbers,
# torch.rand's and torch.randn's come from NumPy's generator (symgrad's random numbers are not PyTorch's); DIM 16,
# BATCH_SIZE 32, 4 generator iterations of 5 critic iterations, the costs printed.
import os, sys

sys.path.append(os.getcwd())

import random

import numpy as np

import symgrad as torch
import symgrad.autograd as autograd
import symgrad.nn as nn
import symgrad.nn.functional as F
import symgrad.optim as optim

torch.manual_seed(1)
random.seed(1)  # changed: the data's random numbers fixed
np.random.seed(1)  # changed: the data's random numbers fixed
rng = np.random.default_rng(0)  # changed: the random numbers' source

MODE = 'wgan-gp'  # wgan or wgan-gp
DATASET = '8gaussians'  # 8gaussians, 25gaussians, swissroll
DIM = 16  # changed: 512
FIXED_GENERATOR = False  # whether to hold the generator fixed at real data plus
# Gaussian noise, as in the plots in the paper
LAMBDA = .1  # Smaller lambda seems to help for toy tasks specifically
CRITIC_ITERS = 5  # How many critic iterations per generator iteration
BATCH_SIZE = 32  # changed: 256
ITERS = 4  # changed: 100000
use_cuda = False  # changed: True


class Generator(nn.Module):

    def __init__(self):
        super(Generator, self).__init__()

        main = nn.Sequential(
            nn.Linear(2, DIM),
            nn.ReLU(True),
            nn.Linear(DIM, DIM),
            nn.ReLU(True),
            nn.Linear(DIM, DIM),
            nn.ReLU(True),
            nn.Linear(DIM, 2),
        )
        self.main = main

    def forward(self, noise):
        if FIXED_GENERATOR:
            return noise
        else:
            output = self.main(noise)
            return output


class Discriminator(nn.Module):

    def __init__(self):
        super(Discriminator, self).__init__()

        main = nn.Sequential(
            nn.Linear(2, DIM),
            nn.ReLU(True),
            nn.Linear(DIM, DIM),
            nn.ReLU(True),
            nn.Linear(DIM, DIM),
            nn.ReLU(True),
            nn.Linear(DIM, 1),
        )
        self.main = main

    def forward(self, inputs):
        output = self.main(inputs)
        return output.view(-1)


# custom weights initialization called on netG and netD
def weights_init(m):
    classname = m.__class__.__name__
    if classname.find('Linear') != -1:
        m.weight.data.copy_(torch.tensor(rng.normal(0.0, 0.02, tuple(m.weight.shape))))  # changed: .normal_(0.0, 0.02)
        m.bias.data.fill_(0)
    elif classname.find('BatchNorm') != -1:
        m.weight.data.normal_(1.0, 0.02)
        m.bias.data.fill_(0)


# Dataset iterator
def inf_train_gen():
    if DATASET == '8gaussians':

        scale = 2.
        centers = [
            (1, 0),
            (-1, 0),
            (0, 1),
            (0, -1),
            (1. / np.sqrt(2), 1. / np.sqrt(2)),
            (1. / np.sqrt(2), -1. / np.sqrt(2)),
            (-1. / np.sqrt(2), 1. / np.sqrt(2)),
            (-1. / np.sqrt(2), -1. / np.sqrt(2))
        ]
        centers = [(scale * x, scale * y) for x, y in centers]
        while True:
            dataset = []
            for i in range(BATCH_SIZE):  # changed: xrange
                point = np.random.randn(2) * .02
                center = random.choice(centers)
                point[0] += center[0]
                point[1] += center[1]
                dataset.append(point)
            dataset = np.array(dataset, dtype='float64')  # changed: float32
            dataset /= 1.414  # stdev
            yield dataset


def calc_gradient_penalty(netD, real_data, fake_data):
    alpha = torch.tensor(rng.random((BATCH_SIZE, 1)))  # changed: torch.rand(BATCH_SIZE, 1)
    alpha = alpha.expand(real_data.size())
    alpha = alpha.cuda() if use_cuda else alpha

    interpolates = alpha * real_data + ((1 - alpha) * fake_data)
    if use_cuda:
        interpolates = interpolates.cuda()
    interpolates = autograd.Variable(interpolates, requires_grad=True)

    disc_interpolates = netD(interpolates)

    gradients = autograd.grad(outputs=disc_interpolates, inputs=interpolates,
                              grad_outputs=torch.ones(BATCH_SIZE, dtype=torch.double),  # changed: float64, no CUDA
                              create_graph=True, only_inputs=True)[0]

    gradient_penalty = ((gradients.norm(2, dim=1) - 1) ** 2).mean() * LAMBDA
    return gradient_penalty


netG = Generator().double()  # changed: float64
netD = Discriminator().double()  # changed: float64
netD.apply(weights_init)
netG.apply(weights_init)
print(netG)  # changed: print()
print(netD)  # changed: print()

if use_cuda:
    netD = netD.cuda()
    netG = netG.cuda()

optimizerD = optim.Adam(netD.parameters(), lr=1e-4, betas=(0.5, 0.9))
optimizerG = optim.Adam(netG.parameters(), lr=1e-4, betas=(0.5, 0.9))

one = torch.tensor(1.0, dtype=torch.double)  # changed: torch.FloatTensor([1])
mone = one * -1
if use_cuda:
    one = one.cuda()
    mone = mone.cuda()

data = inf_train_gen()

for iteration in range(ITERS):  # changed: xrange
    ############################
    # (1) Update D network
    ###########################
    for p in netD.parameters():  # reset requires_grad
        p.requires_grad = True  # they are set to False below in netG update

    for iter_d in range(CRITIC_ITERS):  # changed: xrange
        _data = next(data)  # changed: data.next()
        real_data = torch.tensor(_data)  # changed: torch.Tensor (float32)
        if use_cuda:
            real_data = real_data.cuda()
        real_data_v = autograd.Variable(real_data)

        netD.zero_grad()

        # train with real
        D_real = netD(real_data_v)
        D_real = D_real.mean()
        D_real.backward(mone)

        # train with fake
        noise = torch.tensor(rng.standard_normal((BATCH_SIZE, 2)))  # changed: torch.randn(BATCH_SIZE, 2)
        if use_cuda:
            noise = noise.cuda()
        noisev = autograd.Variable(noise, volatile=True)  # totally freeze netG
        fake = autograd.Variable(netG(noisev).data)
        inputv = fake
        D_fake = netD(inputv)
        D_fake = D_fake.mean()
        D_fake.backward(one)

        # train with gradient penalty
        gradient_penalty = calc_gradient_penalty(netD, real_data_v.data, fake.data)
        gradient_penalty.backward(one)

        D = D_fake - D_real + gradient_penalty
        optimizerD.step()

    ############################
    # (2) Update G network
    ###########################
    for p in netD.parameters():
        p.requires_grad = False  # to avoid computation
    netG.zero_grad()

    noise = torch.tensor(rng.standard_normal((BATCH_SIZE, 2)))  # changed: torch.randn(BATCH_SIZE, 2)
    if use_cuda:
        noise = noise.cuda()
    noisev = autograd.Variable(noise)
    fake = netG(noisev)
    G = netD(fake)
    G = G.mean()
    G.backward(mone)
    optimizerG.step()

    print('disc cost', D.item(), 'gen cost', G.item(), 'penalty', gradient_penalty.item())  # changed: lib.plot
    print('critic grad norm', sum(p.grad.norm() ** 2 for p in netD.parameters()).item())  # changed: printed
