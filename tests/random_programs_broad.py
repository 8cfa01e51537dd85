"""A seeded generator of random NumPy-style programs over a broad op set, and the check that runs one through
every symgrad path (the uncompiled transform, sg.compile on LLVM and NumPy twice, vmap, eager backward).

A program is Python source over a namespace `ns` (symgrad, NumPy or jax.numpy) and `L`, the few helpers whose
spelling differs between them (`.at[]`, logsumexp, the loops). Each line is kept only if NumPy runs it to a finite,
modest value, so the program is valid NumPy; its value is NumPy's, its gradient central finite differences in
float64 (and JAX's, where JAX is installed). Run as a script for many more programs than CI's:
    python tests/random_programs_broad.py --count 2000 [--start 0] [--inputs special|ties]
"""
from __future__ import annotations

import argparse
import math
import sys
import traceback

import numpy as np

import symgrad as sg
from symgrad.numpy_api.updates import IndexUpdateHelper

INPUT_SHAPES = {"x0": (3, 4), "x1": (4,), "x2": (), "x3": (2, 3, 4)}
# no -1e300: a sum of 1e300 and -1e300 and a small value depends on the order of its additions
SPECIAL_VALUES = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e300, 1e-310, -1e-310, 0.5, 0.5, 1.0, -1.0])


# NumPy with float32 meaning float64: the program finite differences run, free of float32's rounding
NP64 = type(sys)("numpy64")
NP64.__dict__.update({k: v for k, v in vars(np).items() if not k.startswith("__")}, float32=np.float64)


class NumpyHelpers:
    """L for NumPy: what JAX spells .at[], lax loops and scipy's logsumexp, written with plain NumPy."""

    @staticmethod
    def logsumexp(a, axis=None, keepdims=False):
        m = np.max(a, axis=axis, keepdims=True)
        m = np.where(np.isfinite(m), m, 0.0)
        out = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m
        return out if keepdims else np.squeeze(out, axis=axis)

    @staticmethod
    def at_set(a, index, value):
        out = np.array(a, copy=True)
        out[index] = value
        return out

    @staticmethod
    def at_add(a, index, value):
        out = np.array(a, copy=True)
        np.add.at(out, index, value)
        return out

    @staticmethod
    def fori_loop(lower, upper, body, carry):
        for i in range(lower, upper):
            new = body(i, carry)
            if np.shape(new) != np.shape(carry):
                raise TypeError("carry changed shape")
            carry = new
        return carry

    @staticmethod
    def cond(pred, true_fn, false_fn, *operands):
        return true_fn(*operands) if pred else false_fn(*operands)

    @staticmethod
    def scan(body, carry, xs):
        ys = []
        for x in xs:
            new, y = body(carry, x)
            if np.shape(new) != np.shape(carry):
                raise TypeError("carry changed shape")
            carry = new
            ys.append(y)
        return carry, np.stack(ys)

    @staticmethod
    def while_loop(cond_fn, body, carry):
        while cond_fn(carry):
            carry = body(carry)
        return carry


class LibHelpers:
    """L for symgrad and JAX, which share JAX's spellings."""

    def __init__(self, lax, logsumexp):
        self.lax, self.logsumexp = lax, logsumexp

    def at_set(self, a, index, value):
        return self._at(a)[index].set(value)

    def at_add(self, a, index, value):
        return self._at(a)[index].add(value)

    @staticmethod
    def _at(a):
        """a.at; for a NumPy array (symgrad's value outside a trace: the first call of a function a while_loop
        stack carries) symgrad's updates of it, as a NumPy array has no .at."""
        return a.at if hasattr(a, "at") else IndexUpdateHelper(a)

    def fori_loop(self, *args):
        return self.lax.fori_loop(*args)

    def cond(self, *args):
        return self.lax.cond(*args)

    def scan(self, *args):
        return self.lax.scan(*args)

    def while_loop(self, *args):
        return self.lax.while_loop(*args)


SG_L = LibHelpers(sg, sg.logsumexp)


def jax_libs():
    """(jax, jax.numpy, its L), float64 enabled, or None where JAX is absent."""
    try:
        import jax
        import jax.numpy as jnp
        from jax.scipy.special import logsumexp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    return jax, jnp, LibHelpers(jax.lax, logsumexp)


# ---------------------------------------------------------------- generation

