"""NumPy backend: lowers an IR graph to readable Python source that calls NumPy.

Each primitive has a rule in NUMPY_RULES (keyed by the primitive) that returns the source
lines computing one node, or the module calls its NumPy reference (`impl`), whose source it
defines (`impl_helper`). Elementwise nodes print their SymPy expression with `NumpyExprPrinter`
(common subexpressions pulled out by SymPy's cse), the printer that also gives elementwise ops
their reference implementation (symgrad/ops/numpy_expressions.py).
"""
from __future__ import annotations

import builtins
import keyword
import math
import re

import numpy as np

from symgrad import ir
from symgrad.codegen.standalone import standalone_source
from symgrad.core import const_p
from symgrad.ops.control import (kept_carries, replayed_in_reverse, result_p, reverse_twins, scan_p, split_while_vjp,
                                  step_sums, switch_p, while_p, while_vjp_p)
from symgrad.ops.ew import ew_p
from symgrad.ops.indexing import scatter_add_p, slice_p, strided_slices, take_p, unslice_p
from symgrad.ops.linalg import matmul_p
from symgrad.ops.numpy_expressions import HELPERS as EXPRESSION_HELPERS
from symgrad.ops.numpy_expressions import NumpyExprPrinter, elementwise_lines, np_dtype
from symgrad.ops.reduce import reduce_max_p, reduce_min_p, reduce_prod_p
from symgrad.ops.shape import (broadcast_to_p, concatenate_p, convert_p, reduce_sum_p, reshape_p, stop_gradient_p,
                               transpose_p)

# Functions a generated module defines when it uses them, so it stays standalone: the expression
# printer's, the two halves of a while loop's reverse pass (the loop keeping carries, and the carries
# replayed last first), and the NumPy references of primitives with no rule here (added by impl_helper).
HELPERS = dict(EXPRESSION_HELPERS)
_KEPT_CARRIES, _REPLAYED = "_kept_carries", "_replayed_in_reverse"
HELPERS[_KEPT_CARRIES] = standalone_source(kept_carries, _KEPT_CARRIES)
HELPERS[_REPLAYED] = standalone_source(replayed_in_reverse, _REPLAYED)
_OWNED = "_owned"
HELPERS[_OWNED] = '''\
def _owned(outputs, inputs):
    """The outputs, each copied when it is an input or constant, a view of one (NumPy's reshape, transpose
    and slices are views) or of an earlier output: a caller writing into a result must not change an
    argument, or what later calls return."""
    def root(a):
        while isinstance(a, np.ndarray) and a.base is not None:
            a = a.base
        return id(a)
    taken = {root(a) for a in inputs}
    owned = []
    for out in outputs:
        if root(out) in taken:
            out = np.array(out)
        taken.add(root(out))
        owned.append(out)
    return tuple(owned)
'''


# ----------------------------------------------------------------------------- rules

class _Module:
    """What rules write besides the function body: the printer (it records the helpers the source
    uses), module-level lines defining constants, and the large constants the loader passes in."""

    def __init__(self):
        self.printer = NumpyExprPrinter()
        self.header: list[str] = []
        self.constants: dict = {}
        self.functions: dict = {}  # id(sub-graph) -> the name of the function computing it
        self.twins: dict = {}  # id(while node) -> its reverse pass in the same function (reverse_twins)
        self.tapes: dict = {}  # id(while_vjp node) -> the names of the tape and step count its twin kept
        self.scope = ""  # the prefix of module-level names defined for the function being written


def _slices_text(starts, steps, sizes) -> str:
    parts = [f"{s.start}:{'' if s.stop is None else s.stop}" + (f":{s.step}" if s.step != 1 else "")
             for s in strided_slices(starts, steps, sizes)]
    return ", ".join(parts) + ("," if len(parts) == 1 else "")


def _expr_rule(template):
    return lambda node, args, target, module: [f"{target} = {template(node.params, args, node)}"]


