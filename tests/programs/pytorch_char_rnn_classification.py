# pytorch/tutorials intermediate_source/char_rnn_classification_tutorial.py ("NLP From Scratch: Classifying Names
# with a Character-Level RNN", Sean Robertson): names turned into one-hot letter tensors by item assignment, a vanilla
# RNN of three Linear layers (F.tanh of i2h(input) + h2h(hidden)) and a LogSoftmax, stepped one letter at a time,
# NLLLoss, hand-written `p.data.add_(p.grad.data, alpha=-learning_rate)` steps, topk to read a guess, a confusion
# matrix filled by `confusion[i][j] += 1` and normalized row by row, predictions under no_grad. `import torch` renamed.
# Changed (marked): a few names of five languages in the program instead of data/names/*.txt; float64 (the one-hot
# tensors, the RNN); the weights from NumPy (symgrad's random numbers are not PyTorch's); n_hidden 16, not 128;
# 60 iterations printed every 20 (not 100,000 every 5,000) without times; 40 names in the confusion matrix, which is
# printed rather than plotted (no matplotlib).
from io import open
import glob
import os

import numpy as np  # changed: the weights' source

NAMES = {  # changed: a few names of five languages in the program, not data/names/*.txt
    'Italian': ['Abandonato', 'Abatangelo', 'Abatantuono', 'Abate', 'Abategiovanni', 'Rossi', 'Ricci', 'Bianchi'],
    'German': ['Abbing', 'Abel', 'Abeln', 'Schmidt', 'Müller', 'Schröder', 'Becker', 'Hoffmann'],
    'Japanese': ['Abe', 'Abukara', 'Adachi', 'Satō', 'Suzuki', 'Takahashi', 'Tanaka', 'Watanabe'],
    'Polish': ['Adamczak', 'Adamczyk', 'Andrysiak', 'Ślusàrski', 'Nowak', 'Kowalski', 'Wiśniewski', 'Wójcik'],
    'Scottish': ['Smith', 'Brown', 'Wilson', 'Campbell', 'Stewart', 'Thomson', 'Robertson', 'Anderson'],
}

def findFiles(path): return ['data/names/%s.txt' % language for language in NAMES]  # changed: the names above

print(findFiles('data/names/*.txt'))

import unicodedata
import string

all_letters = string.ascii_letters + " .,;'"
n_letters = len(all_letters)

# Turn a Unicode string to plain ASCII, thanks to https://stackoverflow.com/a/518232/2809427
def unicodeToAscii(s):
    return ''.join(
        c for c in unicodedata.normalize('NFD', s)
        if unicodedata.category(c) != 'Mn'
        and c in all_letters
    )

print(unicodeToAscii('Ślusàrski'))

# Build the category_lines dictionary, a list of names per language
category_lines = {}
all_categories = []

# Read a file and split into lines
def readLines(filename):
    lines = NAMES[os.path.splitext(os.path.basename(filename))[0]]  # changed: the names above, not the file
    return [unicodeToAscii(line) for line in lines]

for filename in findFiles('data/names/*.txt'):
    category = os.path.splitext(os.path.basename(filename))[0]
    all_categories.append(category)
    lines = readLines(filename)
    category_lines[category] = lines

n_categories = len(all_categories)

print(category_lines['Italian'][:5])

import symgrad as torch

# Find letter index from all_letters, e.g. "a" = 0
def letterToIndex(letter):
    return all_letters.find(letter)

# Just for demonstration, turn a letter into a <1 x n_letters> Tensor
def letterToTensor(letter):
    tensor = torch.zeros(1, n_letters, dtype=torch.float64)  # changed: float64
    tensor[0][letterToIndex(letter)] = 1
    return tensor

# Turn a line into a <line_length x 1 x n_letters>,
# or an array of one-hot letter vectors
def lineToTensor(line):
    tensor = torch.zeros(len(line), 1, n_letters, dtype=torch.float64)  # changed: float64
    for li, letter in enumerate(line):
        tensor[li][0][letterToIndex(letter)] = 1
    return tensor

print(letterToTensor('J'))

print(lineToTensor('Jones').size())

import symgrad.nn as nn
import symgrad.nn.functional as F

class RNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super(RNN, self).__init__()

        self.hidden_size = hidden_size

        self.i2h = nn.Linear(input_size, hidden_size)
        self.h2h = nn.Linear(hidden_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)
        self.softmax = nn.LogSoftmax(dim=1)

    def forward(self, input, hidden):
        hidden = F.tanh(self.i2h(input) + self.h2h(hidden))
        output = self.h2o(hidden)
        output = self.softmax(output)
        return output, hidden

    def initHidden(self):
        return torch.zeros(1, self.hidden_size, dtype=torch.float64)  # changed: float64

