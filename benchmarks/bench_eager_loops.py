"""Per-step time of training loops issue 12 does not list, as PyTorch's tutorials and users write them:
symgrad eager vs PyTorch eager, float32, one thread.

Run: python benchmarks/bench_eager_loops.py [--steps 50] [--repeats 3] [--only NAME] [--cpu-time]

Each loop is written once against `lib` (symgrad or torch); both start from the same parameters (symgrad's
initialization, copied) and data, and must agree after 5 steps. The harness is bench_eager_training's: medians
over repeats of the per-step time, the two libraries interleaved in one run.
  - quickstart: PyTorch's quickstart model (Flatten, Linear 784-512-512-10, ReLU), CrossEntropyLoss, SGD, batch 64,
  - CNN: Conv2d-ReLU-MaxPool2d twice, Flatten, Linear, Adam, batch 32 of 1x28x28,
  - char RNN classifier: nn.RNNCell in a Python loop over 12 one-hot characters, nn.Linear, SGD; the same with
    nn.LSTMCell,
  - char model: Embedding + LSTM(16, 64) + Linear over every position (T = 40, batch 32, vocabulary 30), Adam,
  - encoder block: LayerNorm, MultiheadAttention, GELU feed-forward, Dropout(p=0), residuals, AdamW,
  - regression: MLP, MSELoss, SGD with momentum and weight decay, CosineAnnealingLR stepped every step,
  - clipped LSTM: a two-layer LSTM(8, 32) sequence regression (T = 50, batch 32), clip_grad_norm_, Adam,
  - DataLoader: TensorDataset batches in a per-epoch permutation, `loss.item()` and the accuracy logged each
    step, `model.eval()` and a no_grad evaluation every 8 steps, `model.train()` again, StepLR per epoch,
  - mnist: pytorch/examples' mnist model (Conv2d 1-32-64, max_pool2d, Dropout(p=0), Linear 9216-128-10,
    log_softmax, nll_loss), Adadelta, StepLR every 8 steps, batch 8,
  - causal encoder: nn.TransformerEncoder of two TransformerEncoderLayers, generate_square_subsequent_mask made
    every step and is_causal=True, MSE, AdamW,
  - LayerNorm MLP: Linear, LayerNorm, GELU twice, cross_entropy with label_smoothing, AdamW with weight decay,
    clip_grad_norm_ after the update, OneCycleLR every step,
  - VAE: Linear 784-200-16 encoder (mean, log-variance), reparameterized sample, 16-200-784 sigmoid decoder,
    binary_cross_entropy(reduction='sum') + KL, Adam, batch 64,
  - GAN: Linear-LeakyReLU-Linear generator (8-64-2) and discriminator (2-64-1), two Adams, the discriminator's loss
    on real and detached fake samples, then the generator's through the same fake samples: two backward per step.
"""
import argparse
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("SYMGRAD_NUM_THREADS", "1")
import numpy as np  # noqa: E402

import symgrad as sg  # noqa: E402
from bench_eager_training import numpy_of, run, set_parameters, torch  # noqa: E402


def _initial(build):
    """The parameters symgrad's initialization gives the model `build(lib)`, as NumPy arrays."""
    sg.manual_seed(0)
    return numpy_of(build(sg).parameters())


class ModelLoop:
    """model = build(lib) from the given parameters, an optimizer, and `step` (the loop's body) over data."""

    def __init__(self, lib, data, params, program):
        self.lib, self.program = lib, program
        self.model = program.build(lib)
        assert all(p.dtype == lib.float32 for p in self.model.parameters()), "the loops compare float32 steps"
        set_parameters(lib, self.model.parameters(), params)
        self.data = [lib.from_numpy(a) for a in data]
        self.optimizer = program.optimizer(lib, self.model.parameters())
        self.scheduler = program.scheduler(lib, self.optimizer) if hasattr(program, "scheduler") else None
        self.count = 0

    def step(self):
        self.program.step(self)

    def params(self):
        return numpy_of(self.model.parameters())


def _plain_step(loop):
    """zero_grad, loss, backward, optimizer step: the body most tutorials write."""
    loop.optimizer.zero_grad()
    loop.program.loss(loop.lib, loop.model, *loop.data).backward()
    loop.optimizer.step()


