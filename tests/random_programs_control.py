"""A seeded generator of random programs built of structured control flow (fori_loop, scan, while_loop, cond,
switch, nested loops, custom derivatives, checkpoint and vmap inside bodies), and the check that runs one through
symgrad's paths against JAX in float64 (jax.lax's loops are the semantics).

A program is Python source over `ns` (symgrad or jax.numpy) and `L` (sg or jax.lax's loops, plus the few helpers
whose spelling differs). A line is kept only if JAX runs it to a finite, modest value. Gradients are JAX's forward
mode (jacfwd: it differentiates while_loop, which JAX's reverse mode refuses). Paths: the uncompiled transform,
sg.compile on LLVM and NumPy called twice with different values, the compiled forward, the loops unrolled into a
straight-line trace, eager tensors, jvp, hessian, jvp of vjp, vmap of grad with in_axes, has_aux, float32.
Run as a script for many more programs than CI's:
    python tests/random_programs_control.py --count 500 [--start 0]
"""
from __future__ import annotations

import argparse
import sys
import traceback

import numpy as np

import symgrad as sg
from random_programs_broad import CLEAR_ERROR_MODULES, INTERNAL, Mismatch, _close, _pick, _unary, jax_libs

INPUT_SHAPES = {"x0": (3,), "x1": (4, 3), "x2": ()}
ARGNUMS = (0, 1, 2)
# the paths whose value (and, but for "again", gradient) are checked at special values
SPECIAL_PATHS = ("transform", "llvm", "numpy", "llvm-again", "numpy-again", "unrolled", "eager")
SPECIAL_VALUES = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e300])
# refusals that are symgrad's documented limits, left out of --show-errors: NumPy's promotion (a float32 carry plus
# the int64 step index times a float is float64), forward over a while loop's reverse pass
KNOWN_REFUSALS = ("changes the carry", "cannot be differentiated again")

SMOOTH = ["ns.sin({})", "ns.tanh({})", "ns.cos({}) * 0.5", "{} * 0.9", "ns.exp(-ns.square({}))",
          "ns.log1p(ns.square({}))", "ns.sqrt(ns.square({}) + 0.1)", "{} ** 2 * 0.3", "ns.arctan({})",
          "ns.maximum({}, -0.3)", "ns.where({0} > 0.1, {0}, {0} * 0.5)", "ns.minimum({}, 0.4) * 1.1"]


class Helpers:
    """L: the library's loops and transforms, with a custom_vjp and a custom_jvp function defined by it."""

    def __init__(self, lax, ns, custom_vjp, custom_jvp, checkpoint, vmap, checkpoints=None):
        self.lax, self.checkpoint, self.vmap = lax, checkpoint, vmap
        for name in ("fori_loop", "scan", "while_loop", "cond", "switch"):
            setattr(self, name, getattr(lax, name))
        # symgrad's bounded-memory reverse mode of while_loop (JAX has none: the same loop)
        self.while_loop_checkpointed = (lambda *a: lax.while_loop(*a, checkpoints=checkpoints)) if checkpoints \
            else lax.while_loop

        @custom_vjp
        def sinx(x, y):  # sin(x) * y with its true derivative, residuals a tuple
            return ns.sin(x) * y
        sinx.defvjp(lambda x, y: (ns.sin(x) * y, (ns.cos(x), ns.sin(x), y)),
                    lambda res, g: (res[0] * g * res[2], ns.sum(res[1] * g) if ns.ndim(res[2]) == 0 else res[1] * g))
        self.sinx = sinx

        @custom_jvp
        def softplus(x):
            return ns.log1p(ns.exp(-ns.abs(x))) + ns.maximum(x, 0.0)

        @softplus.defjvp
        def _softplus_jvp(primals, tangents):
            (x,), (t,) = primals, tangents
            return softplus(x), t / (1.0 + ns.exp(-x))
        self.softplus = softplus


