# karpathy/nn-zero-to-hero lectures/makemore/makemore_part3_bn.ipynb (MIT License, Copyright (c) 2022 Andrej
# Karpathy), its code cells in order: an MLP over character embeddings with BatchNorm written by hand (batch
# mean and unbiased std with keepdim, running statistics updated under no_grad), raw leaves made trainable by
# setting requires_grad, p.grad = None, p.data += -lr * p.grad, loss.log10(); then "PyTorch-ified" Linear,
# BatchNorm1d and Tanh classes of its own (a bias added in place to a non-leaf, gamma scaled in place under
# no_grad, retain_grad on every layer's output), the activations', their gradients' and the weights' statistics
# printed, evaluation with training turned off, and sampling. `import torch` renamed. Changed (marked): the words
# inline (names.txt's first 64 names of at most 6 letters); float64; the generator's normal and integer draws and
# the samples are NumPy's (symgrad's random numbers are not PyTorch's); 30 steps (not 200,000) of the first net
# and 20 (not 1,000) of the deep one, printed every 10; 5 samples; no plots (torch.histogram is not symgrad's).
import numpy as np  # changed: the random numbers' source
import symgrad as torch  # changed: import torch
import symgrad.nn.functional as F

# read in all the words
words = '''emma olivia ava sophia mia amelia harper evelyn emily mila ella avery sofia camila aria luna grace chloe
layla riley zoey nora lily hannah aubrey ellie stella zoe leah hazel violet aurora audrey bella claire skylar lucy
everly anna nova emilia maya willow naomi elena sarah ariana alice cora ruby eva autumn hailey gianna isla eliana
quinn nevaeh ivy sadie piper lydia alexa emery'''.split()  # changed: open('names.txt', 'r').read().splitlines()
print(words[:8])  # changed: printed
print(len(words))  # changed: printed

# build the vocabulary of characters and mappings to/from integers
chars = sorted(list(set(''.join(words))))
stoi = {s:i+1 for i,s in enumerate(chars)}
stoi['.'] = 0
itos = {i:s for s,i in stoi.items()}
vocab_size = len(itos)
print(itos)
print(vocab_size)

# build the dataset
block_size = 3 # context length: how many characters do we take to predict the next one?

def build_dataset(words):  
  X, Y = [], []
  
  for w in words:
    context = [0] * block_size
    for ch in w + '.':
      ix = stoi[ch]
      X.append(context)
      Y.append(ix)
      context = context[1:] + [ix] # crop and append

  X = torch.tensor(X)
  Y = torch.tensor(Y)
  print(X.shape, Y.shape)
  return X, Y

import random
random.seed(42)
random.shuffle(words)
n1 = int(0.8*len(words))
n2 = int(0.9*len(words))

Xtr,  Ytr  = build_dataset(words[:n1])     # 80%
Xdev, Ydev = build_dataset(words[n1:n2])   # 10%
Xte,  Yte  = build_dataset(words[n2:])     # 10%

# MLP revisited
n_embd = 10 # the dimensionality of the character embedding vectors
n_hidden = 200 # the number of neurons in the hidden layer of the MLP

g = np.random.default_rng(2147483647) # for reproducibility  # changed: torch.Generator().manual_seed(2147483647)
C  = torch.tensor(g.standard_normal((vocab_size, n_embd)))  # changed: torch.randn(..., generator=g)
W1 = torch.tensor(g.standard_normal((n_embd * block_size, n_hidden))) * (5/3)/((n_embd * block_size)**0.5)  # changed
#b1 = torch.randn(n_hidden,                        generator=g) * 0.01
W2 = torch.tensor(g.standard_normal((n_hidden, vocab_size))) * 0.01  # changed: torch.randn(..., generator=g)
b2 = torch.tensor(g.standard_normal(vocab_size)) * 0  # changed: torch.randn(..., generator=g)

# BatchNorm parameters
bngain = torch.ones((1, n_hidden), dtype=torch.double)  # changed: float64
bnbias = torch.zeros((1, n_hidden), dtype=torch.double)  # changed: float64
bnmean_running = torch.zeros((1, n_hidden), dtype=torch.double)  # changed: float64
bnstd_running = torch.ones((1, n_hidden), dtype=torch.double)  # changed: float64

parameters = [C, W1, W2, b2, bngain, bnbias]
print(sum(p.nelement() for p in parameters)) # number of parameters in total
for p in parameters:
  p.requires_grad = True

# same optimization as last time
max_steps = 30  # changed: 200000
batch_size = 32
lossi = []