class Quickstart:
    """PyTorch's quickstart tutorial (FashionMNIST's model on random images)."""

    @staticmethod
    def data():
        rng = np.random.default_rng(0)
        return [rng.random((64, 28, 28), dtype=np.float32), rng.integers(0, 10, 64)]

    @staticmethod
    def build(lib):
        f32 = dict(dtype=lib.float32)  # (symgrad's modules default to float64)
        nn = lib.nn
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 512, **f32), nn.ReLU(), nn.Linear(512, 512, **f32), nn.ReLU(),
                             nn.Linear(512, 10, **f32))

    optimizer = staticmethod(lambda lib, parameters: lib.optim.SGD(parameters, lr=1e-3))
    loss = staticmethod(lambda lib, model, x, y: lib.nn.functional.cross_entropy(model(x), y))
    step = staticmethod(_plain_step)


class CNN(Quickstart):
    """A small LeNet-style CNN with Adam."""

    @staticmethod
    def data():
        rng = np.random.default_rng(1)
        return [rng.standard_normal((32, 1, 28, 28), dtype=np.float32), rng.integers(0, 10, 32)]

    @staticmethod
    def build(lib):
        f32 = dict(dtype=lib.float32)  # (symgrad's modules default to float64)
        nn = lib.nn
        return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1, **f32), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Conv2d(8, 16, 3, padding=1, **f32), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                             nn.Linear(16 * 7 * 7, 10, **f32))

    optimizer = staticmethod(lambda lib, parameters: lib.optim.Adam(parameters, lr=1e-3))


