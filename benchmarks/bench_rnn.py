"""Recurrent layers in eager mode, symgrad vs PyTorch: the first two training steps (symgrad compiles the
layer's sequence in the first; a step loop of small ops was compiled whole at the second) and a training step
(forward, backward, SGD), float32, one thread each. The loop_rnn cases are a tanh RNN written as a Python loop
of tensor ops (captured whole at the second step, the loop rolled into a scan).

Run: python benchmarks/bench_rnn.py [--steps 20] [--repeats 5]

Per-step times are medians over repeats, the two libraries interleaved in one run; both CPU time
(time.process_time) and wall time (time.perf_counter) are printed, as the machine may be loaded.
The first two steps are timed in a fresh on-disk cache (SYMGRAD_CACHE_DIR set to an empty directory).
"""
import argparse
import os
import statistics
import tempfile
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("SYMGRAD_NUM_THREADS", "1")
os.environ["SYMGRAD_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench-rnn-")
import numpy as np  # noqa: E402

import symgrad as sg  # noqa: E402

try:
    import torch
except ImportError:
    torch = None


def hand_written_rnn(lib, inputs, hidden):
    """A tanh RNN written as a Python loop of tensor ops (no fused layer): symgrad captures the step whole at its
    second step, its loop rolled into one scan."""

    class HandRNN(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.w_x = lib.nn.Parameter(lib.randn(inputs, hidden) / inputs ** 0.5)
            self.w_h = lib.nn.Parameter(lib.randn(hidden, hidden) / hidden ** 0.5)
            self.b = lib.nn.Parameter(lib.zeros(hidden))

        def forward(self, x):
            h = lib.zeros(x.shape[1], self.w_h.shape[0], dtype=x.dtype)
            outputs = []
            for t in range(x.shape[0]):
                h = lib.tanh(x[t] @ self.w_x + h @ self.w_h + self.b)
                outputs.append(h)
            return lib.stack(outputs), h

    return HandRNN()


# name -> (module factory given a library, input shape (L, N, H_in))
CASES = {
    "lstm": (lambda lib: lib.nn.LSTM(32, 64), (20, 16, 32)),
    "lstm_2_layers": (lambda lib: lib.nn.LSTM(32, 64, num_layers=2), (20, 16, 32)),
    "gru_bidirectional": (lambda lib: lib.nn.GRU(32, 32, bidirectional=True), (20, 16, 32)),
    "rnn_tanh": (lambda lib: lib.nn.RNN(32, 64), (20, 16, 32)),
    "loop_rnn_T50": (lambda lib: hand_written_rnn(lib, 32, 64), (50, 16, 32)),
    "loop_rnn_T200": (lambda lib: hand_written_rnn(lib, 32, 64), (200, 16, 32)),
}


def _step(module, optimizer, x):
    optimizer.zero_grad()
    output, _ = module(x)
    (output * output).mean().backward()
    optimizer.step()


def _timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return (time.perf_counter() - wall) * 1e3, (time.process_time() - cpu) * 1e3


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", default="", help="run the cases whose name contains this text")
    args = parser.parse_args()
    if torch is None:
        raise SystemExit("PyTorch is not installed: nothing to compare with")
    torch.set_num_threads(1)
    print(f"{'case':20s} {'1st step ms (wall/cpu)':>23s} {'2nd step ms (wall/cpu)':>23s} "
          f"{'symgrad step ms (wall/cpu)':>27s} "
          f"{'torch step ms (wall/cpu)':>25s} {'ratio (cpu)':>11s}", flush=True)
    for name, (factory, shape) in CASES.items():
        if args.only not in name:
            continue
        theirs = factory(torch)
        ours = factory(sg).float()
        ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
        x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        our_x, their_x = sg.tensor(x), torch.tensor(x)
        optimizers = {"symgrad": (ours, sg.optim.SGD(ours.parameters(), lr=1e-3), our_x),
                      "torch": (theirs, torch.optim.SGD(theirs.parameters(), lr=1e-3), their_x)}
        first, second = (_timed(lambda: _step(*optimizers["symgrad"])) for _ in range(2))
        times = {"symgrad": [], "torch": []}
        for _ in range(args.repeats):
            for label, (module, optimizer, inputs) in optimizers.items():
                _step(module, optimizer, inputs)  # warm
                wall, cpu = _timed(lambda: [_step(module, optimizer, inputs) for _ in range(args.steps)])
                times[label].append((wall / args.steps, cpu / args.steps))
        ours_ms = [statistics.median(t[i] for t in times["symgrad"]) for i in (0, 1)]
        theirs_ms = [statistics.median(t[i] for t in times["torch"]) for i in (0, 1)]
        print(f"{name:20s} {first[0]:10.0f} / {first[1]:<10.0f} {second[0]:10.0f} / {second[1]:<10.0f} "
              f"{ours_ms[0]:12.2f} / {ours_ms[1]:<12.2f} "
              f"{theirs_ms[0]:11.2f} / {theirs_ms[1]:<11.2f} {ours_ms[1] / theirs_ms[1]:11.1f}", flush=True)


if __name__ == "__main__":
    main()
