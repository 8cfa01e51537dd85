# pytorch/tutorials intermediate_source/char_rnn_generation_tutorial.py ("NLP From Scratch: Generating Names with a
# Character-Level RNN", Sean Robertson): an RNN of three Linear layers over cat'ed category, letter and hidden
# one-hots, Dropout and LogSoftmax, its NLLLoss summed from a Python 0 letter by letter against a LongTensor of
# targets turned into a column by `unsqueeze_(-1)`, hand-written steps in the old `p.data.add_(-learning_rate,
# p.grad.data)` form, and names sampled greedily under no_grad (topk, a 0-d tensor compared with an int and used to
# index a str). `import torch` renamed. Changed (marked): a few names of four languages in the program instead of
# data/names/*.txt; float64 (the one-hot tensors, the RNN); the weights from NumPy (symgrad's random numbers are not
# PyTorch's); Dropout(0), not 0.1 (random); hidden size 16, not 128; 40 iterations printed every 10 (not 100,000
# every 5,000) without times, the losses printed rather than plotted (no matplotlib).
from io import open
import glob
import os
import unicodedata
import string

import numpy as np  # changed: the weights' source

NAMES = {  # changed: a few names of four languages in the program, not data/names/*.txt
    'Russian': ['Ababko', 'Abaev', 'Rakhimov', 'Ustinov', 'Sokolov', 'Romanov', 'Utkin', 'Sorokin'],
    'German': ['Gerber', 'Eberhardt', 'Richter', 'Schmidt', 'Müller', 'Engel', 'Graf', 'Ernst'],
    'Spanish': ['Santos', 'Pérez', 'Alvarez', 'Sanchez', 'Portillo', 'Abana', 'Abasolo', 'Prieto'],
    'Chinese': ['Chang', 'Huang', 'Ing', 'Chen', 'Cheung', 'Hui', 'Chau', 'Ip'],
}

all_letters = string.ascii_letters + " .,;'-"
n_letters = len(all_letters) + 1 # Plus EOS marker

def findFiles(path): return ['data/names/%s.txt' % language for language in NAMES]  # changed: the names above

# Turn a Unicode string to plain ASCII, thanks to http://stackoverflow.com/a/518232/2809427
def unicodeToAscii(s):
    return ''.join(
        c for c in unicodedata.normalize('NFD', s)
        if unicodedata.category(c) != 'Mn'
        and c in all_letters
    )

# Read a file and split into lines
def readLines(filename):
    lines = NAMES[os.path.splitext(os.path.basename(filename))[0]]  # changed: the names above, not the file
    return [unicodeToAscii(line) for line in lines]

# Build the category_lines dictionary, a list of lines per category
category_lines = {}
all_categories = []
for filename in findFiles('data/names/*.txt'):
    category = os.path.splitext(os.path.basename(filename))[0]
    all_categories.append(category)
    lines = readLines(filename)
    category_lines[category] = lines

n_categories = len(all_categories)

if n_categories == 0:
    raise RuntimeError('Data not found. Make sure that you downloaded data '
        'from https://download.pytorch.org/tutorial/data.zip and extract it to '
        'the current directory.')

print('# categories:', n_categories, all_categories)
print(unicodeToAscii("O'Néàl"))

import symgrad as torch
import symgrad.nn as nn

class RNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super(RNN, self).__init__()
        self.hidden_size = hidden_size

        self.i2h = nn.Linear(n_categories + input_size + hidden_size, hidden_size)
        self.i2o = nn.Linear(n_categories + input_size + hidden_size, output_size)
        self.o2o = nn.Linear(hidden_size + output_size, output_size)
        self.dropout = nn.Dropout(0.0)  # changed: 0.1 (random)
        self.softmax = nn.LogSoftmax(dim=1)

    def forward(self, category, input, hidden):
        input_combined = torch.cat((category, input, hidden), 1)
        hidden = self.i2h(input_combined)
        output = self.i2o(input_combined)
        output_combined = torch.cat((hidden, output), 1)
        output = self.o2o(output_combined)
        output = self.dropout(output)
        output = self.softmax(output)
        return output, hidden

    def initHidden(self):
        return torch.zeros(1, self.hidden_size, dtype=torch.float64)  # changed: float64

