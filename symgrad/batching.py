"""`sg.vmap`: a function mapped over an axis of its arguments, run as one batched program.

vmap traces the function once on one example (the mapped axes removed) and replays its graph with
each value carrying a batch axis in front, or none when it does not depend on the mapped arguments.
Each primitive's batching rule (BATCH_RULES, keyed by primitive) writes its batched form with
primitives, so the result is ordinary IR: it composes with grad, jvp, compile and with vmap itself.
Loops are batched whole, their bodies batched in turn; a `while_loop` (whose examples stop after
different numbers of steps) and a `switch` on a batched index run the examples one after another in a
scan (jax.lax.map), so no example runs a step or a branch it would not run alone.
"""
from __future__ import annotations

import numpy as np

from . import ir, pytree
from . import numpy_api as sg
from .core import Tracer, TracerError, bind, current_builder
from .ops import control
from .ops.conv import col2im_p, im2col_p
from .ops.control import result_p, results, scan_p, switch_p, while_p, while_vjp_p
from .ops.cumulative import cumprod_p, cumsum_p
from .ops.custom import custom_jvp_p, custom_vjp_p
from .ops.ew import ew_p
from .ops.indexing import scatter_add_p, slice_p, take_p, unslice_p, wrap_index_p
from .ops import lapack
from .ops.linalg import matmul_p
from .ops.reduce import first_max_p, reduce_max_p, reduce_min_p, reduce_prod_p
from .ops.sorting import argsort_p
from .ops.shape import (broadcast_to_p, concatenate_p, convert_p, reduce_sum_p, reshape_p, roll_p,
                        stop_gradient_p, transpose_p)
from .passes.dce import dce
from .tracing import argument_names, function_name, replay, trace_flat


def vmap(fn, in_axes=0, out_axes=0):
    """fn mapped over axis `in_axes` of its arguments (an int, None for an argument that is not mapped,
    or a tuple with one entry per positional argument, each an int/None or a pytree of them matching the
    argument); the results carry the mapped axis at `out_axes` (an int, None for an output that does not
    depend on the mapped arguments, or a pytree prefix of the output)."""
    return Mapped(fn, in_axes, out_axes)


class Mapped:
    """A function made by vmap (an object, so it pickles as vmap of the function, as pickle sends that)."""

    def __init__(self, fn, in_axes, out_axes):
        self.fn = self.__wrapped__ = fn
        self.in_axes, self.out_axes = in_axes, out_axes
        self.__name__ = f"vmap_{function_name(fn)}"

    def __reduce__(self):
        return vmap, (self.fn, self.in_axes, self.out_axes)

    def __call__(self, *args):
        fn, in_axes, out_axes, name = self.fn, self.in_axes, self.out_axes, function_name(self.fn)
        leaves, tree = pytree.flatten(list(args))
        leaf_names = pytree.leaf_names(list(args), argument_names(fn, len(args)))
        axes = _leaf_axes(in_axes, args, name)
        size = _batch_size(leaves, axes, leaf_names, name)
        examples, operands = [], []
        for leaf, axis in zip(leaves, axes):
            if axis is None:
                examples.append(leaf)
                operands.append(leaf)
            else:
                examples.append(ir.Value(tuple(np.delete(np.shape(leaf), axis)), _dtype_of(leaf)))
                operands.append(sg.moveaxis(leaf, axis, 0))
        graph, out_tree, captures = trace_flat(fn, pytree.unflatten(tree, examples), name=name)
        # without its dead nodes: on arrays each node runs, and one a transform left unused may not run at all (the
        # derivative in gammainc's shape a, which only its unused cotangent needs)
        graph = dce(graph)
        batched = [axis is not None for axis in axes] + [False] * len(captures)
        outs = batch_graph(graph, list(operands) + list(captures), batched, size)
        targets = _leaf_axes_of_output(out_axes, out_tree, name)
        placed = [_place(value, is_batched, axis, size, name) for (value, is_batched), axis in zip(outs, targets)]
        return pytree.unflatten(out_tree, placed)


def _dtype_of(leaf):
    return leaf.dtype if isinstance(leaf, Tracer) else np.asarray(leaf).dtype