def _axis(rng, ndim, allow_none=True, allow_tuple=True):
    if ndim == 0:
        return None
    choices = ["int", "neg"] + (["none"] if allow_none else []) + (["tuple"] if allow_tuple and ndim > 1 else [])
    kind = choices[rng.integers(len(choices))]
    if kind == "none":
        return None
    if kind == "tuple":
        k = rng.integers(2, ndim + 1)
        return tuple(sorted(int(a) for a in rng.choice(ndim, size=k, replace=False)))
    axis = int(rng.integers(ndim))
    return axis - ndim if kind == "neg" else axis


def _slice(rng, n):
    start = [None, 0, 1, -1, -2, n][rng.integers(6)]
    stop = [None, n, -1, 2, -n - 1][rng.integers(5)]
    step = [None, 1, 2, -1, -2][rng.integers(5)]
    return f"{'' if start is None else start}:{'' if stop is None else stop}{'' if step is None else f':{step}'}"


def _int_list(rng, n, size):
    return "[" + ", ".join(str(int(rng.integers(-n, n))) for _ in range(size)) + "]"


def _unary(rng, a, shape):
    templates = [
        "ns.sin({a})", "ns.tanh({a})", "ns.exp(ns.tanh({a}))", "ns.log1p(ns.abs({a}))", "ns.expm1(ns.tanh({a}))",
        "ns.abs({a})", "ns.sign({a}) * {a}", "ns.floor({a} * 2.0) + {a}", "ns.round({a} * 3.0) / 3.0 + {a}",
        "ns.round({a}, 1) + {a}", "ns.square({a})", "ns.sqrt(ns.abs({a}) + 0.1)", "{a} ** 2", "{a} ** 3",
        "(ns.abs({a}) + 0.5) ** -1.5", "(ns.abs({a}) + 0.5) ** 0.5", "1.0 / (ns.abs({a}) + 0.5) ** 2",
        "ns.power(ns.abs({a}) + 0.5, -2)", "ns.clip({a}, -0.5, 0.7)", "ns.clip({a}, None, 0.3)", "ns.mod({a}, 0.7)",
        "ns.fmod({a}, 0.6)", "ns.remainder({a}, -0.8)", "ns.floor_divide({a}, 0.7) + {a}", "-{a}",
        "ns.reciprocal(ns.abs({a}) + 0.5)", "2.0 ** ns.tanh({a})", "ns.cbrt({a})", "ns.arctan({a})",
        "ns.maximum({a}, 0.0)", "ns.minimum({a}, 0.25)", "ns.where({a} > 0.2, {a}, -0.5 * {a})", "ns.trunc({a}) * {a}",
        "ns.ceil({a}) + {a}", "ns.log(ns.abs({a}) + 0.5)", "ns.sinh(ns.tanh({a}))", "ns.arcsin(ns.tanh({a}) * 0.9)",
        "ns.sinc({a})", "ns.exp2(ns.tanh({a}))", "ns.log2(ns.abs({a}) + 0.5)", "ns.log10(ns.abs({a}) + 0.5)",
        "ns.rint({a} * 2.0) + {a}", "ns.deg2rad({a})", "ns.nan_to_num({a})", "ns.positive({a})",
        "ns.float_power(ns.abs({a}) + 0.5, 1.5)", "ns.cos({a}) ** 2", "ns.arccosh(ns.abs({a}) + 1.5)",
        "ns.sqrt(ns.square({a}) + 1e-3)", "ns.real({a})", "ns.conj({a}) * 2", "ns.isfinite({a}) * {a}",
    ]
    return templates[rng.integers(len(templates))].format(a=a)


def _binary(rng, a, b):
    templates = [
        "{a} + {b}", "{a} - {b}", "{a} * {b}", "{a} / (ns.abs({b}) + 0.5)", "ns.maximum({a}, {b})",
        "ns.minimum({a}, {b})", "ns.arctan2({a}, {b})", "ns.hypot({a}, {b})", "ns.logaddexp({a}, {b})",
        "ns.where({a} > {b}, {a}, {b} * 2.0)", "ns.where({b} > 0, {a}, 0.0)", "{a} * ({b} > 0)",
        "ns.mod({a}, ns.abs({b}) + 0.5)", "ns.power(ns.abs({a}) + 0.5, {b})", "ns.clip({a}, -ns.abs({b}), 1.0)",
        "{a} ** 2 * {b}", "ns.fmax({a}, {b})", "ns.copysign({a}, {b})", "ns.heaviside({a}, 0.5) * {b}",
        "ns.fmin({a}, {b})", "ns.logaddexp2({a}, {b})", "ns.add({a}, {b})", "ns.true_divide({a}, 1.5 + ns.sin({b}))",
        "ns.subtract({b}, {a}) ** 2", "ns.multiply({a}, {a} > {b})", "({a} >= {b}) * 1.0 + {a}",
        "ns.where({a} < {b}, ns.exp({a}), ns.log1p(ns.abs({b})))", "ns.fmod({a}, ns.abs({b}) + 0.5)",
        "ns.floor_divide({a}, ns.abs({b}) + 0.5) * {b}", "{a} % (ns.abs({b}) + 1.0)", "{a} // 0.3 * {b}",
    ]
    return templates[rng.integers(len(templates))].format(a=a, b=b)


