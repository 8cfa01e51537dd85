# pytorch/examples fast_neural_style: transformer_net.py's TransformerNet (ReflectionPad2d, Conv2d, affine
# InstanceNorm2d, five residual blocks, nearest interpolate upsampling), vgg.py's Vgg16 slices returning a namedtuple,
# utils.py's gram_matrix (view, transpose, bmm) and normalize_batch (new_tensor, in-place div_), and
# neural_style.py's train loop (content MSELoss on relu2_2, style MSELoss of Gram matrices against a repeated style
# image's, Adam), one file. `import torch` renamed. Changed (marked): float64; channels 32-64-128 are 8-8-16 and
# VGG16's are 4-8-16-32 with weights from NumPy instead of torchvision's pretrained ones (its layout kept: 23 layers,
# the same slices); synthetic 3x16x16 images in [0, 255] (6 training images, batches of 2, one epoch) instead of
# ImageFolder and PIL; no timestamps, no saved model; args fixed.
import argparse
from collections import namedtuple

import numpy as np
import symgrad as sg
from symgrad.optim import Adam
from symgrad.utils.data import DataLoader, TensorDataset  # changed: TensorDataset for ImageFolder


# transformer_net.py
class TransformerNet(sg.nn.Module):
    def __init__(self):
        super(TransformerNet, self).__init__()
        # Initial convolution layers
        self.conv1 = ConvLayer(3, 8, kernel_size=9, stride=1)  # changed: 32 channels
        self.in1 = sg.nn.InstanceNorm2d(8, affine=True)  # changed: 32
        self.conv2 = ConvLayer(8, 8,  # changed: 32, 64
                                kernel_size=3, stride=2)
        self.in2 = sg.nn.InstanceNorm2d(8, affine=True)  # changed: 64
        self.conv3 = ConvLayer(8, 16,  # changed: 64, 128
                                kernel_size=3, stride=2)
        self.in3 = sg.nn.InstanceNorm2d(16, affine=True)  # changed: 128
        # Residual layers
        self.res1 = ResidualBlock(16)  # changed: 128
        self.res2 = ResidualBlock(16)  # changed: 128
        self.res3 = ResidualBlock(16)  # changed: 128
        self.res4 = ResidualBlock(16)  # changed: 128
        self.res5 = ResidualBlock(16)  # changed: 128
        # Upsampling Layers
        self.deconv1 = UpsampleConvLayer(16, 8, kernel_size=3, stride=1, upsample=2)  # changed: 128, 64
        self.in4 = sg.nn.InstanceNorm2d(8, affine=True)  # changed: 64
        self.deconv2 = UpsampleConvLayer(8, 8,  # changed: 64, 32
                                          kernel_size=3, stride=1, upsample=2)
        self.in5 = sg.nn.InstanceNorm2d(8, affine=True)  # changed: 32
        self.deconv3 = ConvLayer(8, 3,  # changed: 32
                                  kernel_size=9, stride=1)
        # Non-linearities
        self.relu = sg.nn.ReLU()

    def forward(self, X):
        y = self.relu(self.in1(self.conv1(X)))
        y = self.relu(self.in2(self.conv2(y)))
        y = self.relu(self.in3(self.conv3(y)))
        y = self.res1(y)
        y = self.res2(y)
        y = self.res3(y)
        y = self.res4(y)
        y = self.res5(y)
        y = self.relu(self.in4(self.deconv1(y)))
        y = self.relu(self.in5(self.deconv2(y)))
        y = self.deconv3(y)
        return y