class CharRNN(Quickstart):
    """The names classifier of PyTorch's 'NLP from scratch' tutorial, batched: RNNCell over one-hot letters."""

    @staticmethod
    def data():
        rng = np.random.default_rng(2)
        letters = rng.integers(0, 30, (12, 16))
        return [np.eye(30, dtype=np.float32)[letters], rng.integers(0, 18, 16)]

    @staticmethod
    def build(lib):
        f32 = dict(dtype=lib.float32)  # (symgrad's modules default to float64)
        class Classifier(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.cell, self.head = lib.nn.RNNCell(30, 64, **f32), lib.nn.Linear(64, 18, **f32)

            def forward(self, letters):
                h = lib.zeros(letters.shape[1], 64, dtype=letters.dtype)
                for t in range(letters.shape[0]):
                    h = self.cell(letters[t], h)
                return self.head(h)

        return Classifier()

    optimizer = staticmethod(lambda lib, parameters: lib.optim.SGD(parameters, lr=0.05))


class CellLSTM(CharRNN):
    """The same classifier with nn.LSTMCell, its (h, c) carried through the loop."""

    @staticmethod
    def build(lib):
        f32 = dict(dtype=lib.float32)  # (symgrad's modules default to float64)

        class Classifier(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.cell, self.head = lib.nn.LSTMCell(30, 64, **f32), lib.nn.Linear(64, 18, **f32)

            def forward(self, letters):
                state = None
                for t in range(letters.shape[0]):
                    state = self.cell(letters[t], state)
                return self.head(state[0])

        return Classifier()


class CharLSTM(Quickstart):
    """A character-level language model: Embedding, LSTM, Linear at every position, next character's loss."""

    @staticmethod
    def data():
        rng = np.random.default_rng(3)
        text = rng.integers(0, 30, (32, 41))
        return [text[:, :-1], text[:, 1:].reshape(-1)]

    @staticmethod
    def build(lib):
        f32 = dict(dtype=lib.float32)  # (symgrad's modules default to float64)
        class CharModel(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.embed, self.lstm = lib.nn.Embedding(30, 16, **f32), lib.nn.LSTM(16, 64, batch_first=True, **f32)
                self.head = lib.nn.Linear(64, 30, **f32)

            def forward(self, text):
                output, _ = self.lstm(self.embed(text))
                return self.head(output.reshape(-1, 64))

        return CharModel()

    optimizer = staticmethod(lambda lib, parameters: lib.optim.Adam(parameters, lr=2e-3))


class Encoder(Quickstart):
    """A pre-norm transformer encoder block over token features, mean-pooled into a classifier, AdamW."""

    @staticmethod
    def data():
        rng = np.random.default_rng(4)
        return [rng.standard_normal((16, 16, 32), dtype=np.float32), rng.integers(0, 4, 16)]

    @staticmethod
    def build(lib):
        f32 = dict(dtype=lib.float32)  # (symgrad's modules default to float64)
        nn = lib.nn

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.norm1, self.norm2 = nn.LayerNorm(32, **f32), nn.LayerNorm(32, **f32)
                self.attention = nn.MultiheadAttention(32, 4, dropout=0.0, batch_first=True, **f32)
                self.feed_forward = nn.Sequential(nn.Linear(32, 64, **f32), nn.GELU(), nn.Linear(64, 32, **f32),
                                                  nn.Dropout(0.0))
                self.head = nn.Linear(32, 4, **f32)

            def forward(self, x):
                y = self.norm1(x)
                x = x + self.attention(y, y, y, need_weights=False)[0]
                x = x + self.feed_forward(self.norm2(x))
                return self.head(x.mean(dim=1))

        return Block()

    optimizer = staticmethod(lambda lib, parameters: lib.optim.AdamW(parameters, lr=1e-3, weight_decay=1e-2))


class Regression(Quickstart):
    """An MLP regression with MSELoss, momentum SGD with weight decay and a cosine schedule stepped each step."""

    @staticmethod
    def data():
        rng = np.random.default_rng(5)
        x = rng.standard_normal((64, 8), dtype=np.float32)
        return [x, np.sin(x.sum(1, keepdims=True)).astype(np.float32)]

    @staticmethod
    def build(lib):
        f32 = dict(dtype=lib.float32)  # (symgrad's modules default to float64)
        nn = lib.nn
        return nn.Sequential(nn.Linear(8, 64, **f32), nn.ReLU(), nn.Linear(64, 64, **f32), nn.ReLU(),
                             nn.Linear(64, 1, **f32))

    optimizer = staticmethod(lambda lib, parameters: lib.optim.SGD(parameters, lr=0.05, momentum=0.9,
                                                                   weight_decay=1e-4))
    scheduler = staticmethod(lambda lib, optimizer: lib.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=1000))
    loss = staticmethod(lambda lib, model, x, y: lib.nn.functional.mse_loss(model(x), y))

    @staticmethod
    def step(loop):
        _plain_step(loop)
        loop.scheduler.step()


class ClippedLSTM(Quickstart):
    """A two-layer LSTM sequence regression with gradient clipping (clip_grad_norm_) and Adam."""

    @staticmethod
    def data():
        rng = np.random.default_rng(6)
        x = rng.standard_normal((32, 50, 8), dtype=np.float32)
        return [x, np.cumsum(x[..., :1], axis=1) / 8]

    @staticmethod
    def build(lib):
        f32 = dict(dtype=lib.float32)  # (symgrad's modules default to float64)
        class Regressor(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.lstm = lib.nn.LSTM(8, 32, num_layers=2, batch_first=True, **f32)
                self.head = lib.nn.Linear(32, 1, **f32)

            def forward(self, x):
                return self.head(self.lstm(x)[0])

        return Regressor()

    optimizer = staticmethod(lambda lib, parameters: lib.optim.Adam(parameters, lr=1e-3))
    loss = Regression.loss

    @staticmethod
    def step(loop):
        loop.optimizer.zero_grad()
        loop.program.loss(loop.lib, loop.model, *loop.data).backward()
        loop.lib.nn.utils.clip_grad_norm_(loop.model.parameters(), 1.0)
        loop.optimizer.step()


class Logged(Quickstart):
    """An MLP over a TensorDataset through a DataLoader in a new permutation each epoch (a sampler of NumPy's, so
    both libraries see the same batches), `loss.item()` and the batch's accuracy logged every step, an evaluation
    under `model.eval()` and no_grad every 8 steps, StepLR per epoch."""

    @staticmethod
    def data():
        rng = np.random.default_rng(7)
        x = rng.standard_normal((512, 20), dtype=np.float32)
        return [x, (x[:, :3] @ rng.standard_normal(3) > 0).astype(np.int64) + (x[:, 3] > 1)]

    @staticmethod
    def build(lib):
        f32 = dict(dtype=lib.float32)  # (symgrad's modules default to float64)
        nn = lib.nn
        return nn.Sequential(nn.Linear(20, 64, **f32), nn.ReLU(), nn.Dropout(0.0), nn.Linear(64, 3, **f32))

    optimizer = staticmethod(lambda lib, parameters: lib.optim.SGD(parameters, lr=0.1, momentum=0.9))
    scheduler = staticmethod(lambda lib, optimizer: lib.optim.lr_scheduler.StepLR(optimizer, 1, gamma=0.9))

    class Permutations:
        """A new permutation of range(n) each epoch, from a NumPy generator."""

        def __init__(self, n):
            self.n, self.rng = n, np.random.default_rng(8)

        def __iter__(self):
            return iter(self.rng.permutation(self.n).tolist())

        def __len__(self):
            return self.n

    @staticmethod
    def step(loop):
        lib, model = loop.lib, loop.model
        if loop.count == 0:
            dataset = lib.utils.data.TensorDataset(*loop.data)
            loop.loader = lib.utils.data.DataLoader(dataset, batch_size=64, sampler=Logged.Permutations(512))
            loop.batches, loop.log = iter(loop.loader), []
        batch = next(loop.batches, None)
        if batch is None:
            loop.scheduler.step()
            loop.batches = iter(loop.loader)
            batch = next(loop.batches)
        x, y = batch
        model.train()
        logits = model(x)
        loss = lib.nn.functional.cross_entropy(logits, y)
        loop.optimizer.zero_grad()
        loss.backward()
        loop.optimizer.step()
        loop.log.append((loss.item(), (logits.argmax(1) == y).float().mean().item()))
        loop.count += 1
        if loop.count % 8 == 0:
            model.eval()
            with lib.no_grad():
                loop.log.append(lib.nn.functional.cross_entropy(model(loop.data[0]), loop.data[1]).item())


class MNIST(Quickstart):
    """pytorch/examples' mnist: Conv2d 1-32-64 3x3, max_pool2d, Dropout(p=0), Linear 9216-128-10, log_softmax,
    nll_loss, Adadelta, StepLR every 8 steps (an epoch of 8 batches), batch 8."""

    @staticmethod
    def data():
        rng = np.random.default_rng(9)
        return [rng.standard_normal((8, 1, 28, 28), dtype=np.float32), rng.integers(0, 10, 8)]

    @staticmethod
    def build(lib):
        f32 = dict(dtype=lib.float32)  # (symgrad's modules default to float64)
        nn, F = lib.nn, lib.nn.functional

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv1, self.conv2 = nn.Conv2d(1, 32, 3, 1, **f32), nn.Conv2d(32, 64, 3, 1, **f32)
                self.dropout1, self.dropout2 = nn.Dropout(0.0), nn.Dropout(0.0)
                self.fc1, self.fc2 = nn.Linear(9216, 128, **f32), nn.Linear(128, 10, **f32)

            def forward(self, x):
                x = F.max_pool2d(F.relu(self.conv2(F.relu(self.conv1(x)))), 2)
                x = self.dropout2(F.relu(self.fc1(lib.flatten(self.dropout1(x), 1))))
                return F.log_softmax(self.fc2(x), dim=1)

        return Net()

    optimizer = staticmethod(lambda lib, parameters: lib.optim.Adadelta(parameters, lr=1.0))
    scheduler = staticmethod(lambda lib, optimizer: lib.optim.lr_scheduler.StepLR(optimizer, 1, gamma=0.7))
    loss = staticmethod(lambda lib, model, x, y: lib.nn.functional.nll_loss(model(x), y))

    @staticmethod
    def step(loop):
        _plain_step(loop)
        loop.count += 1
        if loop.count % 8 == 0:
            loop.scheduler.step()


class CausalEncoder(Quickstart):
    """Two nn.TransformerEncoderLayers stacked by nn.TransformerEncoder, causal: the mask made every step with
    Transformer.generate_square_subsequent_mask and the is_causal hint, as a decoder-only model writes it."""

    @staticmethod
    def data():
        rng = np.random.default_rng(4)
        return [rng.standard_normal((8, 16, 32), dtype=np.float32), rng.standard_normal((8, 16, 32), dtype=np.float32)]

    @staticmethod
    def build(lib):
        nn = lib.nn
        layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True, dtype=lib.float32)
        return nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)

    optimizer = staticmethod(lambda lib, parameters: lib.optim.AdamW(parameters, lr=1e-3))

    @staticmethod
    def loss(lib, model, x, y):
        mask = lib.nn.Transformer.generate_square_subsequent_mask(x.shape[1])
        return lib.nn.functional.mse_loss(model(x, mask=mask, is_causal=True), y)


class LayerNormMLP(Quickstart):
    """Linear, LayerNorm and GELU twice, a label-smoothed cross-entropy, AdamW with weight decay, clip_grad_norm_
    after the update (as written in the wild) and OneCycleLR stepped every step."""

    @staticmethod
    def data():
        rng = np.random.default_rng(6)
        return [rng.standard_normal((128, 64), dtype=np.float32), rng.integers(0, 10, 128)]

    @staticmethod
    def build(lib):
        f32 = dict(dtype=lib.float32)  # (symgrad's modules default to float64)
        nn = lib.nn
        return nn.Sequential(nn.Linear(64, 256, **f32), nn.LayerNorm(256, **f32), nn.GELU(), nn.Linear(256, 256, **f32),
                             nn.LayerNorm(256, **f32), nn.GELU(), nn.Linear(256, 10, **f32))

    optimizer = staticmethod(lambda lib, parameters: lib.optim.AdamW(parameters, lr=1e-3, weight_decay=0.01))
    scheduler = staticmethod(lambda lib, optimizer: lib.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=1e-2,
                                                                                      total_steps=100000))
    loss = staticmethod(lambda lib, model, x, y: lib.nn.functional.cross_entropy(model(x), y, label_smoothing=0.1))

    @staticmethod
    def step(loop):
        _plain_step(loop)
        loop.lib.nn.utils.clip_grad_norm_(loop.model.parameters(), 1.0)
        loop.scheduler.step()


