"""A seeded generator of random stacks of transforms (grad, value_and_grad with has_aux, jacfwd, jacrev, hessian,
vmap with in_axes/out_axes and empty batches, jvp, vjp, linearize, checkpoint, compile, custom_vjp/custom_jvp
wrappers with nondiff_argnums) over the random programs of random_programs_control.py (loops, branches, custom
derivatives) and random_programs_broad.py (a broad op set), their arguments and outputs flat or pytrees; and the
check that runs one through symgrad (uncompiled, sg.compile on LLVM and NumPy, called twice) against the same
stack in JAX, float64. A transform is a record (kind, seed): its arguments (argnums, axes, tangents) are drawn from
its own seed against the shapes it meets, so a stack stays valid when --minimize drops some of its transforms.
    python tests/random_programs_transforms.py --count 300 [--start 0] [--special] [--minimize]
"""
from __future__ import annotations

import argparse
import re
import sys
import traceback

import numpy as np

import symgrad as sg
import random_programs_broad as broad
import random_programs_control as control
from random_programs_broad import CLEAR_ERROR_MODULES, INTERNAL, Mismatch

KINDS = ("grad", "value_and_grad", "jacfwd", "jacrev", "hessian", "vmap", "vmap", "jvp", "vjp", "linearize",
         "checkpoint", "compile", "static", "custom_vjp", "custom_jvp", "scan", "fori_loop", "while_loop", "cond")
# edge inputs: "zeros" are compared with JAX (where every program is defined); at "nonfinite" ones (inf, nan) each
# path is compared with the uncompiled transform, since NaN's spread differs (JAX's symbolic zeros stop it)
SPECIAL_VALUES = {"zeros": np.array([0.0, -0.0]), "nonfinite": np.array([0.0, -0.0, np.inf, -np.inf, np.nan])}
RTOL = 1e-10
# symgrad's documented limits: outside any transform (a stack whose last layer is custom_vjp, custom_jvp or
# checkpoint) a program runs on NumPy arrays, which have no JAX-style `.at` (README: traced values and tensors do)
KNOWN_REFUSALS = ("object has no attribute 'at'",)


class Lib:
    """The names a transform stack uses, for symgrad or JAX."""

    def __init__(self, name, mod, ns, lax, compile_fn):
        self.name, self.mod, self.ns, self.compile = name, mod, ns, compile_fn
        for attr in ("grad", "value_and_grad", "jacfwd", "jacrev", "hessian", "vmap", "jvp", "vjp", "linearize",
                     "checkpoint", "custom_vjp", "custom_jvp"):
            setattr(self, attr, getattr(mod, attr))
        for attr in ("scan", "fori_loop", "while_loop", "cond"):
            setattr(self, attr, getattr(lax, attr))
        self.tree_map = mod.tree_util.tree_map


def libraries():
    """(jax, JAX's Lib, symgrad's Lib, the control programs' scopes)."""
    jax, jax_scope, sg_scope = control.libraries()
    return (jax, Lib("jax", jax, jax.numpy, jax.lax, jax.jit), Lib("sg", sg, sg, sg, sg.compile),
            (jax_scope, sg_scope))


# ---------------------------------------------------------------- programs

def program(seed, scopes):
    """(source, weights, ns/L builder per library, argument names): program `seed`, from one of the generators."""
    jax_scope, sg_scope = scopes
    if seed % 3 == 2:
        source, weights = broad.generate(seed)
        names = list(broad.INPUT_SHAPES)
        helpers = {"jax": broad.jax_libs()[2], "sg": broad.SG_L}
    else:
        source, weights = control.generate(seed, jax_scope)
        names = list(control.INPUT_SHAPES)
        helpers = {"jax": jax_scope["L"], "sg": sg_scope["L"]}
    return source, weights, helpers, names


def base_inputs(seed, names):
    rng = np.random.default_rng(seed + 3 * 10 ** 6)
    shapes = broad.INPUT_SHAPES if "x3" in names else control.INPUT_SHAPES
    return [rng.uniform(-1.2, 1.2, shapes[n]) for n in names]


