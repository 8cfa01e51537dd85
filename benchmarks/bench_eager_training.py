"""Per-step time of eager training loops: symgrad eager vs PyTorch eager vs hand-written NumPy.

Run: python benchmarks/bench_eager_training.py [--steps 200] [--repeats 5] [--only NAME] [--cpu-time]

Each loop is written once against a library `lib` (symgrad or torch: the same program with
`import torch as lib`) and once in NumPy with the backward derived by hand, in float32:
  - the two MLPs of issue 12 (tanh, nn.Linear, nn.CrossEntropyLoss, optim.SGD),
  - the seeds' programs: linear regression with manual updates under no_grad, softmax
    regression with nn.Linear, F.cross_entropy and optim.SGD,
  - a training loop with Adam (the tiny MLP), and one with NAdam (no NumPy loop: checked against PyTorch's),
  - an LSTM classifier (nn.LSTM 16 -> 32, batch_first, 20 time steps, batch 16, nn.Linear on the last
    output, nn.CrossEntropyLoss, optim.Adam),
  - per-op overhead: one recorded elementwise op and one recorded matmul on 32x32.
Before timing, the three are checked to produce the same parameters after 5 steps. Times are
medians over repeats of the per-step time, implementations interleaved (one run, so ratios
compare like with like on a loaded machine).
"""
import argparse
import math
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


def make_data(n_in, n_classes, batch, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, n_in)).astype(np.float32)
    y = rng.integers(0, n_classes, batch)
    return x, y


def init_params(n_in, n_hidden, n_out, seed=1):
    rng = np.random.default_rng(seed)
    # (float32 again after the division: a float32 array divided by np.sqrt's float64 scalar is float64 under
    # NumPy 2's promotion rules, and the hand-written NumPy loop then ran its products in float64)
    w1 = (rng.uniform(-1, 1, (n_hidden, n_in)).astype(np.float32) / np.sqrt(n_in)).astype(np.float32)
    w2 = (rng.uniform(-1, 1, (n_out, n_hidden)).astype(np.float32) / np.sqrt(n_hidden)).astype(np.float32)
    return [w1, np.zeros(n_hidden, np.float32), w2, np.zeros(n_out, np.float32)]


def set_parameters(lib, parameters, arrays):
    with lib.no_grad():
        for p, value in zip(parameters, arrays):
            p.copy_(lib.from_numpy(value))


def numpy_of(tensors):
    return [t.detach().numpy().copy() for t in tensors]


# ------------------------------------------------------------------ the loops, written once per library
class MLPLoop:
    """Tanh MLP, cross-entropy, an optimizer from `lib.optim` (SGD or Adam)."""

    def __init__(self, lib, data, params, optimizer):
        x, y = data
        n_hidden, n_in = params[0].shape
        self.model = lib.nn.Sequential(lib.nn.Linear(n_in, n_hidden, dtype=lib.float32), lib.nn.Tanh(),
                                       lib.nn.Linear(n_hidden, params[2].shape[0], dtype=lib.float32))
        set_parameters(lib, self.model.parameters(), params)
        self.x, self.y = lib.from_numpy(x), lib.from_numpy(y)
        name, options = optimizer
        self.optimizer = getattr(lib.optim, name)(self.model.parameters(), **options)
        self.loss_fn = lib.nn.CrossEntropyLoss()

    def step(self):
        self.optimizer.zero_grad()
        self.loss_fn(self.model(self.x), self.y).backward()
        self.optimizer.step()

    def params(self):
        return numpy_of(self.model.parameters())


class LinearRegressionLoop:
    """The seed program: prediction = x @ w + b, mean squared error, manual updates under no_grad."""

    def __init__(self, lib, data, params, lr):
        x, y = data
        self.lib, self.lr = lib, lr
        self.x, self.y = lib.from_numpy(x), lib.from_numpy(y)
        self.w = lib.tensor(params[0], requires_grad=True)
        self.b = lib.tensor(params[1], requires_grad=True)

    def step(self):
        w, b, lr = self.w, self.b, self.lr
        loss = ((self.x @ w + b - self.y) ** 2).mean()
        loss.backward()
        with self.lib.no_grad():
            w -= lr * w.grad
            b -= lr * b.grad
        w.grad.zero_()
        b.grad.zero_()

    def params(self):
        return numpy_of([self.w, self.b])


