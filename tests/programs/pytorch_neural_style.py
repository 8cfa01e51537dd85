# pytorch/tutorials advanced_source/neural_style_tutorial.py ("Neural Transfer Using PyTorch", Alexis Jacq, edited
# by Winston Herring; BSD 3-Clause License): Gatys' style transfer, an input image optimized by L-BFGS with a closure
# (input_img.data.clamp_ before each evaluation, requires_grad_() on a plain tensor handed to the optimizer), the
# losses computed by transparent ContentLoss/StyleLoss modules (mse_loss of detached targets, gram matrices by
# view, mm of .t() and div) inserted by add_module into a Sequential rebuilt from a deepcopy of a CNN's children
# (isinstance dispatch, ReLU(inplace=False) swapped in), then sliced at the last loss layer. `import torch` renamed.
# Changed (marked): no PIL/torchvision/matplotlib: the pretrained VGG19 features are a small Conv2d/ReLU(inplace)/
# MaxPool2d/BatchNorm2d stack with weights from NumPy's generator, the images NumPy's 16x16 pictures in [0, 1], the
# plots' images summarized by printed numbers; float64; 20 steps printed every 5 evaluations instead of 300 every 50.
from __future__ import print_function

import numpy as np  # changed: the random numbers' source
import symgrad as torch
import symgrad.nn as nn
import symgrad.nn.functional as F
import symgrad.optim as optim

import copy

rng = np.random.default_rng(0)  # changed: the random numbers' source

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

# desired size of the output image
imsize = 16  # changed: 512 if torch.cuda.is_available() else 128


def image_loader(image_name):
    image = torch.tensor(rng.beta(2.0, 2.0 if image_name == "dancing" else 0.5, (3, imsize, imsize)))  # changed
    # fake batch dimension required to fit network's input dimensions
    image = image.unsqueeze(0)  # changed: loader(image).unsqueeze(0)
    return image.to(device, torch.double)  # changed: torch.float


style_img = image_loader("picasso")  # changed: "./data/images/neural-style/picasso.jpg"
content_img = image_loader("dancing")  # changed: "./data/images/neural-style/dancing.jpg"

assert style_img.size() == content_img.size(), \
    "we need to import style and content images of the same size"


def imshow(tensor, title=None):  # changed: numbers printed for the image shown
    image = tensor.cpu().clone()  # we clone the tensor to not do changes on it
    image = image.squeeze(0)      # remove the fake batch dimension
    print(title, image.shape, image.mean().item(), image[:, ::5, ::5].sum().item())  # changed: plt.imshow(image)


imshow(style_img, title='Style Image')

imshow(content_img, title='Content Image')


class ContentLoss(nn.Module):

    def __init__(self, target,):
        super(ContentLoss, self).__init__()
        # we 'detach' the target content from the tree used
        # to dynamically compute the gradient: this is a stated value,
        # not a variable. Otherwise the forward method of the criterion
        # will throw an error.
        self.target = target.detach()

    def forward(self, input):
        self.loss = F.mse_loss(input, self.target)
        return input


def gram_matrix(input):
    a, b, c, d = input.size()  # a=batch size(=1)
    # b=number of feature maps
    # (c,d)=dimensions of a f. map (N=c*d)

    features = input.view(a * b, c * d)  # resize F_XL into \hat F_XL

    G = torch.mm(features, features.t())  # compute the gram product

    # we 'normalize' the values of the gram matrix
    # by dividing by the number of element in each feature maps.
    return G.div(a * b * c * d)


class StyleLoss(nn.Module):

    def __init__(self, target_feature):
        super(StyleLoss, self).__init__()
        self.target = gram_matrix(target_feature).detach()

    def forward(self, input):
        G = gram_matrix(input)
        self.loss = F.mse_loss(G, self.target)
        return input


cnn = nn.Sequential(  # changed: a small stack for models.vgg19(pretrained=True).features
    nn.Conv2d(3, 6, 3, padding=1), nn.ReLU(inplace=True), nn.Conv2d(6, 6, 3, padding=1),  # changed
    nn.ReLU(inplace=True), nn.MaxPool2d(2, 2), nn.Conv2d(6, 8, 3, padding=1), nn.BatchNorm2d(8),  # changed
    nn.ReLU(inplace=True), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2, 2),  # changed
    nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(inplace=True), nn.Conv2d(8, 8, 3, padding=1)).double()  # changed
cnn.load_state_dict({name: torch.tensor(rng.uniform(0.5, 1.5, tuple(p.shape)) if "running_var" in name  # changed
                                        else rng.uniform(-0.4, 0.4, tuple(p.shape)))  # changed: NumPy's numbers
                     for name, p in cnn.state_dict().items() if "num_batches" not in name}, strict=False)  # changed
cnn = cnn.to(device).eval()  # changed: (the features of a pretrained VGG19)