class Unrolled:
    """L whose loops and branches are Python loops over the library's values: the straight-line trace of the
    same program (a cond on a traced predicate becomes a where over both branches)."""

    def __init__(self, structured, ns):
        self.s, self.ns = structured, ns
        self.sinx, self.softplus, self.checkpoint, self.vmap = (structured.sinx, structured.softplus,
                                                                 structured.checkpoint, structured.vmap)
        self.while_loop_checkpointed = structured.while_loop_checkpointed

    def fori_loop(self, lower, upper, body, carry, **_):
        if not isinstance(upper, int):  # a traced bound: its trip count is data
            return self.s.fori_loop(lower, upper, body, carry)
        for i in range(lower, upper):
            carry = body(np.int64(i), carry)
        return carry

    def scan(self, body, carry, xs=None, length=None, reverse=False, **_):
        leaves, tree = sg.pytree.flatten(xs)
        steps = length if length is not None else int(np.shape(leaves[0])[0])
        ys = [None] * steps
        for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
            carry, ys[t] = body(carry, sg.pytree.unflatten(tree, [leaf[t] for leaf in leaves]) if leaves else None)
        if steps == 0:
            return carry, self.s.scan(body, carry, xs, length=length)[1]
        y_leaves, y_tree = sg.pytree.flatten(ys[0])
        stacked = [self.ns.stack([sg.pytree.flatten(y)[0][k] for y in ys]) for k in range(len(y_leaves))]
        return carry, sg.pytree.unflatten(y_tree, stacked)

    def cond(self, pred, true_fn, false_fn, *operands):
        return self._select([false_fn, true_fn], self.ns.astype(pred, np.int64), operands)

    def switch(self, index, branches, *operands):
        return self._select(branches, self.ns.clip(index, 0, len(branches) - 1), operands)

    def _select(self, branches, index, operands):
        outs = [sg.pytree.flatten(fn(*operands)) for fn in branches]
        leaves = outs[0][0]
        for k in range(1, len(outs)):
            leaves = [self.ns.where(index == k, b, a) for a, b in zip(leaves, outs[k][0])]
        return sg.pytree.unflatten(outs[0][1], leaves)

    def while_loop(self, cond_fn, body, carry):  # left structured: its trip count is data
        return self.s.while_loop(cond_fn, body, carry)


# ---------------------------------------------------------------- generation

def _u(rng, a):
    """A smooth op of a, or (one time in four) any of random_programs_broad's unary ops, kinks and jumps included."""
    if rng.random() < 0.25:
        return _unary(rng, a, None)
    return SMOOTH[rng.integers(len(SMOOTH))].format(a)


def _term(rng, a, s):
    """A closure term over the outer value `a` (broadcastable to anything) or the Python constant s."""
    return [f"ns.mean({a})", f"ns.sum(ns.sin({a})) * 0.1", f"{s}", f"ns.max({a}) * 0.2", "0.25"][rng.integers(5)]


def _steps(rng):
    return int([0, 1, 1, 2, 3, 4][rng.integers(6)])


