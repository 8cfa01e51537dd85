"""Convolution forward + backward and a small CNN's training step: symgrad against PyTorch, side by side.

Run: python benchmarks/bench_conv.py [--repeats 7] [--steps 10] [--cpu-time]

  - conv2d: batch 32, 3 -> 16 -> 32 channels, 28x28, 3x3 kernels (padding 1), ReLU between, float32:
    forward and backward of sum(out * ramp), eager tensors (symgrad and PyTorch), and symgrad compiled
    (sg.compile(sg.value_and_grad(...)), LLVM backend: per example, its patches filled in cache + a BLAS product);
  - the CNN training step of examples/cnn_training.py (Conv2d, BatchNorm2d, ReLU, MaxPool2d, Dropout,
    Linear, cross-entropy, Adam), eager in both libraries.
Both are checked to agree before timing. Times are medians per step over repeats, the implementations
interleaved in one run, one BLAS thread and one PyTorch thread.
"""
import argparse
import os
import pathlib
import statistics
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("SYMGRAD_NUM_THREADS", "1")
import numpy as np  # noqa: E402

import symgrad as sg  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

SHAPE = (32, 3, 28, 28)


def conv_weights(seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((16, 3, 3, 3)).astype(np.float32) * 0.2, np.zeros(16, np.float32),
            rng.standard_normal((32, 16, 3, 3)).astype(np.float32) * 0.1, np.zeros(32, np.float32)]


def layers(F, x, w1, b1, w2, b2):
    return F.conv2d(F.relu(F.conv2d(x, w1, b1, padding=1)), w2, b2, padding=1)


class EagerConv:
    """Forward and backward of two conv layers on tensors of `lib`."""

    def __init__(self, lib, x, weights):
        self.lib = lib
        self.x = lib.from_numpy(x)
        self.weights = [lib.from_numpy(w.copy()).requires_grad_() for w in weights]
        self.ramp = lib.from_numpy(np.linspace(-1, 1, 32 * 32 * 28 * 28, dtype=np.float32).reshape(32, 32, 28, 28))

    def step(self):
        for w in self.weights:
            w.grad = None
        (layers(self.lib.nn.functional, self.x, *self.weights) * self.ramp).sum().backward()
        return [w.grad.numpy() for w in self.weights]


class CompiledConv:
    """The same, as one compiled value-and-gradient (LLVM)."""

    def __init__(self, x, weights):
        ramp = np.linspace(-1, 1, 32 * 32 * 28 * 28, dtype=np.float32).reshape(32, 32, 28, 28)
        self.x, self.weights = x, weights
        self.fn = sg.compile(sg.value_and_grad(lambda x, *ws: sg.sum(layers(sg.nn.functional, x, *ws) * ramp),
                                               argnums=(1, 2, 3, 4)))

    def step(self):
        return list(self.fn(self.x, *self.weights)[1])


def cnn_step(library, data, seed=2):
    """One training step of examples/cnn_training.py's CNN (its source run with `library` as sg), as a closure."""
    path = pathlib.Path(__file__).resolve().parent.parent / "examples" / "cnn_training.py"
    example = {"__name__": "cnn_training"}
    exec(compile(path.read_text().replace("import symgrad as sg", f"import {library} as sg"), str(path), "exec"),
         example)
    lib = example["sg"]
    model = example["build_model"]()
    example["load_weights"](model, seed)
    optimizer = lib.optim.Adam(model.parameters(), lr=1e-3)
    x, y = lib.from_numpy(data[0]), lib.from_numpy(data[1])
    loss_fn = lib.nn.CrossEntropyLoss()

    def step():
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        return loss.item()
    return step


def timed(step, steps, cpu_time):
    clock = time.process_time if cpu_time else time.perf_counter
    start = clock()
    for _ in range(steps):
        step()
    return (clock() - start) / steps


def compare(name, steps_by_library, steps, repeats, cpu_time):
    times = {library: [] for library in steps_by_library}
    for _ in range(repeats):
        for library, step in steps_by_library.items():
            times[library].append(timed(step, steps, cpu_time))
    medians = {library: statistics.median(values) * 1e3 for library, values in times.items()}
    base = medians.get("torch")
    cells = ", ".join(f"{library} {ms:.2f} ms" + (f" ({ms / base:.2f}x torch)" if base and library != "torch" else "")
                      for library, ms in medians.items())
    print(f"{name}: {cells}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--cpu-time", action="store_true", help="time the process's CPU time, not wall time")
    args = parser.parse_args()
    if torch is not None:
        torch.set_num_threads(1)
    x = np.random.default_rng(1).standard_normal(SHAPE).astype(np.float32)
    weights = conv_weights()
    conv_steps = {"symgrad eager": EagerConv(sg, x, weights).step, "symgrad compiled": CompiledConv(x, weights).step}
    if torch is not None:
        conv_steps["torch"] = EagerConv(torch, x, weights).step
        reference = conv_steps["torch"]()
        for name in ("symgrad eager", "symgrad compiled"):
            for _ in range(3):  # the eager adjoint is compiled by the third step
                got = conv_steps[name]()
            for a, b in zip(got, reference):
                np.testing.assert_allclose(a, b, rtol=2e-3, atol=2e-3 * np.abs(b).max())
    compare("conv2d 3->16->32, 28x28, batch 32, forward+backward", conv_steps, args.steps, args.repeats,
            args.cpu_time)
    rng = np.random.default_rng(2)
    data = (rng.standard_normal((64, 1, 16, 16)).astype(np.float32), rng.integers(0, 4, 64))
    cnn_steps = {"symgrad eager": cnn_step("symgrad", data)}
    if torch is not None:
        cnn_steps["torch"] = cnn_step("torch", data)
    compare("CNN training step (examples/cnn_training.py model, batch 64, Adam)", cnn_steps, args.steps, args.repeats,
            args.cpu_time)
    print(f"load average {os.getloadavg()[0]:.1f}, {'CPU' if args.cpu_time else 'wall'} time")


if __name__ == "__main__":
    main()