def _scalar_mix(rng, a, shape):
    templates = [
        "{a} + 3", "2 * {a} - 1.5", "1.5 - {a}", "{a} / 4", "{a} * True", "{a}.astype(ns.float32) * 2.0",
        "{a}.astype(ns.float32) + {a}", "{a} + np.float32(0.5)", "{a} * np.int32(3)",
        "{a} + np.arange({n}).astype(np.int64)",
        "{a} * ({a} > 0).astype(ns.float32)", "ns.where(({a} * 3).astype(ns.int64) % 2 == 0, {a}, 0.0)",
        "({a} > 0) + {a}", "{a} + ns.sum(({a} > 0).astype(ns.int32))",
    ]
    n = shape[-1] if shape else 1
    return templates[rng.integers(len(templates))].format(a=a, n=n)


def _reduction(rng, a, shape):
    ndim = len(shape)
    axis = _axis(rng, ndim)
    keep = bool(rng.integers(2))
    name = ["sum", "mean", "prod", "max", "min", "var", "std", "logsumexp", "amax", "nansum"][rng.integers(10)]
    if name == "prod":
        return f"ns.prod(ns.tanh({a}) + 1.0, axis={axis}, keepdims={keep})"
    if name in ("var", "std"):
        return f"ns.{name}({a}, axis={axis}, ddof={int(rng.integers(2))}, keepdims={keep})"
    if name == "logsumexp":
        return f"L.logsumexp({a}, axis={axis}, keepdims={keep})"
    return f"ns.{name}({a}, axis={axis}, keepdims={keep})"


def _scan_like(rng, a, b, shape):
    ndim = len(shape)
    if ndim == 0:
        return None
    axis = int(rng.integers(-ndim, ndim))
    templates = [
        "ns.cumsum({a}, axis={k})", "ns.cumprod(ns.tanh({a}) + 1.0, axis={k})",
        "ns.take_along_axis({a}, ns.expand_dims(ns.argmax({b}, axis={k}), {k}), axis={k})",
        "ns.take_along_axis({a}, ns.expand_dims(ns.argmin({a}, axis={k}), {k}), axis={k})",
        "ns.sort({a}, axis={k})", "ns.take_along_axis({a}, ns.argsort({b}, axis={k}), axis={k})",
        "ns.diff({a}, axis={k})", "ns.max({a}, axis={k}) * ns.argmax({a}, axis={k})",
        "ns.median({a}, axis={k})", "ns.cumsum({a}[::-1], axis={k})[::2]", "ns.ptp({a}, axis={k})",
        "ns.nanmean({a}, axis={k})", "ns.average({a}, axis={k}, weights=ns.arange({a}.shape[{k}]) + 1.0)",
        "ns.count_nonzero({a} > 0, axis={k}) * {a}.sum()", "ns.quantile({a}, 0.3, axis={k})",
        "ns.sort({a}, axis={k})[..., ::-1] * 2.0", "ns.cumsum(ns.flip({a}, {k}), axis={k})",
    ]
    return templates[rng.integers(len(templates))].format(a=a, b=b, k=axis)


def _reshape_target(rng, shape):
    size = math.prod(shape)
    divisors = [d for d in range(1, size + 1) if size % d == 0]
    kind = rng.integers(4)
    if kind == 0 or size == 0:
        return "(-1,)"
    d = divisors[rng.integers(len(divisors))]
    if kind == 1:
        return f"({d}, -1)"
    if kind == 2:
        return f"({size // d}, 1, {d})"
    return f"(1, {size})"


