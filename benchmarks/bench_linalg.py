"""sg.linalg: time per value-and-gradient call on the LLVM backend (NumPy's LAPACK called natively) beside
the NumPy backend (the same LAPACK through numpy.linalg, one NumPy call per op) and PyTorch eager when
installed. Before issue 13's LAPACK rules, a graph holding slogdet, eigh, svd, qr or pinv ran on the NumPy
backend: the "sg numpy" column is what such a graph cost then.

Run: python benchmarks/bench_linalg.py [--repeat 200]
"""
import argparse
import importlib.util
import timeit

import numpy as np

import symgrad as sg


def gaussian_process(n):
    """A Gaussian process's negative log likelihood: slogdet and solve of an n x n kernel."""
    points, y = np.linspace(0.0, 1.0, n), np.sin(np.arange(n, dtype=float))

    def loss(params, xp):
        scale, noise = xp.exp(params[0]), xp.exp(params[1])
        distances, targets = xp.asarray((points[:, None] - points[None, :]) ** 2), xp.asarray(y)
        kernel = xp.exp(-distances / scale) + noise * xp.asarray(np.eye(n))
        return 0.5 * xp.sum(targets * xp.linalg.solve(kernel, targets)) + 0.5 * xp.linalg.slogdet(kernel)[1]
    return loss, (np.array([-0.5, -1.0]),)


def spectral(n):
    """eigh of a symmetric matrix: a weighted sum of eigenvalues plus the squared eigenvectors' spread."""
    weights = np.linspace(0.5, 2.0, n)

    def loss(a, xp):
        w, v = xp.linalg.eigh(a + a.T + xp.asarray(2 * n * np.eye(n) * weights))
        return xp.sum(w * xp.asarray(weights)) + xp.sum(v ** 4)
    return loss, (np.random.default_rng(0).normal(size=(n, n)),)


def nuclear(n):
    """The nuclear norm (svd) of an n x n/2 matrix and a QR-based term."""
    def loss(a, xp):
        r = xp.linalg.qr(a)[1]
        return xp.sum(xp.linalg.svd(a, full_matrices=False)[1]) + xp.sum(r ** 2)
    return loss, (np.random.default_rng(1).normal(size=(n, n // 2)),)


PROBLEMS = {f"{name} n={n}": make(n) for name, make in
            [("GP slogdet+solve", gaussian_process), ("eigh", spectral), ("svd+qr", nuclear)] for n in (8, 64)}


class _Torch:
    def __init__(self, torch):
        self.t, self.linalg = torch, torch.linalg

    def __getattr__(self, name):
        return getattr(self.t, name)


def per_call(fn, args, repeat) -> float:
    fn(*args)
    return min(timeit.repeat(lambda: fn(*args), number=repeat, repeat=3)) / repeat


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=200)
    repeat = parser.parse_args().repeat
    torch = importlib.import_module("torch") if importlib.util.find_spec("torch") else None
    print("| problem | sg llvm | sg numpy | torch eager | numpy/llvm |\n|---|---|---|---|---|")
    for name, (loss, args) in PROBLEMS.items():
        step = sg.value_and_grad(lambda *a: loss(*a, sg), argnums=tuple(range(len(args))))
        llvm = per_call(sg.compile(step, backend="llvm"), args, repeat)
        numpy = per_call(sg.compile(step, backend="numpy"), args, repeat)
        cell = "-"
        if torch is not None:
            def torch_step(*arrays):
                tensors = [torch.tensor(a, requires_grad=True) for a in arrays]
                loss(*tensors, _Torch(torch)).backward()
                return [t.grad for t in tensors]
            cell = f"{per_call(torch_step, args, repeat) * 1e6:.1f} us"
        print(f"| {name} | {llvm * 1e6:.1f} us | {numpy * 1e6:.1f} us | {cell} | {numpy / llvm:.1f} |")


if __name__ == "__main__":
    main()
