"""A seeded generator of random programs over sg.linalg, sg.scipy.linalg and sg.scipy.special/stats, and the check
that runs one through symgrad's paths against JAX in float64 (jax.numpy.linalg, jax.scipy) for values and gradients.

A program is Python source over `ns` (symgrad or jax.numpy) and `S` (sg.scipy or jax.scipy): a chain of
factorizations, solves, norms and special functions on a stack of matrices x0 (2, 3, 3), a matrix x1 (3, 3), a
right-hand side x2 (3, 2) and a vector x3 (3,). Factors with a sign or rotation freedom (qr, svd, eigh) are used
through what is unique (q @ r, u**2, eigenvalues). A line is kept only if JAX runs it to a finite, modest value.
Paths: the uncompiled transform, sg.compile on LLVM and NumPy (each called twice with different values), float32,
eager tensors, vmap over x1 (and vmap of grad over x0), jvp against the gradient. Inputs "singular" make x0's
matrices rank-deficient and repeat an eigenvalue: symgrad must give JAX's value or a clear error there.
Run as a script for many more programs than CI's:
    python tests/random_programs_linalg.py --count 500 [--start 0] [--inputs singular]
"""
from __future__ import annotations

import argparse
import sys
import traceback

import numpy as np

import symgrad as sg
from random_programs_broad import CLEAR_ERROR_MODULES, INTERNAL, Mismatch, _close, _pick, jax_libs

INPUT_SHAPES = {"x0": (2, 3, 3), "x1": (3, 3), "x2": (3, 2), "x3": (3,)}
ARGNUMS = (0, 1, 2, 3)

