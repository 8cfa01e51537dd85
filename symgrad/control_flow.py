"""Loops and branches that stay rolled in the IR: sg.fori_loop, sg.scan, sg.while_loop, sg.cond, sg.switch;
and sg.checkpoint, a function whose reverse mode recomputes what it computed.

JAX's names, argument orders and pytree carries. Inside a trace each call traces its body (or
branches) once into a sub-graph and records one `scan`, `while` or `switch` node (ops/control.py),
so a loop of a million steps costs what one step does to trace and compile. Outside a trace
(NumPy arrays, eager tensors) they run as the Python loops and branches they stand for, so eager
tensors record each step for backward as any Python loop does.
"""
from __future__ import annotations

import functools
import operator

import numpy as np

from . import ir, pytree
from . import numpy_api as snp
from .core import ShapeError, Tracer, bind, current_builder, fail
from .loop_arrays import as_loop_arrays, plain
from .ops.control import clamp_index, results, scan_p, switch_p, while_p
from .tracing import as_input_array, trace_flat


def _traced() -> bool:
    return current_builder() is not None


def _trace(fn, args, name):
    """(graph with the captured outer values as its first inputs, output tree, captured values)."""
    graph, out_tree, captures = trace_flat(fn, args, name)
    own = len(graph.inputs) - len(captures)
    graph = ir.Graph(graph.inputs[own:] + graph.inputs[:own], graph.nodes, graph.outputs, graph.name)
    return graph, out_tree, captures


def _operands(leaves, values) -> list:
    """Leaves as operands of a node whose sub-graph inputs are `values`: arrays get those dtypes."""
    return [leaf if isinstance(leaf, Tracer) else np.asarray(leaf, dtype=value.dtype)
            for leaf, value in zip(leaves, values)]


def _example(leaves, names) -> list:
    """Concrete arrays standing for non-tracer leaves, validated (tracers stay as they are)."""
    return [leaf if isinstance(leaf, Tracer) else as_input_array(leaf, name) for leaf, name in zip(leaves, names)]


def _as_arrays(tree):
    """Outside a trace, a carry's or operand's Python numbers as the 0-d arrays a trace makes them (so a body's
    `(c > 0).astype(...)` runs on both sides, as in JAX), and its arrays with a traced value's `.at` (LoopArray)."""
    leaves, treedef = pytree.flatten(tree)
    return as_loop_arrays(pytree.unflatten(treedef, [np.asarray(leaf) if isinstance(leaf, (bool, int, float))
                                                     else leaf for leaf in leaves]))


def _check_structure(what, in_tree, out_tree):
    """A clear error when a body returns a carry of another structure than it takes."""
    if in_tree != out_tree:
        fail(f"{what}: the body must return a carry of the structure it takes; it takes {_describe(in_tree)} "
             f"and returns {_describe(out_tree)}", TypeError)


def _describe(tree) -> str:
    if tree.kind == "leaf":
        return "an array"
    if tree.kind == "none":
        return "None"
    if tree.kind == "dict":
        return f"a dict of keys {', '.join(map(str, tree.keys))}"
    return f"a {tree.kind} of {len(tree.children)} ({', '.join(_describe(child) for child in tree.children)})"


def _check_carry(what, in_tree, in_values, out_tree, out_values, names):
    """A clear error when a body returns a carry of another structure, shape or dtype than it takes."""
    _check_structure(what, in_tree, out_tree)
    for name, inner, outer in zip(names, in_values, out_values):
        if (inner.shape, inner.dtype) != (outer.shape, outer.dtype):
            fail(f"{what}: the body changes the carry {name!r} from {inner.type_str()} to {outer.type_str()}; "
                 "a carry keeps its shape and dtype from step to step (convert it before the loop)")


# ----------------------------------------------------------------------------- scan

def scan(f, init, xs=None, length=None, reverse=False, unroll=1):
    """f(carry, x) -> (carry, y) over the leading axis of xs: returns (final carry, stacked ys), as jax.lax.scan.
    `unroll`, JAX's hint, is checked and left to the backends (they choose how to emit the loop)."""
    _check_unroll("scan", unroll)
    return _scan(f, init, xs, length, reverse, "scan", pytree.leaf_names([init], ["carry"]))