class SoftmaxRegressionLoop:
    """The seed program: nn.Linear, F.cross_entropy, optim.SGD."""

    def __init__(self, lib, data, params, lr):
        x, y = data
        self.model = lib.nn.Linear(*params[0].shape[::-1], dtype=lib.float32)
        set_parameters(lib, self.model.parameters(), params)
        self.x, self.y = lib.from_numpy(x), lib.from_numpy(y)
        self.optimizer = lib.optim.SGD(self.model.parameters(), lr=lr)
        self.cross_entropy = lib.nn.functional.cross_entropy

    def step(self):
        self.optimizer.zero_grad()
        loss = self.cross_entropy(self.model(self.x), self.y)
        loss.backward()
        self.optimizer.step()

    def params(self):
        return numpy_of(self.model.parameters())


class LSTMLoop:
    """nn.LSTM (batch_first) read at its last time step by nn.Linear, cross-entropy, an optimizer from `lib.optim`."""

    def __init__(self, lib, data, params, optimizer):
        x, y = data
        hidden, inputs = params[1].shape[1], params[0].shape[1]
        self.rnn = lib.nn.LSTM(inputs, hidden, batch_first=True, dtype=lib.float32)
        self.head = lib.nn.Linear(hidden, params[4].shape[0], dtype=lib.float32)
        self.parameters = list(self.rnn.parameters()) + list(self.head.parameters())
        set_parameters(lib, self.parameters, params)
        self.x, self.y = lib.from_numpy(x), lib.from_numpy(y)
        name, options = optimizer
        self.optimizer = getattr(lib.optim, name)(self.parameters, **options)
        self.loss_fn = lib.nn.CrossEntropyLoss()

    def step(self):
        self.optimizer.zero_grad()
        output, _ = self.rnn(self.x)
        self.loss_fn(self.head(output[:, -1]), self.y).backward()
        self.optimizer.step()

    def params(self):
        return numpy_of(self.parameters)


class OneOp:
    """Per-op overhead: `steps` of one op on 32x32 operands, the first of which requires grad (recorded)."""

    def __init__(self, lib, data, params, op):
        self.a = lib.tensor(params[0], requires_grad=True)
        self.b = lib.from_numpy(params[1])
        self.op = op

    def step(self):
        self.out = self.op(self.a, self.b)

    def params(self):
        return [self.out.detach().numpy()]


# ------------------------------------------------------------------ the same loops in NumPy, backward by hand
def softmax_cross_entropy_grad(logits, onehot):
    """d mean(cross_entropy(logits)) / d logits."""
    shifted = logits - logits.max(axis=1, keepdims=True)
    probs = np.exp(shifted)
    probs /= probs.sum(axis=1, keepdims=True)
    return (probs - onehot) / logits.shape[0]


class NumpyMLP:
    def __init__(self, data, params, optimizer):
        self.x, y = data
        self.params_ = [p.copy() for p in params]
        self.onehot = np.eye(params[-1].shape[0], dtype=np.float32)[y]
        self.name, self.options = optimizer
        self.state = [dict(step=0, m=np.zeros_like(p), v=np.zeros_like(p)) for p in params]

    def step(self):
        x = self.x
        w1, b1, w2, b2 = self.params_
        h = np.tanh(x @ w1.T + b1)
        d_logits = softmax_cross_entropy_grad(h @ w2.T + b2, self.onehot)
        d_pre = (d_logits @ w2) * (1 - h * h)
        grads = [d_pre.T @ x, d_pre.sum(0), d_logits.T @ h, d_logits.sum(0)]
        for p, g, state in zip(self.params_, grads, self.state):
            p -= self.update(g, state)

    def update(self, g, state):
        lr = self.options["lr"]
        if self.name == "SGD":
            return lr * g
        beta1, beta2, eps = 0.9, 0.999, 1e-8
        state["step"] += 1
        state["m"] += (g - state["m"]) * (1 - beta1)
        state["v"] = state["v"] * beta2 + (1 - beta2) * g * g
        denom = np.sqrt(state["v"]) / math.sqrt(1 - beta2 ** state["step"]) + eps
        return (lr / (1 - beta1 ** state["step"])) * state["m"] / denom

    def params(self):
        return self.params_


def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