def with_tree_output(source):
    """The program returning {"s": its scalar, "v": (its last float lines)}: a pytree output."""
    body, ret = source.rstrip("\n").rsplit("\n", 1)
    names = re.findall(r"ns\.sum\((v\d+) \* W", ret)[-2:] or ["x0 * 1.0"]
    return f"{body}\n    return {{'s': {ret.strip()[len('return '):]}, 'v': ({', '.join(names)},)}}\n"


def tree_arguments(fn, count):
    """fn(x0, x1, ..) taking (p, last) with p = {'a': x0, 'b': [x1, ..]}: a pytree argument."""
    def packed(p, last):
        return fn(p["a"], *p["b"], last)
    return packed, lambda args: [{"a": args[0], "b": list(args[1:count - 1])}, args[count - 1]]


# ---------------------------------------------------------------- transforms

def _weights(shape, k):
    return np.cos(np.arange(int(np.prod(shape, dtype=np.int64))) * 0.7 + k).reshape(shape)


def _scalarize(lib, fn, jax):
    """fn with its float output leaves reduced to one scalar, nonlinearly (second derivatives stay nonzero)."""
    def scalar(*args):
        leaves = [leaf for leaf in jax.tree_util.tree_leaves(fn(*args)) if np.dtype(leaf.dtype).kind == "f"]
        return sum(lib.ns.sum(leaf * _weights(np.shape(leaf), k)) + 0.1 * lib.ns.sum(lib.ns.sin(leaf))
                   for k, leaf in enumerate(leaves))
    return scalar


def _argnums(rng, count):
    if rng.random() < 0.4:
        return int(rng.integers(count))
    k = int(rng.integers(1, count + 1))
    return tuple(sorted(int(a) for a in rng.choice(count, size=k, replace=False)))


def _tree_like(jax, spec, k0):
    leaves, tree = jax.tree_util.tree_flatten(spec)
    return jax.tree_util.tree_unflatten(tree, [_weights(leaf.shape, k0 + k) for k, leaf in enumerate(leaves)])


def _axes_for(rng, jax, arg_spec, mapped):
    """An in_axes entry for one argument: None, one axis for all its leaves, or one per leaf."""
    leaves, tree = jax.tree_util.tree_flatten(arg_spec)
    if not mapped:
        return None
    if len(leaves) == 1 or rng.random() < 0.5:
        low = min(len(leaf.shape) for leaf in leaves)
        return int(rng.integers(-low - 1, low + 1))
    axes = [int(rng.integers(-len(leaf.shape) - 1, len(leaf.shape) + 1)) if rng.random() < 0.7 else None
            for leaf in leaves]
    if all(a is None for a in axes):
        axes[0] = 0
    return jax.tree_util.tree_unflatten(tree, axes)


def _batched(jax, spec, axes, size):
    """The argument shapes once vmap maps `axes` (a pytree prefix of spec) with batch `size`."""
    def insert(leaf, axis):
        if axis is None:
            return leaf
        shape = list(leaf.shape)
        shape.insert(axis if axis >= 0 else len(shape) + 1 + axis, size)
        return jax.ShapeDtypeStruct(tuple(shape), leaf.dtype)

    def per_arg(arg, axis):
        if axis is None or isinstance(axis, int):
            return jax.tree_util.tree_map(lambda leaf: insert(leaf, axis), arg)
        return jax.tree_util.tree_map(insert, arg, axis)
    return [per_arg(a, ax) for a, ax in zip(spec, axes)]


