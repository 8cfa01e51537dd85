# PyTorch's "Save and Load the Model" (beginner_source/basics/saveloadrun_tutorial.py) and "Saving and Loading
# Models" (beginner_source/saving_loading_models.py), `import torch` renamed: the state_dict of the TheModelClass
# network and of its SGD optimizer printed, saved and loaded for inference, and a general checkpoint (epoch, model,
# optimizer, loss) saved and resumed. Changed (marked): torchvision's vgg16 is left out (no downloads), the files go
# to a temporary directory, the weights are fixed (symgrad's random numbers are not PyTorch's), a training step is
# run around the checkpoint so the optimizer has a state, and saving a whole model (pickling, which symgrad refuses
# on purpose, docs/eager.md "Saving") is left out.
import os
import tempfile

import numpy as np
import symgrad as sg
import symgrad.nn as nn
import symgrad.nn.functional as F
import symgrad.optim as optim

rng = np.random.default_rng(8)  # changed: the random numbers' source
directory = tempfile.TemporaryDirectory()  # changed: files written here
PATH = os.path.join(directory.name, "model_weights.pth")


# Define model
class TheModelClass(nn.Module):
    def __init__(self):
        super(TheModelClass, self).__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)
        with sg.no_grad():  # changed: fixed weights
            for p in self.parameters():
                p.copy_(sg.tensor(rng.uniform(-0.1, 0.1, tuple(p.shape))))

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = x.view(-1, 16 * 5 * 5)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


# Initialize model
model = TheModelClass()

# Initialize optimizer
optimizer = optim.SGD(model.parameters(), lr=0.001, momentum=0.9)

# Print model's state_dict
print("Model's state_dict:")
for param_tensor in model.state_dict():
    print(param_tensor, "\t", model.state_dict()[param_tensor].size())

# Print optimizer's state_dict
print("Optimizer's state_dict:")
for var_name in optimizer.state_dict():
    print(var_name, "\t", optimizer.state_dict()[var_name])

######################################################################
# Save/Load state_dict (Recommended)
sg.save(model.state_dict(), PATH)

model = TheModelClass()
print(model.load_state_dict(sg.load(PATH, weights_only=True)))
model.eval()
inputs = sg.tensor(rng.standard_normal((2, 3, 32, 32)), dtype=sg.float)  # changed: an input to run
print(model(inputs))

######################################################################
# Saving & Loading a General Checkpoint for Inference and/or Resuming Training
labels = sg.tensor([3, 7])  # changed: a training step, so the optimizer has a state
model.train()
loss = F.cross_entropy(model(inputs), labels)
loss.backward()
optimizer = optim.SGD(model.parameters(), lr=0.001, momentum=0.9)
optimizer.step()
EPOCH, LOSS = 5, loss.item()

sg.save({
            'epoch': EPOCH,
            'model_state_dict': model.state_dict(),
            'optimizer_state_dict': optimizer.state_dict(),
            'loss': LOSS,
            }, PATH)

model = TheModelClass()
optimizer = optim.SGD(model.parameters(), lr=0.001, momentum=0.9)

checkpoint = sg.load(PATH, weights_only=True)
model.load_state_dict(checkpoint['model_state_dict'])
optimizer.load_state_dict(checkpoint['optimizer_state_dict'])
epoch = checkpoint['epoch']
loss = checkpoint['loss']
print(epoch, loss, sorted(checkpoint))  # changed: printed
print(optimizer.state_dict()['state'][0]['momentum_buffer'][1, 0, 0])  # changed: printed

model.train()
for step in range(3):  # changed: training resumed and printed
    optimizer.zero_grad()
    loss = F.cross_entropy(model(inputs), labels)
    loss.backward()
    optimizer.step()
    print(step, loss.item())
directory.cleanup()