def _shape_op(rng, a, b, shape):
    ndim = len(shape)
    k = int(rng.integers(-ndim, ndim)) if ndim else 0
    perm = tuple(int(p) for p in rng.permutation(ndim))
    choices = [
        f"ns.reshape({a}, {_reshape_target(rng, shape)})",
        f"{a}.reshape({_reshape_target(rng, shape)})",
        f"ns.transpose({a}, {perm})" if ndim else None, f"{a}.T",
        f"ns.swapaxes({a}, 0, -1)" if ndim else None,
        f"ns.expand_dims({a}, {int(rng.integers(-ndim - 1, ndim + 1))})",
        f"ns.squeeze({a})",
        f"ns.broadcast_to({a}, (2,) + {shape})",
        f"ns.concatenate([{a}, {b}], axis={k})" if ndim else None,
        f"ns.concatenate([{a}, {a} * 2.0], axis=None)",
        f"ns.stack([{a}, {b}], axis={int(rng.integers(-ndim - 1, ndim + 1))})",
        f"ns.split({a}, 2, axis={k})[{int(rng.integers(2))}]" if ndim else None,
        f"ns.split({a}, [1, 3], axis={k})[{int(rng.integers(3))}]" if ndim else None,
        f"ns.flip({a}, axis={k})" if ndim else f"ns.flip({a})",
        f"ns.flip({a})",
        f"ns.roll({a}, {int(rng.integers(-5, 6))}, axis={k})" if ndim else None,
        f"ns.roll({a}, {int(rng.integers(-5, 6))})",
        f"ns.tile({a}, {tuple(int(r) for r in rng.integers(1, 3, size=rng.integers(1, 3)))})",
        f"ns.repeat({a}, {int(rng.integers(1, 4))}, axis={k})" if ndim else None,
        f"ns.repeat({a}, {int(rng.integers(1, 3))})",
        f"ns.pad({a}, {int(rng.integers(0, 3))})",
        f"ns.pad({a}, {tuple((int(rng.integers(0, 3)), int(rng.integers(0, 3))) for _ in range(ndim))})",
        f"ns.moveaxis({a}, 0, -1)" if ndim else None,
        f"ns.atleast_2d({a})",
        f"{a}.ravel()", f"{a}.flatten()",
    ]
    return choices[rng.integers(len(choices))]


def _index_op(rng, a, b, shape):
    ndim = len(shape)
    if ndim == 0:
        return f"{a}[()]" if rng.integers(2) else f"{a}[None]"
    n0 = shape[0]
    choices = [
        f"{a}[{', '.join(_slice(rng, n) for n in shape[:rng.integers(1, ndim + 1)])}]",
        f"{a}[{int(rng.integers(-n0, n0)) if n0 else 0}]" if n0 else None,
        f"{a}[np.array({_int_list(rng, n0, int(rng.integers(0, 5)))}, dtype=np.int64)]" if n0 else None,
        f"{a}[..., np.array({_int_list(rng, shape[-1], 3)})]" if shape[-1] else None,
        f"{a}[np.array({[bool(v) for v in rng.integers(0, 2, size=n0)]})]",
        f"{a}[{a} > 0.1]" if False else None,  # a data-dependent shape: not traceable, as in JAX
        f"{a}[None, ..., ::-1]",
        f"L.at_set({a}, {int(rng.integers(-n0, n0)) if n0 else 0}, {b} if ns.ndim({b}) == 0 else 0.5)" if n0 else None,
        f"L.at_set({a}, (slice(None, None, 2),), 0.0)",
        f"L.at_add({a}, np.array({_int_list(rng, n0, 3)}), 1.5 * {a}[0])" if n0 else None,
        f"L.at_set({a}, np.array({[bool(v) for v in rng.integers(0, 2, size=n0)]}), 2.0)",
        f"ns.take({a}, np.array({_int_list(rng, max(math.prod(shape), 1), 4)}))" if math.prod(shape) else None,
        f"ns.take({a}, np.array({_int_list(rng, n0, 3)}), axis=0)" if n0 else None,
    ]
    return choices[rng.integers(len(choices))]


def _contraction(rng, a, b, shape_a, shape_b):
    choices = ["{a} @ {b}", "ns.matmul({a}, ns.swapaxes({b}, -1, -2))", "ns.dot({a}, {b})", "ns.outer({a}, {b})",
               "ns.tensordot({a}, {b}, axes=1)", "ns.tensordot({a}, {b}, axes=0)", "ns.inner({a}, {b})",
               "ns.einsum('...i,...i->...', {a}, {b})", "ns.einsum('ij,kj->ik', {a}, {b})",
               "ns.einsum('ij,j->i', {a}, {b})", "ns.einsum('i,i', {a}, {b})", "ns.einsum('ijk->kj', {a})",
               "ns.einsum('ij->', {a})", "ns.einsum('ii->i', {a} @ {a}.T)", "ns.vdot({a}, {b})",
               "ns.tensordot({a}, {b}, axes=([0], [0]))", "ns.trace({a} @ {a}.T)", "{a} @ {a}.T",
               "ns.einsum('bij,jk->bik', {a}, {b})", "ns.einsum('...ij,...jk', {a}, {b})", "{a} @ {b}.T",
               "ns.einsum('ij,ij,i->j', {a}, {a}, {b})", "ns.einsum('i,j->ij', {a}, {b})", "ns.kron({a}, {b})",
               "ns.diagonal({a} @ {b})", "ns.tril({a} @ {b}, -1)", "ns.triu({a}, 1)",
               "ns.cross({a}[..., :3], {b}[..., :3])",
               "ns.linalg.norm({a}, axis=-1)", "ns.linalg.norm({a})", "ns.matmul({a}, {b})[..., ::-1]",
               "({a}.T @ {a})[::2]", "ns.dot({a}[::-1], {b}[:, ::2])"]
    return choices[rng.integers(len(choices))].format(a=a, b=b)


