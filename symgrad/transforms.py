"""Function transforms: grad, value_and_grad, vjp, jvp, linearize, hvp, jacobian (jacrev/jacfwd), hessian.

Each transform is written once, for traced arguments: it traces the user function into
a nested graph, replays it into the active builder and runs the reverse or forward pass
there. Called with concrete arrays, a transform compiles that traced version (cached
per function and argument signature), so `sg.grad(f)(x)` runs generated code, and
transforms compose (`sg.grad(sg.grad(f))`) because their output is ordinary IR.
"""
from __future__ import annotations

import inspect
import pickle
import weakref

import numpy as np

from . import code_cache, dtypes, ir, pickling, pytree
from . import numpy_api as sg
from .autodiff import backward_pass, forward_pass, primals_from_rules
from .autodiff.partition import split_forward_backward
from .compiler import Compiled
from .passes.lift import lift_constants
from .passes.reroll import reroll
from .batching import vmap
from .core import Builder, building, current_builder, Tracer
from .static_args import StaticArgs, bind_positions, has_static, python_value_positions
from .tracing import argument_names, as_input_array, function_name, inline, trace_flat


def _is_traced() -> bool:
    """True inside a trace. Tracers only live inside one, so the arguments need no scan."""
    return current_builder() is not None


def _argnums_tuple(argnums, count):
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for n in nums:
        if not -count <= n < count:
            raise ValueError(f"argnums {argnums} is out of range for {count} positional argument(s)")
    return tuple(n % count for n in nums)


class _Traced:
    """Trace fn(*args) in a nested builder and replay it into the active one."""

    def __init__(self, fn, args, python_values=False, reverse=False):
        """`python_values`: strings, None, functions and Python ints among `args` reach fn as they are (grad's
        arguments other than argnums, as in autograd), instead of as traced inputs. `reverse`: replayed for a
        reverse pass, a custom_vjp's outputs computed by its fwd (reverse.primals_from_rules)."""
        self.python_positions = python_value_positions(args, ints=True) if python_values else ()
        if self.python_positions:
            fn = bind_positions(fn, tuple((i, args[i]) for i in self.python_positions))
        traced_args = [a for i, a in enumerate(args) if i not in self.python_positions]
        self.leaves, self.in_tree = pytree.flatten(list(traced_args))
        graph, self.out_tree, captures = trace_flat(fn, traced_args)
        self.graph = reroll(graph)  # a Python loop is differentiated as the loop it is, once
        # concrete leaves (e.g. a Python float passed to a transform while tracing) become
        # arrays of the traced input's dtype, so adjoint rules can read .dtype/.shape
        operands = [x if isinstance(x, Tracer) else np.asarray(x, dtype=v.dtype)
                    for x, v in zip(self.leaves, self.graph.inputs)]
        self.env = inline(self.graph, operands + captures, annotate={"section": "forward"})
        if reverse:
            with current_builder().annotate(section="forward"):
                self.graph = primals_from_rules(self.graph, self.env)
        self.outputs = [self.env[id(v)] for v in self.graph.outputs]
        self.arg_leaf_ranges = []
        start = 0
        for i, arg in enumerate(args):
            count = 0 if i in self.python_positions else len(pytree.flatten(arg)[0])
            self.arg_leaf_ranges.append(range(start, start + count))
            start += count
        self.arg_names = [f"argument {name!r}" for name in
                          pytree.leaf_names(traced_args, argument_names(fn, len(traced_args)))]

    def out(self):
        return pytree.unflatten(self.out_tree, self.outputs)

    def input_value(self, leaf_index):
        return self.graph.inputs[leaf_index]


def _check_differentiable(traced: _Traced, leaf_indices, fn_name):
    for i in leaf_indices:
        value = traced.input_value(i)
        if not dtypes.is_float(value.dtype):
            raise TypeError(f"{fn_name}: cannot differentiate with respect to {traced.arg_names[i]}, which has "
                            f"dtype {value.dtype}; only float32/float64 inputs are differentiable (cast with "
                            f".astype(float) or leave it out of argnums)")


# ----------------------------------------------------------------------------- reverse mode

