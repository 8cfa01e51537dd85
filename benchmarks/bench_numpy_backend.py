"""Value-and-gradient per call: symgrad's NumPy backend vs hand-written NumPy (and JAX/PyTorch if present).

Run: python benchmarks/bench_numpy_backend.py [--repeats 7]

For each problem: check the gradients agree with the hand-written ones, then time each
implementation side by side. Times are medians over repeats of the per-call time (each repeat
runs a ~0.1 s loop per implementation, implementations interleaved). "first call" is the cold cost
of a fresh `sg.compile(sg.value_and_grad(f), backend="numpy")`: trace + adjoint + optimize + codegen + run.
"""
import argparse
import statistics
import time

import numpy as np

import symgrad as sg


# ----------------------------------------------------------------------------- problems

def rosen(x):
    return sg.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def rosen_np(x):
    d = x[1:] - x[:-1] ** 2
    e = 1.0 - x[:-1]
    value = np.sum(100.0 * d * d + e * e)
    g = np.zeros_like(x)
    g[1:] = 200.0 * d
    g[:-1] += -400.0 * x[:-1] * d - 2.0 * e
    return value, g


def mlp_loss(w1, b1, w2, b2, x, y):
    """Softmax cross-entropy of a tanh MLP; y is one-hot."""
    h = sg.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    return -sg.mean(sg.sum(y * sg.log_softmax(logits), axis=1))


def mlp_np(w1, b1, w2, b2, x, y):
    h = np.tanh(x @ w1 + b1)
    z = h @ w2 + b2
    z = z - z.max(axis=1, keepdims=True)
    log_p = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    n = x.shape[0]
    value = -np.sum(y * log_p) / n
    dz = (np.exp(log_p) * y.sum(axis=1, keepdims=True) - y) / n
    dh = (dz @ w2.T) * (1 - h * h)
    return value, (x.T @ dh, dh.sum(axis=0), h.T @ dz, dz.sum(axis=0))


def problems():
    rng = np.random.default_rng(0)
    small = rng.normal(size=10)
    big = rng.normal(size=1_000_000)
    f32 = np.float32
    w1 = (rng.normal(size=(64, 128)) / 8).astype(f32)
    b1 = np.zeros(128, f32)
    w2 = (rng.normal(size=(128, 10)) / 11).astype(f32)
    b2 = np.zeros(10, f32)
    x = rng.normal(size=(256, 64)).astype(f32)
    y = np.eye(10, dtype=f32)[rng.integers(0, 10, size=256)]
    return [
        ("rosenbrock N=10 f64", rosen, 0, rosen_np, (small,)),
        ("rosenbrock N=1e6 f64", rosen, 0, rosen_np, (big,)),
        ("mlp 64-128-10 b256 f32", mlp_loss, (0, 1, 2, 3), mlp_np, (w1, b1, w2, b2, x, y)),
    ]


# ----------------------------------------------------------------------------- optional frameworks

def jax_impl(name, args, argnums):
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    if name.startswith("rosen"):
        def f(x):
            return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
    else:
        def f(w1, b1, w2, b2, x, y):
            logits = jnp.tanh(x @ w1 + b1) @ w2 + b2
            return -jnp.mean(jnp.sum(y * jax.nn.log_softmax(logits), axis=1))
    step = jax.jit(jax.value_and_grad(f, argnums=argnums))
    dev_args = [jnp.asarray(a) for a in args]

    def call():
        value, grads = step(*dev_args)
        jax.block_until_ready(grads)
        return value, grads
    return call


def torch_impl(name, args, argnums):
    try:
        import torch
    except ImportError:
        return None
    nums = (argnums,) if isinstance(argnums, int) else argnums
    tensors = [torch.tensor(a, requires_grad=i in nums) for i, a in enumerate(args)]

    def call():
        for i in nums:
            tensors[i].grad = None
        if name.startswith("rosen"):
            x = tensors[0]
            value = torch.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
        else:
            w1, b1, w2, b2, x, y = tensors
            logits = torch.tanh(x @ w1 + b1) @ w2 + b2
            value = -torch.mean(torch.sum(y * torch.log_softmax(logits, dim=1), dim=1))
        value.backward()
        return value.item(), [tensors[i].grad for i in nums]
    return call