def _leaf_axes(in_axes, args, name) -> list:
    """One mapped axis (or None) per argument leaf, from in_axes, checked against each leaf's rank."""
    if isinstance(in_axes, (int, type(None))):
        per_arg = [in_axes] * len(args)
    elif isinstance(in_axes, (tuple, list)) and len(in_axes) == len(args):
        per_arg = list(in_axes)
    else:
        raise ValueError(f"vmap({name}): in_axes must be an int, None, or a tuple with one entry per positional "
                         f"argument ({len(args)}), got {in_axes!r}")
    axes = []
    for arg, spec in zip(args, per_arg):
        for leaf, axis in zip(pytree.flatten(arg)[0], _per_leaf(spec, pytree.flatten(arg)[1], name)):
            if axis is not None:
                ndim = len(np.shape(leaf))
                if not -ndim <= axis < ndim:
                    raise ValueError(f"vmap({name}): in_axes {axis} is out of range for an argument of shape "
                                     f"{tuple(np.shape(leaf))}")
                axis %= ndim
            axes.append(axis)
    return axes


def _per_leaf(spec, tree: pytree.TreeDef, name) -> list:
    """An axis spec (an int or None for a whole subtree, or a pytree of them) as one entry per leaf of tree."""
    if spec is None or isinstance(spec, int):
        return [spec] * tree.num_leaves
    if tree.kind == "dict" and isinstance(spec, dict) and sorted(spec) == list(tree.keys):
        return [axis for key, child in zip(tree.keys, tree.children) for axis in _per_leaf(spec[key], child, name)]
    if tree.kind in ("tuple", "list") and isinstance(spec, (tuple, list)) and len(spec) == len(tree.children):
        return [axis for item, child in zip(spec, tree.children) for axis in _per_leaf(item, child, name)]
    raise ValueError(f"vmap({name}): the axis spec {spec!r} does not match its value's structure")


def _batch_size(leaves, axes, names, name) -> int:
    sizes = {(leaf_name, int(np.shape(leaf)[axis])) for leaf, axis, leaf_name in zip(leaves, axes, names)
             if axis is not None}
    if not sizes:
        raise ValueError(f"vmap({name}): no argument is mapped (every in_axes entry is None)")
    if len({size for _, size in sizes}) > 1:
        listing = ", ".join(f"{leaf_name} has {size}" for leaf_name, size in sorted(sizes))
        raise ValueError(f"vmap({name}): the mapped axes have different sizes: {listing}")
    return next(iter(sizes))[1]


def _leaf_axes_of_output(out_axes, out_tree, name) -> list:
    if isinstance(out_axes, (tuple, list)) and out_tree.kind == "leaf":
        raise ValueError(f"vmap({name}): out_axes {out_axes!r} for a function returning one array")
    return _per_leaf(out_axes, out_tree, name)


def _place(value, is_batched, axis, size, name):
    """An output with its batch axis moved from the front to `axis` (added by broadcasting when the
    output does not depend on the mapped arguments)."""
    if axis is None:
        if is_batched:
            raise ValueError(f"vmap({name}): out_axes is None for an output that depends on the mapped arguments")
        return value
    if not is_batched:
        value = lifted(value, size)
    ndim = len(np.shape(value))
    if not -ndim <= axis < ndim:
        raise ValueError(f"vmap({name}): out_axes {axis} is out of range for an output of shape {np.shape(value)}")
    return sg.moveaxis(value, 0, axis % ndim) if axis % ndim else value


# ----------------------------------------------------------------------------- replaying a graph

def batch_graph(graph: ir.Graph, operands, batched, size) -> list:
    """Replay `graph` on operands (tracers or arrays); those flagged batched carry `size` examples along a
    leading axis. Returns (value, batched) per graph output."""
    env = {id(v): (x, b) for v, x, b in zip(graph.inputs, operands, batched)}
    builder = current_builder()
    for node in graph.nodes:
        inputs = [env[id(v)] for v in node.inputs]
        if not any(b for _, b in inputs):
            env[id(node.out)] = (replay(node, [x for x, _ in inputs], builder), False)
            continue
        rule = BATCH_RULES.get(node.prim) or _one_by_one(node.prim)
        env[id(node.out)] = (rule([x for x, _ in inputs], [b for _, b in inputs], size, **node.params), True)
    return [env[id(v)] for v in graph.outputs]


def lifted(x, size):
    """x (not batched) with a batch axis of `size` in front."""
    shape = tuple(np.shape(x))
    return broadcast_to_p(x, shape=(size, *shape))