def apply(kind, seed, libs, fns, spec, jax):
    """(the transformed fns per library, the new argument spec, text): transform `kind` drawn from `seed`."""
    rng = np.random.default_rng(seed)
    count = len(spec)
    out = jax.eval_shape(fns["jax"], *spec)
    scalar_out = jax.tree_util.treedef_is_leaf(jax.tree_util.tree_structure(out)) and out.shape == ()
    if kind in ("grad", "value_and_grad", "hessian") and not scalar_out:
        fns = {name: _scalarize(libs[name], fn, jax) for name, fn in fns.items()}
    if kind in ("grad", "value_and_grad", "jacfwd", "jacrev", "hessian"):
        argnums = _argnums(rng, count)
        has_aux = kind in ("grad", "value_and_grad") and rng.random() < 0.4
        if has_aux:
            fns = {name: (lambda fn: lambda *a: (lambda v: (v, {"twice": 2.0 * v, "list": [v * v]}))(fn(*a)))(fn)
                   for name, fn in fns.items()}
        options = {"argnums": argnums, **({"has_aux": True} if has_aux else {})}
        return {n: getattr(libs[n], kind)(fn, **options) for n, fn in fns.items()}, spec, f"{kind}({options})"
    if kind == "vmap":
        size = int([0, 1, 2, 3, 3][rng.integers(5)])
        mapped = rng.random(count) < 0.6
        mapped[rng.integers(count)] = True
        in_axes = tuple(_axes_for(rng, jax, arg, m) for arg, m in zip(spec, mapped))
        out_leaves, out_tree = jax.tree_util.tree_flatten(out)
        if rng.random() < 0.5:
            out_axes = 0
        else:
            out_axes = jax.tree_util.tree_unflatten(out_tree, [int(rng.integers(-len(leaf.shape) - 1,
                                                                                len(leaf.shape) + 1))
                                                               for leaf in out_leaves])
        fns = {n: libs[n].vmap(fn, in_axes=in_axes, out_axes=out_axes) for n, fn in fns.items()}
        return fns, _batched(jax, spec, in_axes, size), f"vmap(in_axes={in_axes}, out_axes={out_axes}) size {size}"
    if kind == "jvp":
        tangents = tuple(_tree_like(jax, arg, 10 * k) for k, arg in enumerate(spec))
        return ({n: (lambda lib, fn: lambda *a: lib.jvp(fn, a, tangents))(libs[n], fn) for n, fn in fns.items()},
                spec, "jvp")
    if kind == "linearize":
        tangents = tuple(_tree_like(jax, arg, 10 * k) for k, arg in enumerate(spec))
        return ({n: (lambda lib, fn: lambda *a: lib.linearize(fn, *a)[1](*tangents))(libs[n], fn)
                 for n, fn in fns.items()}, spec, "linearize")
    if kind == "vjp":
        ct = _tree_like(jax, out, 3)
        return ({n: (lambda lib, fn: lambda *a: (lambda pair: (pair[0], pair[1](ct)))(lib.vjp(fn, *a)))(libs[n], fn)
                 for n, fn in fns.items()}, spec, "vjp")
    if kind == "checkpoint":
        return {n: libs[n].checkpoint(fn) for n, fn in fns.items()}, spec, "checkpoint"
    if kind == "compile":
        backend = ["llvm", "numpy"][rng.integers(2)]
        return ({"jax": libs["jax"].compile(fns["jax"]), "sg": sg.compile(fns["sg"], backend=backend)}, spec,
                f"compile(backend={backend})")
    if kind == "static":
        backend = ["llvm", "numpy"][rng.integers(2)]
        scale = int(rng.integers(-2, 3))
        scaled = {n: (lambda lib, fn: lambda *a: lib.tree_map(lambda o: o * a[-1], fn(*a[:-1])))(libs[n], fn)
                  for n, fn in fns.items()}
        compiled = {"jax": libs["jax"].compile(scaled["jax"], static_argnums=count),
                    "sg": sg.compile(scaled["sg"], static_argnums=count, backend=backend)}
        return ({n: (lambda fn: lambda *a: fn(*a, scale))(fn) for n, fn in compiled.items()}, spec,
                f"compile(static_argnums={count}, backend={backend}) with {scale}")
    if kind in ("scan", "fori_loop", "while_loop", "cond"):
        return {n: _in_control_flow(kind, libs[n], fn) for n, fn in fns.items()}, spec, f"inside {kind}"
    if kind == "custom_vjp":
        return {n: _custom_vjp(libs[n], fn, count) for n, fn in fns.items()}, spec, "custom_vjp(nondiff_argnums=(0,))"
    return {n: _custom_jvp(libs[n], fn) for n, fn in fns.items()}, spec, "custom_jvp"