def _control(rng, a, b):
    choices = [
        "L.fori_loop(0, 3, lambda i, c: ns.sin(c) * 0.9 + {b}, {a})",
        "L.fori_loop(0, 4, lambda i, c: c * 0.5 + i, {a})",
        "L.cond(ns.sum({b}) > 0, lambda v: v * 2.0, lambda v: ns.sin(v), {a})",
        "L.cond(ns.sum({a}) > 0.3, lambda v: ns.maximum(v, 0.1), lambda v: -v ** 2, {a})",
        "L.scan(lambda c, x: (ns.tanh(c + x), c * x), {a}[0], {a})[1]",
        "L.scan(lambda c, x: (c * 0.5 + x, ns.sum(c)), {a}[0], {a})[0]",
        "L.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, ns.sin(c[1]) + 0.5 * c[1]), (0, {a}))[1]",
    ]
    return choices[rng.integers(len(choices))].format(a=a, b=b)


def _float_names(env):
    return [k for k, v in env.items() if k[0] in "xv" and np.asarray(v).dtype.kind == "f"]


def _pick(rng, names):
    """A name, the latest ones likelier: chains of ops more often than independent lines."""
    weights = np.arange(1.0, len(names) + 1) ** 2
    return names[rng.choice(len(names), p=weights / weights.sum())]


def _candidate(rng, env):
    floats = _float_names(env)
    a, b = _pick(rng, floats), _pick(rng, floats)
    sa, sb = np.shape(env[a]), np.shape(env[b])
    kind = rng.choice(["unary", "unary", "binary", "binary", "scalar", "reduce", "scan", "shape", "shape", "index",
                       "index", "contract", "control"])
    if kind == "unary":
        return _unary(rng, a, sa)
    if kind == "binary":
        return _binary(rng, a, b)
    if kind == "scalar":
        return _scalar_mix(rng, a, sa)
    if kind == "reduce":
        return _reduction(rng, a, sa)
    if kind == "scan":
        return _scan_like(rng, a, b, sa)
    if kind == "shape":
        return _shape_op(rng, a, b, sa)
    if kind == "index":
        return _index_op(rng, a, b, sa)
    if kind == "contract":
        return _contraction(rng, a, b, sa, sb)
    return _control(rng, a, b)


def _acceptable(value):
    value = np.asarray(value)
    if value.dtype.kind not in "fiub" or value.size > 400 or value.ndim > 4:
        return False
    return value.dtype.kind != "f" or (np.all(np.isfinite(value)) and np.max(np.abs(value), initial=0) < 1e4)


def generate(seed, length=None):
    """(source of def f(x0, x1, x2, x3), weights): a random program whose lines NumPy runs to finite values."""
    rng = np.random.default_rng(seed)
    length = length or int(rng.integers(2, 9))
    inputs = random_inputs(np.random.default_rng(seed + 10 ** 6))
    env = dict(inputs)
    lines = []
    attempts = 0
    while len(lines) < length and attempts < 200:
        attempts += 1
        expr = _candidate(rng, env)
        if expr is None:
            continue
        try:
            with np.errstate(all="ignore"):
                value = eval(expr, {"ns": np, "np": np, "L": NumpyHelpers}, env)
        except Exception:
            continue
        if not _acceptable(value):
            continue
        name = f"v{len(lines)}"
        env[name] = value
        lines.append(f"    {name} = {expr}")
    used = [k for k in env if k.startswith("v") and np.asarray(env[k]).dtype.kind == "f"]
    weights = {k: np.random.default_rng(seed + 7).normal(size=np.shape(env[k])).round(2) for k in used}
    terms = " + ".join(f"ns.sum({k} * W['{k}'])" for k in used) or "ns.sum(x0 * 0.0)"
    source = "def f(x0, x1, x2, x3):\n" + "\n".join(lines) + f"\n    return {terms}\n"
    return source, weights