def _all_lifted(values, batched, size) -> list:
    return [x if b else lifted(x, size) for x, b in zip(values, batched)]


def _batched_subgraph(graph: ir.Graph, size: int) -> ir.Graph:
    """`graph` (a loop body, a branch) over inputs that all carry the batch axis in front, every output
    batched too."""
    def run(*inputs):
        outs = batch_graph(graph, inputs, [True] * len(inputs), size)
        return [x if b else lifted(x, size) for x, b in outs]
    return _closed(run, [ir.Value((size, *v.shape), v.dtype) for v in graph.inputs], f"{graph.name}_batched")


# ----------------------------------------------------------------------------- rules

def _elementwise(inputs, batched, size, **params):
    return ew_p(*_all_lifted(inputs, batched, size), **params)


def _unary(prim):
    return lambda inputs, batched, batch, **params: prim(inputs[0], **params)


def _reduce(prim):
    return lambda inputs, batched, size, axes: prim(inputs[0], axes=tuple(a + 1 for a in axes))


def _first_max(inputs, batched, size):
    """first_max reduces axis 0: the batch axis goes second."""
    (x,) = inputs
    return first_max_p(transpose_p(x, perm=(1, 0, *range(2, len(x.shape)))))


def _broadcast(inputs, batched, size, shape):
    (x,) = inputs
    lead = len(shape) - (len(x.shape) - 1)
    aligned = reshape_p(x, shape=(size, *(1,) * lead, *x.shape[1:])) if lead else x
    return broadcast_to_p(aligned, shape=(size, *shape))


def _reshape(inputs, batched, size, shape):
    return reshape_p(inputs[0], shape=(size, *shape))


def _transpose(inputs, batched, size, perm):
    return transpose_p(inputs[0], perm=(0, *(p + 1 for p in perm)))


def _concatenate(inputs, batched, size, axis):
    return concatenate_p(*_all_lifted(inputs, batched, size), axis=axis + 1)


def _along_axis(prim):
    """A primitive acting along one axis (roll, cumsum, cumprod): the same axis, one further."""
    return lambda inputs, batched, size, axis, **params: prim(inputs[0], axis=axis + 1, **params)


def _slice(inputs, batched, size, starts, steps, sizes):
    return slice_p(inputs[0], starts=(0, *starts), steps=(1, *steps), sizes=(size, *sizes))


def _unslice(inputs, batched, size, shape, starts, steps):
    return unslice_p(inputs[0], shape=(size, *shape), starts=(0, *starts), steps=(1, *steps))


def _offset(index, stride):
    """A batched index (wrapped from negative, and checked) plus b * stride for example b: its position
    among the examples laid end to end."""
    index = wrap_index_p(index, size=stride, negative=True)
    offsets = (np.arange(index.shape[0]) * stride).astype(index.dtype)
    return sg.add(index, offsets.reshape((-1,) + (1,) * (len(index.shape) - 1)))


def _take(inputs, batched, size, axis):
    x, index = inputs
    x_batched, index_batched = batched
    if not index_batched:
        return take_p(x, index, axis=axis + 1)
    if not x_batched:  # every example reads the same x: the batch axis lands where `axis` was
        out = take_p(x, index, axis=axis)
        return _to_front(out, axis)
    # both batched: gather from the examples laid end to end along the axis, each index offset to its own
    n = x.shape[axis + 1]
    front = _to_front(x, axis + 1, keep_first=True)  # (size, n, rest...)
    rest = front.shape[2:]
    flat = reshape_p(front, shape=(size * n, *rest))
    index = _offset(index, n)
    out = take_p(flat, index, axis=0)  # (size, index..., rest...)
    k = len(index.shape)
    # NumPy's layout: the axes before `axis`, the index axes, the axes after `axis`
    before, after = list(range(k, k + axis)), list(range(k + axis, k + len(rest)))
    return transpose_p(out, perm=(0, *before, *range(1, k), *after))


