"""Per-step time of one MLP training loop: symgrad eager vs hand-written NumPy vs PyTorch eager.

Run: python benchmarks/bench_eager_training.py [--steps 200] [--repeats 5]

The loop is the same in each: forward (tanh MLP, softmax cross-entropy), backward, SGD
update, in float32. symgrad records the eager ops, derives the adjoint with the
compiler's reverse pass once per graph structure and reuses it (lowered by the default
backend from the second step on). The NumPy version is forward and backward written by
hand. Before timing, the three are checked to produce the same parameters after 5 steps.
Times are medians over repeats of the per-step time, implementations interleaved.
"""
import argparse
import os
import statistics
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one BLAS thread, as PyTorch is given one below
os.environ.setdefault("SYMGRAD_NUM_THREADS", "1")  # and one symgrad thread (which sets the BLAS to it)
import numpy as np  # noqa: E402

import symgrad as sg  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

SIZES = [("tiny: 16-32-4, batch 32", 16, 32, 4, 32), ("MNIST-like: 784-128-10, batch 128", 784, 128, 10, 128)]


def make_data(n_in, n_classes, batch, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, n_in)).astype(np.float32)
    y = rng.integers(0, n_classes, batch)
    return x, y


def init_params(n_in, n_hidden, n_out, seed=1):
    rng = np.random.default_rng(seed)
    w1 = rng.uniform(-1, 1, (n_hidden, n_in)).astype(np.float32) / np.sqrt(n_in)
    w2 = rng.uniform(-1, 1, (n_out, n_hidden)).astype(np.float32) / np.sqrt(n_hidden)
    return [w1, np.zeros(n_hidden, np.float32), w2, np.zeros(n_out, np.float32)]


class SymgradLoop:
    def __init__(self, params, x, y, lr):
        n_hidden, n_in = params[0].shape
        self.model = sg.nn.Sequential(sg.nn.Linear(n_in, n_hidden, dtype=sg.float32), sg.nn.Tanh(),
                                      sg.nn.Linear(n_hidden, params[2].shape[0], dtype=sg.float32))
        self.model.load_state_dict(dict(zip(["0.weight", "0.bias", "2.weight", "2.bias"], params)))
        self.x, self.y = sg.tensor(x), sg.tensor(y)
        self.optimizer = sg.optim.SGD(self.model.parameters(), lr=lr)
        self.loss_fn = sg.nn.CrossEntropyLoss()

    def step(self):
        self.optimizer.zero_grad()
        self.loss_fn(self.model(self.x), self.y).backward()
        self.optimizer.step()

    def params(self):
        return [p.detach().numpy() for p in self.model.parameters()]


class TorchLoop(SymgradLoop):
    def __init__(self, params, x, y, lr):
        n_hidden, n_in = params[0].shape
        self.model = torch.nn.Sequential(torch.nn.Linear(n_in, n_hidden), torch.nn.Tanh(),
                                         torch.nn.Linear(n_hidden, params[2].shape[0]))
        with torch.no_grad():
            for p, value in zip(self.model.parameters(), params):
                p.copy_(torch.from_numpy(value))
        self.x, self.y = torch.from_numpy(x), torch.from_numpy(y)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=lr)
        self.loss_fn = torch.nn.CrossEntropyLoss()


class NumpyLoop:
    """Forward, hand-derived backward and SGD in NumPy."""

    def __init__(self, params, x, y, lr):
        self.w1, self.b1, self.w2, self.b2 = (p.copy() for p in params)
        self.x, self.y, self.lr = x, y, lr
        self.onehot = np.eye(params[2].shape[0], dtype=np.float32)[y]

    def step(self):
        x, batch = self.x, self.x.shape[0]
        h = np.tanh(x @ self.w1.T + self.b1)
        logits = h @ self.w2.T + self.b2
        shifted = logits - logits.max(axis=1, keepdims=True)
        probs = np.exp(shifted)
        probs /= probs.sum(axis=1, keepdims=True)
        d_logits = (probs - self.onehot) / batch
        d_w2, d_b2 = d_logits.T @ h, d_logits.sum(0)
        d_pre = (d_logits @ self.w2) * (1 - h * h)
        d_w1, d_b1 = d_pre.T @ x, d_pre.sum(0)
        for p, g in ((self.w1, d_w1), (self.b1, d_b1), (self.w2, d_w2), (self.b2, d_b2)):
            p -= self.lr * g

    def params(self):
        return [self.w1, self.b1, self.w2, self.b2]


def per_step(loop, steps):
    start = time.perf_counter()
    for _ in range(steps):
        loop.step()
    return (time.perf_counter() - start) / steps


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    from symgrad.backends import default_backend
    print(f"symgrad backend for the adjoint: {default_backend()}; PyTorch: "
          f"{torch.__version__ + ' (1 thread)' if torch else 'not installed'}")
    if torch:
        torch.set_num_threads(1)
    kinds = [("symgrad eager", SymgradLoop), ("hand-written NumPy", NumpyLoop)]
    kinds += [("PyTorch eager", TorchLoop)] if torch else []
    for title, n_in, n_hidden, n_out, batch in SIZES:
        x, y = make_data(n_in, n_out, batch)
        params = init_params(n_in, n_hidden, n_out)
        loops = {name: cls(params, x, y, 0.1) for name, cls in kinds}
        first = time.perf_counter()
        loops["symgrad eager"].step()
        first = time.perf_counter() - first
        for loop in list(loops.values())[1:]:
            loop.step()
        for _ in range(4):
            for loop in loops.values():
                loop.step()
        reference = loops["hand-written NumPy"].params()
        for name, loop in loops.items():
            error = max(float(np.max(np.abs(a - b))) for a, b in zip(loop.params(), reference))
            assert error < 1e-4, f"{name} disagrees with hand-written NumPy after 5 steps: {error}"
        times = {name: [] for name in loops}
        for _ in range(args.repeats):
            for name, loop in loops.items():
                times[name].append(per_step(loop, args.steps))
        medians = {name: statistics.median(t) for name, t in times.items()}
        ours = medians["symgrad eager"]
        print(f"\n{title} (first symgrad step, with tracing the adjoint: {first * 1e3:.1f} ms)")
        for name, value in medians.items():
            ratio = "" if name == "symgrad eager" else f"   symgrad / this = {ours / value:.2f}"
            print(f"  {name:20s} {value * 1e6:9.1f} us/step{ratio}")


if __name__ == "__main__":
    main()