def _in_control_flow(kind, lib, fn):
    """fn called inside a loop or branch on the loop's carry (its arguments, shrunk at each step)."""
    def shrink(args):
        return lib.tree_map(lambda a: a * 0.9, args)

    def add(total, args):
        return lib.tree_map(lambda t, o: t + o, total, fn(*args))

    if kind == "scan":
        return lambda *a: lib.scan(lambda c, _: (shrink(c), fn(*c)), a, None, length=2)[1]
    if kind == "fori_loop":
        return lambda *a: lib.fori_loop(0, 2, lambda i, c: (shrink(c[0]), add(c[1], c[0])), (a, fn(*a)))[1]
    if kind == "while_loop":
        return lambda *a: lib.while_loop(lambda c: c[0] < 2, lambda c: (c[0] + 1, shrink(c[1]), add(c[2], c[1])),
                                         (0, a, fn(*a)))[2]
    first = lambda a: lib.ns.sum(lib.mod.tree_util.tree_leaves(a)[0])  # noqa: E731
    return lambda *a: lib.cond(first(a) > 0, lambda b: fn(*b), lambda b: lib.tree_map(lambda o: -o, fn(*shrink(b))),
                               a)


def _custom_vjp(lib, fn, count):
    """fn as a custom_vjp function whose rule is fn's own vjp, with a Python scale among nondiff_argnums."""
    def f(scale, *args):
        return fn(*args)

    def f_fwd(scale, *args):
        return fn(*args), args

    def f_bwd(scale, args, g):
        return lib.vjp(fn, *args)[1](g)
    wrapped = lib.custom_vjp(f, nondiff_argnums=(0,))
    wrapped.defvjp(f_fwd, f_bwd)
    return lambda *args: wrapped(1.0, *args)


def _custom_jvp(lib, fn):
    """fn as a custom_jvp function whose rule is fn's own jvp."""
    wrapped = lib.custom_jvp(fn)
    wrapped.defjvp(lambda primals, tangents: lib.jvp(fn, primals, tangents))
    return wrapped


def draw_stack(seed):
    rng = np.random.default_rng(seed + 4 * 10 ** 6)
    depth = int(rng.integers(1, 4))
    return [(KINDS[rng.integers(len(KINDS))], int(rng.integers(2 ** 31))) for _ in range(depth)]


def draw_shape(seed):
    """(pytree output, pytree arguments) for program `seed`."""
    rng = np.random.default_rng(seed + 5 * 10 ** 6)
    return bool(rng.random() < 0.4), bool(rng.random() < 0.4)


# ---------------------------------------------------------------- checking

class Case:
    """Program `seed` (its source possibly minimized) under a stack of transforms, built for both libraries."""

    def __init__(self, seed, libs, source=None, stack=None, tree_out=None, tree_in=None):
        jax, jlib, slib, scopes = libs
        self.seed, self.jax = seed, jax
        generated, self.weights, helpers, self.names = program(seed, scopes)
        self.source = source or generated
        self.stack = draw_stack(seed) if stack is None else stack
        drawn = draw_shape(seed)
        self.tree_out = drawn[0] if tree_out is None else tree_out
        self.tree_in = drawn[1] if tree_in is None else tree_in
        text = with_tree_output(self.source) if self.tree_out else self.source
        scope_ns = {"jax": jax.numpy, "sg": sg}
        fns = {n: broad.build(text, self.weights, scope_ns[n], helpers[n]) for n in ("jax", "sg")}
        args = base_inputs(seed, self.names)
        self.pack = lambda a: list(a)
        if self.tree_in:
            for n in fns:
                fns[n], self.pack = tree_arguments(fns[n], len(args))
        spec = [jax.tree_util.tree_map(lambda a: jax.ShapeDtypeStruct(np.shape(a), np.float64), arg)
                for arg in self.pack(args)]
        libs_by_name = {"jax": jlib, "sg": slib}
        self.texts = []
        for kind, kseed in self.stack:
            fns, spec, text = apply(kind, kseed, libs_by_name, fns, spec, jax)
            self.texts.append(text)
        self.fns, self.spec = fns, spec

    def describe(self):
        return (f"stack (inner first): {self.texts}; tree output {self.tree_out}, tree arguments {self.tree_in}\n"
                f"{self.source}")

    def inputs(self, k, special):
        rng = np.random.default_rng(self.seed + 6 * 10 ** 6 + k)
        leaves, tree = self.jax.tree_util.tree_flatten(self.spec)
        values = []
        for leaf in leaves:
            value = rng.uniform(-1.2, 1.2, leaf.shape)
            if special and value.size:
                flat = value.reshape(-1)
                chosen = rng.random(flat.size) < 0.3
                flat[chosen] = rng.choice(SPECIAL_VALUES[special], size=int(chosen.sum()))
            values.append(value)
        return self.jax.tree_util.tree_unflatten(tree, values)