def _value_and_grad_traced(fn, argnums, has_aux, args):
    name = getattr(fn, "__name__", "function")
    nums = _argnums_tuple(argnums, len(args))
    for n in nums:
        if n in python_value_positions(args, ints=True):
            raise TypeError(f"grad: cannot differentiate with respect to argument "
                            f"{argument_names(fn, len(args))[n]} of {name}, a Python "
                            f"{type(args[n]).__name__}; pass a float or a float array")
    traced = _Traced(fn, args, python_values=True, reverse=True)
    result = traced.out()
    if has_aux and not (isinstance(result, (tuple, list)) and len(result) == 2):
        raise TypeError(f"grad(has_aux=True): {name} must return a pair (output, aux)")
    out, aux = result if has_aux else (result, None)
    out_leaves = pytree.flatten(out)[0]
    if len(out_leaves) != 1 or np.size(out_leaves[0]) != 1:  # size 1, as PyTorch's backward() and autograd
        shapes = [np.shape(o) if not isinstance(o, Tracer) else o.shape for o in out_leaves]
        raise TypeError(f"grad requires {name} to return a scalar (one element), got output shape(s) {shapes}; "
                        "use sg.vjp or sg.jacobian for non-scalar outputs, or reduce it (e.g. sg.sum)")
    wrt = [i for n in nums for i in traced.arg_leaf_ranges[n]]
    _check_differentiable(traced, wrt, "grad")
    out_value = traced.graph.outputs[0]
    if not dtypes.is_float(out_value.dtype):
        raise TypeError(f"grad requires a float output, but {name} returned dtype {out_value.dtype}")
    with current_builder().annotate(section="backward", rule="seed"):
        seed = sg.ones(out_value.shape, out_value.dtype)
    cts = backward_pass(traced.graph, traced.env, [(id(out_value), seed)], [traced.input_value(i) for i in wrt])
    grads = []
    for n in nums:
        leaf_grads = []
        for i in traced.arg_leaf_ranges[n]:
            value = traced.input_value(i)
            ct = cts[id(value)]
            leaf_grads.append(ct if ct is not None else sg.zeros(value.shape, value.dtype))
        grads.append(pytree.unflatten(pytree.flatten(args[n])[1], leaf_grads))
    grad_tree = grads[0] if isinstance(argnums, int) else tuple(grads)
    return out, aux, grad_tree


class Transformed(pickling.CopiedAsItself):
    """A transformed function: traced arguments run the transform symbolically; concrete
    arguments run a compiled version of it (NumPy or LLVM backend), cached per signature.

    The cache never returns a stale result: it is guarded by the values of what the user
    function read, and a function whose reads cannot be guarded (random draws, state held
    in objects) re-runs on every call, as under JAX or autograd without jit."""

    def __init__(self, traced_fn, name, keywords=None, recipe=None):
        """keywords() -> the function taking keyword arguments too (static_args.StaticArgs), made on the
        first call that passes some. recipe = (transform, fn, options): how a pickle makes it again."""
        self._traced_fn = self.__wrapped__ = traced_fn
        self.__name__ = name
        self._compiled = None
        self._keywords, self._with_keywords = keywords, None
        self._recipe = recipe
        if hasattr(traced_fn, "__signature__"):
            self.__signature__ = traced_fn.__signature__

    def __call__(self, *args, **kwargs):
        if kwargs and self._keywords is not None:
            self._with_keywords = self._with_keywords or self._keywords()
            return self._with_keywords(*args, **kwargs)
        if kwargs:
            raise TypeError(f"{self.__name__} takes its arguments by position")
        if _is_traced():
            return self._traced_fn(*args)
        return (self._compiled or self.compiled)(*args)

    @property
    def compiled(self):
        """The compiled function behind concrete calls (for lower()/cache_info())."""
        if self._compiled is None:
            self._compiled = Compiled(self._traced_fn, name=self.__name__, check_values=True)
        return self._compiled

    def __reduce__(self):
        """Pickled as the transform of the user's function (pickling.py) with the signatures compiled so far."""
        if self._recipe is None:
            raise pickle.PicklingError(f"{self.__name__} is an internal transform and does not pickle")
        transform, fn, options = self._recipe
        state = pickling.function_state(fn)
        pickling.check_carries_something(state, self.signature_count(), "the transformed function")
        return _restore_transformed, (transform, state, options, self.carried())

    def signature_count(self) -> int:
        return self._compiled.signature_count() if self._compiled is not None else 0

    def carried(self) -> tuple:
        """What a pickle carries of the code compiled so far (Compiled.carried)."""
        return self.compiled.carried()

    def carry(self, carried: tuple) -> None:
        """Hold what `carried()` holds, from an unpickled function, without tracing it again."""
        self.compiled.carry(carried)


