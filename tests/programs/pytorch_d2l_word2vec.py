# d2l-ai/d2l-en (Dive into Deep Learning; sample code under LICENSE-SAMPLECODE, MIT-0, Copyright 2019 Amazon.com,
# Inc. or its affiliates): the "Pretraining word2vec" chapter with the d2l/torch.py pieces of the word2vec dataset
# chapter it loads (Vocab, subsample, get_centers_and_contexts, RandomGenerator, get_negatives, batchify into a
# DataLoader's collate_fn, load_data_ptb, Accumulator): a skip-gram model of two nn.Embedding tables scored by
# torch.bmm of a permute, trained by negative sampling with SigmoidBCELoss's binary_cross_entropy_with_logits
# weighted by the padding mask (reduction='none', mean over dim=1, normalized by mask.sum(axis=1)), under Adam; then
# the words nearest to one by cosine similarity (torch.mv, torch.topk). `import torch` renamed.
# Changed (marked): one file standing for the d2l package; a small corpus inline for PTB (not downloaded), its
# min_freq 2 and the subsampling threshold 0.1 (PTB's 1e-4 keeps nothing of 400 tokens); Python's random seeded;
# float64 (the embeddings, .double() where the chapter casts to float32); xavier_uniform_'s numbers from NumPy's
# generator (symgrad's random numbers are not PyTorch's); the loader unshuffled, no workers; no Animator or Timer:
# the epochs' losses printed; embed_size 8, batch_size 16, 4 epochs, the query word 'cat'.
import collections
import math
import random

import numpy as np  # changed: the random numbers' source
import symgrad as torch
import symgrad.utils.data  # changed: import torch.utils.data (which d2l imports)
from symgrad import nn

random.seed(0)  # changed: Python's random numbers fixed
rng = np.random.default_rng(0)  # changed: the random numbers' source


class _Package:  # changed: this file stands for the d2l package: d2l.name is this file's name
    def __getattr__(self, name):
        return globals()[name]


d2l = _Package()  # changed
tensor = torch.tensor
reshape = lambda x, *args, **kwargs: x.reshape(*args, **kwargs)
CORPUS = """the cat sat on the mat and the dog sat on the rug
a cat and a dog play in the garden of the house
the dog chased the cat around the garden
the cat sleeps on the mat in the house
the bird sings in the tree near the house
a bird and a cat watch the garden from the tree
the dog sleeps on the rug near the door
the cat and the bird look at the dog
a dog runs in the garden and the cat runs in the house
the bird flies over the tree and the house
the mat and the rug lie near the door of the house
the cat sat near the bird in the tree
the dog and the cat eat in the house
a bird eats near the door of the garden
the cat watches the bird and the dog watches the cat"""  # changed: a small corpus for PTB's


class Vocab:
    """Vocabulary for text."""
    def __init__(self, tokens=[], min_freq=0, reserved_tokens=[]):
        """Defined in :numref:`sec_text-sequence`"""
        # Flatten a 2D list if needed
        if tokens and isinstance(tokens[0], list):
            tokens = [token for line in tokens for token in line]
        # Count token frequencies
        counter = collections.Counter(tokens)
        self.token_freqs = sorted(counter.items(), key=lambda x: x[1],
                                  reverse=True)
        # The list of unique tokens
        self.idx_to_token = list(sorted(set(['<unk>'] + reserved_tokens + [
            token for token, freq in self.token_freqs if freq >= min_freq])))
        self.token_to_idx = {token: idx
                             for idx, token in enumerate(self.idx_to_token)}

    def __len__(self):
        return len(self.idx_to_token)

    def __getitem__(self, tokens):
        if not isinstance(tokens, (list, tuple)):
            return self.token_to_idx.get(tokens, self.unk)
        return [self.__getitem__(token) for token in tokens]

    def to_tokens(self, indices):
        if hasattr(indices, '__len__') and len(indices) > 1:
            return [self.idx_to_token[int(index)] for index in indices]
        return self.idx_to_token[indices]

    @property
    def unk(self):  # Index for the unknown token
        return self.token_to_idx['<unk>']


class Accumulator:
    """For accumulating sums over `n` variables."""
    def __init__(self, n):
        """Defined in :numref:`sec_utils`"""
        self.data = [0.0] * n

    def add(self, *args):
        self.data = [a + float(b) for a, b in zip(self.data, args)]

    def reset(self):
        self.data = [0.0] * len(self.data)

    def __getitem__(self, idx):
        return self.data[idx]


def try_gpu(i=0):  # changed: the CPU only
    return torch.device('cpu')


def get_dataloader_workers():  # changed: no workers
    return 0