SPD = "({a} @ ns.swapaxes({a}, -1, -2) + 3.0 * ns.eye(3))"
# (template, the kinds of its input {a}: "square" a (..., 3, 3) matrix, "any" any float array)
TEMPLATES = [
    ("ns.linalg.solve({s}, x2)", "square"), ("ns.linalg.solve({s}, x3[:, None])[..., 0]", "square"),
    ("ns.linalg.inv({s})", "square"), ("ns.linalg.det({a})", "square"), ("ns.linalg.slogdet({s})[1]", "square"),
    ("ns.linalg.slogdet({a})[0] * ns.linalg.slogdet({a})[1]", "square"), ("ns.linalg.cholesky({s})", "square"),
    ("ns.linalg.cholesky({s}, upper=True)", "square"),
    ("ns.matmul(*ns.linalg.qr({a}))", "square"), ("ns.abs(ns.linalg.qr({a})[1])", "square"),
    ("ns.linalg.qr({a}, mode='r')", "square"), ("ns.linalg.svd({a}, compute_uv=False)", "square"),
    ("ns.linalg.svd({a}, full_matrices=False)[0] ** 2", "square"), ("ns.linalg.svdvals({a})", "square"),
    ("ns.linalg.eigh({s})[0]", "square"), ("ns.linalg.eigh({s})[1] ** 2", "square"),
    ("ns.linalg.eigvalsh({s})", "square"), ("ns.linalg.eigvalsh({a} + ns.swapaxes({a}, -1, -2))", "square"),
    ("ns.linalg.eigh({s}, UPLO='U')[0]", "square"),
    ("ns.linalg.norm({a})", "any"), ("ns.linalg.norm({a}, axis=-1)", "any"),
    ("ns.linalg.norm({a}, ord=1, axis=-1)", "any"), ("ns.linalg.norm({a}, ord=ns.inf, axis=0)", "any"),
    ("ns.linalg.norm({a}, ord=-ns.inf, axis=-1, keepdims=True)", "any"),
    ("ns.linalg.norm({a}, ord=3, axis=-1)", "any"), ("ns.linalg.norm({a}, ord=0.5, axis=-1)", "any"),
    ("ns.linalg.norm({a}, ord=-1, axis=-1)", "any"), ("ns.linalg.norm({a}, ord=-2, axis=-1)", "any"),
    ("ns.linalg.norm({a}, ord='fro', axis=(-2, -1))", "square"), ("ns.linalg.norm({a}, ord='nuc', axis=(-2, -1))", "square"),
    ("ns.linalg.norm({a}, ord=1, axis=(-2, -1))", "square"), ("ns.linalg.norm({a}, ord=-1, axis=(-1, -2))", "square"),
    ("ns.linalg.norm({a}, ord=ns.inf, axis=(-2, -1), keepdims=True)", "square"),
    ("ns.linalg.norm({a}, ord=2, axis=(-2, -1))", "square"), ("ns.linalg.norm({a}, ord=-2, axis=(-2, -1))", "square"),
    ("ns.linalg.norm({a}, ord=-ns.inf, axis=(-1, -2))", "square"),
    ("ns.linalg.vector_norm({a}, ord=3, axis=-1)", "any"), ("ns.linalg.matrix_norm({a}, ord='nuc')", "square"),
    ("ns.linalg.lstsq(x1 + 2.0 * ns.eye(3), {a}[..., :2] if ns.ndim({a}) == 2 else x2)[0]", "square"),
    ("ns.linalg.pinv({s})", "square"), ("ns.linalg.pinv(x2) @ {a}", "square"),
    ("ns.linalg.matrix_power({a}, 3)", "square"), ("ns.linalg.matrix_power({s}, -2)", "square"),
    ("ns.linalg.matrix_power({a}, 0)", "square"), ("ns.linalg.multi_dot([x1, {a}, x2])", "square"),
    ("ns.linalg.cond({s})", "square"), ("ns.linalg.trace({a})", "square"),
    ("S.linalg.solve_triangular(ns.tril({a}) + 3.0 * ns.eye(3), x2, lower=True)", "square"),
    ("S.linalg.solve_triangular(ns.triu({a}) + 3.0 * ns.eye(3), x2, trans=1)", "square"),
    ("S.linalg.solve_triangular(ns.triu({a}) + 3.0 * ns.eye(3), x2, unit_diagonal=True)", "square"),
    ("S.linalg.cho_solve(S.linalg.cho_factor({s}), x2)", "square"),
    ("S.linalg.cho_solve(S.linalg.cho_factor({s}, lower=True), x2)", "square"),
    ("S.linalg.cholesky({s})", "square"), ("S.linalg.det({a})", "square"), ("S.linalg.inv({s})", "square"),
    ("S.linalg.solve({s}, x2, assume_a='pos')", "square"), ("S.linalg.eigh({s}, eigvals_only=True)", "square"),
    ("S.special.logsumexp({a}, axis=-1)", "any"), ("S.special.logsumexp({a}, axis=0, keepdims=True)", "any"),
    ("S.special.logsumexp({a}, b=ns.abs(x3) + 0.1, axis=-1)", "square"), ("S.special.softmax({a}, axis=-1)", "any"),
    ("S.special.log_softmax({a}, axis=0)", "any"), ("S.special.gammaln(ns.abs({a}) + 0.1)", "any"),
    ("S.special.digamma(ns.abs({a}) + 0.2)", "any"), ("S.special.erfc({a})", "any"),
    ("S.special.erfinv(ns.tanh({a}) * 0.9)", "any"), ("S.special.xlogy({a}, ns.abs({a}) + 0.1)", "any"),
    ("S.special.xlog1py(ns.abs({a}), ns.abs({a}))", "any"), ("S.special.expit({a})", "any"),
    ("S.special.logit(S.special.expit({a}) * 0.9 + 0.05)", "any"), ("S.special.ndtr({a})", "any"),
    ("S.special.log_ndtr({a} * 3.0)", "any"), ("S.special.ndtri(S.special.expit({a}) * 0.9 + 0.05)", "any"),
    ("S.special.betaln(ns.abs({a}) + 0.5, 1.5)", "any"), ("S.special.polygamma(1, ns.abs({a}) + 0.5)", "any"),
    ("S.special.gammainc(2.5, ns.abs({a}))", "any"), ("S.special.multigammaln(ns.abs({a}) + 1.5, 2)", "any"),
    ("S.stats.norm.logpdf({a}, 0.5, 2.0)", "any"), ("S.stats.norm.logcdf({a} * 3.0)", "any"),
    ("S.stats.norm.ppf(S.special.expit({a}))", "any"), ("S.stats.t.logpdf({a}, 3.0, 0.1, 1.5)", "any"),
    ("S.stats.t.logpdf(0.3, ns.abs({a}) + 0.5)", "any"), ("S.stats.gamma.logpdf(ns.abs({a}) + 0.1, 2.0)", "any"),
    ("S.stats.gamma.logpdf(1.5, ns.abs({a}) + 0.5, scale=2.0)", "any"),
    ("S.stats.beta.logpdf(S.special.expit({a}), 2.0, 3.0)", "any"),
    ("S.stats.beta.logpdf(0.3, ns.abs({a}) + 0.5, 1.5)", "any"), ("S.stats.gamma.cdf(ns.abs({a}), 2.0)", "any"),
    ("S.stats.poisson.logpmf(3.0, ns.abs({a}) + 0.5)", "any"),
    ("S.stats.multivariate_normal.logpdf(x3, x3 * 0.5, {s})", "square"),
    # glue: elementwise and shape steps between the linear algebra
    ("ns.tanh({a})", "any"), ("{a} @ x1", "square"), ("{a} + x1", "square"), ("ns.swapaxes({a}, -1, -2)", "square"),
    ("{a} * 0.5 + ns.eye(3)", "square"), ("ns.sum({a}, axis=0)", "any"),
]