def _scan(f, init, xs, length, reverse, what, names):
    """scan, called `what` in errors, which name the carry's leaves `names`."""
    x_leaves, x_tree = pytree.flatten(xs)
    lengths = {int(np.shape(leaf)[0]) for leaf in x_leaves if np.ndim(leaf) > 0}
    if any(np.ndim(leaf) == 0 for leaf in x_leaves):
        fail("scan: every xs leaf needs a leading axis to scan over; got a 0-d value", ShapeError)
    if length is not None:
        lengths.add(int(length))
    if len(lengths) != 1:
        fail(f"scan: the xs leaves and length= disagree on the number of steps: {sorted(lengths)}"
             if lengths else "scan: give xs or length=", ShapeError)
    (steps,) = lengths
    if not _traced():
        return plain(_scan_in_python(f, _as_arrays(init), as_loop_arrays(xs), steps, reverse))
    init_leaves, init_tree = pytree.flatten(init)
    init_leaves = _example(init_leaves, names)
    x_leaves = [leaf if isinstance(leaf, Tracer) else as_input_array(leaf, "xs") for leaf in x_leaves]
    slices = [ir.Value(leaf.shape[1:], leaf.dtype) for leaf in x_leaves]
    carry_example = pytree.unflatten(init_tree, init_leaves)
    body, out_tree, captures = _trace(lambda c, x: _pair(f(c, x)), [carry_example, pytree.unflatten(x_tree, slices)],
                                      getattr(f, "__name__", "body"))
    if out_tree.kind not in ("tuple", "list") or len(out_tree.children) != 2:
        fail("scan: the body must return a pair (carry, y)", TypeError)
    carry_tree, y_tree = out_tree.children
    num_consts, num_carry = len(captures), len(init_leaves)
    _check_carry(what, init_tree, body.inputs[num_consts:num_consts + num_carry], carry_tree,
                 body.outputs[:num_carry], names)
    operands = list(captures) + _operands(init_leaves, body.inputs[num_consts:]) + x_leaves
    outs = results(bind(scan_p, operands, dict(body=body, length=steps, reverse=bool(reverse),
                                                num_consts=num_consts, num_carry=num_carry)))
    return pytree.unflatten(init_tree, outs[:num_carry]), pytree.unflatten(y_tree, outs[num_carry:])


def _check_unroll(what, unroll):
    """JAX's unroll: a positive int or a bool; it changes no value, so symgrad takes it and leaves the loop rolled."""
    if not isinstance(unroll, (bool, int, np.integer)) or (not isinstance(unroll, bool) and unroll < 1):
        raise ValueError(f"{what}: unroll must be a positive int or a bool, got {unroll!r}")


def _pair(out):
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        fail("scan: the body must return a pair (carry, y)", TypeError)
    return tuple(out)


def _scan_in_python(f, carry, xs, steps, reverse):
    x_leaves, x_tree = pytree.flatten(xs)
    if steps == 0:
        return carry, _no_ys(f, carry, x_leaves, x_tree)
    ys = [None] * steps
    for step in (range(steps - 1, -1, -1) if reverse else range(steps)):
        carry, ys[step] = as_loop_arrays(_pair(f(carry, pytree.unflatten(x_tree, [leaf[step] for leaf in x_leaves]))))
    y_leaves = [pytree.flatten(y)[0] for y in ys]
    y_tree = pytree.flatten(ys[0])[1]
    stacked = [snp.stack([leaves[k] for leaves in y_leaves]) for k in range(len(y_leaves[0]))]
    return carry, pytree.unflatten(y_tree, stacked)


def _no_ys(f, carry, x_leaves, x_tree):
    """The ys of a scan of no steps outside a trace: empty arrays of the types a traced step gives them (the body
    is traced, not run, as JAX's scan does)."""
    slices = [ir.Value(tuple(np.shape(leaf))[1:], as_input_array(leaf, "xs").dtype) for leaf in x_leaves]
    step, out_tree, _ = trace_flat(lambda c, x: _pair(f(c, x)), [carry, pytree.unflatten(x_tree, slices)], "body")
    carry_leaves = pytree.flatten(carry)[0]
    ys = step.outputs[len(carry_leaves):]
    # no elements of an operand (an eager tensor's: the ys are tensors, as the steps' would be), reshaped
    empty = snp.reshape(snp.asarray((carry_leaves + x_leaves + [np.zeros(0)])[0]), (-1,))[:0]
    return pytree.unflatten(out_tree.children[1], [snp.astype(snp.reshape(empty, (0,) + y.shape), y.dtype)
                                                   for y in ys])