for i in range(max_steps):
  
  # minibatch construct
  ix = torch.tensor(g.integers(0, Xtr.shape[0], (batch_size,)))  # changed: torch.randint(..., generator=g)
  Xb, Yb = Xtr[ix], Ytr[ix] # batch X,Y
  
  # forward pass
  emb = C[Xb] # embed the characters into vectors
  embcat = emb.view(emb.shape[0], -1) # concatenate the vectors
  # Linear layer
  hpreact = embcat @ W1 #+ b1 # hidden layer pre-activation
  # BatchNorm layer
  # -------------------------------------------------------------
  bnmeani = hpreact.mean(0, keepdim=True)
  bnstdi = hpreact.std(0, keepdim=True)
  hpreact = bngain * (hpreact - bnmeani) / bnstdi + bnbias
  with torch.no_grad():
    bnmean_running = 0.999 * bnmean_running + 0.001 * bnmeani
    bnstd_running = 0.999 * bnstd_running + 0.001 * bnstdi
  # -------------------------------------------------------------
  # Non-linearity
  h = torch.tanh(hpreact) # hidden layer
  logits = h @ W2 + b2 # output layer
  loss = F.cross_entropy(logits, Yb) # loss function
  
  # backward pass
  for p in parameters:
    p.grad = None
  loss.backward()
  
  # update
  lr = 0.1 if i < 100000 else 0.01 # step learning rate decay
  for p in parameters:
    p.data += -lr * p.grad

  # track stats
  if i % 10 == 0: # print every once in a while  # changed: 10000
    print(f'{i:7d}/{max_steps:7d}: {loss.item()}')  # changed: all digits
  lossi.append(loss.log10().item())
print(lossi[-1])  # changed: plt.plot(lossi)

# calibrate the batch norm at the end of training

with torch.no_grad():
  # pass the training set through
  emb = C[Xtr]
  embcat = emb.view(emb.shape[0], -1)
  hpreact = embcat @ W1 # + b1
  # measure the mean/std over the entire training set
  bnmean = hpreact.mean(0, keepdim=True)
  bnstd = hpreact.std(0, keepdim=True)

@torch.no_grad() # this decorator disables gradient tracking
def split_loss(split):
  x,y = {
    'train': (Xtr, Ytr),
    'val': (Xdev, Ydev),
    'test': (Xte, Yte),
  }[split]
  emb = C[x] # (N, block_size, n_embd)
  embcat = emb.view(emb.shape[0], -1) # concat into (N, block_size * n_embd)
  hpreact = embcat @ W1 # + b1
  #hpreact = bngain * (hpreact - hpreact.mean(0, keepdim=True)) / hpreact.std(0, keepdim=True) + bnbias
  hpreact = bngain * (hpreact - bnmean_running) / bnstd_running + bnbias
  h = torch.tanh(hpreact) # (N, n_hidden)
  logits = h @ W2 + b2 # (N, vocab_size)
  loss = F.cross_entropy(logits, y)
  print(split, loss.item())

split_loss('train')
split_loss('val')

# SUMMARY + PYTORCHIFYING -----------

# Let's train a deeper network
# The classes we create here are the same API as nn.Module in PyTorch

class Linear:
  
  def __init__(self, fan_in, fan_out, bias=True):
    self.weight = torch.tensor(g.standard_normal((fan_in, fan_out))) / fan_in**0.5  # changed: torch.randn(...)
    self.bias = torch.zeros(fan_out, dtype=torch.double) if bias else None  # changed: float64
  
  def __call__(self, x):
    self.out = x @ self.weight
    if self.bias is not None:
      self.out += self.bias
    return self.out
  
  def parameters(self):
    return [self.weight] + ([] if self.bias is None else [self.bias])


class BatchNorm1d:
  
  def __init__(self, dim, eps=1e-5, momentum=0.1):
    self.eps = eps
    self.momentum = momentum
    self.training = True
    # parameters (trained with backprop)
    self.gamma = torch.ones(dim, dtype=torch.double)  # changed: float64
    self.beta = torch.zeros(dim, dtype=torch.double)  # changed: float64
    # buffers (trained with a running 'momentum update')
    self.running_mean = torch.zeros(dim, dtype=torch.double)  # changed: float64
    self.running_var = torch.ones(dim, dtype=torch.double)  # changed: float64
  
  def __call__(self, x):
    # calculate the forward pass
    if self.training:
      xmean = x.mean(0, keepdim=True) # batch mean
      xvar = x.var(0, keepdim=True) # batch variance
    else:
      xmean = self.running_mean
      xvar = self.running_var
    xhat = (x - xmean) / torch.sqrt(xvar + self.eps) # normalize to unit variance
    self.out = self.gamma * xhat + self.beta
    # update the buffers
    if self.training:
      with torch.no_grad():
        self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * xmean
        self.running_var = (1 - self.momentum) * self.running_var + self.momentum * xvar
    return self.out
  
  def parameters(self):
    return [self.gamma, self.beta]

class Tanh:
  def __call__(self, x):
    self.out = torch.tanh(x)
    return self.out
  def parameters(self):
    return []

n_embd = 10 # the dimensionality of the character embedding vectors
n_hidden = 100 # the number of neurons in the hidden layer of the MLP
g = np.random.default_rng(2147483647) # for reproducibility  # changed: torch.Generator().manual_seed(2147483647)