cnn_normalization_mean = torch.tensor([0.485, 0.456, 0.406], dtype=torch.double).to(device)  # changed: float64
cnn_normalization_std = torch.tensor([0.229, 0.224, 0.225], dtype=torch.double).to(device)  # changed: float64

# create a module to normalize input image so we can easily put it in a
# nn.Sequential
class Normalization(nn.Module):
    def __init__(self, mean, std):
        super(Normalization, self).__init__()
        # .view the mean and std to make them [C x 1 x 1] so that they can
        # directly work with image Tensor of shape [B x C x H x W].
        # B is batch size. C is number of channels. H is height and W is width.
        self.mean = mean.clone().view(-1, 1, 1)  # changed: torch.tensor(mean) (PyTorch warns: a copy of a tensor)
        self.std = std.clone().view(-1, 1, 1)  # changed: torch.tensor(std)

    def forward(self, img):
        # normalize img
        return (img - self.mean) / self.std


# desired depth layers to compute style/content losses :
content_layers_default = ['conv_4']
style_layers_default = ['conv_1', 'conv_2', 'conv_3', 'conv_4', 'conv_5']

def get_style_model_and_losses(cnn, normalization_mean, normalization_std,
                               style_img, content_img,
                               content_layers=content_layers_default,
                               style_layers=style_layers_default):
    cnn = copy.deepcopy(cnn)

    # normalization module
    normalization = Normalization(normalization_mean, normalization_std).to(device)

    # just in order to have an iterable access to or list of content/syle
    # losses
    content_losses = []
    style_losses = []

    # assuming that cnn is a nn.Sequential, so we make a new nn.Sequential
    # to put in modules that are supposed to be activated sequentially
    model = nn.Sequential(normalization)

    i = 0  # increment every time we see a conv
    for layer in cnn.children():
        if isinstance(layer, nn.Conv2d):
            i += 1
            name = 'conv_{}'.format(i)
        elif isinstance(layer, nn.ReLU):
            name = 'relu_{}'.format(i)
            # The in-place version doesn't play very nicely with the ContentLoss
            # and StyleLoss we insert below. So we replace with out-of-place
            # ones here.
            layer = nn.ReLU(inplace=False)
        elif isinstance(layer, nn.MaxPool2d):
            name = 'pool_{}'.format(i)
        elif isinstance(layer, nn.BatchNorm2d):
            name = 'bn_{}'.format(i)
        else:
            raise RuntimeError('Unrecognized layer: {}'.format(layer.__class__.__name__))

        model.add_module(name, layer)

        if name in content_layers:
            # add content loss:
            target = model(content_img).detach()
            content_loss = ContentLoss(target)
            model.add_module("content_loss_{}".format(i), content_loss)
            content_losses.append(content_loss)

        if name in style_layers:
            # add style loss:
            target_feature = model(style_img).detach()
            style_loss = StyleLoss(target_feature)
            model.add_module("style_loss_{}".format(i), style_loss)
            style_losses.append(style_loss)

    # now we trim off the layers after the last content and style losses
    for i in range(len(model) - 1, -1, -1):
        if isinstance(model[i], ContentLoss) or isinstance(model[i], StyleLoss):
            break

    model = model[:(i + 1)]

    return model, style_losses, content_losses


input_img = content_img.clone()

imshow(input_img, title='Input Image')


def get_input_optimizer(input_img):
    # this line to show that input is a parameter that requires a gradient
    optimizer = optim.LBFGS([input_img.requires_grad_()])
    return optimizer


def run_style_transfer(cnn, normalization_mean, normalization_std,
                       content_img, style_img, input_img, num_steps=20,  # changed: 300
                       style_weight=1000000, content_weight=1):
    """Run the style transfer."""
    print('Building the style transfer model..')
    model, style_losses, content_losses = get_style_model_and_losses(cnn,
        normalization_mean, normalization_std, style_img, content_img)
    print(model)  # changed: printed
    optimizer = get_input_optimizer(input_img)

    print('Optimizing..')
    run = [0]
    while run[0] <= num_steps:

        def closure():
            # correct the values of updated input image
            input_img.data.clamp_(0, 1)

            optimizer.zero_grad()
            model(input_img)
            style_score = 0
            content_score = 0

            for sl in style_losses:
                style_score += sl.loss
            for cl in content_losses:
                content_score += cl.loss

            style_score *= style_weight
            content_score *= content_weight

            loss = style_score + content_score
            loss.backward()

            run[0] += 1
            if run[0] % 5 == 0:  # changed: 50
                print("run {}:".format(run))
                print('Style Loss : {:4f} Content Loss: {:4f}'.format(
                    style_score.item(), content_score.item()))
                print()

            return style_score + content_score

        optimizer.step(closure)

    # a last correction...
    input_img.data.clamp_(0, 1)

    return input_img


output = run_style_transfer(cnn, cnn_normalization_mean, cnn_normalization_std,
                            content_img, style_img, input_img)

imshow(output, title='Output Image')