# ----------------------------------------------------------------------------- fori_loop

def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """body_fun(i, val) -> val for i in [lower, upper), as jax.lax.fori_loop. Python-int bounds give a
    scan (a fixed number of steps); traced bounds give a while loop. `unroll` as scan's."""
    if unroll is not None:
        _check_unroll("fori_loop", unroll)
    lower, upper = _bound(lower, "lower"), _bound(upper, "upper")
    if not _traced():
        value = _as_arrays(init_val)
        for i in range(int(lower), int(upper)):
            value = as_loop_arrays(body_fun(i, value))
        return plain(value)
    init_tree = pytree.flatten(init_val)[1]

    def body(i, value):
        value = body_fun(i, value)
        _check_structure("fori_loop", init_tree, pytree.flatten(value)[1])
        return value

    names = pytree.leaf_names([init_val], ["carry"])
    if not isinstance(lower, Tracer) and not isinstance(upper, Tracer):
        def step(carry, _):
            return (carry[0] + 1, body(*carry)), ()

        (_, value), _ = _scan(step, (np.int64(lower), init_val), None, max(upper - lower, 0), False, "fori_loop",
                              ["the step index"] + names)
        return value
    bounds = (snp.astype(snp.asarray(lower), np.int64), snp.astype(snp.asarray(upper), np.int64))
    _, _, value = _while_loop(lambda c: c[0] < c[1], lambda c: (c[0] + 1, c[1], body(c[0], c[2])), bounds + (init_val,),
                              None, "fori_loop", ["the step index", "upper"] + names)
    return value


def _bound(bound, name):
    """A loop bound: a Python int, or an integer scalar (traced or not); never silently truncated."""
    if isinstance(bound, Tracer):
        if bound.shape != () or bound.dtype.kind not in "iu":
            fail(f"fori_loop: {name} must be an integer scalar, got {bound.value.type_str()}", TypeError)
        return bound
    try:
        return operator.index(bound)
    except TypeError:
        fail(f"fori_loop: {name} must be an integer, got {bound!r}", TypeError)


# ----------------------------------------------------------------------------- while_loop

def while_loop(cond_fun, body_fun, init_val, *, checkpoints=None):
    """Repeat body_fun(val) -> val while cond_fun(val) is true, as jax.lax.while_loop, and differentiable in
    reverse mode too: the backward pass keeps every carry, or with `checkpoints=C` at most C of them
    (recomputing the others: memory about C + 2 steps / C carries, for one more forward pass)."""
    return _while_loop(cond_fun, body_fun, init_val, checkpoints, "while_loop",
                       pytree.leaf_names([init_val], ["carry"]))


def _while_loop(cond_fun, body_fun, init_val, checkpoints, what, names):
    """while_loop, called `what` in errors, which name the carry's leaves `names`."""
    if checkpoints is not None:
        if isinstance(checkpoints, bool) or not isinstance(checkpoints, (int, np.integer)) or checkpoints < 2:
            raise ValueError(f"{what}: checkpoints must be None (keep every carry) or an int >= 2, "
                             f"got {checkpoints!r}")
        checkpoints = int(checkpoints)
    if not _traced():
        value = _as_arrays(init_val)
        while _predicate(what, cond_fun(value)):
            value = as_loop_arrays(body_fun(value))
        return plain(value)
    init_leaves, init_tree = pytree.flatten(init_val)
    init_leaves = _example(init_leaves, names)
    example = pytree.unflatten(init_tree, init_leaves)
    cond, cond_tree, cond_captures = _trace(lambda c: _scalar_bool(what, cond_fun(c)), [example],
                                            getattr(cond_fun, "__name__", "cond"))
    body, body_tree, body_captures = _trace(body_fun, [example], getattr(body_fun, "__name__", "body"))
    num_body_consts = len(body_captures)
    _check_carry(what, init_tree, body.inputs[num_body_consts:], body_tree, body.outputs, names)
    operands = list(cond_captures) + list(body_captures) + _operands(init_leaves, body.inputs[num_body_consts:])
    outs = results(bind(while_p, operands, dict(cond=cond, body=body, num_cond_consts=len(cond_captures),
                                                 num_body_consts=num_body_consts, checkpoints=checkpoints)))
    return pytree.unflatten(init_tree, outs)