C = torch.tensor(g.standard_normal((vocab_size, n_embd)))  # changed: torch.randn(..., generator=g)
layers = [
  Linear(n_embd * block_size, n_hidden, bias=False), BatchNorm1d(n_hidden), Tanh(),
  Linear(           n_hidden, n_hidden, bias=False), BatchNorm1d(n_hidden), Tanh(),
  Linear(           n_hidden, n_hidden, bias=False), BatchNorm1d(n_hidden), Tanh(),
  Linear(           n_hidden, n_hidden, bias=False), BatchNorm1d(n_hidden), Tanh(),
  Linear(           n_hidden, n_hidden, bias=False), BatchNorm1d(n_hidden), Tanh(),
  Linear(           n_hidden, vocab_size, bias=False), BatchNorm1d(vocab_size),
]

with torch.no_grad():
  # last layer: make less confident
  layers[-1].gamma *= 0.1
  #layers[-1].weight *= 0.1
  # all other layers: apply gain
  for layer in layers[:-1]:
    if isinstance(layer, Linear):
      layer.weight *= 1.0 #5/3

parameters = [C] + [p for layer in layers for p in layer.parameters()]
print(sum(p.nelement() for p in parameters)) # number of parameters in total
for p in parameters:
  p.requires_grad = True

# same optimization as last time
max_steps = 200000
batch_size = 32
lossi = []
ud = []

for i in range(max_steps):
  
  # minibatch construct
  ix = torch.tensor(g.integers(0, Xtr.shape[0], (batch_size,)))  # changed: torch.randint(..., generator=g)
  Xb, Yb = Xtr[ix], Ytr[ix] # batch X,Y
  
  # forward pass
  emb = C[Xb] # embed the characters into vectors
  x = emb.view(emb.shape[0], -1) # concatenate the vectors
  for layer in layers:
    x = layer(x)
  loss = F.cross_entropy(x, Yb) # loss function
  
  # backward pass
  for layer in layers:
    layer.out.retain_grad() # AFTER_DEBUG: would take out retain_graph
  for p in parameters:
    p.grad = None
  loss.backward()
  
  # update
  lr = 0.1 if i < 150000 else 0.01 # step learning rate decay
  for p in parameters:
    p.data += -lr * p.grad

  # track stats
  if i % 10 == 0: # print every once in a while  # changed: 10000
    print(f'{i:7d}/{max_steps:7d}: {loss.item()}')  # changed: all digits
  lossi.append(loss.log10().item())
  with torch.no_grad():
    ud.append([((lr*p.grad).std() / p.data.std()).log10().item() for p in parameters])

  if i >= 19:  # changed: 1000
    break # AFTER_DEBUG: would take out obviously to run full optimization

# visualize histograms  # changed: their statistics printed, not plotted
for i, layer in enumerate(layers[:-1]): # note: exclude the output layer
  if isinstance(layer, Tanh):
    t = layer.out
    print('layer %d (%10s): mean %+.10f, std %.10f, saturated: %.10f%%'  # changed: digits
          % (i, layer.__class__.__name__, t.mean(), t.std(), (t.abs() > 0.97).float().mean()*100))  # changed

for i, layer in enumerate(layers[:-1]): # note: exclude the output layer
  if isinstance(layer, Tanh):
    t = layer.out.grad
    print('layer %d (%10s): mean %+.12f, std %.15e'  # changed: digits; the mean, 0 but for rounding, rounded
          % (i, layer.__class__.__name__, round(t.mean().item(), 12) + 0.0, t.std()))  # changed

for i,p in enumerate(parameters):
  t = p.grad
  if p.ndim == 2:
    print('weight %10s | mean %+.15e | std %.15e | grad:data ratio %.15e'  # changed: digits, as above
          % (tuple(p.shape), round(t.mean().item(), 15) + 0.0, t.std(), t.std() / p.std()))  # changed
print([round(u, 10) for u in ud[-1]])  # changed: plotted

@torch.no_grad() # this decorator disables gradient tracking
def split_loss(split):
  x,y = {
    'train': (Xtr, Ytr),
    'val': (Xdev, Ydev),
    'test': (Xte, Yte),
  }[split]
  emb = C[x] # (N, block_size, n_embd)
  x = emb.view(emb.shape[0], -1) # concat into (N, block_size * n_embd)
  for layer in layers:
    x = layer(x)
  loss = F.cross_entropy(x, y)
  print(split, loss.item())

# put layers into eval mode
for layer in layers:
  layer.training = False
split_loss('train')
split_loss('val')

# sample from the model
g = np.random.default_rng(2147483647 + 10)  # changed: torch.Generator().manual_seed(2147483647 + 10)

for _ in range(5):  # changed: 20
    
    out = []
    context = [0] * block_size # initialize with all ...
    while True:
      # forward pass the neural net
      emb = C[torch.tensor([context])] # (1,block_size,n_embd)
      x = emb.view(emb.shape[0], -1) # concatenate the vectors
      for layer in layers:
        x = layer(x)
      logits = x
      probs = F.softmax(logits, dim=1)
      # sample from the distribution
      ix = int(g.choice(probs.shape[1], p=probs[0].detach().numpy()))  # changed: torch.multinomial(..., generator=g)
      # shift the context window and track the samples
      context = context[1:] + [ix]
      out.append(ix)
      # if we sample the special '.' token, break
      if ix == 0:
        break
    
    print(''.join(itos[i] for i in out)) # decode and print the generated word