import random
random.seed(0)  # changed: the examples chosen alike on both runs

# Random item from a list
def randomChoice(l):
    return l[random.randint(0, len(l) - 1)]

# Get a random category and random line from that category
def randomTrainingPair():
    category = randomChoice(all_categories)
    line = randomChoice(category_lines[category])
    return category, line

# One-hot vector for category
def categoryTensor(category):
    li = all_categories.index(category)
    tensor = torch.zeros(1, n_categories, dtype=torch.float64)  # changed: float64
    tensor[0][li] = 1
    return tensor

# One-hot matrix of first to last letters (not including EOS) for input
def inputTensor(line):
    tensor = torch.zeros(len(line), 1, n_letters, dtype=torch.float64)  # changed: float64
    for li in range(len(line)):
        letter = line[li]
        tensor[li][0][all_letters.find(letter)] = 1
    return tensor

# LongTensor of second letter to end (EOS) for target
def targetTensor(line):
    letter_indexes = [all_letters.find(line[li]) for li in range(1, len(line))]
    letter_indexes.append(n_letters - 1) # EOS
    return torch.LongTensor(letter_indexes)

# Make category, input, and target tensors from a random category, line pair
def randomTrainingExample():
    category, line = randomTrainingPair()
    category_tensor = categoryTensor(category)
    input_line_tensor = inputTensor(line)
    target_line_tensor = targetTensor(line)
    return category_tensor, input_line_tensor, target_line_tensor

criterion = nn.NLLLoss()

learning_rate = 0.0005

def train(category_tensor, input_line_tensor, target_line_tensor):
    target_line_tensor.unsqueeze_(-1)
    hidden = rnn.initHidden()

    rnn.zero_grad()

    loss = 0

    for i in range(input_line_tensor.size(0)):
        output, hidden = rnn(category_tensor, input_line_tensor[i], hidden)
        l = criterion(output, target_line_tensor[i])
        loss += l

    loss.backward()

    for p in rnn.parameters():
        p.data.add_(-learning_rate, p.grad.data)

    return output, loss.item() / input_line_tensor.size(0)

import math

rnn = RNN(n_letters, 16, n_letters).double()  # changed: 128 hidden, float64
rng = np.random.default_rng(0)  # changed: fixed weights instead of PyTorch's random ones
rnn.load_state_dict({name: torch.tensor(rng.uniform(-0.3, 0.3, tuple(p.shape)))  # changed
                     for name, p in rnn.state_dict().items()})  # changed

n_iters = 40  # changed: 100000
print_every = 10  # changed: 5000
plot_every = 5  # changed: 500
all_losses = []
total_loss = 0 # Reset every plot_every iters

for iter in range(1, n_iters + 1):
    output, loss = train(*randomTrainingExample())
    total_loss += loss

    if iter % print_every == 0:
        print('(%d %d%%) %.4f' % (iter, iter / n_iters * 100, loss))  # changed: no time
        print(loss)  # changed: all digits

    if iter % plot_every == 0:
        all_losses.append(total_loss / plot_every)
        total_loss = 0

print(all_losses)  # changed: printed, not plotted

max_length = 20

# Sample from a category and starting letter
def sample(category, start_letter='A'):
    with torch.no_grad():  # no need to track history in sampling
        category_tensor = categoryTensor(category)
        input = inputTensor(start_letter)
        hidden = rnn.initHidden()

        output_name = start_letter

        for i in range(max_length):
            output, hidden = rnn(category_tensor, input[0], hidden)
            topv, topi = output.topk(1)
            topi = topi[0][0]
            if topi == n_letters - 1:
                break
            else:
                letter = all_letters[topi]
                output_name += letter
            input = inputTensor(letter)

        return output_name

# Get multiple samples from one category and multiple starting letters
def samples(category, start_letters='ABC'):
    for start_letter in start_letters:
        print(sample(category, start_letter))

samples('Russian', 'RUS')

samples('German', 'GER')

samples('Spanish', 'SPA')

samples('Chinese', 'CHI')