def _loop(rng, c, a, xs):
    """A loop or branch over carry c, closing over a, scanning over xs (ndim >= 1)."""
    u1, u2, u3 = _u(rng, "c"), _u(rng, "u"), _u(rng, "d")
    t, n, lo = _term(rng, a, round(float(rng.uniform(-1, 1)), 2)), _steps(rng), int(rng.integers(-1, 2))
    rev, unroll = bool(rng.integers(2)), [1, 2, True][rng.integers(3)]
    k = round(float(rng.uniform(-0.5, 0.5)), 2)
    choices = [
        f"L.fori_loop({lo}, {lo + n}, lambda i, c: {u1} * 0.7 + {t} + i * {k}, {c}, unroll={unroll})",
        f"L.fori_loop(0, {n}, lambda i, c: c + ns.sin(c * i) * 0.1 + (i % 2) * {k}, {c})",
        f"L.fori_loop(0, {n}, lambda i, c: ns.where(i % 2 == 0, {u1}, c * (1.0 + i / 10)), {c})",
        f"L.fori_loop(0, {n}, lambda i, c: (c[0] * 0.8 + ns.mean(ns.sin(c[1])) * 0.1, {u3.replace('d', 'c[1]')} "
        f"+ ns.mean(c[0]) * {k}), ({c}, {a}))[{int(rng.integers(2))}]",
        f"L.fori_loop(0, {n}, lambda i, c: {{'p': c['p'] * {k} + ns.tanh(c['q']), "
        f"'q': c['q'] * 0.9 + ns.mean(c['p'])}}, {{'p': {c}, 'q': {a}}})['{'pq'[rng.integers(2)]}']",
        f"L.fori_loop(0, (ns.sum({a} > 0) % 3).astype(ns.int32), lambda i, c: {u1} + {t}, {c})",
        f"L.fori_loop(0, {n}, lambda i, c: L.fori_loop(0, {_steps(rng)}, lambda j, d: {u3} * 0.9 + ns.sin(c) * 0.1 "
        f"+ (i * j) * 0.05, c), {c})",
        f"L.fori_loop(0, {n}, lambda i, c: L.cond(i % 2 == 0, lambda u: {u2}, lambda u: u * {k} + {t}, c), {c})",
        f"L.fori_loop(0, {n}, lambda i, c: L.sinx(c, {a}) * 0.5 + c * 0.5, {c})",
        f"L.fori_loop(0, {n}, lambda i, c: L.softplus(c) - 0.6 + {t}, {c})",
        f"L.fori_loop(0, {n}, lambda i, c: L.checkpoint(lambda u: {u2.replace('u', _u(rng, 'u'))})(c), {c})",
        f"L.fori_loop(0, {n}, lambda i, c: L.vmap(lambda u: {u2} + ns.sum(u) * 0.1)(c), {c})",
        f"L.scan(lambda c, x: ({u1} * 0.5 + x * {k}, c * x), {xs}[0], {xs}, reverse={rev}, unroll={unroll})"
        f"[{int(rng.integers(2))}]",
        f"L.scan(lambda c, x: (c * 0.9 + ns.sum(x) * {k}, ns.sin(x) * c), {c}, {xs}[:{n}], reverse={rev})"
        f"[{int(rng.integers(2))}]",
        f"L.scan(lambda c, _: ({u1} + {t}, ns.sum(c)), {c}, None, length={n}, reverse={rev})[{int(rng.integers(2))}]",
        f"L.scan(lambda c, x: ({{'a': c['a'] * 0.9 + x, 'b': c['b'] + ns.sum(c['a'] * x)}}, c['a']), "
        f"{{'a': {xs}[0] * 0.0, 'b': ns.mean({c})}}, {xs}, reverse={rev})[0]['{'ab'[rng.integers(2)]}']",
        f"L.scan(lambda c, xy: (c + xy[0] * xy[1] * {k}, {u1}), {c}, ({xs}, ns.tanh({xs})), reverse={rev})"
        f"[{int(rng.integers(2))}]",
        f"L.scan(lambda c, x: (L.fori_loop(0, {_steps(rng)}, lambda j, d: {u3} + x * 0.1, c), ns.sum(c)), "
        f"{xs}[0] * 0.5, {xs}, reverse={rev})[{int(rng.integers(2))}]",
        f"L.scan(lambda c, x: (c * x[0] + x[1], c), ns.zeros(()) + {k}, {xs}.reshape(-1)[:{2 * n}].reshape({n}, 2),"
        f" reverse={rev})[{int(rng.integers(2))}]",
        f"L.while_loop(lambda c: c[0] < {n}, lambda c: (c[0] + 1, {u1.replace('c', 'c[1]')} * 0.8 + {t}), "
        f"(0, {c}))[1]",
        f"L.while_loop(lambda c: (ns.sum(ns.abs(c[1])) > 0.3) & (c[0] < 6), lambda c: (c[0] + 1, c[1] * 0.6), "
        f"(0, {c}))[1]",
        f"L.while_loop(lambda c: c[0] < {n}, lambda c: (c[0] + 1, c[1] * ns.cos(c[0] * 1.0) + {t}), "
        f"(0.0, {c}))[1]",
        f"L.cond(ns.sum({a}) > 0, lambda u, w: {u2} * ns.mean(w), lambda u, w: {u2.replace('u', 'w')} + ns.mean(u), "
        f"{c}, {a})",
        f"L.switch((ns.sum({a} > 0)).astype(ns.int32) - 1, [lambda u: {u2}, lambda u: u * {k}, "
        f"lambda u: {_u(rng, 'u')} + {t}], {c})",
        f"L.cond({c}.sum() > {k}, lambda: ns.sin({c}) * 2.0, lambda: {u1.replace('c', c)})",
        f"L.vmap(lambda r: L.fori_loop(0, {n}, lambda i, c: {u1} + r * {k}, r))({c})",
        f"L.vmap(lambda r: L.scan(lambda c, x: (c * 0.5 + x, c), r[0], r, reverse={rev})[1])({c})",
        f"L.fori_loop(0, {n}, lambda i, c: c * {k} + {a}.reshape(-1)[(i * 2 + 1) % {a}.size] * ns.sin(c), {c})",
        f"L.fori_loop(0, {n}, lambda i, c: c.at[i % c.shape[0]].set(c[(i + 1) % c.shape[0]] * {k} + {u1}[0]), {c})",
        f"L.fori_loop(0, {n}, lambda i, c: ns.tanh(c @ ({a}.T @ {a}) * 0.2 + c * {k}), {c})",
        f"L.scan(lambda c, x: (ns.tanh(c @ {a} * 0.3 + x), ns.sum(c * x)), {xs}[0], {xs}, reverse={rev})"
        f"[{int(rng.integers(2))}]",
        f"L.while_loop_checkpointed(lambda c: c[0] < {n + 2}, lambda c: (c[0] + 1, {u1.replace('c', 'c[1]')} * 0.9 "
        f"+ {t}), (0, {c}))[1]",
        f"L.fori_loop(0, {n}, lambda i, c: L.while_loop(lambda d: d[0] < i, lambda d: (d[0] + 1, d[1] * 0.8 + {t}), "
        f"(0, c))[1], {c})",
        f"L.scan(lambda c, x: (c + x, L.switch(x.astype(ns.int32) % 3, [lambda u: u * 2.0, lambda u: {u2}, "
        f"lambda u: -u], c)), {c}, ns.arange({n}) * 1.0, reverse={rev})[{int(rng.integers(2))}]",
    ]
    return choices[rng.integers(len(choices))]