class VAE(Quickstart):
    """PyTorch's VAE example, smaller latent: the reconstruction's binary cross-entropy (summed) plus the KL term."""

    @staticmethod
    def data():
        rng = np.random.default_rng(10)
        return [rng.random((64, 784), dtype=np.float32), rng.standard_normal((64, 16), dtype=np.float32)]

    @staticmethod
    def build(lib):
        f32 = dict(dtype=lib.float32)  # (symgrad's modules default to float64)
        nn = lib.nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1, self.mu, self.lv = nn.Linear(784, 200, **f32), nn.Linear(200, 16, **f32), nn.Linear(
                    200, 16, **f32)
                self.fc3, self.fc4 = nn.Linear(16, 200, **f32), nn.Linear(200, 784, **f32)

            def forward(self, x, eps):
                h = lib.relu(self.fc1(x))
                mu, lv = self.mu(h), self.lv(h)
                z = mu + eps * lib.exp(0.5 * lv)
                return lib.sigmoid(self.fc4(lib.relu(self.fc3(z)))), mu, lv

        return Net()

    optimizer = staticmethod(lambda lib, parameters: lib.optim.Adam(parameters, lr=1e-3))

    @staticmethod
    def loss(lib, model, x, eps):
        r, mu, lv = model(x, eps)
        return lib.nn.functional.binary_cross_entropy(r, x, reduction="sum") - 0.5 * lib.sum(
            1 + lv - mu.pow(2) - lv.exp())