def _restore_transformed(transform, state, options, carried) -> Transformed:
    """An unpickled transformed function, holding the signatures it was pickled with."""
    transformed = transform(pickling.restored_function(state), **options)
    transformed.carry(carried)
    return transformed


def _hashable(argnums):
    return argnums if isinstance(argnums, int) else tuple(argnums)


def _named(fn, suffix):
    return f"{function_name(fn)}_{suffix}"


def _with_signature(impl, fn):
    try:
        impl.__signature__ = inspect.signature(fn)
    except (TypeError, ValueError):
        pass
    return impl


def value_and_grad(fn, argnums=0, has_aux=False, static_argnums=(), static_argnames=()):
    """fn -> function returning (value, grad) (or ((value, aux), grad) with has_aux), as JAX. Arguments in
    static_argnums/static_argnames are Python values in the trace (sg.compile's)."""
    if has_static(static_argnums, static_argnames):
        options = {"argnums": argnums, "has_aux": has_aux, "static_argnums": static_argnums,
                   "static_argnames": static_argnames}
        return StaticArgs(fn, lambda inner, nums: value_and_grad(inner, nums, has_aux), static_argnums,
                          static_argnames, argnums, recipe=(value_and_grad, options))

    def impl(*args):
        out, aux, grads = _value_and_grad_traced(fn, argnums, has_aux, args)
        return ((out, aux), grads) if has_aux else (out, grads)

    keywords = lambda: StaticArgs(fn, lambda inner, nums: value_and_grad(inner, nums, has_aux), argnums=argnums)  # noqa: E731
    recipe = (value_and_grad, fn, {"argnums": argnums, "has_aux": has_aux})
    return _cached_transform(fn, ("value_and_grad", _hashable(argnums), has_aux),
                             lambda: Transformed(_with_signature(impl, fn), _named(fn, "value_and_grad"), keywords,
                                                 recipe))


def grad(fn, argnums=0, has_aux=False, static_argnums=(), static_argnames=()):
    """fn -> function returning d fn / d args[argnums] (plus aux when has_aux); static arguments as
    value_and_grad's."""
    if has_static(static_argnums, static_argnames):
        options = {"argnums": argnums, "has_aux": has_aux, "static_argnums": static_argnums,
                   "static_argnames": static_argnames}
        return StaticArgs(fn, lambda inner, nums: grad(inner, nums, has_aux), static_argnums, static_argnames,
                          argnums, recipe=(grad, options))

    def impl(*args):
        out, aux, grads = _value_and_grad_traced(fn, argnums, has_aux, args)
        return (grads, aux) if has_aux else grads

    keywords = lambda: StaticArgs(fn, lambda inner, nums: grad(inner, nums, has_aux), argnums=argnums)  # noqa: E731
    recipe = (grad, fn, {"argnums": argnums, "has_aux": has_aux})
    return _cached_transform(fn, ("grad", _hashable(argnums), has_aux),
                             lambda: Transformed(_with_signature(impl, fn), _named(fn, "grad"), keywords, recipe))


# ----------------------------------------------------------------------------- vjp

def pullback_leaves(traced: _Traced, ct_leaves) -> list:
    """Per primal argument, the list of its leaves' cotangents (None for non-float leaves).

    ct_leaves holds one cotangent per output leaf; None means that output is not seeded.
    """
    seeds = []
    for value, ct in zip(traced.graph.outputs, ct_leaves):
        if ct is None or not dtypes.is_float(value.dtype):
            continue
        shape = ct.shape if isinstance(ct, Tracer) else np.shape(ct)
        if tuple(shape) != value.shape:
            raise ValueError(f"vjp: cotangent of shape {tuple(shape)} for an output of shape {value.shape}")
        seeds.append((id(value), sg.astype(ct, value.dtype)))
    cts = backward_pass(traced.graph, traced.env, seeds) if seeds else {}
    results = []
    for rng in traced.arg_leaf_ranges:
        leaf_cts = []
        for i in rng:
            value = traced.input_value(i)
            ct = cts.get(id(value))
            if ct is None and dtypes.is_float(value.dtype):
                ct = sg.zeros(value.shape, value.dtype)
            leaf_cts.append(ct)
        results.append(leaf_cts)
    return results