def _reduction_rule(name):
    """np.<name> over the node's axes, in the node's dtype: NumPy sums and multiplies integers narrower than 64 bits
    in (u)int64, where the IR's reduction keeps, and wraps in, its operand's type (as the LLVM backend does)."""
    def text(p, a, n):
        dtype = n.out.dtype
        kept = f", dtype={np_dtype(dtype)}" if dtype.kind in "iu" and dtype.itemsize < 8 else ""
        return f"np.{name}({a[0]}, axis={p['axes']}{kept})"
    return _expr_rule(text)


def _const_rule(node, args, target, module):
    """A constant is defined once at module level, not in the function body (a sub-function's
    under a name of its own, which its body reads)."""
    module.header.append(_constant_line(module.scope + target, node, module.constants))
    return [f"{target} = {module.scope}{target}"] if module.scope else []


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


def _subfunction(module, graph: ir.Graph) -> str:
    """The name of a module-level function computing `graph` (a loop body, a branch), defined once."""
    key = id(graph)
    if key not in module.functions:
        name = f"_{python_identifier(graph.name)}_{len(module.functions)}"
        module.functions[key] = name
        module.header.extend(_function_lines(graph, name, module, copy_outputs=False) + [""])
    return module.functions[key]


def _names(prefix, count) -> list:
    return [f"{prefix}_{k}" for k in range(count)]


def _tuple_text(names) -> str:
    return "(" + "".join(f"{name}, " for name in names).rstrip(" ") + ")"


def _scan_rule(node, args, target, module):
    p = node.params
    body, n_consts, n_carry = p["body"], p["num_consts"], p["num_carry"]
    consts, init, xs = args[:n_consts], args[n_consts:n_consts + n_carry], args[n_consts + n_carry:]
    function = _subfunction(module, body)
    carries, ys = _names(f"{target}_c", n_carry), _names(f"{target}_y", len(body.outputs) - n_carry)
    step = f"{target}_i"
    lines = [f"{_tuple_text(carries)} = {_tuple_text(init)}"] if carries else []
    lines += [f"{y} = np.empty({(p['length'], *v.shape)}, dtype={np_dtype(v.dtype)})"
              for y, v in zip(ys, body.outputs[n_carry:])]
    steps = f"range({p['length'] - 1}, -1, -1)" if p["reverse"] else f"range({p['length']})"
    outs = carries + [f"{y}[{step}]" for y in ys]
    call = f"{function}({', '.join(consts + carries + [f'{x}[{step}]' for x in xs])})"
    lines += [f"for {step} in {steps}:", f"    {_tuple_text(outs)} = {call}" if outs else f"    {call}"]
    return lines + [f"{target} = {_tuple_text(carries + ys)}"]


def _while_rule(node, args, target, module):
    """The loop; when its reverse pass comes later in the same function (value_and_grad), the loop keeps the
    carries that pass needs as it runs (kept_carries), so the loop runs once."""
    p = node.params
    n_cond, n_body = p["num_cond_consts"], p["num_body_consts"]
    cond_consts, body_consts, init = args[:n_cond], args[n_cond:n_cond + n_body], args[n_cond + n_body:]
    cond, body = _subfunction(module, p["cond"]), _subfunction(module, p["body"])
    carries = _names(f"{target}_c", len(init))
    twin = module.twins.get(id(node))
    if twin is not None:
        module.printer.helpers.add(_KEPT_CARRIES)
        tape = module.tapes[id(twin)] = (f"{target}_tape", f"{target}_steps")
        cond_fn, body_fn = _cond_lambda(cond, cond_consts), _body_lambda(body, body_consts)
        return [f"{', '.join(tape)}, {target} = {_KEPT_CARRIES}({cond_fn}, {body_fn}, [{', '.join(init)}], "
                f"{p['checkpoints']!r})", f"{target} = tuple({target})"]
    lines = [f"{_tuple_text(carries)} = {_tuple_text(init)}"] if carries else []
    lines += [f"while {cond}({', '.join(cond_consts + carries)})[0]:",
              f"    {_tuple_text(carries)} = {body}({', '.join(body_consts + carries)})" if carries else "    pass"]
    return lines + [f"{target} = {_tuple_text(carries)}"]