n_hidden = 16  # changed: 128
rnn = RNN(n_letters, n_hidden, n_categories).double()  # changed: float64
rng = np.random.default_rng(0)  # changed: fixed weights instead of PyTorch's random ones
rnn.load_state_dict({name: torch.tensor(rng.uniform(-0.3, 0.3, tuple(p.shape)))  # changed
                     for name, p in rnn.state_dict().items()})  # changed

input = letterToTensor('A')
hidden = torch.zeros(1, n_hidden, dtype=torch.float64)  # changed: float64

output, next_hidden = rnn(input, hidden)

input = lineToTensor('Albert')
hidden = torch.zeros(1, n_hidden, dtype=torch.float64)  # changed: float64

output, next_hidden = rnn(input[0], hidden)
print(output)

def categoryFromOutput(output):
    top_n, top_i = output.topk(1)
    category_i = top_i[0].item()
    return all_categories[category_i], category_i

print(categoryFromOutput(output))

import random
random.seed(0)  # changed: the examples chosen alike on both runs

def randomChoice(l):
    return l[random.randint(0, len(l) - 1)]

def randomTrainingExample():
    category = randomChoice(all_categories)
    line = randomChoice(category_lines[category])
    category_tensor = torch.tensor([all_categories.index(category)], dtype=torch.long)
    line_tensor = lineToTensor(line)
    return category, line, category_tensor, line_tensor

for i in range(10):
    category, line, category_tensor, line_tensor = randomTrainingExample()
    print('category =', category, '/ line =', line)

criterion = nn.NLLLoss()

learning_rate = 0.005 # If you set this too high, it might explode. If too low, it might not learn

def train(category_tensor, line_tensor):
    hidden = rnn.initHidden()

    rnn.zero_grad()

    for i in range(line_tensor.size()[0]):
        output, hidden = rnn(line_tensor[i], hidden)

    loss = criterion(output, category_tensor)
    loss.backward()

    # Add parameters' gradients to their values, multiplied by learning rate
    for p in rnn.parameters():
        p.data.add_(p.grad.data, alpha=-learning_rate)

    return output, loss.item()

import math

n_iters = 60  # changed: 100000
print_every = 20  # changed: 5000
plot_every = 10  # changed: 1000

# Keep track of losses for plotting
current_loss = 0
all_losses = []

for iter in range(1, n_iters + 1):
    category, line, category_tensor, line_tensor = randomTrainingExample()
    output, loss = train(category_tensor, line_tensor)
    current_loss += loss

    # Print ``iter`` number, loss, name and guess
    if iter % print_every == 0:
        guess, guess_i = categoryFromOutput(output)
        correct = '✓' if guess == category else '✗ (%s)' % category
        print('%d %d%% %.4f %s / %s %s' % (iter, iter / n_iters * 100, loss, line, guess, correct))  # changed: no time

    # Add current loss avg to list of losses
    if iter % plot_every == 0:
        all_losses.append(current_loss / plot_every)
        current_loss = 0

print(all_losses)  # changed: printed, not plotted

# Keep track of correct guesses in a confusion matrix
confusion = torch.zeros(n_categories, n_categories)
n_confusion = 40  # changed: 10000

# Just return an output given a line
def evaluate(line_tensor):
    hidden = rnn.initHidden()

    for i in range(line_tensor.size()[0]):
        output, hidden = rnn(line_tensor[i], hidden)

    return output

# Go through a bunch of examples and record which are correctly guessed
for i in range(n_confusion):
    category, line, category_tensor, line_tensor = randomTrainingExample()
    output = evaluate(line_tensor)
    guess, guess_i = categoryFromOutput(output)
    category_i = all_categories.index(category)
    confusion[category_i][guess_i] += 1

# Normalize by dividing every row by its sum
for i in range(n_categories):
    confusion[i] = confusion[i] / confusion[i].sum()

print(confusion)  # changed: printed, not plotted

def predict(input_line, n_predictions=3):
    print('\n> %s' % input_line)
    with torch.no_grad():
        output = evaluate(lineToTensor(input_line))

        # Get top N categories
        topv, topi = output.topk(n_predictions, 1, True)
        predictions = []

        for i in range(n_predictions):
            value = topv[0][i].item()
            category_index = topi[0][i].item()
            print('(%.2f) %s' % (value, all_categories[category_index]))
            print(value)  # changed: all digits
            predictions.append([value, all_categories[category_index]])

predict('Dovesky')
predict('Jackson')
predict('Satoshi')