class NumpyLSTM(NumpyMLP):
    """LSTMLoop by hand: PyTorch's gates (i, f, g, o), backpropagation through time, the MLP's updates."""

    def step(self):
        x = self.x
        w_ih, w_hh, b_ih, b_hh, w, b = self.params_
        batch, hidden = x.shape[0], w_hh.shape[1]
        h, c = np.zeros((batch, hidden), np.float32), np.zeros((batch, hidden), np.float32)
        saved = []
        for t in range(x.shape[1]):
            z = x[:, t] @ w_ih.T + b_ih + h @ w_hh.T + b_hh
            i, f, o = (_sigmoid(z[:, k * hidden:(k + 1) * hidden]) for k in (0, 1, 3))
            g = np.tanh(z[:, 2 * hidden:3 * hidden])
            saved.append((h, c, i, f, g, o))
            c = f * c + i * g
            h = o * np.tanh(c)
        d_logits = softmax_cross_entropy_grad(h @ w.T + b, self.onehot)
        grads = [np.zeros_like(p) for p in self.params_[:4]] + [d_logits.T @ h, d_logits.sum(0)]
        dh, dc = d_logits @ w, np.zeros_like(c)
        for t in range(x.shape[1] - 1, -1, -1):
            h_prev, c_prev, i, f, g, o = saved[t]
            tanh_c = np.tanh(f * c_prev + i * g)
            dc = dc + dh * o * (1 - tanh_c * tanh_c)
            dz = np.concatenate([dc * g * i * (1 - i), dc * c_prev * f * (1 - f), dc * i * (1 - g * g),
                                 dh * tanh_c * o * (1 - o)], axis=1)
            grads[0] += dz.T @ x[:, t]
            grads[1] += dz.T @ h_prev
            grads[2] += dz.sum(0)
            dh, dc = dz @ w_hh, dc * f
        grads[3] = grads[2]
        for p, grad, state in zip(self.params_, grads, self.state):
            p -= self.update(grad, state)


class NumpyLinearRegression:
    def __init__(self, data, params, lr):
        (self.x, self.y), self.lr = data, lr
        self.w, self.b = (p.copy() for p in params)

    def step(self):
        residual = self.x @ self.w + self.b - self.y
        d = 2 * residual / residual.size
        self.w -= self.lr * (self.x.T @ d)
        self.b -= self.lr * d.sum(0)

    def params(self):
        return [self.w, self.b]


class NumpySoftmaxRegression:
    def __init__(self, data, params, lr):
        self.x, y = data
        self.w, self.b = (p.copy() for p in params)
        self.onehot = np.eye(params[0].shape[0], dtype=np.float32)[y]
        self.lr = lr

    def step(self):
        d_logits = softmax_cross_entropy_grad(self.x @ self.w.T + self.b, self.onehot)
        self.w -= self.lr * (d_logits.T @ self.x)
        self.b -= self.lr * d_logits.sum(0)

    def params(self):
        return [self.w, self.b]


class NumpyOneOp:
    def __init__(self, data, params, op):
        self.a, self.b, self.op = params[0], params[1], op

    def step(self):
        self.out = self.op(self.a, self.b)

    def params(self):
        return [self.out]


# ------------------------------------------------------------------ the programs
def _regression_data():
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, size=(100, 1)).astype(np.float32)
    y = (2 * x + 1 + 0.05 * rng.standard_normal((100, 1))).astype(np.float32)
    return (x, y), [np.zeros((1, 1), np.float32), np.zeros(1, np.float32)]


def _blobs_data():
    rng = np.random.default_rng(2)
    centers = np.array([[0.0, 2.0], [-2.0, -1.0], [2.0, -1.0]])
    labels = np.repeat(np.arange(3), 50)
    points = (centers[labels] + 0.7 * rng.standard_normal((150, 2))).astype(np.float32)
    return (points, labels), [np.zeros((3, 2), np.float32), np.zeros(3, np.float32)]


def _operands():
    rng = np.random.default_rng(3)
    return None, [rng.standard_normal((32, 32)).astype(np.float32) for _ in range(2)]


def _lstm_data(n_in=16, hidden=32, n_out=4, steps=20, batch=16):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((batch, steps, n_in)).astype(np.float32)
    bound = 1 / np.sqrt(hidden)
    shapes = [(4 * hidden, n_in), (4 * hidden, hidden), (4 * hidden,), (4 * hidden,), (n_out, hidden), (n_out,)]
    params = [rng.uniform(-bound, bound, shape).astype(np.float32) for shape in shapes]
    return (x, rng.integers(0, n_out, batch)), params


def _mlp(n_in, n_hidden, n_out, batch):
    return lambda: (make_data(n_in, n_out, batch), init_params(n_in, n_hidden, n_out))