def vjp(fn, *primals, has_aux=False):
    """(out, pullback) with pullback(cotangent) -> tuple of cotangents, one per primal (None for ints)."""
    if _is_traced():
        traced = _Traced(fn, primals, reverse=True)
        result = traced.out()

        primary_tree = traced.out_tree.children[0] if has_aux else traced.out_tree

        def pullback(cotangent):
            ct_leaves, ct_tree = pytree.flatten(cotangent)
            if ct_tree != primary_tree:
                raise TypeError("pullback: the cotangent's structure does not match the function's output")
            ct_leaves += [None] * (len(traced.outputs) - len(ct_leaves))
            per_arg = pullback_leaves(traced, ct_leaves)
            return tuple(pytree.unflatten(pytree.flatten(p)[1], leaves) for p, leaves in zip(primals, per_arg))

        if has_aux:
            return result[0], pullback, result[1]
        return result, pullback
    return _concrete_vjp(fn, primals, has_aux)


def _concrete_vjp(fn, primals, has_aux):
    """Concrete sg.vjp: run fn once (traced), evaluate the forward now and keep its residuals;
    the pullback runs the backward. Both are compiled once per structure of the trace."""
    leaves, tree = pytree.flatten(list(primals))
    names = pytree.leaf_names(list(primals), argument_names(fn, len(primals)))
    arrays = [as_input_array(leaf, name) for leaf, name in zip(leaves, names)]
    code = vjp_code(fn, arrays, names, tree, has_aux)
    out_tree, outputs, ct_types, backward_exe = code.out_tree, code.num_outputs, code.ct_types, code.backward
    forward_values = code.forward(*arrays, *code.constants)
    result = pytree.unflatten(out_tree, forward_values[:outputs])
    residuals = forward_values[outputs:]
    float_mask = [dtypes.is_float(a.dtype) for a in arrays]
    primary_tree = out_tree.children[0] if has_aux else out_tree

    def pullback(cotangent):
        ct_leaves, ct_tree = pytree.flatten(cotangent)
        if ct_tree != primary_tree:
            raise TypeError("pullback: the cotangent's structure does not match the function's output")
        cts = []
        for ct, (shape, dtype) in zip(ct_leaves, ct_types):
            ct = ct if isinstance(ct, Tracer) else as_input_array(ct, "cotangent")
            if tuple(ct.shape) != shape:
                raise ValueError(f"pullback: cotangent of shape {tuple(ct.shape)} for an output of shape {shape}")
            cts.append(sg.astype(ct, dtype) if isinstance(ct, Tracer) else ct.astype(dtype, copy=False))
        if any(isinstance(ct, Tracer) for ct in cts):  # called inside a later trace: the backward pass replayed
            env = inline(backward_exe.graph, [*residuals, *cts])  # there, the residuals as its constants
            grads = iter([env[id(v)] for v in backward_exe.graph.outputs])
        else:
            grads = iter(backward_exe(*residuals, *cts))
        flat = [next(grads) if is_float else None for is_float in float_mask]
        return tuple(pytree.unflatten(pytree.flatten(list(primals))[1], flat))

    if has_aux:
        return result[0], pullback, result[1]
    return result, pullback


class VjpCode:
    """A function's vjp traced once for its arguments' types and lowered as two executables:
    forward(*arrays, *constants) -> (outputs..., residuals...) and backward(*residuals, *cotangents) ->
    the cotangents of the float arguments, in order. A caller that knows the types repeat keeps it
    (as the fused recurrent layers do) and calls the executables without tracing again."""

    def __init__(self, out_tree, num_outputs, ct_types, forward, backward, constants):
        self.out_tree, self.num_outputs, self.ct_types = out_tree, num_outputs, ct_types
        self.forward, self.backward, self.constants = forward, backward, constants