def _acceptable(value):
    value = np.asarray(value)
    if value.dtype.kind not in "fiub" or value.size > 200 or value.ndim > 3:
        return False
    return value.dtype.kind != "f" or (np.all(np.isfinite(value)) and np.max(np.abs(value), initial=0) < 1e4)


def generate(seed, jax_scope, length=None):
    """(source of def f(x0, x1, x2), weights): a random program whose lines JAX runs to finite values."""
    rng = np.random.default_rng(seed)
    length = length or int(rng.integers(1, 5))
    env = {k: np.asarray(v) for k, v in random_inputs(np.random.default_rng(seed + 10 ** 6)).items()}
    lines, attempts = [], 0
    while len(lines) < length and attempts < 100:
        attempts += 1
        floats = [k for k, v in env.items() if np.asarray(v).dtype.kind == "f"]
        c, a = _pick(rng, floats), _pick(rng, floats)
        matrices = [k for k in floats if np.ndim(env[k]) >= 1]
        expr = _loop(rng, c, a, _pick(rng, matrices))
        try:
            value = eval(expr, dict(jax_scope), env)
        except Exception:  # noqa: BLE001 - not a valid program: try another line
            continue
        if not _acceptable(value):
            continue
        env[f"v{len(lines)}"] = np.asarray(value)
        lines.append(f"    v{len(lines)} = {expr}")
    used = [k for k in env if k.startswith("v") and env[k].dtype.kind == "f"]
    weights = {k: np.random.default_rng(seed + 7).normal(size=np.shape(env[k])).round(2) for k in used}
    terms = " + ".join(f"ns.sum({k} * W['{k}'])" for k in used) or "ns.sum(x0 * 0.0)"
    return "def f(x0, x1, x2):\n" + "\n".join(lines) + f"\n    return {terms}\n", weights


def random_inputs(rng):
    return {name: rng.uniform(-1.2, 1.2, shape) for name, shape in INPUT_SHAPES.items()}


def build(source, weights, ns, helpers):
    scope = {"ns": ns, "np": np, "L": helpers, "W": weights}
    exec(compile(source, "<random control program>", "exec"), scope)
    return scope["f"]


def libraries():
    """(jax, its scope, symgrad's scope): the names a program's lines see for each library."""
    jax, jnp, _ = jax_libs()
    jl = Helpers(jax.lax, jnp, jax.custom_vjp, jax.custom_jvp, jax.checkpoint, jax.vmap)
    sl = Helpers(sg, sg, sg.custom_vjp, sg.custom_jvp, sg.checkpoint, sg.vmap, checkpoints=2)
    return jax, {"ns": jnp, "np": np, "L": jl}, {"ns": sg, "np": np, "L": sl}