def read_ptb():
    """Load the PTB dataset into a list of text lines.

    Defined in :numref:`sec_word2vec_data`"""
    raw_text = CORPUS  # changed: the corpus inline, not downloaded and read
    return [line.split() for line in raw_text.split('\n')]

def subsample(sentences, vocab):
    """Subsample high-frequency words.

    Defined in :numref:`sec_word2vec_data`"""
    # Exclude unknown tokens ('<unk>')
    sentences = [[token for token in line if vocab[token] != vocab.unk]
                 for line in sentences]
    counter = collections.Counter([
        token for line in sentences for token in line])
    num_tokens = sum(counter.values())

    # Return True if `token` is kept during subsampling
    def keep(token):
        return(random.uniform(0, 1) <
               math.sqrt(1e-1 / counter[token] * num_tokens))  # changed: 1e-4

    return ([[token for token in line if keep(token)] for line in sentences],
            counter)

def get_centers_and_contexts(corpus, max_window_size):
    """Return center words and context words in skip-gram.

    Defined in :numref:`sec_word2vec_data`"""
    centers, contexts = [], []
    for line in corpus:
        # To form a "center word--context word" pair, each sentence needs to
        # have at least 2 words
        if len(line) < 2:
            continue
        centers += line
        for i in range(len(line)):  # Context window centered at `i`
            window_size = random.randint(1, max_window_size)
            indices = list(range(max(0, i - window_size),
                                 min(len(line), i + 1 + window_size)))
            # Exclude the center word from the context words
            indices.remove(i)
            contexts.append([line[idx] for idx in indices])
    return centers, contexts

class RandomGenerator:
    """Randomly draw among {1, ..., n} according to n sampling weights."""
    def __init__(self, sampling_weights):
        """Defined in :numref:`sec_word2vec_data`"""
        # Exclude
        self.population = list(range(1, len(sampling_weights) + 1))
        self.sampling_weights = sampling_weights
        self.candidates = []
        self.i = 0

    def draw(self):
        if self.i == len(self.candidates):
            # Cache `k` random sampling results
            self.candidates = random.choices(
                self.population, self.sampling_weights, k=10000)
            self.i = 0
        self.i += 1
        return self.candidates[self.i - 1]

def get_negatives(all_contexts, vocab, counter, K):
    """Return noise words in negative sampling.

    Defined in :numref:`sec_word2vec_data`"""
    # Sampling weights for words with indices 1, 2, ... (index 0 is the
    # excluded unknown token) in the vocabulary
    sampling_weights = [counter[vocab.to_tokens(i)]**0.75
                        for i in range(1, len(vocab))]
    all_negatives, generator = [], RandomGenerator(sampling_weights)
    for contexts in all_contexts:
        negatives = []
        while len(negatives) < len(contexts) * K:
            neg = generator.draw()
            # Noise words cannot be context words
            if neg not in contexts:
                negatives.append(neg)
        all_negatives.append(negatives)
    return all_negatives

def batchify(data):
    """Return a minibatch of examples for skip-gram with negative sampling.

    Defined in :numref:`sec_word2vec_data`"""
    max_len = max(len(c) + len(n) for _, c, n in data)
    centers, contexts_negatives, masks, labels = [], [], [], []
    for center, context, negative in data:
        cur_len = len(context) + len(negative)
        centers += [center]
        contexts_negatives += [context + negative + [0] * (max_len - cur_len)]
        masks += [[1] * cur_len + [0] * (max_len - cur_len)]
        labels += [[1] * len(context) + [0] * (max_len - len(context))]
    return (d2l.reshape(d2l.tensor(centers), (-1, 1)), d2l.tensor(
        contexts_negatives), d2l.tensor(masks), d2l.tensor(labels))

def load_data_ptb(batch_size, max_window_size, num_noise_words):
    """Download the PTB dataset and then load it into memory.

    Defined in :numref:`subsec_word2vec-minibatch-loading`"""
    num_workers = d2l.get_dataloader_workers()
    sentences = read_ptb()
    vocab = d2l.Vocab(sentences, min_freq=2)  # changed: 10
    subsampled, counter = subsample(sentences, vocab)
    corpus = [vocab[line] for line in subsampled]
    all_centers, all_contexts = get_centers_and_contexts(
        corpus, max_window_size)
    all_negatives = get_negatives(
        all_contexts, vocab, counter, num_noise_words)

    class PTBDataset(torch.utils.data.Dataset):
        def __init__(self, centers, contexts, negatives):
            assert len(centers) == len(contexts) == len(negatives)
            self.centers = centers
            self.contexts = contexts
            self.negatives = negatives

        def __getitem__(self, index):
            return (self.centers[index], self.contexts[index],
                    self.negatives[index])

        def __len__(self):
            return len(self.centers)

    dataset = PTBDataset(all_centers, all_contexts, all_negatives)

    data_iter = torch.utils.data.DataLoader(dataset, batch_size, shuffle=False,  # changed: not shuffled (random)
                                      collate_fn=batchify,
                                      num_workers=num_workers)
    return data_iter, vocab