def _cond_lambda(cond, cond_consts) -> str:
    """The loop's condition as a function of the carry list `c` (a bool)."""
    return f"lambda c: {cond}({''.join(a + ', ' for a in cond_consts)}*c)[0]"


def _body_lambda(body, body_consts) -> str:
    """The loop's body as a function of the carry list `c` (the next carries, a list)."""
    return f"lambda c: list({body}({''.join(a + ', ' for a in body_consts)}*c))"


def _while_vjp_rule(node, args, target, module):
    """`step` over the carries entering each step of the loop, last first (replayed_in_reverse): from the
    tape the loop itself kept (see _while_rule), or from running the loop forward keeping carries."""
    p = node.params
    cond_consts, body_consts, init, cts = split_while_vjp(args, p["body"], p["num_cond_consts"], p["num_body_consts"])
    body, step = _subfunction(module, p["body"]), _subfunction(module, p["step"])
    module.printer.helpers.add(_REPLAYED)
    sums = step_sums(p["step"], len(cts))
    pulled = _names(f"{target}_ct", len(cts)) + _names(f"{target}_sum", len(sums))
    zeros = [f"np.zeros({v.shape}, dtype={np_dtype(v.dtype)})" for v in sums]
    carry = f"{target}_c"
    tape, body_fn = module.tapes.get(id(node)), _body_lambda(body, body_consts)
    if tape is None:
        module.printer.helpers.add(_KEPT_CARRIES)
        cond_fn = _cond_lambda(_subfunction(module, p["cond"]), cond_consts)
        tape = (f"*{_KEPT_CARRIES}({cond_fn}, {body_fn}, [{', '.join(init)}], {p['checkpoints']!r})[:2]",)
    body_args = "".join(a + ", " for a in body_consts)
    return [f"{_tuple_text(pulled)} = {_tuple_text(cts + zeros)}",
            f"for {carry} in {_REPLAYED}({body_fn}, {', '.join(tape)}):",
            f"    {_tuple_text(pulled)} = {step}({body_args}*{carry}, {', '.join(pulled)})",
            f"{target} = {_tuple_text(pulled)}"]


def _switch_rule(node, args, target, module):
    branches = node.params["branches"]
    index, operands = args[0], ", ".join(args[1:])
    if len(branches) == 1:
        return [f"{target} = {_subfunction(module, branches[0])}({operands})"]
    lines = []
    for k, branch in enumerate(branches):
        test = f"if {index} <= 0" if k == 0 else (f"elif {index} == {k}" if k < len(branches) - 1 else "else")
        lines += [f"{test}:", f"    {target} = {_subfunction(module, branch)}({operands})"]
    return lines


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
    reduce_sum_p: _reduction_rule("sum"),
    reduce_max_p: _expr_rule(lambda p, a, n: f"np.max({a[0]}, axis={p['axes']})"),
    reduce_min_p: _expr_rule(lambda p, a, n: f"np.min({a[0]}, axis={p['axes']})"),
    reduce_prod_p: _reduction_rule("prod"),
    matmul_p: _expr_rule(lambda p, a, n: f"{a[0]} @ {a[1]}"),
    slice_p: _expr_rule(lambda p, a, n: f"{a[0]}[{_slices_text(p['starts'], p['steps'], p['sizes'])}]"),
    unslice_p: _unslice_rule,
    take_p: _expr_rule(lambda p, a, n: f"np.take({a[0]}, {a[1]}, axis={p['axis']})"),
    scatter_add_p: _scatter_rule,
    result_p: _expr_rule(lambda p, a, n: f"{a[0]}[{p['index']}]"),
    scan_p: _scan_rule,
    while_p: _while_rule,
    switch_p: _switch_rule,
    while_vjp_p: _while_vjp_rule,
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

    def __init__(self, graph: ir.Graph, source: str, namespace: dict, function_name: str):
        self.graph = graph
        self.source = source
        self.function_name = function_name
        self.parameters = parameter_names(graph)  # the function's parameter names
        exec(compile(source, f"<symgrad {function_name}>", "exec"), namespace)
        self._fn = namespace[function_name]

    def __call__(self, *arrays):
        return [out if out.flags.writeable else np.array(out)
                for out in map(np.asarray, self._fn(*arrays))]

    def __reduce__(self):
        """Pickled as its graph: unpickling writes the source again, and never runs source it was handed."""
        return lower, (self.graph,)


