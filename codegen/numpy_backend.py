"""NumPy backend: lowers an IR graph to readable Python source that calls NumPy.

Each primitive has a rule in NUMPY_RULES that returns the source lines computing one
node, or calls its NumPy reference (`impl`), whose source the generated module defines
(`impl_helper`). Elementwise nodes print their SymPy expression with `NumpyExprPrinter` (common
subexpressions pulled out by SymPy's cse). The same printer compiles single
elementwise expressions for eager evaluation (`elementwise_function`).
"""
from __future__ import annotations

import functools
import inspect
import math
import textwrap

import numpy as np
import sympy as sp
from sympy.printing.str import StrPrinter

from symgrad import dtypes, ir
from symgrad.ops import functions as F
from symgrad.ops import special

_FUNCTIONS = {
    "sin": "np.sin", "cos": "np.cos", "tan": "np.tan", "sinh": "np.sinh", "cosh": "np.cosh",
    "tanh": "np.tanh", "asin": "np.arcsin", "acos": "np.arccos", "atan": "np.arctan",
    "atan2": "np.arctan2", "exp": "np.exp", "log": "np.log", "Abs": "np.abs", "sign": "np.sign",
    "log1p": "np.log1p", "expm1": "np.expm1", "logaddexp": "np.logaddexp", "erf": "_erf",
    "asinh": "np.arcsinh", "acosh": "np.arccosh", "atanh": "np.arctanh", "floor": "np.floor",
    "ceiling": "np.ceil",
}

# Helpers the generated source defines when it uses them, so a module stays standalone.
HELPERS = {
    "_special": "import scipy.special as _special\n",
    "_erf": '''\
def _erf(x):
    """erf, vectorized: W. J. Cody's rational approximations (Math. Comp. 1969), ~1e-16 relative.

    Computes in float64 and casts back to float32/float16 inputs' dtype; erf(+-inf) = +-1, erf(nan) = nan.
    """
    x = np.asarray(x)
    out_dtype = x.dtype if x.dtype in (np.float32, np.float16) else np.float64
    x = x.astype(np.float64)
    y = np.abs(x)
    result = np.array(x)  # nan stays nan
    small = y < 0.46875
    mid = (y >= 0.46875) & (y <= 4.0)
    large = y > 4.0
    # |x| < 0.46875: erf(x) = x * R(x**2)
    xs = x[small]
    z = xs * xs
    num = 1.85777706184603153e-1 * z
    den = z
    for a, b in ((3.16112374387056560e00, 2.36012909523441209e01), (1.13864154151050156e02, 2.44024637934444173e02),
                 (3.77485237685302021e02, 1.28261652607737228e03)):
        num = (num + a) * z
        den = (den + b) * z
    result[small] = xs * (num + 3.20937758913846947e03) / (den + 2.84423683343917062e03)
    # 0.46875 <= |x| <= 4: erfc(|x|) = exp(-x**2) * R(|x|)
    t = y[mid]
    num = 2.15311535474403846e-8 * t
    den = t
    for c, d in ((5.64188496988670089e-1, 1.57449261107098347e01), (8.88314979438837594e00, 1.17693950891312499e02),
                 (6.61191906371416295e01, 5.37181101862009858e02), (2.98635138197400131e02, 1.62138957456669019e03),
                 (8.81952221241769090e02, 3.29079923573345963e03), (1.71204761263407058e03, 4.36261909014324716e03),
                 (2.05107837782607147e03, 3.43936767414372164e03)):
        num = (num + c) * t
        den = (den + d) * t
    s = np.trunc(t * 16.0) / 16.0  # exp(-t*t) = exp(-s*s) * exp(-(t-s)(t+s)), s = t rounded to 1/16: no cancellation
    erfc = np.exp(-s * s) * np.exp(-(t - s) * (t + s)) * (num + 1.23033935479799725e03) / (den + 1.23033935480374942e03)
    result[mid] = np.copysign(1.0 - erfc, x[mid])
    # |x| > 4: erfc(|x|) = exp(-x**2) / |x| * (1/sqrt(pi) - R(1/x**2)); it underflows past ~26.6
    u = np.minimum(y[large], 27.0)
    w = 1.0 / (u * u)
    num = 1.63153871373020978e-2 * w
    den = w
    for p, q in ((3.05326634961232344e-1, 2.56852019228982242e00), (3.60344899949804439e-1, 1.87295284992346725e00),
                 (1.25781726111229246e-1, 5.27905102951428412e-1), (1.60837851487422766e-2, 6.05183413124413191e-2)):
        num = (num + p) * w
        den = (den + q) * w
    s = np.trunc(u * 16.0) / 16.0
    erfc = (np.exp(-s * s) * np.exp(-(u - s) * (u + s))
            * (5.6418958354775628695e-1 - w * (num + 6.58749161529837803e-4) / (den + 2.33520497626869185e-3)) / u)
    result[large] = np.copysign(1.0 - erfc, x[large])
    return result.astype(out_dtype)
''',
}