# ----------------------------------------------------------------------------- timing

def _loop_count(call, budget):
    """Like timeit.autorange: a loop count for which `call` takes about `budget` seconds."""
    call()  # warm up
    number = 1
    while True:
        start = time.perf_counter()
        for _ in range(number):
            call()
        elapsed = time.perf_counter() - start
        if elapsed >= budget or number >= 1_000_000:
            return number
        number = max(number * 2, int(number * budget / max(elapsed, 1e-9) * 1.1))


def per_call_medians(calls, repeats, budget=0.1):
    """Median per-call seconds for each of `calls` (a dict), repeats interleaved so that load
    from other processes hits every implementation alike."""
    numbers = {label: _loop_count(call, budget) for label, call in calls.items()}
    samples = {label: [] for label in calls}
    for _ in range(repeats):
        for label, call in calls.items():
            number = numbers[label]
            start = time.perf_counter()
            for _ in range(number):
                call()
            samples[label].append((time.perf_counter() - start) / number)
    return {label: statistics.median(values) for label, values in samples.items()}


def check_agree(name, got, ref):
    got_leaves = got if isinstance(got, tuple) else (got,)
    ref_leaves = ref if isinstance(ref, tuple) else (ref,)
    for g, r in zip(got_leaves, ref_leaves):
        g, r = np.asarray(g), np.asarray(r)
        tol = 1e-4 if r.dtype == np.float32 else 1e-10
        scale = max(1.0, float(np.max(np.abs(r))))
        err = float(np.max(np.abs(g - r))) / scale
        if g.shape != r.shape or err > tol:
            raise SystemExit(f"{name}: gradients disagree with the hand-written ones (scaled error {err:.3g})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    opts = parser.parse_args()

    rows = []
    for name, fn, argnums, hand, args in problems():
        start = time.perf_counter()
        step = sg.compile(sg.value_and_grad(fn, argnums=argnums), backend="numpy")
        value, grads = step(*args)
        first_call = time.perf_counter() - start

        ref_value, ref_grads = hand(*args)
        check_agree(name, grads, ref_grads)
        assert np.isclose(value, ref_value, rtol=1e-4 if np.asarray(value).dtype == np.float32 else 1e-10)

        calls = {"symgrad": lambda: step(*args), "numpy": lambda: hand(*args)}
        for label, make in (("jax", jax_impl), ("torch", torch_impl)):
            impl = make(name, args, argnums)
            if impl is not None:
                calls[label] = impl
        times = per_call_medians(calls, opts.repeats)
        rows.append((name, first_call, times))

    extra = sorted({k for _, _, t in rows for k in t} - {"symgrad", "numpy"})
    header = f"{'problem':<24} {'symgrad us':>11} {'numpy us':>10} {'ratio':>6}"
    header += "".join(f" {k + ' us':>10}" for k in extra) + f" {'first call ms':>14}"
    print(header)
    print("-" * len(header))
    for name, first_call, t in rows:
        line = f"{name:<24} {t['symgrad'] * 1e6:>11.1f} {t['numpy'] * 1e6:>10.1f} {t['symgrad'] / t['numpy']:>6.2f}"
        line += "".join(f" {t[k] * 1e6:>10.1f}" if k in t else f" {'-':>10}" for k in extra)
        print(line + f" {first_call * 1e3:>14.1f}")
    print(f"\nmedian of {opts.repeats} repeats; ratio = symgrad / hand-written NumPy (lower is better); "
          "gradients checked against the hand-written ones first.")


if __name__ == "__main__":
    main()