class GAN(Quickstart):
    """A GAN on 2-d points: the discriminator's step, then the generator's through the same fake samples."""

    @staticmethod
    def data():
        rng = np.random.default_rng(11)
        return [rng.standard_normal((32, 2), dtype=np.float32), rng.standard_normal((32, 8), dtype=np.float32)]

    @staticmethod
    def build(lib):
        f32 = dict(dtype=lib.float32)  # (symgrad's modules default to float64)
        nn = lib.nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.g = nn.Sequential(nn.Linear(8, 64, **f32), nn.LeakyReLU(0.2), nn.Linear(64, 2, **f32))
                self.d = nn.Sequential(nn.Linear(2, 64, **f32), nn.LeakyReLU(0.2), nn.Linear(64, 1, **f32))

        return Net()

    optimizer = staticmethod(lambda lib, parameters: lib.optim.SGD(parameters, lr=1e-2))  # (unused: two Adams)

    @staticmethod
    def step(loop):
        lib, model = loop.lib, loop.model
        real, noise = loop.data
        F = lib.nn.functional
        if loop.count == 0:
            loop.od = lib.optim.Adam(model.d.parameters(), lr=1e-3, betas=(0.5, 0.999))
            loop.og = lib.optim.Adam(model.g.parameters(), lr=1e-3, betas=(0.5, 0.999))
            loop.count = 1
        fake = model.g(noise)
        loop.od.zero_grad()
        d_loss = F.binary_cross_entropy_with_logits(model.d(real), lib.ones(32, 1)) + \
            F.binary_cross_entropy_with_logits(model.d(fake.detach()), lib.zeros(32, 1))
        d_loss.backward()
        loop.od.step()
        loop.og.zero_grad()
        g_loss = F.binary_cross_entropy_with_logits(model.d(fake), lib.ones(32, 1))
        g_loss.backward()
        loop.og.step()