def _scatter(inputs, batched, batch, **params):
    update, index = inputs
    axis, length = params["axis"], params["size"]
    update_batched, index_batched = batched
    if not index_batched:
        return scatter_add_p(update, index, axis=axis + 1, size=length)
    update = update if update_batched else lifted(update, batch)
    k = len(index.shape) - 1  # the index axes of one example
    pre = list(range(1, axis + 1))
    index_axes = list(range(axis + 1, axis + 1 + k))
    post = list(range(axis + 1 + k, len(update.shape)))
    moved = transpose_p(update, perm=(0, *index_axes, *pre, *post))  # (batch, index..., pre..., post...)
    index = _offset(index, length)
    out = scatter_add_p(moved, index, axis=0, size=batch * length)  # (batch * length, pre..., post...)
    shape = update.shape
    pre_shape, post_shape = tuple(shape[1:axis + 1]), tuple(shape[axis + 1 + k:])
    out = reshape_p(out, shape=(batch, length, *pre_shape, *post_shape))
    return transpose_p(out, perm=(0, *range(2, 2 + len(pre_shape)), 1, *range(2 + len(pre_shape), len(out.shape))))


def _to_front(x, axis, keep_first=False):
    """x with `axis` moved to the front (keep_first: to just after axis 0)."""
    order = [a for a in range(len(x.shape)) if a != axis]
    order.insert(1 if keep_first else 0, axis)
    return transpose_p(x, perm=tuple(order)) if order != list(range(len(x.shape))) else x


def _matmul(inputs, batched, size):
    """One product where one operand is a plain matrix: the examples of the other laid side by side
    (the matrix is not copied once per example)."""
    a, b = inputs
    a_batched, b_batched = batched
    if a_batched and not b_batched and len(b.shape) == 2:  # (size, ..., m, k) @ (k, n)
        flat = reshape_p(a, shape=(int(np.prod(a.shape[:-1])), a.shape[-1]))
        return reshape_p(matmul_p(flat, b), shape=(*a.shape[:-1], b.shape[-1]))
    if b_batched and not a_batched and len(a.shape) == 2:  # (m, k) @ (size, ..., k, n)
        ndim = len(b.shape)
        front = transpose_p(b, perm=(ndim - 2, *range(ndim - 2), ndim - 1))  # (k, size, ..., n)
        flat = reshape_p(front, shape=(b.shape[-2], int(np.prod(front.shape[1:]))))
        out = reshape_p(matmul_p(a, flat), shape=(a.shape[0], *front.shape[1:]))  # (m, size, ..., n)
        return transpose_p(out, perm=(*range(1, ndim - 1), 0, ndim - 1))
    a, b = _all_lifted(inputs, batched, size)
    return matmul_p(a, b)


# ----------------------------------------------------------------------------- loops and branches

def _components(out, count) -> list:
    return [result_p(out, index=k) for k in range(count)]


def _result(inputs, batched, size, index):
    return inputs[0][index]


def _scan(inputs, batched, size, body, length, reverse, num_consts, num_carry):
    values = _all_lifted(inputs, batched, size)
    consts, init, xs = control.split_scan(values, num_consts, num_carry)
    xs = [transpose_p(x, perm=(1, 0, *range(2, len(x.shape)))) for x in xs]  # (length, size, ...)
    new_body = _batched_subgraph(body, size)
    out = scan_p(*consts, *init, *xs, body=new_body, length=length, reverse=reverse, num_consts=num_consts,
                 num_carry=num_carry)
    parts = _components(out, len(body.outputs))
    return parts[:num_carry] + [transpose_p(y, perm=(1, 0, *range(2, len(y.shape)))) for y in parts[num_carry:]]


def _switch(inputs, batched, size, branches):
    """The same index for every example: a switch over the batched branches. A batched index: the
    examples one by one, each running only the branch it selects (another branch could fail on it)."""
    if batched[0]:
        return _one_by_one(switch_p)(inputs, batched, size, branches=branches)
    operands = _all_lifted(inputs[1:], batched[1:], size)
    new_branches = tuple(_batched_subgraph(branch, size) for branch in branches)
    return _components(switch_p(inputs[0], *operands, branches=new_branches), len(branches[0].outputs))


