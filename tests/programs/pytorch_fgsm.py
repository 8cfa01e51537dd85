# pytorch/tutorials beginner_source/fgsm_tutorial.py ("Adversarial Example Generation", Nathan Inkawhich): the
# Fast Gradient Sign Attack on the MNIST LeNet (Conv2d, Dropout2d, max_pool2d, view(-1, 320), F.dropout with
# training=self.training, log_softmax), its weights loaded with torch.load(map_location='cpu'), eval(), then for
# each epsilon and each test image: data.requires_grad = True set as an attribute, output.max(1, keepdim=True)[1],
# init_pred.item() != target.item(), nll_loss, model.zero_grad(), data.grad.data.sign(), clamp(image +
# epsilon * sign, 0, 1), the re-classification and the adversarial examples kept as squeeze().detach().cpu().numpy().
# `import torch` renamed. Changed (marked): the "pretrained" weights trained here (Adam, 12 steps on the test
# images, saved by torch.save and loaded back) instead of downloaded; the weights drawn from NumPy's generator and
# float64 (symgrad's random numbers are not PyTorch's); 12 synthetic images of MNIST's shape through TensorDataset
# instead of datasets.MNIST, not shuffled (symgrad's shuffle is not PyTorch's); the plots' points printed.
from __future__ import print_function
import os  # changed: the weights' file in a temporary folder
import tempfile  # changed
import symgrad as torch
import symgrad.nn as nn
import symgrad.nn.functional as F
import symgrad.optim as optim
import numpy as np

epsilons = [0, .05, .1, .15, .2, .25, .3]
folder = tempfile.TemporaryDirectory()  # changed
pretrained_model = os.path.join(folder.name, "lenet_mnist_model.pth")  # changed: "lenet_mnist_model.pth"
use_cuda=False

# LeNet Model definition
class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x.view(-1, 320)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)

rng = np.random.default_rng(0)  # changed: the random numbers' source
images = rng.integers(0, 256, (12, 1, 28, 28)) / 255.0  # changed: synthetic images of MNIST's shape
labels = images[:, 0, 4:24, 4:24].reshape(12, 10, 40).sum(2).argmax(1)  # changed
# MNIST Test dataset and dataloader declaration
test_loader = torch.utils.data.DataLoader(
    torch.utils.data.TensorDataset(torch.tensor(images), torch.tensor(labels)),  # changed: datasets.MNIST
        batch_size=1, shuffle=False)  # changed: shuffle=True

# Define what device we are using
print("CUDA Available: ",torch.cuda.is_available())
device = torch.device("cuda" if (use_cuda and torch.cuda.is_available()) else "cpu")

# Initialize the network
model = Net().to(device)


def pretrain(model):  # changed: the pretrained weights made here, from NumPy's draws, trained and saved
    model.load_state_dict({name: torch.tensor(rng.uniform(-0.1, 0.1, tuple(p.shape)))
                           for name, p in model.state_dict().items()})
    model.eval()  # (no dropout while training: its masks are random)
    optimizer = optim.Adam(model.parameters(), lr=0.01)
    data, target = torch.tensor(images), torch.tensor(labels)
    for step in range(12):
        optimizer.zero_grad()
        loss = F.nll_loss(model(data), target)
        loss.backward()
        optimizer.step()
        print("pretraining step {} loss {:.6f}".format(step, loss.item()))
    torch.save(model.state_dict(), pretrained_model)


pretrain(Net().double())  # changed

# Load the pretrained model
model.load_state_dict(torch.load(pretrained_model, map_location='cpu'))
model.double()  # changed: float64

# Set the model in evaluation mode. In this case this is for the Dropout layers
model.eval()

# FGSM attack code
def fgsm_attack(image, epsilon, data_grad):
    # Collect the element-wise sign of the data gradient
    sign_data_grad = data_grad.sign()
    # Create the perturbed image by adjusting each pixel of the input image
    perturbed_image = image + epsilon*sign_data_grad
    # Adding clipping to maintain [0,1] range
    perturbed_image = torch.clamp(perturbed_image, 0, 1)
    # Return the perturbed image
    return perturbed_image

def test( model, device, test_loader, epsilon ):

    # Accuracy counter
    correct = 0
    adv_examples = []

    # Loop over all examples in test set
    for data, target in test_loader:

        # Send the data and label to the device
        data, target = data.to(device), target.to(device)

        # Set requires_grad attribute of tensor. Important for Attack
        data.requires_grad = True

        # Forward pass the data through the model
        output = model(data)
        init_pred = output.max(1, keepdim=True)[1] # get the index of the max log-probability

        # If the initial prediction is wrong, dont bother attacking, just move on
        if init_pred.item() != target.item():
            continue

        # Calculate the loss
        loss = F.nll_loss(output, target)

        # Zero all existing gradients
        model.zero_grad()

        # Calculate gradients of model in backward pass
        loss.backward()

        # Collect datagrad
        data_grad = data.grad.data

        # Call FGSM Attack
        perturbed_data = fgsm_attack(data, epsilon, data_grad)

        # Re-classify the perturbed image
        output = model(perturbed_data)

        # Check for success
        final_pred = output.max(1, keepdim=True)[1] # get the index of the max log-probability
        if final_pred.item() == target.item():
            correct += 1
            # Special case for saving 0 epsilon examples
            if (epsilon == 0) and (len(adv_examples) < 5):
                adv_ex = perturbed_data.squeeze().detach().cpu().numpy()
                adv_examples.append( (init_pred.item(), final_pred.item(), adv_ex) )
        else:
            # Save some adv examples for visualization later
            if len(adv_examples) < 5:
                adv_ex = perturbed_data.squeeze().detach().cpu().numpy()
                adv_examples.append( (init_pred.item(), final_pred.item(), adv_ex) )

    # Calculate final accuracy for this epsilon
    final_acc = correct/float(len(test_loader))
    print("Epsilon: {}\tTest Accuracy = {} / {} = {}".format(epsilon, correct, len(test_loader), final_acc))

    # Return the accuracy and an adversarial example
    return final_acc, adv_examples

accuracies = []
examples = []

# Run test for each epsilon
for eps in epsilons:
    acc, ex = test(model, device, test_loader, eps)
    accuracies.append(acc)
    examples.append(ex)

print("accuracies", accuracies)  # changed: plt.plot(epsilons, accuracies, "*-")
for i in range(len(epsilons)):  # changed: the examples' titles and pixel sums printed, not plotted
    for j in range(len(examples[i])):
        orig,adv,ex = examples[i][j]
        print("Eps: {} {} -> {} {} {:.6f}".format(epsilons[i], orig, adv, ex.shape, ex.sum()))  # changed
folder.cleanup()  # changed