def random_inputs(rng, kind="smooth"):
    """Uniform values ("smooth"), some replaced by SPECIAL_VALUES ("special"), or a few values repeated ("ties")."""
    if kind == "ties":
        return {name: rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0], size=shape) for name, shape in INPUT_SHAPES.items()}
    inputs = {name: rng.uniform(-1.5, 1.5, shape) for name, shape in INPUT_SHAPES.items()}
    if kind == "special":
        for name, value in inputs.items():
            flat = value.reshape(-1)
            for i in range(flat.size):
                if rng.random() < 0.4:
                    flat[i] = SPECIAL_VALUES[rng.integers(len(SPECIAL_VALUES))]
            inputs[name] = flat.reshape(value.shape)
    return inputs


def build(source, weights, ns, helpers):
    scope = {"ns": ns, "np": np, "L": helpers, "W": weights}
    exec(compile(source, "<random program>", "exec"), scope)
    return scope["f"]


# ---------------------------------------------------------------- checking

ARGNUMS = (0, 1, 2, 3)


def finite_difference_grads(f, args, eps=1e-6):
    out = []
    for n in ARGNUMS:
        x = np.array(args[n], dtype=np.float64)
        g = np.zeros(x.size)
        for i in range(x.size):
            shifted = [np.array(a, dtype=np.float64) for a in args]
            shifted[n].reshape(-1)[i] += eps
            up = f(*shifted)
            shifted[n].reshape(-1)[i] -= 2 * eps
            g[i] = (up - f(*shifted)) / (2 * eps)
        out.append(g.reshape(x.shape))
    return out


class Mismatch(AssertionError):
    pass


def _close(path, what, got, want, rtol, atol):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        raise Mismatch(f"{path} {what}: shape {got.shape} != {want.shape}")
    if not np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True):
        raise Mismatch(f"{path} {what}: {got.ravel()[:8]} != {want.ravel()[:8]} "
                       f"(max abs err {np.nanmax(np.abs(got - want)):.3g})")


def symgrad_paths(source, weights, args, args2):
    """{path: (value, grads)} for every symgrad path; a symgrad error is returned in place of the pair."""
    f = build(source, weights, sg, SG_L)
    vg = sg.value_and_grad(f, argnums=ARGNUMS)
    results = {}

    def attempt(path, thunk):
        try:
            value, grads = thunk()
            results[path] = (np.asarray(value), [np.asarray(g) for g in grads])
        except Mismatch:
            raise
        except Exception as e:  # noqa: BLE001 - classified by the caller
            results[path] = e

    attempt("transform", lambda: vg(*args))
    llvm = sg.compile(vg)
    numpy_backend = sg.compile(vg, backend="numpy")
    attempt("llvm", lambda: llvm(*args))
    attempt("numpy", lambda: numpy_backend(*args))
    again = args2[:2] + [float(args2[2])] + args2[3:]  # the 0-d input as a Python float, as a user may pass it
    attempt("llvm-again", lambda: llvm(*again))
    attempt("numpy-again", lambda: numpy_backend(*again))
    attempt("llvm-f32", lambda: llvm(args[0].astype(np.float32), *args[1:]))  # a retrace: x0 in float32
    forward = sg.compile(f)
    attempt("forward", lambda: (forward(*args), ()))

    def vmapped():
        batched = sg.vmap(vg, in_axes=(0, None, None, None))(np.stack([args[0], args2[0]]), *args[1:])
        return batched[0], batched[1]
    attempt("vmap", vmapped)

    def eager():
        tensors = [sg.tensor(a, requires_grad=True) for a in args]
        out = f(*tensors)
        out.backward()
        return out.detach().numpy(), [np.zeros_like(a) if t.grad is None else t.grad.numpy()
                                      for a, t in zip(args, tensors)]
    attempt("eager", eager)

    tangents = [np.cos(np.arange(np.size(a)) + 1.0).reshape(np.shape(a)) for a in args]

    def forward_mode():  # value and the tangent, the gradient's dot product with it (checked against grads)
        value, tangent = sg.jvp(f, tuple(args), tuple(tangents))
        return value, [tangent]
    attempt("jvp", forward_mode)

    def second_order():  # forward over reverse: the gradient's tangent, and central differences of the gradient
        grad = sg.grad(f, argnums=ARGNUMS)
        _, tangent = sg.jvp(grad, tuple(args), tuple(tangents))
        eps = 1e-5
        up = grad(*[a + eps * t for a, t in zip(args, tangents)])
        down = grad(*[a - eps * t for a, t in zip(args, tangents)])
        return np.zeros(()), [np.asarray(t) for t in tangent] + [(u - d) / (2 * eps) for u, d in zip(up, down)]
    attempt("hvp", second_order)

    def vmapped_axes():  # x1 batched in front, x3 along its axis 1; each example against the transform's own call
        mixed = [args[0], args2[1], args[2], args2[3]]
        batched = sg.vmap(vg, in_axes=(None, 0, None, 1))(args[0], np.stack([args[1], args2[1]]), args[2],
                                                             np.stack([args[3], args2[3]], axis=1))
        expected = [vg(*args), vg(*mixed)]
        got = [batched[0]] + [batched[1][n] for n in (1, 3)]
        want = [np.stack([e[0] for e in expected])] + [np.stack([e[1][n] for e in expected]) for n in (1, 3)]
        return np.zeros(()), got + want
    attempt("vmap-axes", vmapped_axes)
    results["tangents"] = tangents
    return results