def vjp_code(fn, arrays, names, tree=None, has_aux=False) -> VjpCode:
    """The VjpCode of fn(*pytree.unflatten(tree, arrays)) (fn(*arrays) without a tree); only the arrays'
    shapes and dtypes matter."""
    tree = tree or pytree.flatten(list(arrays))[1]
    builder = Builder()
    builder.numbers_as_operands = True  # values are inputs, as in Compiled(check_values=True)
    with building(builder):
        inputs = [builder.new_input(a.shape, a.dtype, name) for a, name in zip(arrays, names)]
        traced = _Traced(fn, pytree.unflatten(tree, inputs), reverse=True)
        out_tree, outputs = traced.out_tree, traced.graph.outputs
        if has_aux and (out_tree.kind not in ("tuple", "list") or len(out_tree.children) != 2):
            raise TypeError("vjp(has_aux=True): the function must return a pair (output, aux)")
        primary = out_tree.children[0].num_leaves if has_aux else len(outputs)
        ct_types = [(v.shape, v.dtype) for v in outputs[:primary]]
        cts = [builder.new_input(shape, dtype, "cotangent") for shape, dtype in ct_types]
        per_arg = pullback_leaves(traced, cts + [None] * (len(outputs) - primary))
        graph = builder.finish([*traced.outputs, *[c for arg in per_arg for c in arg if c is not None]],
                               function_name(fn) + "_vjp")
    forward_exe, backward_exe, constants = _vjp_executables(graph, len(arrays), len(outputs))
    return VjpCode(out_tree, len(outputs), ct_types, forward_exe, backward_exe, constants)


def _vjp_executables(joint, num_primals, num_outputs):
    """(forward, backward, constants) of a joint vjp graph, compiled once per structure (code_cache): its large
    constants become trailing forward inputs, so a fresh trace reuses the code."""
    joint, lifted = lift_constants(joint)
    inputs = joint.inputs
    primals = inputs[:num_primals] + inputs[len(inputs) - len(lifted):]
    joint = ir.Graph(primals + inputs[num_primals:len(inputs) - len(lifted)], joint.nodes, joint.outputs, joint.name)
    forward, backward = split_forward_backward(ir.verify(joint), len(primals), num_outputs)
    return code_cache.lowered(forward).executable, code_cache.lowered(backward).executable, lifted


# ----------------------------------------------------------------------------- forward mode

def _jvp_traced(fn, primals, tangents):
    traced = _Traced(fn, primals)
    t_leaves, t_tree = pytree.flatten(list(tangents))
    if t_tree != traced.in_tree:
        raise TypeError("jvp: tangents must have the same structure as primals")
    seeds = {}
    for i, t in enumerate(t_leaves):
        value = traced.input_value(i)
        shape = t.shape if isinstance(t, Tracer) else np.shape(t)
        if tuple(shape) != value.shape:
            raise ValueError(f"jvp: tangent of shape {tuple(shape)} for {traced.arg_names[i]} of shape {value.shape}")
        if dtypes.is_float(value.dtype):
            seeds[id(value)] = sg.astype(t, value.dtype)
    tangents_out = forward_pass(traced.graph, traced.env, seeds)
    out_tangents = []
    for value in traced.graph.outputs:
        t = tangents_out.get(id(value))
        out_tangents.append(t if t is not None else sg.zeros(value.shape, value.dtype))
    return traced.out(), pytree.unflatten(traced.out_tree, out_tangents)


_CACHE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _cached_transform(fn, key, make):
    """One Transformed per (fn, transform, options), so repeated concrete calls reuse compiled code."""
    try:
        per_fn = _CACHE.setdefault(fn, {})
    except TypeError:  # not weak-referenceable: no caching
        return make()
    if key not in per_fn:
        per_fn[key] = make()
    return per_fn[key]


def jvp(fn, primals, tangents):
    """(fn(*primals), J(primals) @ tangents), by the forward-mode pass."""
    primals, tangents = tuple(primals), tuple(tangents)
    if _is_traced():
        return _jvp_traced(fn, primals, tangents)
    count = len(primals)

    def make():
        def impl(*args):
            return _jvp_traced(fn, args[:count], args[count:])
        return Transformed(impl, _named(fn, "jvp"))

    return _cached_transform(fn, ("jvp", count), make)(*primals, *tangents)


def linearize(fn, *primals):
    """(fn(*primals), f_jvp) with f_jvp(*tangents) the JVP at primals, a linear function of the tangents
    (jax.linearize). f_jvp runs the forward pass again with each call (compiled once, as sg.jvp is)."""
    primals = tuple(primals)
    out = jvp(fn, primals, tuple(_zeros_tree(p) for p in primals))[0]

    def f_jvp(*tangents):
        if len(tangents) != len(primals):
            raise TypeError(f"linearize: f_jvp takes one tangent per primal ({len(primals)}), got {len(tangents)}")
        return jvp(fn, primals, tangents)[1]

    return out, f_jvp