class NumpyExprPrinter(StrPrinter):
    """Prints a SymPy expression as a NumPy expression over given variable names."""

    def __init__(self, names=None):
        super().__init__()
        self.names = names or {}
        self.helpers = set()

    def _print_Symbol(self, expr):
        return self.names.get(expr, expr.name)

    def _print_Float(self, expr):
        return repr(float(expr))

    def _print_Exp1(self, expr):
        return "np.e"

    def _print_Pi(self, expr):
        return "np.pi"

    def _print_BooleanTrue(self, expr):
        return "True"

    def _print_BooleanFalse(self, expr):
        return "False"

    def _print_Infinity(self, expr):
        return "np.inf"

    def _print_NegativeInfinity(self, expr):
        return "-np.inf"

    def _print_NaN(self, expr):
        return "np.nan"

    def _print_Pow(self, expr, rational=False):
        if expr.exp == sp.S.Half:
            return f"np.sqrt({self._print(expr.base)})"
        if expr.exp == -sp.S.Half:
            return f"(1/np.sqrt({self._print(expr.base)}))"
        return super()._print_Pow(expr, rational)

    def _print_Function(self, expr):
        name = type(expr).__name__
        args = ", ".join(self._print(a) for a in expr.args)
        if isinstance(expr, F.sigmoid):
            return f"np.exp(-np.logaddexp(0, -{self.parenthesize(expr.args[0], 50)}))"
        if isinstance(expr, F.softplus):
            return f"np.logaddexp(0, {args})"
        if name not in _FUNCTIONS:
            return self._print_scipy_call(expr)
        target = _FUNCTIONS[name]
        if target in HELPERS:
            self.helpers.add(target)
        return f"{target}({args})"

    def _print_scipy_call(self, expr):
        """A function only SciPy evaluates: a call of scipy.special, imported by the generated module."""
        call = special.scipy_call(expr)
        if call is None:
            raise special.unsupported(expr, "NumPy")
        if special.scipy_special() is None:
            raise special.missing_scipy(expr, "NumPy")
        self.helpers.add("_special")
        text = f"_special.{call.name}({', '.join(self._print(a) for a in call.args)})"
        return text if call.coefficient == 1 else f"({call.coefficient}*{text})"

    def _print_Max(self, expr):
        return functools.reduce(lambda a, b: f"np.maximum({a}, {b})", [self._print(a) for a in expr.args])

    def _print_Min(self, expr):
        return functools.reduce(lambda a, b: f"np.minimum({a}, {b})", [self._print(a) for a in expr.args])

    def _print_Piecewise(self, expr):
        pieces = list(expr.args)
        if pieces[-1].cond == sp.true:
            result = self._print(pieces.pop().expr)
        else:
            result = "np.nan"
        for piece in reversed(pieces):
            result = f"np.where({self._print(piece.cond)}, {self._print(piece.expr)}, {result})"
        return result

    def _print_Relational(self, expr):
        ops = {"<": "np.less", "<=": "np.less_equal", ">": "np.greater", ">=": "np.greater_equal",
               "==": "np.equal", "!=": "np.not_equal"}
        return f"{ops[expr.rel_op]}({self._print(expr.lhs)}, {self._print(expr.rhs)})"

    def _print_And(self, expr):
        return functools.reduce(lambda a, b: f"np.logical_and({a}, {b})", [self._print(a) for a in expr.args])

    def _print_Or(self, expr):
        return functools.reduce(lambda a, b: f"np.logical_or({a}, {b})", [self._print(a) for a in expr.args])

    def _print_Not(self, expr):
        return f"np.logical_not({self._print(expr.args[0])})"

    def _print_ITE(self, expr):  # SymPy writes a Piecewise substituted into a condition as ITE
        cond, then, otherwise = (self._print(a) for a in expr.args)
        return f"np.where({cond}, {then}, {otherwise})"

    def _print_Xor(self, expr):
        return functools.reduce(lambda a, b: f"np.logical_xor({a}, {b})", [self._print(a) for a in expr.args])


def _np_dtype(dtype) -> str:
    return f"np.{np.dtype(dtype).name}"


def _needs_cast(expr, dtype) -> bool:
    """NumPy keeps float64 for arithmetic on float64 arrays; other dtypes and selects may drift."""
    return np.dtype(dtype) != dtypes.FLOAT64 or expr.has(sp.Piecewise) or expr.is_Boolean