def _scalar_bool(what, pred):
    pred = snp.asarray(pred)
    if pred.shape != ():
        fail(f"{what}: the predicate must be a scalar, got shape {pred.shape}", ShapeError)
    return pred if pred.dtype == np.bool_ else pred != 0


def _predicate(what, pred) -> bool:
    if np.shape(pred) != ():
        fail(f"{what}: the predicate must be a scalar, got shape {np.shape(pred)}", ShapeError)
    return bool(pred)


# ----------------------------------------------------------------------------- cond / switch

def switch(index, branches, *operands):
    """branches[index](*operands), index clamped into range, as jax.lax.switch; every branch returns the same types."""
    branches = list(branches)
    if not branches:
        raise ValueError("switch: give at least one branch")
    if not _traced():
        if np.shape(index) != () or np.asarray(index).dtype.kind not in "iub":
            fail(f"switch: the index must be an integer scalar, got {index!r}", ShapeError)
        return plain(branches[clamp_index(index, len(branches))](*_as_arrays(list(operands))))
    index = snp.asarray(index)
    if index.shape != () or index.dtype.kind not in "iub":
        fail(f"switch: the index must be an integer scalar, got {ir.Value(index.shape, index.dtype).type_str()}",
             ShapeError)
    return _branch("switch", snp.astype(index, np.int64), branches, operands,
                   [f"branch {k}" for k in range(len(branches))])


def cond(pred, true_fun, false_fun, *operands):
    """true_fun(*operands) if pred else false_fun(*operands), as jax.lax.cond; both return the same types."""
    if not _traced():
        return plain((true_fun if _predicate("cond", pred) else false_fun)(*_as_arrays(list(operands))))
    pred = _scalar_bool("cond", pred)
    return _branch("cond", snp.astype(pred, np.int64), [false_fun, true_fun], operands, ["false_fun", "true_fun"])


def _branch(what, index, branches, operands, labels):
    leaves, tree = pytree.flatten(list(operands))
    leaves = _example(leaves, pytree.leaf_names(list(operands), [f"operand{i}" for i in range(len(operands))]))
    example = pytree.unflatten(tree, leaves)
    traced = [_trace(fn, example, getattr(fn, "__name__", f"branch{k}")) for k, fn in enumerate(branches)]
    out_tree, first = traced[-1][1], [v.type_str() for v in traced[-1][0].outputs]
    for label, (graph, tree, _) in zip(labels, traced):
        types = [v.type_str() for v in graph.outputs]
        if tree != out_tree or types != first:
            fail(f"{what}: the branches must return the same structure, shapes and dtypes; {labels[-1]} returns "
                 f"{', '.join(first)} ({out_tree}) and {label} returns {', '.join(types)} ({tree})", TypeError)
    # every branch takes every branch's captured values, after the operands
    captures = [c for _, _, caps in traced for c in caps]
    graphs, offset = [], 0
    for graph, _, caps in traced:
        shared = [ir.Value(c.shape, c.dtype, "captured") for c in captures]  # unused by this branch
        shared[offset:offset + len(caps)] = graph.inputs[:len(caps)]
        offset += len(caps)
        graphs.append(ir.Graph(graph.inputs[len(caps):] + shared, graph.nodes, graph.outputs, graph.name))
    operand_values = _operands(leaves, graphs[0].inputs) + captures
    outs = results(bind(switch_p, [index] + operand_values, dict(branches=tuple(graphs))))
    return pytree.unflatten(out_tree, outs)


# ----------------------------------------------------------------------------- checkpoint

def checkpoint(fn):
    """fn, whose reverse mode recomputes its intermediate values from its arguments instead of keeping
    them (jax.checkpoint, torch.utils.checkpoint): memory traded for a second forward pass of fn.

    Traced, a call is a one-branch switch: its derivative, a switch over the branch's derivative,
    runs the branch forward again. On eager tensors fn runs as it is."""
    @functools.wraps(fn)
    def checkpointed(*args):
        if not _traced():
            return fn(*args)
        return _branch("checkpoint", np.int64(0), [fn], args, [getattr(fn, "__name__", "fn")])
    return checkpointed