SGD, ADAM = ("SGD", dict(lr=0.1)), ("Adam", dict(lr=1e-3))
PROGRAMS = [  # (title, data and parameters, lib loop, NumPy loop, option, unit of a step)
    ("MLP 16-32-4, batch 32, SGD", _mlp(16, 32, 4, 32), MLPLoop, NumpyMLP, SGD, "step"),
    ("MLP 784-128-10, batch 128, SGD", _mlp(784, 128, 10, 128), MLPLoop, NumpyMLP, SGD, "step"),
    ("linear regression, manual updates (seed)", _regression_data, LinearRegressionLoop, NumpyLinearRegression,
     0.1, "step"),
    ("softmax regression, nn.Linear + F.cross_entropy + SGD (seed)", _blobs_data, SoftmaxRegressionLoop,
     NumpySoftmaxRegression, 0.1, "step"),
    ("MLP 16-32-4, batch 32, Adam", _mlp(16, 32, 4, 32), MLPLoop, NumpyMLP, ADAM, "step"),
    ("MLP 16-32-4, batch 32, NAdam", _mlp(16, 32, 4, 32), MLPLoop, None, ("NAdam", dict(lr=1e-3)), "step"),
    ("LSTM 16-32 (20 steps, batch 16) + Linear, cross-entropy, Adam", _lstm_data, LSTMLoop, NumpyLSTM, ADAM,
     "step"),
    ("one recorded elementwise op a * b, 32x32", _operands, OneOp, NumpyOneOp, lambda a, b: a * b, "op"),
    ("one recorded matmul a @ b, 32x32", _operands, OneOp, NumpyOneOp, lambda a, b: a @ b, "op"),
]


def per_step(loop, steps, clock):
    start = clock()
    for _ in range(steps):
        loop.step()
    return (clock() - start) / steps


def run(title, make, loop_type, numpy_type, option, unit, steps, repeats, clock, tolerance=1e-4):
    """Check the loops agree after 5 steps (with the hand-written NumPy loop, else with PyTorch's: within
    `tolerance` of 1 + the parameter's magnitude), then print their medians per step and symgrad's ratios."""
    data, params = make()
    loops = {"symgrad eager": loop_type(sg, data, params, option)}
    if numpy_type is not None:
        loops["hand-written NumPy"] = numpy_type(data, params, option)
    if torch:
        loops["PyTorch eager"] = loop_type(torch, data, params, option)
    first = time.perf_counter()
    loops["symgrad eager"].step()
    first = time.perf_counter() - first
    for loop in list(loops.values())[1:]:
        loop.step()
    for _ in range(4):
        for loop in loops.values():
            loop.step()
    reference_name = "hand-written NumPy" if numpy_type is not None else list(loops)[-1]
    reference = loops[reference_name].params()
    for name, loop in loops.items():
        error = max(float(np.max(np.abs(a - b) / (1 + np.abs(b)), initial=0.0))
                    for a, b in zip(loop.params(), reference))
        assert error < tolerance, f"{title}: {name} disagrees with {reference_name} after 5 steps: {error}"
    times = {name: [] for name in loops}
    for _ in range(repeats):
        for name, loop in loops.items():
            times[name].append(per_step(loop, steps, clock))
    medians = {name: statistics.median(t) for name, t in times.items()}
    ours = medians["symgrad eager"]
    print(f"\n{title} (first symgrad {unit}: {first * 1e3:.1f} ms)")
    for name, value in medians.items():
        ratio = "" if name == "symgrad eager" else f"   symgrad / this = {ours / value:.2f}"
        print(f"  {name:20s} {value * 1e6:9.1f} us/{unit}{ratio}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", default="", help="run the programs whose title contains this text")
    parser.add_argument("--cpu-time", action="store_true",
                        help="time with the process's CPU time, steadier than wall time on a shared, loaded machine")
    args = parser.parse_args()
    clock = time.process_time if args.cpu_time else time.perf_counter
    from symgrad.backends import default_backend
    from symgrad.codegen.runtime import blas_kernel
    forced = os.environ.get("OPENBLAS_CORETYPE")  # (AVX2 kernels on an AVX-512 CPU make products ~1.6x slower)
    print(f"symgrad backend for the adjoint: {default_backend()}; NumPy's OpenBLAS kernels: {blas_kernel()}"
          f"{f' (OPENBLAS_CORETYPE={forced})' if forced else ''}; PyTorch: "
          f"{torch.__version__ + ' (1 thread)' if torch else 'not installed'}")
    if torch:
        torch.set_num_threads(1)
    for program in PROGRAMS:
        if args.only in program[0]:
            run(*program, args.steps, args.repeats, clock)


if __name__ == "__main__":
    main()