def elementwise_lines(expr, arg_names: dict, dtype, target: str, printer=None) -> list[str]:
    """Source lines assigning the elementwise `expr` (symbols -> arg_names) to `target`."""
    printer = printer or NumpyExprPrinter()
    printer.names = dict(arg_names)
    lines = []
    if not expr.free_symbols:
        any_arg = next(iter(arg_names.values()))
        return [f"{target} = np.full(np.shape({any_arg}), {printer.doprint(expr)}, dtype={_np_dtype(dtype)})"]
    replacements, (reduced,) = sp.cse(expr, symbols=sp.numbered_symbols(f"_{target}_"), optimizations=None)
    for symbol, sub in replacements:
        lines.append(f"{symbol.name} = {printer.doprint(sub)}")
    text = printer.doprint(reduced)
    if _needs_cast(expr, dtype):
        text = f"np.asarray({text}, dtype={_np_dtype(dtype)})"
    lines.append(f"{target} = {text}")
    return lines


@functools.lru_cache(maxsize=2048)
def elementwise_function(expr, args, dtype):
    """A Python function evaluating `expr` over arrays for `args` (used by eager evaluation)."""
    printer = NumpyExprPrinter()
    names = {s: f"a{i}" for i, s in enumerate(args)}
    body = elementwise_lines(expr, names, dtype, "result", printer)
    source = "\n".join([f"def _ew({', '.join(names.values())}):", *("    " + l for l in body), "    return result"])
    namespace = _namespace(printer.helpers)
    exec(compile(source, "<symgrad ew>", "exec"), namespace)
    return namespace["_ew"]


def _namespace(helpers) -> dict:
    namespace = {"np": np, "math": math}
    for helper in sorted(helpers):
        exec(HELPERS[helper], namespace)
    return namespace


# ----------------------------------------------------------------------------- structural rules

def _slices_text(starts, steps, sizes) -> str:
    parts = []
    for start, step, size in zip(starts, steps, sizes):
        stop = start + step * size
        stop_text = "" if stop < 0 else str(stop)
        parts.append(f"{start}:{stop_text}" + (f":{step}" if step != 1 else ""))
    return ", ".join(parts) + ("," if len(parts) == 1 else "")


def _expr_rule(template):
    return lambda node, args, target: [f"{target} = {template(node.params, args, node)}"]


def _ew_rule(node, args, target, printer):
    params = node.params
    return elementwise_lines(params["expr"], dict(zip(params["args"], args)), params["dtype"], target, printer)


def _unslice_rule(node, args, target):
    p = node.params
    x = node.inputs[0]
    return [f"{target} = np.zeros({p['shape']}, dtype={_np_dtype(x.dtype)})",
            f"{target}[{_slices_text(p['starts'], p['steps'], x.shape)}] = {args[0]}"]


def _scatter_rule(node, args, target):
    p = node.params
    upd, idx = node.inputs
    return [f"{target} = np.zeros({node.out.shape}, dtype={_np_dtype(upd.dtype)})",
            f"np.add.at({target}, ({'slice(None), ' * p['axis']}{args[1]}), {args[0]})"]


NUMPY_RULES = {
    "convert": _expr_rule(lambda p, a, n: f"{a[0]}.astype({_np_dtype(p['dtype'])})"),
    "stop_gradient": _expr_rule(lambda p, a, n: a[0]),
    "broadcast_to": _expr_rule(lambda p, a, n: f"np.broadcast_to({a[0]}, {p['shape']})"),
    "reshape": _expr_rule(lambda p, a, n: f"np.reshape({a[0]}, {p['shape']})"),
    "transpose": _expr_rule(lambda p, a, n: f"np.transpose({a[0]}, {p['perm']})"),
    "concatenate": _expr_rule(lambda p, a, n: f"np.concatenate(({', '.join(a)},), axis={p['axis']})"),
    "reduce_sum": _expr_rule(lambda p, a, n: f"np.sum({a[0]}, axis={p['axes']})"),
    "reduce_max": _expr_rule(lambda p, a, n: f"np.max({a[0]}, axis={p['axes']})"),
    "reduce_min": _expr_rule(lambda p, a, n: f"np.min({a[0]}, axis={p['axes']})"),
    "reduce_prod": _expr_rule(lambda p, a, n: f"np.prod({a[0]}, axis={p['axes']})"),
    "matmul": _expr_rule(lambda p, a, n: f"{a[0]} @ {a[1]}"),
    "slice": _expr_rule(lambda p, a, n: f"{a[0]}[{_slices_text(p['starts'], p['steps'], p['sizes'])}]"),
    "unslice": _unslice_rule,
    "take": _expr_rule(lambda p, a, n: f"np.take({a[0]}, {a[1]}, axis={p['axis']})"),
    "scatter_add": _scatter_rule,
}