def _kind(value):
    shape = np.shape(value)
    return "square" if len(shape) >= 2 and shape[-1] == shape[-2] == 3 else "any"


# left out of programs run at "singular" inputs: factors not unique at a repeated eigenvalue or singular value, and
# the smallest singular value, whose derivative at a rank-deficient matrix is none (coordinate differences say 0)
NOT_UNIQUE = ("eigh({s})[1]", "svd({a}, full_matrices=False)[0]", "ord=-2, axis=(")


def generate(seed, length=None, inputs="smooth"):
    """(source of def f(x0, x1, x2, x3), weights): a chain of linear algebra whose lines JAX runs to finite values."""
    jax, jnp, _ = jax_libs()
    import jax.scipy as jsp
    rng = np.random.default_rng(seed)
    length = length or int(rng.integers(1, 5))
    env = {k: jnp.asarray(v) for k, v in random_inputs(np.random.default_rng(seed + 10 ** 6)).items()}
    lines, attempts = [], 0
    while len(lines) < length and attempts < 100:
        attempts += 1
        names = [k for k in env if k != "x2"]
        a = _pick(rng, names)
        template, needs = TEMPLATES[rng.integers(len(TEMPLATES))]
        if (needs == "square" and _kind(env[a]) != "square") or (inputs != "smooth" and
                                                                  any(u in template for u in NOT_UNIQUE)):
            continue
        expr = template.format(a=a, s=SPD.format(a=a))
        try:
            value = np.asarray(eval(expr, {"ns": jnp, "S": jsp, "np": np}, dict(env)))
        except Exception:  # noqa: BLE001 - a line JAX refuses is not a program
            continue
        if value.dtype.kind != "f" or value.size > 200 or not np.all(np.isfinite(value)) \
                or np.max(np.abs(value), initial=0) > 1e4:
            continue
        name = f"v{len(lines)}"
        env[name] = jnp.asarray(value)
        lines.append(f"    {name} = {expr}")
    used = [k for k in env if k.startswith("v")]
    weights = {k: np.random.default_rng(seed + 7).normal(size=np.shape(env[k])).round(2) for k in used}
    terms = " + ".join(f"ns.sum({k} * W['{k}'])" for k in used) or "ns.sum(x0 * 0.0)"
    return "def f(x0, x1, x2, x3):\n" + "\n".join(lines) + f"\n    return {terms}\n", weights


def random_inputs(rng, kind="smooth"):
    """Uniform values; "singular": x0's first matrix of rank 1 and its second with a repeated row, x1 symmetric with
    a repeated eigenvalue (no entry 0: the subgradient conventions of abs and norms at 0 differ from JAX's)."""
    inputs = {name: rng.uniform(-1.5, 1.5, shape) for name, shape in INPUT_SHAPES.items()}
    if kind == "singular":
        u = rng.uniform(-1, 1, 3)
        inputs["x0"][0] = np.outer(u, u[::-1])
        inputs["x0"][1, 2] = inputs["x0"][1, 0]
        q = np.linalg.qr(rng.normal(size=(3, 3)))[0]
        inputs["x1"] = q @ np.diag([1.0, 1.0, 2.0]) @ q.T
    return inputs