def hvp(fn, primals, tangents):
    """The Hessian of a scalar fn at primals times tangents, one per primal, without forming the Hessian:
    forward mode over the gradient (one extra pass), returned like the primals."""
    primals, tangents = tuple(primals), tuple(tangents)
    if len(primals) != len(tangents):
        raise TypeError(f"hvp: one tangent per primal ({len(primals)}), got {len(tangents)}")
    gradient = grad(fn, argnums=tuple(range(len(primals))))
    return jvp(gradient, primals, tangents)[1]


# ----------------------------------------------------------------------------- jacobians

def jacrev(fn, argnums=0):
    """Jacobian by reverse mode: the pullback mapped (sg.vmap) over the rows of the identity, one batched
    backward pass. Pytrees in and out: for each output leaf, the Jacobians with respect to the leaves of
    the arguments in `argnums` (shape output leaf + argument leaf), nested as JAX's jacrev nests them."""

    def impl(*args):
        nums = _argnums_tuple(argnums, len(args))
        _require_floats("jacrev", "argument", [leaf for n in nums for leaf in pytree.flatten(args[n])[0]])
        selected_fn, selected, nums_in_selected = _on_selected(fn, args, nums)
        out, pullback = vjp(selected_fn, *selected)
        out_leaves, out_tree = pytree.flatten(out)
        _require_floats("jacrev", "output", out_leaves)
        shapes = [tuple(np.shape(leaf)) for leaf in out_leaves]
        dtype = _common_float(out_leaves)

        def pulled(row):  # the cotangents of the selected arguments for one row of the identity
            cts = [sg.astype(ct, leaf.dtype) for ct, leaf in zip(_split(row, shapes), out_leaves)]
            per_arg = pullback(pytree.unflatten(out_tree, cts))
            return [leaf for k in nums_in_selected for leaf in pytree.flatten(per_arg[k])[0]]

        rows = _mapped(pulled, _identity(_total(shapes), dtype))  # per argument leaf: (total, *leaf shape)
        blocks = [[] for _ in shapes]
        for r in rows:
            start = 0
            for j, shape in enumerate(shapes):
                blocks[j].append(sg.reshape(r[start:start + _size(shape)], shape + tuple(r.shape[1:])))
                start += _size(shape)
        return _nest(blocks, out_tree, [args[n] for n in nums], argnums)

    recipe = (jacrev, fn, {"argnums": argnums})
    return _cached_transform(fn, ("jacrev", _hashable(argnums)),
                             lambda: Transformed(_with_signature(impl, fn), _named(fn, "jacrev"), recipe=recipe))


jacobian = jacrev


def jacfwd(fn, argnums=0):
    """Jacobian by forward mode: the JVP mapped (sg.vmap) over the columns of the identity, one batched
    forward pass per argument; shapes and nesting as jacrev's."""

    def impl(*args):
        nums = _argnums_tuple(argnums, len(args))
        _require_floats("jacfwd", "argument", [leaf for n in nums for leaf in pytree.flatten(args[n])[0]])
        out_tree = _output_tree(fn, args)
        blocks = [[] for _ in range(out_tree.num_leaves)]  # per output leaf, over the arguments' leaves
        for n in nums:
            leaves, tree = pytree.flatten(args[n])
            shapes = [tuple(np.shape(leaf)) for leaf in leaves]
            selected_fn, selected, _ = _on_selected(fn, args, (n,))

            def pushed(column, selected_fn=selected_fn, selected=selected, tree=tree, shapes=shapes):
                tangent = pytree.unflatten(tree, _split(column, shapes))
                return pytree.flatten(jvp(selected_fn, selected, [tangent])[1])[0]

            columns = _mapped(pushed, _identity(_total(shapes), _common_float(leaves)))
            _require_floats("jacfwd", "output", columns)
            for j, column in enumerate(columns):  # (total, *output leaf shape)
                moved = sg.moveaxis(column, 0, -1)
                for part, shape in zip(_split_last(moved, shapes), shapes):
                    blocks[j].append(sg.reshape(part, tuple(moved.shape[:-1]) + shape))
        return _nest(blocks, out_tree, [args[n] for n in nums], argnums)

    recipe = (jacfwd, fn, {"argnums": argnums})
    return _cached_transform(fn, ("jacfwd", _hashable(argnums)),
                             lambda: Transformed(_with_signature(impl, fn), _named(fn, "jacfwd"), recipe=recipe))