def _program(kind):
    return lambda: (kind.data(), _initial(kind.build))


PROGRAMS = [  # (title, data and parameters, lib loop, no NumPy loop, the program, unit of a step)
    ("quickstart: Flatten, Linear 784-512-512-10, ReLU, SGD, batch 64", _program(Quickstart), ModelLoop, None,
     Quickstart, "step"),
    ("CNN: 2 x (Conv2d 3x3, ReLU, MaxPool2d), Linear, Adam, batch 32 of 28x28", _program(CNN), ModelLoop, None,
     CNN, "step"),
    ("char RNN classifier: RNNCell(30, 64) loop over 12 steps, Linear, SGD, batch 16", _program(CharRNN),
     ModelLoop, None, CharRNN, "step"),
    ("LSTMCell classifier: LSTMCell(30, 64) loop over 12 steps, Linear, SGD, batch 16", _program(CellLSTM),
     ModelLoop, None, CellLSTM, "step"),
    ("char model: Embedding + LSTM(16, 64) + Linear, T = 40, batch 32, vocabulary 30, Adam", _program(CharLSTM),
     ModelLoop, None, CharLSTM, "step"),
    ("encoder block: LayerNorm, MultiheadAttention(32, 4), GELU MLP, 16x16 tokens, AdamW", _program(Encoder),
     ModelLoop, None, Encoder, "step"),
    ("regression: MLP 8-64-64-1, MSE, SGD momentum + weight decay, CosineAnnealingLR", _program(Regression),
     ModelLoop, None, Regression, "step"),
    ("clipped LSTM: 2-layer LSTM(8, 32), T = 50, batch 32, clip_grad_norm_, Adam", _program(ClippedLSTM),
     ModelLoop, None, ClippedLSTM, "step"),
    ("DataLoader: MLP 20-64-3, batch 64 of 512, item() and accuracy logged, eval every 8, StepLR",
     _program(Logged), ModelLoop, None, Logged, "step"),
    ("mnist: Conv2d 1-32-64, max_pool2d, Linear 9216-128-10, nll_loss, Adadelta, StepLR, batch 8",
     _program(MNIST), ModelLoop, None, MNIST, "step"),
    ("causal encoder: 2 x TransformerEncoderLayer(32, 4, 64), causal mask + is_causal, 8x16 tokens, MSE, AdamW",
     _program(CausalEncoder), ModelLoop, None, CausalEncoder, "step"),
    ("LayerNorm MLP: 2 x (Linear, LayerNorm, GELU) 64-256-256-10, label smoothing, AdamW, clip, OneCycleLR",
     _program(LayerNormMLP), ModelLoop, None, LayerNormMLP, "step"),
    ("VAE: Linear 784-200-16-200-784, binary_cross_entropy(sum) + KL, Adam, batch 64", _program(VAE), ModelLoop,
     None, VAE, "step"),
    ("GAN: generator 8-64-2, discriminator 2-64-1, LeakyReLU, detach, two Adams, two backward, batch 32",
     _program(GAN), ModelLoop, None, GAN, "step"),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", default="", help="run the programs whose title contains this text")
    parser.add_argument("--cpu-time", action="store_true",
                        help="time with the process's CPU time, steadier than wall time on a shared, loaded machine")
    args = parser.parse_args()
    clock = time.process_time if args.cpu_time else time.perf_counter
    print(f"PyTorch: {torch.__version__ + ' (1 thread)' if torch else 'not installed'}; "
          f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}")
    if torch:
        torch.set_num_threads(1)
    for program in PROGRAMS:
        if args.only in program[0]:
            run(*program, args.steps, args.repeats, clock, tolerance=1e-3)


if __name__ == "__main__":
    main()