def _difference_oracle(jf, args, want):
    """(JAX's value, central differences of the gradient where the one-sided ones agree, NaN at a kink: the k-th
    eigenvalue of a matrix whose k-th and (k+1)-th are equal has no derivative, JAX's is one of its one-sided ones)."""
    base, grads, eps = float(jf(*args)), [], 1e-6
    for n in ARGNUMS:
        ahead, behind = np.zeros(args[n].size), np.zeros(args[n].size)
        for i in range(ahead.size):
            up, down = [np.array(a) for a in args], [np.array(a) for a in args]
            up[n].reshape(-1)[i] += eps
            down[n].reshape(-1)[i] -= eps
            ahead[i], behind[i] = (float(jf(*up)) - base) / eps, (base - float(jf(*down))) / eps
        smooth = np.isclose(ahead, behind, rtol=1e-3, atol=1e-4)
        grads.append(np.where(smooth, (ahead + behind) / 2, np.nan).reshape(args[n].shape))
    return want[0], grads


def _tangents(args):
    return [np.cos(np.arange(np.size(a)) + 1.0).reshape(np.shape(a)) for a in args]


def build(source, weights, ns, scipy):
    scope = {"ns": ns, "S": scipy, "np": np, "W": weights}
    exec(compile(source, "<random linalg program>", "exec"), scope)
    return scope["f"]


def symgrad_paths(source, weights, args, args2):
    """{path: (value, grads)} for every symgrad path; a symgrad error is returned in place of the pair."""
    f = build(source, weights, sg, sg.scipy)
    vg = sg.value_and_grad(f, argnums=ARGNUMS)
    results = {}

    def attempt(path, thunk):
        try:
            value, grads = thunk()
            results[path] = (np.asarray(value), [np.asarray(g) for g in grads])
        except Exception as e:  # noqa: BLE001 - classified by the caller
            results[path] = e

    attempt("transform", lambda: vg(*args))
    llvm, numpy_backend = sg.compile(vg), sg.compile(vg, backend="numpy")
    attempt("llvm", lambda: llvm(*args))
    attempt("numpy", lambda: numpy_backend(*args))
    attempt("llvm-again", lambda: llvm(*args2))
    attempt("numpy-again", lambda: numpy_backend(*args2))
    attempt("llvm-f32", lambda: llvm(*[a.astype(np.float32) for a in args]))
    attempt("forward", lambda: (sg.compile(f)(*args), ()))

    def eager():
        tensors = [sg.tensor(a, requires_grad=True) for a in args]
        out = f(*tensors)
        out.backward()
        return out.detach().numpy(), [np.zeros_like(a) if t.grad is None else t.grad.numpy()
                                      for a, t in zip(args, tensors)]
    attempt("eager", eager)

    def vmapped():  # x1 batched: example 0 is args' x1, example 1 args2's; and vmap of grad over x0's matrices
        batched = sg.vmap(vg, in_axes=(None, 0, None, None))(args[0], np.stack([args[1], args2[1]]), *args[2:])
        per_matrix = sg.vmap(sg.grad(lambda m, *rest: f(m[None].repeat(2, 0), *rest)), in_axes=(0, None, None, None))
        return batched[0], [batched[1][1], per_matrix(*args)]
    attempt("vmap", vmapped)
    def forward_mode():
        value, tangent = sg.jvp(f, tuple(args), tuple(_tangents(args)))
        return value, [tangent]
    attempt("jvp", forward_mode)
    return results