def lower(graph: ir.Graph) -> NumpyExecutable:
    """Graph -> NumpyExecutable holding readable source (`.source`)."""
    module = _Module()
    name = python_identifier(graph.name)
    function = _function_lines(graph, name, module, copy_outputs=True)
    helper_lines = [HELPERS[h] for h in sorted(module.printer.helpers)]
    lines = ["import math", "import numpy as np", "", *helper_lines, *module.header, *function]
    source = "\n".join(lines) + "\n"
    namespace = {"np": np, "math": math, **module.constants}
    return NumpyExecutable(graph, source, namespace, name)


def _function_lines(graph: ir.Graph, function_name: str, module, copy_outputs: bool) -> list:
    """The lines of `def function_name(inputs): ... return (outputs,)`. copy_outputs: never hand out an input
    or constant, a view of one, or one array twice (_owned); a sub-graph's outputs need no copies, as
    generated code never writes into an array it did not create."""
    namer = _PythonNamer()
    params = [namer(v) for v in graph.inputs]
    body = []
    saved, module.scope = module.scope, ("" if copy_outputs else function_name + "_")
    module.twins.update(reverse_twins(graph))
    for node in graph.nodes:
        target = namer(node.out)
        args = [namer(v) for v in node.inputs]
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
    module.scope = saved
    results = _tuple_text([namer(value) for value in graph.outputs])
    if copy_outputs:  # the module's constants are never handed out either: a write would change later calls
        module.printer.helpers.add(_OWNED)
        constants = [namer(node.out) for node in graph.nodes if node.prim is const_p]
        body.append(f"return {_OWNED}({results}, {_tuple_text(params + constants)})")
    else:
        body.append(f"return {results}")
    return [f"def {function_name}({', '.join(params)}):", *("    " + line for line in body)]


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


# Names generated code must not rebind: keywords, builtins, and the modules it calls.
_RESERVED = frozenset(keyword.kwlist) | frozenset(dir(builtins)) | {"np", "math"}


def python_identifier(name: str) -> str:
    """`name` as a Python name for generated code: ASCII letters, digits and _ (other characters become _,
    so NFKC never merges two names), never starting with _ or a digit (the module's own names start with
    _), never a keyword, builtin, np or math (those get a trailing _)."""
    name = re.sub(r"[^0-9A-Za-z_]", "_", name)
    if not name or name[0].isdigit() or name[0] == "_":
        name = "a" + name
    return name + "_" if name in _RESERVED else name


class _PythonNamer:
    """ir.Namer's names made Python identifiers (python_identifier), still distinct from each other."""

    def __init__(self):
        self.namer, self.names, self.taken = ir.Namer(), {}, set()

    def __call__(self, value) -> str:
        name = self.names.get(id(value))
        if name is None:
            name = python_identifier(self.namer(value))
            while name in self.taken:
                name += "_"
            self.names[id(value)] = name
            self.taken.add(name)
        return name


def parameter_names(graph: ir.Graph) -> list:
    """The names the generated function gives the graph's inputs."""
    namer = _PythonNamer()
    return [namer(v) for v in graph.inputs]
