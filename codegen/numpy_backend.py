"""NumPy backend: lowers an IR graph to readable Python source that calls NumPy.

Each primitive has a rule in NUMPY_RULES (keyed by the primitive) that returns the source
lines computing one node, or the module calls its NumPy reference (`impl`), whose source it
defines (`impl_helper`). Elementwise nodes print their SymPy expression with `NumpyExprPrinter`
(common subexpressions pulled out by SymPy's cse), the printer that also gives elementwise ops
their reference implementation (symgrad/ops/numpy_expressions.py).
"""
from __future__ import annotations

import math

import numpy as np

from symgrad import ir
from symgrad.codegen.standalone import standalone_source
from symgrad.core import const_p
from symgrad.ops.ew import ew_p
from symgrad.ops.indexing import scatter_add_p, slice_p, strided_slices, take_p, unslice_p
from symgrad.ops.linalg import matmul_p
from symgrad.ops.numpy_expressions import HELPERS as EXPRESSION_HELPERS
from symgrad.ops.numpy_expressions import NumpyExprPrinter, elementwise_lines, np_dtype
from symgrad.ops.reduce import reduce_max_p, reduce_min_p, reduce_prod_p
from symgrad.ops.shape import (broadcast_to_p, concatenate_p, convert_p, reduce_sum_p, reshape_p, stop_gradient_p,
                               transpose_p)

# Functions a generated module defines when it uses them, so it stays standalone: the expression
# printer's, and the NumPy references of primitives with no rule here (added by impl_helper).
HELPERS = dict(EXPRESSION_HELPERS)


# ----------------------------------------------------------------------------- rules

class _Module:
    """What rules write besides the function body: the printer (it records the helpers the source
    uses), module-level lines defining constants, and the large constants the loader passes in."""

    def __init__(self):
        self.printer = NumpyExprPrinter()
        self.header: list[str] = []
        self.constants: dict = {}


def _slices_text(starts, steps, sizes) -> str:
    parts = [f"{s.start}:{'' if s.stop is None else s.stop}" + (f":{s.step}" if s.step != 1 else "")
             for s in strided_slices(starts, steps, sizes)]
    return ", ".join(parts) + ("," if len(parts) == 1 else "")


def _expr_rule(template):
    return lambda node, args, target, module: [f"{target} = {template(node.params, args, node)}"]


def _const_rule(node, args, target, module):
    """A constant is defined once at module level, not in the function body."""
    module.header.append(_constant_line(target, node, module.constants))
    return []


def _ew_rule(node, args, target, module):
    params = node.params
    return elementwise_lines(params["expr"], dict(zip(params["args"], args)), params["dtype"], target, module.printer)


def _unslice_rule(node, args, target, module):
    p = node.params
    x = node.inputs[0]
    return [f"{target} = np.zeros({p['shape']}, dtype={np_dtype(x.dtype)})",
            f"{target}[{_slices_text(p['starts'], p['steps'], x.shape)}] = {args[0]}"]


def _scatter_rule(node, args, target, module):
    p = node.params
    upd, idx = node.inputs
    return [f"{target} = np.zeros({node.out.shape}, dtype={np_dtype(upd.dtype)})",
            f"np.add.at({target}, ({'slice(None), ' * p['axis']}{args[1]}), {args[0]})"]


# NUMPY_RULES[prim](node, args, target, module) -> the body lines assigning node's value to `target`.
NUMPY_RULES = {
    const_p: _const_rule,
    ew_p: _ew_rule,
    convert_p: _expr_rule(lambda p, a, n: f"{a[0]}.astype({np_dtype(p['dtype'])})"),
    stop_gradient_p: _expr_rule(lambda p, a, n: a[0]),
    broadcast_to_p: _expr_rule(lambda p, a, n: f"np.broadcast_to({a[0]}, {p['shape']})"),
    reshape_p: _expr_rule(lambda p, a, n: f"np.reshape({a[0]}, {p['shape']})"),
    transpose_p: _expr_rule(lambda p, a, n: f"np.transpose({a[0]}, {p['perm']})"),
    concatenate_p: _expr_rule(lambda p, a, n: f"np.concatenate(({', '.join(a)},), axis={p['axis']})"),
    reduce_sum_p: _expr_rule(lambda p, a, n: f"np.sum({a[0]}, axis={p['axes']})"),
    reduce_max_p: _expr_rule(lambda p, a, n: f"np.max({a[0]}, axis={p['axes']})"),
    reduce_min_p: _expr_rule(lambda p, a, n: f"np.min({a[0]}, axis={p['axes']})"),
    reduce_prod_p: _expr_rule(lambda p, a, n: f"np.prod({a[0]}, axis={p['axes']})"),
    matmul_p: _expr_rule(lambda p, a, n: f"{a[0]} @ {a[1]}"),
    slice_p: _expr_rule(lambda p, a, n: f"{a[0]}[{_slices_text(p['starts'], p['steps'], p['sizes'])}]"),
    unslice_p: _unslice_rule,
    take_p: _expr_rule(lambda p, a, n: f"np.take({a[0]}, {a[1]}, axis={p['axis']})"),
    scatter_add_p: _scatter_rule,
}