def check(seed, inputs="smooth"):
    """Run program `seed` through every path; returns {path: 'ok' | 'error: ...'}, raising Mismatch on a wrong
    number or an internal error. The oracle is JAX in float64: its value, its gradient."""
    jax, jnp, _ = jax_libs()
    import jax.scipy as jsp
    source, weights = generate(seed, inputs=inputs)
    rng = np.random.default_rng(seed + 2 * 10 ** 6)
    args, args2 = list(random_inputs(rng, inputs).values()), list(random_inputs(rng, inputs).values())
    jf = build(source, weights, jnp, jsp)
    jvg = jax.value_and_grad(jf, argnums=ARGNUMS)
    want, want2 = jvg(*args), jvg(*args2)
    if inputs != "smooth":  # a gradient at a repeated eigenvalue may not exist; JAX's is one of many: differences
        want, want2 = (_difference_oracle(jax.jit(jf), a, w) for a, w in ((args, want), (args2, want2)))
    per_matrix = jax.vmap(jax.grad(lambda m, *rest: jf(jnp.repeat(m[None], 2, 0), *rest)), in_axes=(0, None, None, None))
    results = symgrad_paths(source, weights, args, args2)
    singular = inputs != "smooth"
    rtol, atol = (1e-6, 1e-7) if not singular else (1e-5, 1e-6)
    report = {}
    for path, result in results.items():
        if isinstance(result, Exception):
            # at singular inputs a LinAlgError (sg.linalg's error for a singular matrix, as NumPy's) is clear too
            clear = CLEAR_ERROR_MODULES + (("numpy.linalg",) if singular else ())
            if isinstance(result, INTERNAL) or not type(result).__module__.startswith(clear):
                raise Mismatch(f"{path}: internal error {type(result).__name__}: {result}") from result
            report[path] = f"error: {type(result).__name__}: {str(result)[:100]}"
            continue
        value, grads = result
        expected = want2 if path.endswith("again") else want
        if not np.isfinite(float(expected[0])):  # JAX's NaN at a singular input: any symgrad value or an error
            report[path] = "ok"
            continue
        if path == "llvm-f32":
            _close(path, "value", value, expected[0], 2e-3, 2e-3 * (1 + abs(float(expected[0]))))
            report[path] = "ok"  # float32 gradients of factorizations near-singular: compared only for errors
            continue
        if singular and path in ("vmap", "jvp"):  # no oracle gradient at singular inputs: the transform's
            base = results["transform"]
            if isinstance(base, Exception):
                report[path] = "ok"
                continue
            known = [np.isfinite(w) for w in want[1]]  # where the gradient exists
            if path == "vmap":
                _close(path, "grad x1[0] vs the transform's", np.where(known[1], grads[0][0], 0.0),
                       np.where(known[1], base[1][1], 0.0), 1e-8, 1e-8)
            elif all(k.all() for k in known):
                total = sum(float(np.sum(g * t)) for g, t in zip(base[1], _tangents(args)))
                _close(path, "tangent vs the transform's gradient", grads[0], total, 1e-6, 1e-6 * (1 + abs(total)))
        elif path == "vmap":
            _close(path, "value[0]", value[0], want[0], rtol, atol)
            _close(path, "value[1]", value[1], jf(args[0], args2[1], *args[2:]), rtol, atol)
            _close(path, "grad x1[0]", grads[0][0], want[1][1], rtol * 10, atol * 10)
            _close(path, "grad x1[1]", grads[0][1], jax.grad(jf, argnums=1)(args[0], args2[1], *args[2:]), rtol * 10,
                   atol * 10)
            _close(path, "vmap of grad", grads[1], per_matrix(*args), rtol * 10, atol * 10)
        elif path == "jvp":
            total = sum(float(np.sum(np.asarray(g) * t)) for g, t in zip(want[1], _tangents(args)))
            _close(path, "tangent", grads[0], total, rtol * 10, atol * 10 * (1 + abs(total)))
        else:
            _close(path, "value", value, expected[0], rtol, atol)
            for n, (g, w) in enumerate(zip(grads, expected[1])):
                known = np.isfinite(w)
                _close(path, f"grad {n}", np.where(known, g, 0.0), np.where(known, w, 0.0), rtol * 10, atol * 10)
        report[path] = "ok"
    return report


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--inputs", choices=["smooth", "singular"], default="smooth")
    parser.add_argument("--show-errors", action="store_true", help="print the programs symgrad refused")
    parser.add_argument("--show", type=int, help="print program SEED and exit")
    options = parser.parse_args(argv)
    if options.show is not None:
        print(generate(options.show)[0])
        return 0
    counts, failures = {}, []
    for seed in range(options.start, options.start + options.count):
        try:
            report = check(seed, options.inputs)
        except Exception as e:  # noqa: BLE001 - a finding: print and go on
            failures.append(seed)
            print(f"--- seed {seed}: {type(e).__name__}: {str(e)[:400]}\n{generate(seed, inputs=options.inputs)[0]}",
                  flush=True)
            if not isinstance(e, Mismatch):
                traceback.print_exc()
            continue
        errors = {outcome for outcome in report.values() if outcome != "ok"}
        if errors and options.show_errors:
            print(f"--- seed {seed}: {sorted(errors)}\n{generate(seed, inputs=options.inputs)[0]}", flush=True)
        for path, outcome in report.items():
            key = outcome if outcome == "ok" else outcome[:70]
            counts.setdefault(path, {}).setdefault(key, 0)
            counts[path][key] += 1
    for path, outcomes in counts.items():
        print(path, dict(sorted(outcomes.items(), key=lambda kv: -kv[1])))
    print("failures:", failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