def _one_by_one(prim):
    """The rule of a primitive whose examples must run apart: a scan over the examples, each running the
    primitive as it is (jax.lax.map). A while loop's examples stop after different numbers of steps, and a
    step run past an example's end could fail (an index out of range) where the program is correct."""
    def rule(inputs, batched, size, **params):
        consts = [x for x, b in zip(inputs, batched) if not b]
        xs = [x for x, b in zip(inputs, batched) if b]
        tupled = []  # whether the primitive's value is a tuple (a loop's), seen while tracing the step

        def step(*values):
            const_values, slices = iter(values[:len(consts)]), iter(values[len(consts):])
            out = bind(prim, [next(slices) if b else next(const_values) for b in batched], params)
            tupled.append(ir.is_tuple_dtype(out.dtype))
            return results(out) if tupled[-1] else [out]

        types = [ir.Value(tuple(np.shape(x)), x.dtype) for x in consts]
        types += [ir.Value(tuple(np.shape(x))[1:], x.dtype) for x in xs]
        body = _closed(step, types, f"{prim.name}_per_example")
        out = scan_p(*consts, *xs, body=body, length=size, reverse=False, num_consts=len(consts), num_carry=0)
        ys = _components(out, len(body.outputs))
        return ys if tupled[0] else ys[0]
    return rule


def _closed(fn, types, name) -> ir.Graph:
    graph, _, captures = trace_flat(fn, types, name=name)
    if captures:
        raise TracerError(f"vmap: internal error: {name} captured outer values")
    return graph


def _custom_vjp(inputs, batched, size, fun, fwd, bwd):
    graphs = {name: _batched_subgraph(graph, size) for name, graph in (("fun", fun), ("fwd", fwd), ("bwd", bwd))}
    return _components(custom_vjp_p(*_all_lifted(inputs, batched, size), **graphs), len(fun.outputs))


def _custom_jvp(inputs, batched, size, fun, jvp):
    out = custom_jvp_p(*_all_lifted(inputs, batched, size), fun=_batched_subgraph(fun, size),
                       jvp=_batched_subgraph(jvp, size))
    return _components(out, len(fun.outputs))


def _stacked(prim):
    """A primitive over stacks of matrices (ops/lapack.py): the batch axis is one more leading axis of
    every operand; a tuple value (a factorization's) is handed on as its components."""
    def rule(inputs, batched, size, **params):
        out = prim(*_all_lifted(inputs, batched, size), **params)
        return results(out) if isinstance(out, tuple) or ir.is_tuple_dtype(out.dtype) else out
    return rule


def _im2col(inputs, batched, size, **params):
    """The examples join the image batch (size * N images), then split off again in front."""
    (x,) = inputs
    cols = im2col_p(reshape_p(x, shape=(size * x.shape[1], *x.shape[2:])), **params)  # (size*N, C, *kernel, *out)
    return reshape_p(cols, shape=(size, x.shape[1], *cols.shape[1:]))


def _col2im(inputs, batched, size, **params):
    (cols,) = inputs  # (size, N, C, *kernel, *out)
    image = col2im_p(reshape_p(cols, shape=(size * cols.shape[1], *cols.shape[2:])), **params)
    return reshape_p(image, shape=(size, cols.shape[1], *image.shape[1:]))


BATCH_RULES = {
    ew_p: _elementwise,
    convert_p: _unary(convert_p),
    stop_gradient_p: _unary(stop_gradient_p),
    wrap_index_p: _unary(wrap_index_p),
    broadcast_to_p: _broadcast,
    reduce_sum_p: _reduce(reduce_sum_p),
    reduce_max_p: _reduce(reduce_max_p),
    first_max_p: _first_max,
    reduce_min_p: _reduce(reduce_min_p),
    reduce_prod_p: _reduce(reduce_prod_p),
    reshape_p: _reshape,
    transpose_p: _transpose,
    concatenate_p: _concatenate,
    roll_p: _along_axis(roll_p),
    cumsum_p: _along_axis(cumsum_p),
    cumprod_p: _along_axis(cumprod_p),
    slice_p: _slice,
    unslice_p: _unslice,
    take_p: _take,
    scatter_add_p: _scatter,
    matmul_p: _matmul,
    result_p: _result,
    scan_p: _scan,
    switch_p: _switch,
    while_p: _one_by_one(while_p),
    while_vjp_p: _one_by_one(while_vjp_p),
    custom_vjp_p: _custom_vjp,
    custom_jvp_p: _custom_jvp,
    argsort_p: _unary(argsort_p),  # along the last axis: the batch axis in front is one more leading axis
    **{prim: _stacked(prim) for prim in lapack.PRIMITIVES},
    im2col_p: _im2col,
    col2im_p: _col2im,
}