# ----------------------------------------------------------------------------- the NumPy reference as a rule

def has_rule(prim) -> bool:
    """Whether this backend lowers `prim`: by a rule of its own, or by calling its NumPy reference."""
    return prim in NUMPY_RULES or impl_helper(prim) is not None


def impl_helper(prim) -> str | None:
    """For a primitive with no printing rule: the name of the helper (in HELPERS) defining its NumPy
    reference, which the generated module then calls; None when the reference cannot stand alone."""
    name = f"_{prim.name}"
    if name not in HELPERS:
        source = standalone_source(prim.impl, name)
        if source is None:
            return None
        HELPERS[name] = source
    return name


def _literal(value) -> str:
    """An attribute value as Python source."""
    return np_dtype(value) if isinstance(value, np.dtype) else repr(value)


# ----------------------------------------------------------------------------- lowering

class NumpyExecutable:
    """A graph lowered to Python source; call it with flat arrays, get a list of arrays back."""

    def __init__(self, graph: ir.Graph, source: str, namespace: dict):
        self.graph = graph
        self.source = source
        exec(compile(source, f"<symgrad {graph.name}>", "exec"), namespace)
        self._fn = namespace[graph.name]

    def __call__(self, *arrays):
        return [out if out.flags.writeable else np.array(out)
                for out in map(np.asarray, self._fn(*arrays))]


def lower(graph: ir.Graph) -> NumpyExecutable:
    """Graph -> NumpyExecutable holding readable source (`.source`)."""
    namer = ir.Namer()
    module = _Module()
    params = [_identifier(namer(v)) for v in graph.inputs]
    body = []
    input_ids = {id(v) for v in graph.inputs}
    for node in graph.nodes:
        target = _identifier(namer(node.out))
        args = [_identifier(namer(v)) for v in node.inputs]
        rule = NUMPY_RULES.get(node.prim)
        if rule is not None:
            body.extend(rule(node, args, target, module))
            continue
        helper = impl_helper(node.prim)
        if helper is None:
            raise NotImplementedError(f"the NumPy backend has no rule for primitive {node.prim.name!r}, and its "
                                      "NumPy reference is not a function of its own using only np and math")
        module.printer.helpers.add(helper)
        attrs = "".join(f", {name}={_literal(value)}" for name, value in node.attrs)
        body.append(f"{target} = {helper}({', '.join(args)}{attrs})")
    results, returned = [], set()
    for value in graph.outputs:  # never hand out an input, or one array twice
        name = _identifier(namer(value))
        results.append(f"{name}.copy()" if id(value) in input_ids or id(value) in returned else name)
        returned.add(id(value))
    body.append(f"return ({', '.join(results)},)")
    helper_lines = [HELPERS[h] for h in sorted(module.printer.helpers)]
    lines = ["import math", "import numpy as np", "", *helper_lines, *module.header,
             f"def {graph.name}({', '.join(params)}):", *("    " + line for line in body)]
    source = "\n".join(lines) + "\n"
    namespace = {"np": np, "math": math, **module.constants}
    return NumpyExecutable(graph, source, namespace)


# Constants up to this many elements are written into the source; larger ones are passed in.
INLINE_CONSTANT_SIZE = 64


def _constant_line(target, node, constants) -> str:
    """A module-level line defining a constant: a literal when small, else a comment naming it."""
    array = node.params["value"].array
    if array.size == 0:  # tolist() drops the shape of an empty array: [] is (0,), not (0, 3)
        return f"{target} = np.empty({array.shape}, dtype={np_dtype(array.dtype)})"
    if array.size <= INLINE_CONSTANT_SIZE:
        literal = repr(array.tolist())
        if array.dtype.kind == "f" and not np.isfinite(array).all():  # repr writes inf and nan bare
            literal = literal.replace("inf", "np.inf").replace("nan", "np.nan")
        return f"{target} = np.array({literal}, dtype={np_dtype(array.dtype)})"
    constants[target] = array
    return f"# {target}: {node.out.type_str()} = {node.params['value']!r} (passed in by the loader)"


def _identifier(name: str) -> str:
    return name if name.isidentifier() else "".join(c if c.isalnum() else "_" for c in name)