def _on_selected(fn, args, nums):
    """(fn as a function of the distinct args[n] for n in nums, the others fixed; those args; each n's position
    among them), as JAX's argnums: the others get no tangent or cotangent, so what only they reach (a while loop,
    which reverse mode cannot run twice) is not differentiated."""
    distinct = tuple(dict.fromkeys(nums))

    def selected_fn(*selected):
        full = list(args)
        for n, value in zip(distinct, selected):
            full[n] = value
        return fn(*full)

    names = argument_names(fn, len(args))
    selected_fn.__name__ = function_name(fn)
    selected_fn.__signature__ = inspect.Signature(
        [inspect.Parameter(names[n], inspect.Parameter.POSITIONAL_ONLY) for n in distinct])
    return selected_fn, [args[n] for n in distinct], [distinct.index(n) for n in nums]


def _zeros_tree(tree):
    leaves, structure = pytree.flatten(tree)
    return pytree.unflatten(structure, [sg.zeros_like(leaf) for leaf in leaves])


def _size(shape) -> int:
    return int(np.prod(shape, dtype=np.int64))


def _total(shapes) -> int:
    return sum(_size(shape) for shape in shapes)


def _split(flat, shapes) -> list:
    """A vector cut into consecutive pieces reshaped to `shapes`."""
    pieces, start = [], 0
    for shape in shapes:
        pieces.append(sg.reshape(flat[start:start + _size(shape)], shape))
        start += _size(shape)
    return pieces


def _split_last(x, shapes) -> list:
    """x cut along its last axis into consecutive pieces of the sizes of `shapes`."""
    pieces, start = [], 0
    for shape in shapes:
        pieces.append(x[..., start:start + _size(shape)])
        start += _size(shape)
    return pieces


def _require_floats(transform, what, leaves):
    """A TypeError for an integer or boolean argument or output (it has no derivative), as JAX gives."""
    for leaf in leaves:
        dtype = leaf.dtype if hasattr(leaf, "dtype") else np.asarray(leaf).dtype
        if not dtypes.is_float(dtype):
            hint = ".astype(float), or leave it out of argnums" if what == "argument" else ".astype(float)"
            raise TypeError(f"{transform}: an {what} of dtype {np.dtype(dtype)} has no derivative; it needs float "
                            f"{what}s ({hint})")


def _common_float(leaves):
    """The float dtype a basis of these leaves is built in (float64 when any is)."""
    kinds = [np.dtype(leaf.dtype) for leaf in leaves if dtypes.is_float(leaf.dtype)]
    return dtypes.FLOAT32 if kinds and all(k == dtypes.FLOAT32 for k in kinds) else dtypes.FLOAT64


def _identity(size: int, dtype):
    """The identity matrix as a traced value, from one index vector: NumPy's eye would be a constant of size**2
    elements, which the batched pass then evaluated and stored at trace time (compile time growing as size**2)."""
    index = sg.array(np.arange(size))
    return sg.astype(sg.equal(index[:, None], index[None, :]), dtype)


def _mapped(fn, basis) -> list:
    """fn mapped over the rows of `basis` (sg.vmap): one batched pass."""
    return list(vmap(fn)(basis))


def _output_tree(fn, args):
    """The structure of fn's output (fn traced once more; DCE drops that trace)."""
    return pytree.flatten(_Traced(fn, args).out())[1]


def _nest(blocks, out_tree, selected, argnums):
    """Jacobian blocks (per output leaf, the flat list over the selected arguments' leaves) nested as
    the output's structure of (the argument's structure, or a tuple of them for a tuple argnums)."""
    per_output = []
    for row in blocks:
        leaves, per_arg = iter(row), []
        for arg in selected:
            arg_tree = pytree.flatten(arg)[1]
            per_arg.append(pytree.unflatten(arg_tree, [next(leaves) for _ in range(arg_tree.num_leaves)]))
        per_output.append(per_arg[0] if isinstance(argnums, int) else tuple(per_arg))
    return pytree.unflatten(out_tree, per_output)


def hessian(fn, argnums=0):
    """Second derivatives, forward-over-reverse: jacfwd(jacrev(fn))."""
    return jacfwd(jacrev(fn, argnums), argnums)