batch_size, max_window_size, num_noise_words = 16, 5, 5  # changed: batch_size 512
data_iter, vocab = d2l.load_data_ptb(batch_size, max_window_size,
                                     num_noise_words)
print(len(vocab), len(data_iter))  # changed: printed

embed = nn.Embedding(num_embeddings=20, embedding_dim=4, dtype=torch.double)  # changed: float64
print(f'Parameter embedding_weight ({embed.weight.shape}, '
      f'dtype {embed.weight.dtype})')  # changed: dtype= (the comparison drops PyTorch's ", dtype=torch.float64")

x = d2l.tensor([[1, 2, 3], [4, 5, 6]])
print(embed(x).shape)  # changed: printed (the embedding's weights are random)


def skip_gram(center, contexts_and_negatives, embed_v, embed_u):
    v = embed_v(center)
    u = embed_u(contexts_and_negatives)
    pred = torch.bmm(v, u.permute(0, 2, 1))
    return pred


print(skip_gram(torch.ones((2, 1), dtype=torch.long),  # changed: printed
                torch.ones((2, 4), dtype=torch.long), embed, embed).shape)


class SigmoidBCELoss(nn.Module):
    "BCEWithLogitLoss with masking on call."
    def __init__(self):
        super().__init__()

    def forward(self, inputs, target, mask=None):
        out = nn.functional.binary_cross_entropy_with_logits(
            inputs, target, weight=mask, reduction="none")
        return out.mean(dim=1)

loss = SigmoidBCELoss()

pred = d2l.tensor([[.5]*4]*2)
label = d2l.tensor([[1., 0., 1., 0.]]*2)
mask = d2l.tensor([[1, 1, 1, 1], [1, 1, 0, 0]])
print(loss(pred, label, mask))  # changed: printed

print(loss(pred, label, mask) / mask.sum(axis=1) * mask.shape[1])  # changed: printed

embed_size = 8  # changed: 100
net = nn.Sequential(nn.Embedding(num_embeddings=len(vocab),
                                 embedding_dim=embed_size),
                    nn.Embedding(num_embeddings=len(vocab),
                                 embedding_dim=embed_size)).double()  # changed: float64


def train(net, data_iter, lr, num_epochs, device=d2l.try_gpu()):
    def init_weights(m):
        if type(m) == nn.Embedding:
            bound = math.sqrt(6 / sum(m.weight.shape))  # changed: xavier_uniform_'s bound, NumPy's numbers
            m.weight.data.copy_(torch.tensor(rng.uniform(-bound, bound, tuple(m.weight.shape))))  # changed
    net.apply(init_weights)
    net = net.to(device)
    optimizer = torch.optim.Adam(net.parameters(), lr=lr)
    metric = d2l.Accumulator(2)  # Sum of losses, no. of tokens
    for epoch in range(num_epochs):
        num_batches = len(data_iter)  # changed: no Timer
        for i, batch in enumerate(data_iter):
            optimizer.zero_grad()
            center, context_negative, mask, label = [
                data.to(device) for data in batch]

            pred = skip_gram(center, context_negative, net[0], net[1])
            l = (loss(pred.reshape(label.shape).double(), label.double(), mask)  # changed: .float()
                     / mask.sum(axis=1) * mask.shape[1])
            l.sum().backward()
            optimizer.step()
            metric.add(l.sum(), l.numel())
        print(f'epoch {epoch + 1}, loss {metric[0] / metric[1]:.6f}')  # changed: the Animator's points printed
    print(f'loss {metric[0] / metric[1]:.3f}, on {str(device)}')  # changed: no tokens/sec


lr, num_epochs = 0.002, 4  # changed: 5 epochs
train(net, data_iter, lr, num_epochs)


def get_similar_tokens(query_token, k, embed):
    W = embed.weight.data
    x = W[vocab[query_token]]
    # Compute the cosine similarity. Add 1e-9 for numerical stability
    cos = torch.mv(W, x) / torch.sqrt(torch.sum(W * W, dim=1) *
                                      torch.sum(x * x) + 1e-9)
    topk = torch.topk(cos, k=k+1)[1].cpu().numpy().astype('int32')
    for i in topk[1:]:  # Remove the input words
        print(f'cosine sim={float(cos[i]):.3f}: {vocab.to_tokens(i)}')

get_similar_tokens('cat', 3, net[0])  # changed: 'chip'