# ---------------------------------------------------------------- checking

def symgrad_paths(f, unrolled, args, args2, tangents):
    """{path: result} for every symgrad path; a symgrad error in place of a result."""
    vg = sg.value_and_grad(f, argnums=ARGNUMS)
    results = {}

    def attempt(path, thunk):
        try:
            results[path] = thunk()
        except Exception as e:  # noqa: BLE001 - classified by the caller
            results[path] = e

    attempt("transform", lambda: vg(*args))
    llvm, numpy_backend = sg.compile(vg), sg.compile(vg, backend="numpy")
    attempt("llvm", lambda: llvm(*args))
    attempt("numpy", lambda: numpy_backend(*args))
    attempt("llvm-again", lambda: llvm(*args2[:2], float(args2[2])))
    attempt("numpy-again", lambda: numpy_backend(*args2))
    attempt("forward", lambda: (sg.compile(f)(*args), None))
    attempt("unrolled", lambda: sg.compile(sg.value_and_grad(unrolled, argnums=ARGNUMS))(*args))
    attempt("llvm-f32", lambda: llvm(*[a.astype(np.float32) for a in args]))

    def eager():
        tensors = [sg.tensor(a, requires_grad=True) for a in args]
        out = f(*tensors)
        out.backward()
        return out.detach().numpy(), [np.zeros_like(a) if t.grad is None else t.grad.numpy()
                                      for a, t in zip(args, tensors)]
    attempt("eager", eager)
    attempt("jvp", lambda: sg.jvp(f, tuple(args), tuple(tangents)))
    attempt("hessian", lambda: (None, sg.hessian(f, argnums=0)(*args)))
    attempt("jvp-of-vjp", lambda: sg.jvp(lambda *a: sg.vjp(f, *a)[1](1.0), tuple(args), tuple(tangents)))
    attempt("vmap-grad", lambda: (None, sg.vmap(sg.grad(f, argnums=(0, 1)), in_axes=(None, 1, None), out_axes=(0, 2))(
        args[0], np.stack([args[1], args2[1]], axis=1), args[2])))
    attempt("has_aux", lambda: sg.compile(sg.value_and_grad(lambda *a: (f(*a), {"twice": 2.0 * f(*a)}),
                                                             argnums=(0, 2), has_aux=True))(*args))
    return results


def jax_oracle(jax, jf, args, args2, tangents):
    """What each path must give, from JAX in float64 (forward mode: it differentiates while_loop)."""
    grads = jax.jacfwd(jf, argnums=ARGNUMS)
    value_and_grads = jax.jit(lambda *a: (jf(*a), grads(*a)))  # jitted: a loop's body is compiled once
    (value, g), (value2, g2) = value_and_grads(*args), value_and_grads(*args2)
    _, tangent = jax.jit(lambda a, t: jax.jvp(jf, a, t))(tuple(args), tuple(tangents))
    hess = jax.jit(jax.jacfwd(jax.jacfwd(jf)))(*args)
    _, grad_tangent = jax.jit(lambda a, t: jax.jvp(grads, a, t))(tuple(args), tuple(tangents))
    mixed = jax.jit(jax.jacfwd(jf, argnums=(0, 1)))(args[0], args2[1], args[2])
    want = {"transform": (value, g), "forward": (value, None), "unrolled": (value, g), "eager": (value, g),
            "llvm": (value, g), "numpy": (value, g), "llvm-again": (value2, g2), "numpy-again": (value2, g2),
            "llvm-f32": (value, g), "jvp": (value, tangent), "hessian": (None, hess),
            "jvp-of-vjp": (g, grad_tangent),
            "vmap-grad": (None, (np.stack([g[0], mixed[0]]), np.stack([g[1], mixed[1]], axis=2))),
            "has_aux": ((value, {"twice": 2.0 * value}), (g[0], g[2]))}
    return jax.tree_util.tree_map(lambda v: None if v is None else np.asarray(v), want, is_leaf=lambda v: v is None)


def with_special_values(rng, args):
    """args with about a third of their elements replaced by 0, -0, inf, -inf, nan or 1e300."""
    out = []
    for a in args:
        a = np.array(a, dtype=np.float64)
        flat = a.reshape(-1)
        chosen = rng.random(flat.size) < 0.35
        flat[chosen] = rng.choice(SPECIAL_VALUES, size=int(chosen.sum()))
        out.append(a)
    return out