# paths whose result is not (value, grads) at the inputs given: checked on their own
SELF_CHECKED = ("forward", "vmap", "tangents", "jvp", "hvp", "llvm-f32", "vmap-axes")
CLEAR_ERROR_MODULES = ("symgrad", "builtins", "numpy.exceptions")  # symgrad's errors, ValueError, AxisError
INTERNAL = (NotImplementedError, KeyError, AssertionError, AttributeError, IndexError, ZeroDivisionError,
            RecursionError, UnboundLocalError, NameError)


def check(seed, inputs="smooth", use_jax=True):
    """Run program `seed` through every path on `inputs` (see random_inputs); returns {path: 'ok' | 'error: ...'},
    raising Mismatch on a wrong number or an internal error. Gradients at special values and ties are compared
    between the paths: no finite differences there, and JAX's conventions differ (abs'(0) is 1, clip's bounds
    pass half), where symgrad follows PyTorch's."""
    special = inputs != "smooth"
    source, weights = generate(seed)
    rng = np.random.default_rng(seed + 2 * 10 ** 6)
    args = [v for v in random_inputs(rng, inputs).values()]
    args2 = [v for v in random_inputs(rng, inputs).values()]
    jax = jax_libs() if use_jax else None
    want_grads = want_grads2 = None
    f32 = "float32" in source
    rtol, atol = (2e-3, 2e-3) if f32 else (1e-6, 1e-7)
    if jax is not None and not special:
        jx, jnp, jl = jax
        try:
            jf = build(source, weights, jnp, jl)
            want_grads = [np.asarray(g) for g in jx.grad(jf, argnums=ARGNUMS)(*args)]
            want_grads2 = [np.asarray(g) for g in jx.grad(jf, argnums=ARGNUMS)(*args2)]
        except Exception:  # noqa: BLE001 - JAX cannot run everything (reverse mode of while_loop): fall back on FD
            want_grads = None
    results = symgrad_paths(source, weights, args, args2)
    try:
        return _compare(results, source, weights, args, args2, want_grads, want_grads2, special, rtol, atol)
    except Mismatch:
        if special or want_grads is None:
            raise
    # JAX's answer differs: it may be JAX's (x * False is +0.0 in JAX, -0.0 in NumPy): finite differences decide
    return _compare(results, source, weights, args, args2, None, None, special, rtol, atol)