def _compare(jax, path, got, want, rtol):
    got_leaves, got_tree = jax.tree_util.tree_flatten(got)
    want_leaves, want_tree = jax.tree_util.tree_flatten(want)
    if got_tree != want_tree:
        raise Mismatch(f"{path}: structure {got_tree} != JAX's {want_tree}")
    for n, (g, w) in enumerate(zip(got_leaves, want_leaves)):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape:
            raise Mismatch(f"{path} leaf {n}: shape {g.shape} != JAX's {w.shape}")
        if g.dtype != w.dtype and not (g.dtype.kind == w.dtype.kind == "i"):
            raise Mismatch(f"{path} leaf {n}: dtype {g.dtype} != JAX's {w.dtype}")
        finite = w[np.isfinite(w)] if w.dtype.kind == "f" else w
        atol = rtol * (1 + np.max(np.abs(finite), initial=0))
        if not np.allclose(g, w, rtol=rtol, atol=atol, equal_nan=True):
            bad = ~np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
            raise Mismatch(f"{path} leaf {n}: {g[bad].ravel()[:6]} != JAX's {w[bad].ravel()[:6]} "
                           f"({int(bad.sum())} of {g.size} differ)")


def check(case, special=None):
    """Run the case's symgrad stack uncompiled and compiled (LLVM, NumPy; two calls) against JAX's; returns {path:
    'ok' | 'JAX refused ...' | 'both refused ...' | 'refused, JAX ran ...'}, raising Mismatch on a wrong number or
    an internal error. `special`: None, or a key of SPECIAL_VALUES, the edge values some inputs take."""
    jax = case.jax
    fj, fs = case.fns["jax"], case.fns["sg"]
    args, args2 = case.inputs(0, special), case.inputs(1, special)
    jitted = jax.jit(fj)
    try:
        want, want2 = jitted(*args), jitted(*args2)
    except Exception as e:  # noqa: BLE001 - JAX refuses it too: symgrad must refuse or answer
        want = want2 = e
    llvm, numpy_backend = sg.compile(fs), sg.compile(fs, backend="numpy")
    calls = {"transform": lambda: fs(*args), "llvm": lambda: llvm(*args), "numpy": lambda: numpy_backend(*args),
             "llvm-again": lambda: llvm(*args2), "numpy-again": lambda: numpy_backend(*args2)}
    report = {}
    results = {}
    for path, call in calls.items():
        try:
            results[path] = call()
        except Exception as e:  # noqa: BLE001 - classified below
            known = any(k in str(e) for k in KNOWN_REFUSALS)
            if not known and (isinstance(e, INTERNAL) or not type(e).__module__.startswith(CLEAR_ERROR_MODULES)):
                raise Mismatch(f"{path}: internal error {type(e).__name__}: {e}") from e
            expected = want2 if path.endswith("again") else want
            who = "both refused" if isinstance(expected, Exception) else "refused, JAX ran"
            report[path] = f"{who}: {type(e).__name__}: {str(e).splitlines()[0][:150]}"
            continue
        expected = want2 if path.endswith("again") else want
        if isinstance(expected, Exception):
            report[path] = f"JAX refused ({type(expected).__name__}: {str(expected).splitlines()[0][:80]}), sg ran"
            continue
        if special == "nonfinite":
            base = results.get("transform") if path in ("llvm", "numpy") else None
            if base is not None:
                _compare(jax, path + " vs transform", results[path], base, 1e-9)
            report[path] = "ok"
            continue
        # a float32 line (the broad programs' astype) rounds differently with the order of its operations
        _compare(jax, path, results[path], expected, 1e-5 if "float32" in case.source else RTOL)
        report[path] = "ok"
    return report