def check(seed, libs=None, special=False):
    """Run program `seed` through every path; returns {path: 'ok' | 'error: ...'}, raising Mismatch on a wrong
    number or an internal error. With `special` inputs (inf, nan...) values are JAX's and each path's gradient
    the uncompiled transform's (JAX's forward mode spreads a NaN to every entry of a Jacobian)."""
    jax, jax_scope, sg_scope = libs or libraries()
    source, weights = generate(seed, jax_scope)
    rng = np.random.default_rng(seed + 2 * 10 ** 6)
    args, args2 = list(random_inputs(rng).values()), list(random_inputs(rng).values())
    if special:
        args, args2 = with_special_values(rng, args), with_special_values(rng, args2)
    tangents = [np.cos(np.arange(np.size(a)) + 1.0).reshape(np.shape(a)) for a in args]
    jf = build(source, weights, jax_scope["ns"], jax_scope["L"])
    want = jax_oracle(jax, jf, args, args2, tangents)
    f = build(source, weights, sg, sg_scope["L"])
    unrolled = build(source, weights, sg, Unrolled(sg_scope["L"], sg))
    results = symgrad_paths(f, unrolled, args, args2, tangents)
    report = {}
    for path, result in results.items():
        if isinstance(result, Exception):
            if isinstance(result, INTERNAL) or not type(result).__module__.startswith(CLEAR_ERROR_MODULES):
                raise Mismatch(f"{path}: internal error {type(result).__name__}: {result}") from result
            report[path] = f"error: {type(result).__name__}: {str(result)[:100]}"
            continue
        tol = 2e-3 if path == "llvm-f32" else 1e-7
        got_leaves = jax.tree_util.tree_leaves(result)
        want_leaves = jax.tree_util.tree_leaves(want[path])
        if special:
            if path not in SPECIAL_PATHS:
                continue
            # the rolled paths against the transform, eager (its loops run in Python) against the unrolled program:
            # their gradients may differ there, in JAX too (a rolled step's zero cotangent times a NaN partial is NaN)
            base = "unrolled" if path == "eager" else "transform"
            base = [] if path.endswith("again") or path == "unrolled" or isinstance(results[base], Exception) \
                else jax.tree_util.tree_leaves(results[base])[1:]
            got_leaves, want_leaves = got_leaves[:1 + len(base)], want_leaves[:1] + base
        if len(got_leaves) != len(want_leaves):
            raise Mismatch(f"{path}: {len(got_leaves)} leaves, JAX {len(want_leaves)}")
        for n, (got, w) in enumerate(zip(got_leaves, want_leaves)):
            if path == "llvm-f32" and n > 0 and np.asarray(got).dtype != np.float32:  # the value: W is float64
                raise Mismatch(f"{path}: leaf {n} is {np.asarray(got).dtype}")
            w = np.asarray(w)
            _close(path, f"leaf {n}", got, w, tol, tol * (1 + np.max(np.abs(w[np.isfinite(w)]), initial=0)))
        report[path] = "ok"
    return report


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--special", action="store_true", help="inputs with inf, nan, 0 and 1e300")
    parser.add_argument("--show-errors", action="store_true", help="print the programs symgrad refused")
    parser.add_argument("--show", type=int, help="print program SEED and exit")
    options = parser.parse_args(argv)
    libs = libraries()
    if options.show is not None:
        print(generate(options.show, libs[1])[0])
        return 0
    counts, failures = {}, []
    for seed in range(options.start, options.start + options.count):
        try:
            report = check(seed, libs, options.special)
        except Exception as e:  # noqa: BLE001 - a finding: print and go on
            failures.append(seed)
            print(f"--- seed {seed}: {type(e).__name__}: {str(e)[:300]}\n{generate(seed, libs[1])[0]}", flush=True)
            if not isinstance(e, Mismatch):
                traceback.print_exc()
            continue
        print(f"seed {seed}: {sum(outcome == 'ok' for outcome in report.values())} paths ok", flush=True)
        errors = {outcome for outcome in report.values() if outcome != "ok" and not any(
            known in outcome for known in KNOWN_REFUSALS)}
        if errors and options.show_errors:
            print(f"--- seed {seed}: {sorted(errors)}\n{generate(seed, libs[1])[0]}", flush=True)
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