def _compare(results, source, weights, args, args2, want_grads, want_grads2, special, rtol, atol):
    reference = build(source, weights, np, NumpyHelpers)
    with np.errstate(all="ignore"):
        want_value, want_value2 = reference(*args), reference(*args2)
    if want_grads is None and not special:
        fd_reference = build(source, weights, NP64, NumpyHelpers)
        with np.errstate(all="ignore"):
            want_grads = finite_difference_grads(fd_reference, args)
            want_grads2 = finite_difference_grads(fd_reference, args2)
        rtol, atol = max(rtol, 1e-5), max(atol, 1e-5)
    report = {}
    tangents = results["tangents"]
    for path, result in results.items():
        if path == "tangents":
            continue
        if path in ("jvp", "hvp", "vmap-axes") and not isinstance(result, Exception):
            if path == "vmap-axes":
                for n, (got, want) in enumerate(zip(result[1][:3], result[1][3:])):
                    _close(path, f"output {n} vs the transform's", got, want, 1e-9, 1e-9 if not special else 1e-300)
            elif not special:
                _check_forward_mode(path, result, want_grads, tangents, "float32" in source)
            report[path] = "ok"
            continue
        if isinstance(result, Exception):
            if isinstance(result, INTERNAL) or not type(result).__module__.startswith(CLEAR_ERROR_MODULES):
                raise Mismatch(f"{path}: internal error {type(result).__name__}: {result}") from result
            report[path] = f"error: {type(result).__name__}: {str(result)[:100]}"
            continue
        value, grads = result
        second = path.endswith("again")
        expected = want_value2 if second else want_value
        if path == "llvm-f32":
            if grads[0].dtype != np.float32:
                raise Mismatch(f"{path}: the float32 input's gradient is {grads[0].dtype}")
            if not special:
                _close(path, "value", value, expected, 1e-3, 1e-3)
                for n, (g, w) in enumerate(zip(grads, want_grads)):
                    _close(path, f"grad {n}", g, w, 1e-2, 1e-2 * (1 + np.max(np.abs(w), initial=0)))
            report[path] = "ok"
            continue
        _close(path, "value", value if path != "vmap" else value[0], expected, rtol, atol if not special else 1e-300)
        if path == "vmap":
            _close(path, "value[1]", value[1], reference(args2[0], *args[1:]), rtol, atol)
        if path == "forward" or (special and want_grads is None):
            report[path] = "ok"
            continue
        wants = want_grads2 if second else want_grads
        for n, (g, w) in enumerate(zip(grads, wants)):
            if path == "vmap" and n == 0:
                g = g[0]
            elif path == "vmap":
                continue
            _close(path, f"grad {n}", g, w, rtol * 10, atol * 10)
        report[path] = "ok"
    if special:  # no oracle gradient at inf/nan: the paths must agree with one another
        base = results.get("transform")
        for path, result in results.items():
            if isinstance(result, Exception) or isinstance(base, Exception) or path in SELF_CHECKED \
                    or path.endswith("again"):
                continue
            for n, (g, w) in enumerate(zip(result[1], base[1])):
                if any(np.isnan(a).any() for a in args):
                    # a NaN input: the graphs' zero cotangents times a NaN partial (an unused scan carry's) are NaN
                    # where eager, which skips them, is finite; compare the rest
                    either = np.isnan(np.asarray(g, dtype=np.float64)) | np.isnan(np.asarray(w, dtype=np.float64))
                    g, w = np.where(either, 0.0, g), np.where(either, 0.0, w)
                _close(path, f"grad {n} vs transform", g, w, 1e-6, 1e-9)
    return report


def _check_forward_mode(path, result, want_grads, tangents, f32):
    """jvp's tangent is the gradient's dot product with the tangents; hvp's equals central differences of grad."""
    rtol = 1e-2 if f32 else 1e-5
    if path == "jvp":
        want = sum(float(np.sum(g * t)) for g, t in zip(want_grads, tangents))
        _close(path, "tangent", result[1][0], want, rtol, rtol * (1 + sum(np.sum(np.abs(g)) for g in want_grads)))
        return
    half, rtol = len(result[1]) // 2, 5e-2 if f32 else 1e-3  # differences of a float32 gradient: its rounding
    for n, (got, want) in enumerate(zip(result[1][:half], result[1][half:])):
        if np.all(np.isfinite(want)):  # a jump (floor, round, mod) inside the differences' step leaves them useless
            _close(path, f"hvp {n}", got, want, rtol, rtol * (1 + np.max(np.abs(want), initial=0)))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--inputs", choices=["smooth", "special", "ties"], default="smooth")
    parser.add_argument("--no-jax", action="store_true")
    parser.add_argument("--show-errors", action="store_true", help="print the programs symgrad refused")
    parser.add_argument("--show", type=int, help="print program SEED and exit")
    options = parser.parse_args(argv)
    if options.show is not None:
        print(generate(options.show)[0])
        return 0
    counts, failures = {}, []
    for seed in range(options.start, options.start + options.count):
        try:
            report = check(seed, options.inputs, not options.no_jax)
        except Exception as e:  # noqa: BLE001 - a finding: print and go on
            failures.append(seed)
            print(f"--- seed {seed}: {type(e).__name__}: {str(e)[:300]}\n{generate(seed)[0]}", flush=True)
            if not isinstance(e, Mismatch):
                traceback.print_exc()
            continue
        errors = {outcome for outcome in report.values() if outcome != "ok"}
        if errors and options.show_errors:
            print(f"--- seed {seed}: {sorted(errors)}\n{generate(seed)[0]}", flush=True)
        for path, outcome in report.items():
            counts.setdefault(path, {}).setdefault(outcome if outcome == "ok" else outcome[:60], 0)
            counts[path][outcome if outcome == "ok" else outcome[:60]] += 1
    for path, outcomes in counts.items():
        print(path, dict(sorted(outcomes.items(), key=lambda kv: -kv[1])))
    print("failures:", failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