# Rules that may need a helper function in the generated module (they record it in the printer).
PRINTER_RULES = {"ew": _ew_rule}


# ----------------------------------------------------------------------------- the NumPy reference as a rule

def has_rule(prim) -> bool:
    """Whether this backend lowers `prim`: by a rule of its own, or by calling its NumPy reference."""
    return (prim.name in NUMPY_RULES or prim.name in PRINTER_RULES or prim.name == "const"
            or impl_helper(prim) is not None)


@functools.lru_cache(maxsize=None)
def impl_helper(prim) -> str | None:
    """For a primitive with no printing rule: the name of a helper in HELPERS holding its NumPy reference
    (`impl`, renamed _<primitive>), which the generated module then defines and calls; None when the
    reference is not a named function using only np and math, so the module would not stand alone."""
    impl = prim.impl
    if (not inspect.isfunction(impl) or impl.__name__ == "<lambda>" or impl.__closure__ or impl.__defaults__
            or impl.__kwdefaults__):
        return None
    allowed = {"np": np, "math": math}
    if any(name in impl.__globals__ and impl.__globals__[name] is not allowed.get(name)
           for name in _global_names(impl.__code__)):
        return None
    try:
        source = textwrap.dedent(inspect.getsource(impl))
    except OSError:  # defined where Python keeps no source (an interactive session)
        return None
    name = f"_{prim.name}"
    HELPERS[name] = source.replace(f"def {impl.__name__}(", f"def {name}(", 1)
    return name


def _global_names(code) -> set:
    """The global (and attribute) names a code object and the functions nested in it use."""
    names = set(code.co_names)
    for const in code.co_consts:
        if inspect.iscode(const):
            names |= _global_names(const)
    return names


def _literal(value) -> str:
    """An attribute value as Python source."""
    return _np_dtype(value) if isinstance(value, np.dtype) else repr(value)


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
    printer = NumpyExprPrinter()
    params = [_identifier(namer(v)) for v in graph.inputs]
    body, constants, header = [], {}, []
    input_ids = {id(v) for v in graph.inputs}
    for node in graph.nodes:
        target = _identifier(namer(node.out))
        if node.prim.name == "const":
            header.append(_constant_line(target, node, constants))
            continue
        args = [_identifier(namer(v)) for v in node.inputs]
        if node.prim.name in PRINTER_RULES:
            body.extend(PRINTER_RULES[node.prim.name](node, args, target, printer))
            continue
        rule = NUMPY_RULES.get(node.prim.name)
        if rule is not None:
            body.extend(rule(node, args, target))
            continue
        helper = impl_helper(node.prim)
        if helper is None:
            raise NotImplementedError(f"the NumPy backend has no rule for primitive {node.prim.name!r}, and its "
                                      "NumPy reference is not a function of its own using only np and math")
        printer.helpers.add(helper)
        attrs = "".join(f", {name}={_literal(value)}" for name, value in node.attrs)
        body.append(f"{target} = {helper}({', '.join(args)}{attrs})")
    results, returned = [], set()
    for value in graph.outputs:  # never hand out an input, or one array twice
        name = _identifier(namer(value))
        results.append(f"{name}.copy()" if id(value) in input_ids or id(value) in returned else name)
        returned.add(id(value))
    body.append(f"return ({', '.join(results)},)")
    helper_lines = [HELPERS[h] for h in sorted(printer.helpers)]
    lines = ["import math", "import numpy as np", "", *helper_lines, *header,
             f"def {graph.name}({', '.join(params)}):", *("    " + line for line in body)]
    source = "\n".join(lines) + "\n"
    namespace = {"np": np, "math": math, **constants}
    return NumpyExecutable(graph, source, namespace)


# Constants up to this many elements are written into the source; larger ones are passed in.
INLINE_CONSTANT_SIZE = 64


def _constant_line(target, node, constants) -> str:
    """A module-level line defining a constant: a literal when small, else a comment naming it."""
    array = node.params["value"].array
    if array.size == 0:  # tolist() drops the shape of an empty array: [] is (0,), not (0, 3)
        return f"{target} = np.empty({array.shape}, dtype={_np_dtype(array.dtype)})"
    if array.size <= INLINE_CONSTANT_SIZE:
        literal = repr(array.tolist())
        if array.dtype.kind == "f" and not np.isfinite(array).all():  # repr writes inf and nan bare
            literal = literal.replace("inf", "np.inf").replace("nan", "np.nan")
        return f"{target} = np.array({literal}, dtype={_np_dtype(array.dtype)})"
    constants[target] = array
    return f"# {target}: {node.out.type_str()} = {node.params['value']!r} (passed in by the loader)"


def _identifier(name: str) -> str:
    return name if name.isidentifier() else "".join(c if c.isalnum() else "_" for c in name)