def minimize(case, libs, special):
    """A smaller case that still fails: transforms dropped, then program lines, then plain arguments and output."""
    def fails(candidate):
        try:
            check(candidate, special)
        except Mismatch:
            return True
        except Exception:  # noqa: BLE001 - an invalid candidate (JAX cannot run it): not a reduction
            return False
        return False

    def rebuild(**changes):
        options = {"source": case.source, "stack": case.stack, "tree_out": case.tree_out, "tree_in": case.tree_in}
        options.update(changes)
        try:
            return Case(case.seed, libs, **options)
        except Exception:  # noqa: BLE001
            return None

    changed = True
    while changed:
        changed = False
        for k in range(len(case.stack)):
            candidate = rebuild(stack=case.stack[:k] + case.stack[k + 1:])
            if candidate is not None and fails(candidate):
                case, changed = candidate, True
                break
        lines = case.source.rstrip("\n").split("\n")
        for k in range(1, len(lines) - 1):
            name = lines[k].split("=")[0].strip()
            ret = re.sub(rf" \+ ns\.sum\({name} \* W\['{name}'\]\)|ns\.sum\({name} \* W\['{name}'\]\)( \+ )?", "",
                         lines[-1])
            if ret.strip() == "return":
                ret = "    return ns.sum(x0 * 0.0)"
            candidate = rebuild(source="\n".join(lines[:k] + lines[k + 1:-1] + [ret]) + "\n")
            if candidate is not None and fails(candidate):
                case, changed = candidate, True
                break
        for flag in ("tree_out", "tree_in"):
            if getattr(case, flag):
                candidate = rebuild(**{flag: False})
                if candidate is not None and fails(candidate):
                    case, changed = candidate, True
    return case


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--special", choices=list(SPECIAL_VALUES), help="inputs with these edge values")
    parser.add_argument("--minimize", action="store_true", help="shrink each failing case before printing it")
    parser.add_argument("--show", type=int, help="print case SEED and exit")
    options = parser.parse_args(argv)
    libs = libraries()
    if options.show is not None:
        print(Case(options.show, libs).describe())
        return 0
    counts, failures = {}, []
    for seed in range(options.start, options.start + options.count):
        try:
            case = Case(seed, libs)
        except Exception as e:  # noqa: BLE001 - JAX cannot build the stack (e.g. jvp of a custom_vjp function)
            counts.setdefault("unbuilt", {}).setdefault(f"{type(e).__name__}: {str(e)[:60]}", 0)
            counts["unbuilt"][f"{type(e).__name__}: {str(e)[:60]}"] += 1
            continue
        try:
            report = check(case, options.special)
        except Exception as e:  # noqa: BLE001 - a finding: print and go on
            failures.append(seed)
            if options.minimize and isinstance(e, Mismatch):
                case = minimize(case, libs, options.special)
                try:
                    check(case, options.special)
                except Exception as small:  # noqa: BLE001
                    e = small
            print(f"--- seed {seed}: {type(e).__name__}: {str(e)[:400]}\n{case.describe()}", flush=True)
            if not isinstance(e, Mismatch):
                traceback.print_exc()
            continue
        for path, outcome in report.items():
            counts.setdefault(path, {}).setdefault(outcome[:90], 0)
            counts[path][outcome[:90]] += 1
            if outcome.startswith("refused") and path == "transform":
                print(f"seed {seed} {outcome[:200]}: {case.texts}", flush=True)
    for path, outcomes in counts.items():
        print(path, dict(sorted(outcomes.items(), key=lambda kv: -kv[1])))
    print("failures:", failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