class ConvLayer(sg.nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super(ConvLayer, self).__init__()
        reflection_padding = kernel_size // 2
        self.reflection_pad = sg.nn.ReflectionPad2d(reflection_padding)
        self.conv2d = sg.nn.Conv2d(in_channels, out_channels, kernel_size, stride)

    def forward(self, x):
        out = self.reflection_pad(x)
        out = self.conv2d(out)
        return out


class ResidualBlock(sg.nn.Module):
    """ResidualBlock
    introduced in: https://arxiv.org/abs/1512.03385
    recommended architecture: http://sg.ch/blog/2016/02/04/resnets.html
    """

    def __init__(self, channels):
        super(ResidualBlock, self).__init__()
        self.conv1 = ConvLayer(channels, channels, kernel_size=3, stride=1)
        self.in1 = sg.nn.InstanceNorm2d(channels, affine=True)
        self.conv2 = ConvLayer(channels, channels, kernel_size=3, stride=1)
        self.in2 = sg.nn.InstanceNorm2d(channels, affine=True)
        self.relu = sg.nn.ReLU()

    def forward(self, x):
        residual = x
        out = self.relu(self.in1(self.conv1(x)))
        out = self.in2(self.conv2(out))
        out = out + residual
        return out


class UpsampleConvLayer(sg.nn.Module):
    """UpsampleConvLayer
    Upsamples the input and then does a convolution. This method gives better results
    compared to ConvTranspose2d.
    ref: http://distill.pub/2016/deconv-checkerboard/
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride, upsample=None):
        super(UpsampleConvLayer, self).__init__()
        self.upsample = upsample
        reflection_padding = kernel_size // 2
        self.reflection_pad = sg.nn.ReflectionPad2d(reflection_padding)
        self.conv2d = sg.nn.Conv2d(in_channels, out_channels, kernel_size, stride)

    def forward(self, x):
        x_in = x
        if self.upsample:
            x_in = sg.nn.functional.interpolate(x_in, mode='nearest', scale_factor=self.upsample)
        out = self.reflection_pad(x_in)
        out = self.conv2d(out)
        return out


# vgg.py
def vgg16_features(widths=(4, 8, 16, 32)):  # changed: VGG16's features' layout, channels / 16
    layers, channels = [], 3
    for block, (width, convs) in enumerate(zip(widths, (2, 2, 3, 3))):
        if block:
            layers.append(sg.nn.MaxPool2d(kernel_size=2, stride=2))
        for _ in range(convs):
            layers += [sg.nn.Conv2d(channels, width, kernel_size=3, padding=1), sg.nn.ReLU(inplace=True)]
            channels = width
    return sg.nn.Sequential(*layers)


class Vgg16(sg.nn.Module):
    def __init__(self, requires_grad=False):
        super(Vgg16, self).__init__()
        vgg_pretrained_features = vgg16_features()  # changed: models.vgg16(weights=...).features, narrower
        self.slice1 = sg.nn.Sequential()
        self.slice2 = sg.nn.Sequential()
        self.slice3 = sg.nn.Sequential()
        self.slice4 = sg.nn.Sequential()
        for x in range(4):
            self.slice1.add_module(str(x), vgg_pretrained_features[x])
        for x in range(4, 9):
            self.slice2.add_module(str(x), vgg_pretrained_features[x])
        for x in range(9, 16):
            self.slice3.add_module(str(x), vgg_pretrained_features[x])
        for x in range(16, 23):
            self.slice4.add_module(str(x), vgg_pretrained_features[x])
        if not requires_grad:
            for param in self.parameters():
                param.requires_grad = False

    def forward(self, X):
        h = self.slice1(X)
        h_relu1_2 = h
        h = self.slice2(h)
        h_relu2_2 = h
        h = self.slice3(h)
        h_relu3_3 = h
        h = self.slice4(h)
        h_relu4_3 = h
        vgg_outputs = namedtuple("VggOutputs", ['relu1_2', 'relu2_2', 'relu3_3', 'relu4_3'])
        out = vgg_outputs(h_relu1_2, h_relu2_2, h_relu3_3, h_relu4_3)
        return out


# utils.py
def gram_matrix(y):
    (b, ch, h, w) = y.size()
    features = y.view(b, ch, w * h)
    features_t = features.transpose(1, 2)
    gram = features.bmm(features_t) / (ch * h * w)
    return gram


def normalize_batch(batch):
    # normalize using imagenet mean and std
    mean = batch.new_tensor([0.485, 0.456, 0.406]).view(-1, 1, 1)
    std = batch.new_tensor([0.229, 0.224, 0.225]).view(-1, 1, 1)
    batch = batch.div_(255.0)
    return (batch - mean) / std


# neural_style.py
def fixed(module, rng, scale):  # changed: fixed weights instead of PyTorch's random (and pretrained) ones
    module.load_state_dict({name: sg.tensor(rng.normal(1.0 if name.endswith('.weight') and p.dim() == 1 else 0.0,
                                                       scale, tuple(p.shape)))
                            for name, p in module.state_dict().items()})
    return module


def train(args):
    device = sg.device("cpu")

    print(f"Using device: {device}")

    np.random.seed(args.seed)
    sg.manual_seed(args.seed)
    rng = np.random.default_rng(0)  # changed: the random numbers' source

    train_dataset = TensorDataset(sg.tensor(rng.uniform(0, 255, (6, 3, 16, 16))),  # changed: ImageFolder, resized
                                  sg.zeros(6, dtype=sg.long))
    train_loader = DataLoader(train_dataset, batch_size=args.batch_size)

    transformer = fixed(TransformerNet().double(), rng, 0.1).to(device)  # changed: float64, fixed weights
    optimizer = Adam(transformer.parameters(), args.lr)
    mse_loss = sg.nn.MSELoss()

    vgg = fixed(Vgg16(requires_grad=False).double(), rng, 0.2).to(device)  # changed: float64, fixed weights
    style = sg.tensor(rng.uniform(0, 255, (3, 16, 16)))  # changed: utils.load_image and its transform
    style = style.repeat(args.batch_size, 1, 1, 1).to(device)

    features_style = vgg(normalize_batch(style))
    gram_style = [gram_matrix(y) for y in features_style]

    for e in range(args.epochs):
        transformer.train()
        agg_content_loss = 0.
        agg_style_loss = 0.
        count = 0
        for batch_id, (x, _) in enumerate(train_loader):
            n_batch = len(x)
            count += n_batch
            optimizer.zero_grad()

            x = x.to(device)
            y = transformer(x)

            y = normalize_batch(y)
            x = normalize_batch(x)

            features_y = vgg(y)
            features_x = vgg(x)

            content_loss = args.content_weight * mse_loss(features_y.relu2_2, features_x.relu2_2)

            style_loss = 0.
            for ft_y, gm_s in zip(features_y, gram_style):
                gm_y = gram_matrix(ft_y)
                style_loss += mse_loss(gm_y, gm_s[:n_batch, :, :])
            style_loss *= args.style_weight

            total_loss = content_loss + style_loss
            total_loss.backward()
            optimizer.step()

            agg_content_loss += content_loss.item()
            agg_style_loss += style_loss.item()

            if (batch_id + 1) % args.log_interval == 0:
                mesg = "{}\tEpoch {}:\t[{}/{}]\tcontent: {:.6f}\tstyle: {:.6f}\ttotal: {:.6f}".format(
                    "time", e + 1, count, len(train_dataset),  # changed: time.ctime()
                                  agg_content_loss / (batch_id + 1),
                                  agg_style_loss / (batch_id + 1),
                                  (agg_content_loss + agg_style_loss) / (batch_id + 1)
                )
                print(mesg)
                print(content_loss.item(), style_loss.item())  # changed: all digits
    print("\nDone", transformer.deconv3.conv2d.weight.sum().item())  # changed: no saved model


args = argparse.Namespace(seed=42, batch_size=2, lr=1e-3, epochs=1, content_weight=1e5, style_weight=1e10,  # changed
                          log_interval=1)  # changed: fixed
train(args)
