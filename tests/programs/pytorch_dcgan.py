# pytorch/examples dcgan/main.py: a DCGAN (ConvTranspose2d/BatchNorm2d/ReLU generator, Conv2d/BatchNorm2d/LeakyReLU
# discriminator, BCELoss, two Adam optimizers; the discriminator's backward through fake.detach(), the generator's
# through the discriminator) on 64x64 images. `import torch` renamed. Changed (marked): float64, --dataset fake as
# a TensorDataset of 8 images, small widths (nz 8, ngf = ndf 4, batches of 4, 1 epoch), no image or checkpoint
# saving; weights_init's normal draws, the noise and the images come from NumPy's generator (symgrad's random
# numbers are not PyTorch's); opt fixed instead of argparse's.
from __future__ import print_function
import argparse
import numpy as np  # changed: the random numbers' source
import symgrad as sg
import symgrad.nn as nn
import symgrad.optim as optim
import symgrad.utils.data


opt = argparse.Namespace(dataset='fake', dataroot=None, workers=0, batchSize=4, imageSize=64, nz=8, ngf=4, ndf=4,
                         niter=1, lr=0.0002, beta1=0.5, dry_run=False, ngpu=1, netG='', netD='', outf='.',
                         manualSeed=3, classes='bedroom', accel=False)  # changed: fixed, small
print(opt)

print("Random Seed: ", opt.manualSeed)
sg.manual_seed(opt.manualSeed)
rng = np.random.default_rng(opt.manualSeed)  # changed: the random numbers' source

if opt.accel and sg.accelerator.is_available():
    device = sg.accelerator.current_accelerator()
else:
    device = sg.device("cpu")

print(f"Using device: {device}")

dataset = sg.utils.data.TensorDataset(  # changed: dset.FakeData(image_size=(3, 64, 64), transform=ToTensor())
    sg.tensor(rng.uniform(0, 1, (8, 3, opt.imageSize, opt.imageSize))), sg.zeros(8, dtype=sg.long))
nc=3

assert dataset
dataloader = sg.utils.data.DataLoader(dataset, batch_size=opt.batchSize,
                                      shuffle=False, num_workers=int(opt.workers))  # changed: not shuffled

ngpu = int(opt.ngpu)
nz = int(opt.nz)
ngf = int(opt.ngf)
ndf = int(opt.ndf)


def normal_(tensor, mean, std):  # changed: sg.nn.init.normal_ with NumPy's draws
    with sg.no_grad():
        tensor.copy_(sg.tensor(rng.normal(mean, std, tuple(tensor.shape))))


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find('Conv') != -1:
        normal_(m.weight, 0.0, 0.02)  # changed: NumPy's draws
    elif classname.find('BatchNorm') != -1:
        normal_(m.weight, 1.0, 0.02)  # changed: NumPy's draws
        sg.nn.init.zeros_(m.bias)


class Generator(nn.Module):
    def __init__(self, ngpu):
        super(Generator, self).__init__()
        self.ngpu = ngpu
        self.main = nn.Sequential(
            nn.ConvTranspose2d(     nz, ngf * 8, 4, 1, 0, bias=False),
            nn.BatchNorm2d(ngf * 8),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 8, ngf * 4, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ngf * 4),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2,     ngf, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ngf),
            nn.ReLU(True),
            nn.ConvTranspose2d(    ngf,      nc, 4, 2, 1, bias=False),
            nn.Tanh()
        )

    def forward(self, input):
        
        if (input.is_cuda or input.is_xpu) and self.ngpu > 1:
            output = nn.parallel.data_parallel(self.main, input, range(self.ngpu))
        else:
            output = self.main(input)
        return output


netG = Generator(ngpu).to(device).double()  # changed: float64
netG.apply(weights_init)
if opt.netG != '':
    netG.load_state_dict(sg.load(opt.netG))
print(netG)


class Discriminator(nn.Module):
    def __init__(self, ngpu):
        super(Discriminator, self).__init__()
        self.ngpu = ngpu
        self.main = nn.Sequential(
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ndf * 2),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, ndf * 4, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ndf * 4),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 4, ndf * 8, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ndf * 8),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 8, 1, 4, 1, 0, bias=False),
            nn.Sigmoid()
        )

    def forward(self, input):
        if (input.is_cuda or input.is_xpu) and self.ngpu > 1:
            output = nn.parallel.data_parallel(self.main, input, range(self.ngpu))
        else:
            output = self.main(input)

        return output.view(-1, 1).squeeze(1)


netD = Discriminator(ngpu).to(device).double()  # changed: float64
netD.apply(weights_init)
if opt.netD != '':
    netD.load_state_dict(sg.load(opt.netD))
print(netD)

criterion = nn.BCELoss()

fixed_noise = sg.tensor(rng.standard_normal((opt.batchSize, nz, 1, 1)))  # changed: sg.randn, NumPy's draws
real_label = 1
fake_label = 0

optimizerD = optim.Adam(netD.parameters(), lr=opt.lr, betas=(opt.beta1, 0.999))
optimizerG = optim.Adam(netG.parameters(), lr=opt.lr, betas=(opt.beta1, 0.999))

if opt.dry_run:
    opt.niter = 1

for epoch in range(opt.niter):
    for i, data in enumerate(dataloader, 0):
        netD.zero_grad()
        real_cpu = data[0].to(device)
        batch_size = real_cpu.size(0)
        label = sg.full((batch_size,), real_label,
                        dtype=real_cpu.dtype, device=device)

        output = netD(real_cpu)
        errD_real = criterion(output, label)
        errD_real.backward()
        D_x = output.mean().item()

        noise = sg.tensor(rng.standard_normal((batch_size, nz, 1, 1)))  # changed: sg.randn, NumPy's draws
        fake = netG(noise)
        label.fill_(fake_label)
        output = netD(fake.detach())
        errD_fake = criterion(output, label)
        errD_fake.backward()
        D_G_z1 = output.mean().item()
        errD = errD_real + errD_fake
        optimizerD.step()

        netG.zero_grad()
        label.fill_(real_label)  # fake labels are real for generator cost
        output = netD(fake)
        errG = criterion(output, label)
        errG.backward()
        D_G_z2 = output.mean().item()
        optimizerG.step()

        print('[%d/%d][%d/%d] Loss_D: %.4f Loss_G: %.4f D(x): %.4f D(G(z)): %.4f / %.4f'
              % (epoch, opt.niter, i, len(dataloader),
                 errD.item(), errG.item(), D_x, D_G_z1, D_G_z2))
        if i % 100 == 0:
            fake = netG(fixed_noise)
            print('fake samples', fake.detach().sum().item(), fake.detach().abs().max().item())  # changed: printed

        if opt.dry_run:
            break
print('generator', sum(p.sum().item() for p in netG.parameters()),  # changed: the trained weights' sums printed
      'discriminator', sum(p.sum().item() for p in netD.parameters()))
