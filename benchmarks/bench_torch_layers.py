"""Per-step time (forward and backward) of the layers issue 14's gaps added, symgrad eager vs PyTorch eager.

Run: python benchmarks/bench_torch_layers.py [--steps 20] [--repeats 5] [--only NAME]

Each case builds the same layer in both libraries (PyTorch's weights copied into symgrad's), float32,
one BLAS thread and one PyTorch thread; the outputs are checked to agree before timing. Times are medians
over repeats of the per-step time, the two implementations interleaved in one run, so the ratio compares
like with like on a loaded machine.
"""
import argparse
import os
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

# name -> (module factory given a library, input shapes)
CASES = {
    "conv_transpose2d": (lambda lib: lib.nn.Sequential(lib.nn.ConvTranspose2d(32, 16, 4, stride=2, padding=1),
                                                       lib.nn.ReLU()), [(16, 32, 8, 8)]),
    "lstm": (lambda lib: lib.nn.LSTM(32, 64, num_layers=1), [(20, 16, 32)]),
    "gru_bidirectional": (lambda lib: lib.nn.GRU(32, 32, bidirectional=True), [(20, 16, 32)]),
    "transformer_encoder_layer": (lambda lib: lib.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0),
                                  [(16, 8, 32)]),
    "group_norm_upsample": (lambda lib: lib.nn.Sequential(lib.nn.GroupNorm(4, 16), lib.nn.Upsample(
        scale_factor=2, mode="bilinear"), lib.nn.SiLU()), [(8, 16, 16, 16)]),
}


def _first(output):
    return output[0] if isinstance(output, tuple) else output


def _step(lib, module, inputs):
    module.zero_grad()
    _first(module(*inputs)).square().sum().backward()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only")
    args = parser.parse_args()
    if torch is None:
        raise SystemExit("PyTorch is not installed: nothing to compare with")
    torch.set_num_threads(1)
    print(f"{'case':28s} {'symgrad ms':>11s} {'torch ms':>9s} {'ratio':>6s}", flush=True)
    for name, (factory, shapes) in CASES.items():
        if args.only and name != args.only:
            continue
        theirs = factory(torch)
        ours = factory(sg).float()
        ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
        arrays = [np.random.default_rng(0).standard_normal(s).astype(np.float32) for s in shapes]
        our_inputs, their_inputs = [sg.tensor(a) for a in arrays], [torch.tensor(a) for a in arrays]
        np.testing.assert_allclose(_first(ours(*our_inputs)).detach().numpy(),
                                   _first(theirs(*their_inputs)).detach().numpy(), rtol=1e-3, atol=1e-4)
        times = {"symgrad": [], "torch": []}
        for _ in range(args.repeats):
            for label, lib, module, inputs in (("symgrad", sg, ours, our_inputs), ("torch", torch, theirs,
                                                                                   their_inputs)):
                _step(lib, module, inputs)  # warm
                start = time.perf_counter()
                for _ in range(args.steps):
                    _step(lib, module, inputs)
                times[label].append((time.perf_counter() - start) / args.steps * 1e3)
        ours_ms, theirs_ms = statistics.median(times["symgrad"]), statistics.median(times["torch"])
        print(f"{name:28s} {ours_ms:11.2f} {theirs_ms:9.2f} {ours_ms / theirs_ms:6.1f}", flush=True)


if __name__ == "__main__":
    main()
