"""`trace(f, *args) -> Graph`: run a Python function on Tracers of fresh graph inputs.

The builder, `bind` and the Tracer base are in core.py; this module turns a user's function
and its arguments (pytrees of arrays) into a graph: argument checks and names, inputs,
outputs, and `inline` to replay a graph inside another trace. Importing the NumPy-like
front end here gives every traced value its operators before any function is traced.
"""
from __future__ import annotations

import contextlib
import inspect

import numpy as np

from . import dtypes, ir, numpy_api, pytree  # noqa: F401 (numpy_api: Tracer methods)
from .core import Builder, Tracer, TracerError, bind, building, const_p, current_builder, refuse_masked
from .guards import concrete_array
from .passes.dce import dce

def is_array_like(leaf) -> bool:
    return isinstance(leaf, (Tracer, np.ndarray, np.generic, float, int, bool))


def as_input_array(leaf, name: str) -> np.ndarray:
    """Validate one concrete argument leaf and return it as an ndarray of a supported dtype (an eager tensor's
    values even while it requires grad: a transform differentiates its own arguments, as for a closed-over one)."""
    refuse_masked(leaf, f"argument {name}")
    if isinstance(leaf, (str, bytes, complex)) or leaf is None:
        raise TypeError(f"argument {name}: expected a numeric array or scalar, got {type(leaf).__name__}")
    array = concrete_array(leaf)
    if array.dtype.kind not in "biuf":
        raise TypeError(f"argument {name}: expected a numeric array or scalar, got dtype {array.dtype}")
    try:
        return array.astype(dtypes.canonical(array.dtype), copy=False)
    except TypeError as err:
        raise TypeError(f"argument {name}: {err}") from None


def is_python_number(leaf) -> bool:
    """A Python int or float argument: traced weakly typed, so x_float32 * 2.0 stays float32 as in NumPy."""
    return type(leaf) in (int, float)


def argument_names(fn, count: int) -> list[str]:
    """Names of fn's first `count` positional parameters (arg0, arg1, ... where unknown)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = []
    for param in params:
        if param.kind not in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
            break
        names.append(param.name)
    names += [f"arg{i}" for i in range(len(names), count)]
    return names[:count]


def check_arguments(fn, args) -> None:
    """A TypeError naming fn's parameters when fn cannot take `args` positionally."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # no signature (a builtin): let the call decide
        return
    try:
        signature.bind(*args)
    except TypeError as err:
        params = ", ".join(signature.parameters)
        raise TypeError(f"{function_name(fn)}({params}) called with {len(args)} argument(s): {err}") from None


def function_name(fn, name=None) -> str:
    """A Python identifier naming fn (or `name`) for graphs and generated code."""
    name = name or getattr(fn, "__name__", "f")
    name = "".join(c if c.isalnum() or c == "_" else "_" for c in name.replace("<lambda>", "f"))
    return name if name.isidentifier() else "f_" + name


def trace_flat(fn, args, name=None, numbers_as_operands=False, reads=None, closed=False):
    """Trace fn(*args) with fresh inputs; returns (graph, out_tree, captured outer tracers). With `reads`
    (a core.Reads, root traces only), what it finds becomes trailing inputs of the graph; `closed` graphs
    (custom derivative rules) bake what they read instead."""
    parent = current_builder()
    builder = Builder(parent)
    builder.numbers_as_operands |= numbers_as_operands
    if reads is not None:
        reads.builder, builder.reads = builder, reads
    if closed:
        builder.reads = None
    arg_names = argument_names(fn, len(args))
    leaves, tree = pytree.flatten(list(args))
    leaf_names = pytree.leaf_names(list(args), arg_names)
    tracers = []
    for leaf, leaf_name in zip(leaves, leaf_names):
        if isinstance(leaf, (Tracer, ir.Value)):  # a Value: an argument known by its type alone
            tracers.append(builder.new_input(leaf.shape, leaf.dtype, leaf_name, weak=getattr(leaf, "weak", False)))
        else:
            array = as_input_array(leaf, leaf_name)
            tracers.append(builder.new_input(array.shape, array.dtype, leaf_name, weak=is_python_number(leaf)))
    with building(builder):
        out = fn(*pytree.unflatten(tree, tracers))
        out_leaves, out_tree = pytree.flatten(out)
        for i, leaf in enumerate(out_leaves):
            if not is_array_like(leaf):
                raise TypeError(f"{getattr(fn, '__name__', 'function')} returned a {type(leaf).__name__} at "
                                f"output {i}; outputs must be arrays or scalars (in tuples/lists/dicts)")
        graph = builder.finish(out_leaves, function_name(fn, name))
    return graph, out_tree, [outer for outer, _ in builder.captures]


def trace(fn, *args, **kwargs):
    """Trace fn on example arguments (arrays/scalars/pytrees) into a verified IR graph.

    Dead code is dropped (e.g. cotangents of arguments a gradient does not ask for); the other
    passes are left to `sg.compile`, so the graph shows what tracing and autodiff produced.
    Given an array rather than a function, it is NumPy's trace (the sum of a diagonal), as
    code ported from NumPy calls it: sg.trace(a, offset=0, axis1=0, axis2=1, dtype=None)."""
    if not callable(fn):
        return numpy_api.rearrange.trace(fn, *args, **kwargs)
    if kwargs:
        raise TypeError(f"sg.trace(f, *args) takes the function's arguments positionally, got {sorted(kwargs)}")
    graph, _, captures = trace_flat(fn, args)
    if captures:
        raise TracerError("sg.trace: the function captured traced values from an enclosing trace")
    return dce(ir.verify(graph))


def inline(graph: ir.Graph, operands, annotate=None) -> list:
    """Replay `graph` on operands (tracers or arrays) via bind; returns the map id(graph value) -> value."""
    env = {id(v): x for v, x in zip(graph.inputs, operands)}
    builder = current_builder()
    context = builder.annotate(**annotate) if (annotate and builder) else contextlib.nullcontext()
    with context:
        for node in graph.nodes:
            env[id(node.out)] = replay(node, [env[id(v)] for v in node.inputs], builder)
    return env


def replay(node: ir.Node, operands, builder):
    """node applied to operands via bind; a constant stays a constant of the active builder's graph, so what is
    computed from it is recorded, not evaluated at trace time (a broadcast of it is not baked)."""
    if node.prim is const_p and builder is not None:
        return Tracer(builder.lift(node.params["value"].array), builder)
    return bind(node.prim, operands, node.params)

