"""Tracing: Tracer values, the graph builder, `bind`, and `trace(f, *args) -> Graph`.

Every primitive call goes through `bind`. With only concrete NumPy inputs it evaluates
the primitive's reference implementation (eager mode); with a Tracer among its inputs
it records a node into the innermost active Builder. Builders nest (for transforms of
transforms); a tracer of an enclosing builder used inside a nested one is captured as
an extra input of the nested graph, so closures over traced values work.
"""
from __future__ import annotations

import contextlib
import inspect
import os
import sys
import threading

import numpy as np

from . import dtypes, ir, pytree
from .ops.core import ShapeError

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
# Frames in these directories are library code, never "the user's line".
_LIBRARY_DIRS = (_PACKAGE_DIR, os.path.join(os.path.dirname(_PACKAGE_DIR), "codegen"),
                 os.path.dirname(os.path.abspath(np.__file__)))
_state = threading.local()


def _stack() -> list:
    if not hasattr(_state, "builders"):
        _state.builders = []
    return _state.builders


def user_frame_summary() -> str:
    """'file:line: code' of the innermost frame outside symgrad (the user's line), or ''."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = os.path.abspath(frame.f_code.co_filename)
        if not filename.startswith(_LIBRARY_DIRS) and not filename.startswith("<symgrad"):
            break
        frame = frame.f_back
    if frame is None:
        return ""
    import linecache
    code = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
    return f"{frame.f_code.co_filename}:{frame.f_lineno}: {code}"


def with_user_line(message: str) -> str:
    where = user_frame_summary()
    return f"{message}\n  at {where}" if where else message


def fail(message: str, kind=ShapeError):
    """Raise `kind` with the message and the user's source line."""
    raise kind(with_user_line(message)) from None


class TracerError(TypeError):
    """A traced value was used where a concrete Python value is needed."""


class Builder:
    """Collects the nodes of one graph under construction."""

    def __init__(self, parent: "Builder | None" = None):
        self.parent = parent
        self.depth = 0 if parent is None else parent.depth + 1
        self.inputs: list[ir.Value] = []
        self.nodes: list[ir.Node] = []
        self.captures: list = []          # (outer Tracer, local input Value)
        self._captured: dict = {}
        self._constants: dict = {}
        self.meta: dict = {}
        # Python numbers in elementwise ops become constant operands instead of expression literals,
        # and constants are never merged by value: a trace's structure does not depend on values.
        # Nested traces inherit it.
        self.numbers_as_operands = parent.numbers_as_operands if parent is not None else False

    def new_input(self, shape, dtype, hint=None) -> "Tracer":
        value = ir.Value(shape, dtype, hint)
        self.inputs.append(value)
        return Tracer(value, self)

    def add(self, prim, values, attrs, shape, dtype) -> "Tracer":
        out = ir.Value(shape, dtype)
        self.nodes.append(ir.Node(prim, tuple(values), ir.freeze_attrs(attrs), out, dict(self.meta)))
        return Tracer(out, self)

    def lift(self, operand) -> ir.Value:
        """The local Value for an operand: own tracer, captured outer tracer, or constant array."""
        if isinstance(operand, Tracer):
            if operand.builder is self:
                return operand.value
            if not operand.builder.active or operand.builder.depth >= self.depth:
                raise TracerError(with_user_line(
                    "a traced value escaped the function that traced it (leaked tracer); return it as an "
                    "output instead of storing it"))
            key = id(operand.value)
            if key not in self._captured:
                local = ir.Value(operand.shape, operand.dtype, hint="captured")
                self._captured[key] = local
                self.captures.append((operand, local))
            return self._captured[key]
        array = np.asarray(operand)
        by_value = array.size <= 16 and not self.numbers_as_operands  # else equal values must stay apart
        key = (array.shape, array.dtype.str, array.tobytes()) if by_value else id(operand)
        if key not in self._constants:
            from .ops.shape import const_p
            self._constants[key] = (operand, self.add(const_p, (), {"value": ir.Constant(array)},
                                                      array.shape, array.dtype).value)
        return self._constants[key][1]

    @contextlib.contextmanager
    def annotate(self, **meta):
        """Attach meta (e.g. section='backward', rule='tanh') to the nodes created inside."""
        saved = self.meta
        self.meta = {**saved, **meta}
        try:
            yield
        finally:
            self.meta = saved

    @property
    def active(self) -> bool:
        return self in _stack()

    def finish(self, outputs, name="f") -> ir.Graph:
        values = [self.lift(o) if isinstance(o, Tracer) else self.lift(np.asarray(o)) for o in outputs]
        return ir.Graph(self.inputs + [local for _, local in self.captures], self.nodes, values, name)


@contextlib.contextmanager
def building(builder: Builder):
    _stack().append(builder)
    try:
        yield builder
    finally:
        _stack().pop()


def current_builder() -> "Builder | None":
    stack = _stack()
    return stack[-1] if stack else None


def bind(prim, args, attrs):
    """Apply `prim` to `args`: evaluate eagerly on arrays, or record a node when tracing."""
    builder = None
    for arg in args:
        if isinstance(arg, Tracer) and (builder is None or arg.builder.depth > builder.depth):
            builder = arg.builder
    if builder is None:
        arrays = [np.asarray(a) for a in args]
        shape, dtype = _shape_rule(prim, arrays, attrs)
        result = np.asarray(prim.impl(*arrays, **attrs))
        return result if result.dtype == dtype else result.astype(dtype)
    if not builder.active:
        raise TracerError(with_user_line("a traced value was used after its trace finished (leaked tracer)"))
    values = [builder.lift(a) for a in args]
    shape, dtype = _shape_rule(prim, values, attrs)
    return builder.add(prim, values, attrs, shape, dtype)


def _shape_rule(prim, inputs, attrs):
    try:
        return prim.abstract_eval(inputs, **attrs)
    except ShapeError as err:
        if "\n  at " in str(err):
            raise
        raise ShapeError(with_user_line(str(err))) from None


class Tracer:
    """A symbolic array: a Value of the graph being built. Supports NumPy-style operators."""

    __slots__ = ("value", "builder")
    __array_priority__ = 1000

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """Route NumPy ufuncs (np.sin(t), ndarray + t) to the sg function of the same name."""
        name = {"true_divide": "divide", "absolute": "abs"}.get(ufunc.__name__, ufunc.__name__)
        function = getattr(numpy_api, name, None)
        if method != "__call__" or kwargs or function is None:
            raise TracerError(with_user_line(
                f"np.{ufunc.__name__}{'.' + method if method != '__call__' else ''} is not supported on traced "
                "values; use the sg.* function of the same name inside traced or compiled code"))
        return function(*inputs)

    def __init__(self, value: ir.Value, builder: Builder):
        self.value = value
        self.builder = builder

    shape = property(lambda self: self.value.shape)
    dtype = property(lambda self: self.value.dtype)
    ndim = property(lambda self: self.value.ndim)
    size = property(lambda self: self.value.size)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d traced array")
        return self.shape[0]

    def __repr__(self):
        return f"Tracer({self.value.type_str()})"

    def _concrete_error(self, what):
        raise TracerError(with_user_line(
            f"{what} of a traced value {self.value.type_str()}: its value is not known while tracing. "
            "Python control flow (if/while/and/or) on traced values is not supported; use sg.where(cond, a, b) "
            "for a data-dependent choice"))

    def __bool__(self):
        self._concrete_error("bool()")

    def __float__(self):
        self._concrete_error("float()")

    def __int__(self):
        self._concrete_error("int()")

    def __index__(self):
        self._concrete_error("using as an index")

    def __array__(self, *args, **kwargs):
        raise TracerError(with_user_line(
            f"a traced value {self.value.type_str()} was passed to a NumPy function; use the sg.* function "
            "of the same name (e.g. sg.sin instead of np.sin) inside traced or compiled code"))

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d traced array")
        return (self[i] for i in range(self.shape[0]))

    def __hash__(self):
        return id(self)


def zeros_like_value(x):
    """A zero array of x's shape and dtype (traced if x is)."""
    return numpy_api.zeros(x.shape, x.dtype)


def is_array_like(leaf) -> bool:
    return isinstance(leaf, (Tracer, np.ndarray, np.generic, float, int, bool))


def as_input_array(leaf, name: str) -> np.ndarray:
    """Validate one concrete argument leaf and return it as an ndarray of a supported dtype."""
    if isinstance(leaf, (str, bytes, complex)) or leaf is None:
        raise TypeError(f"argument {name}: expected a numeric array or scalar, got {type(leaf).__name__}")
    array = np.asarray(leaf)
    if array.dtype.kind not in "biuf":
        raise TypeError(f"argument {name}: expected a numeric array or scalar, got dtype {array.dtype}")
    try:
        return array.astype(dtypes.canonical(array.dtype), copy=False)
    except TypeError as err:
        raise TypeError(f"argument {name}: {err}") from None


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


def trace_flat(fn, args, name=None, numbers_as_operands=False):
    """Trace fn(*args) with fresh inputs; returns (graph, out_tree, captured outer tracers)."""
    parent = current_builder()
    builder = Builder(parent)
    builder.numbers_as_operands |= numbers_as_operands
    arg_names = argument_names(fn, len(args))
    leaves, tree = pytree.flatten(list(args))
    leaf_names = pytree.leaf_names(list(args), arg_names)
    tracers = []
    for leaf, leaf_name in zip(leaves, leaf_names):
        if isinstance(leaf, Tracer):
            tracers.append(builder.new_input(leaf.shape, leaf.dtype, leaf_name))
        else:
            array = as_input_array(leaf, leaf_name)
            tracers.append(builder.new_input(array.shape, array.dtype, leaf_name))
    with building(builder):
        out = fn(*pytree.unflatten(tree, tracers))
        out_leaves, out_tree = pytree.flatten(out)
        for i, leaf in enumerate(out_leaves):
            if not is_array_like(leaf):
                raise TypeError(f"{getattr(fn, '__name__', 'function')} returned a {type(leaf).__name__} at "
                                f"output {i}; outputs must be arrays or scalars (in tuples/lists/dicts)")
        graph = builder.finish(out_leaves, function_name(fn, name))
    return graph, out_tree, [outer for outer, _ in builder.captures]


def trace(fn, *args) -> ir.Graph:
    """Trace fn on example arguments (arrays/scalars/pytrees) into a verified IR graph.

    Dead code is dropped (e.g. cotangents of arguments a gradient does not ask for); the other
    passes are left to `sg.compile`, so the graph shows what tracing and autodiff produced."""
    from .passes.dce import dce
    if not callable(fn):  # np.trace(a) ported as sg.trace(a)
        raise TypeError(f"sg.trace traces a function into IR and got a {type(fn).__name__}; for NumPy's trace "
                        "(the sum of the diagonal) use sg.einsum('ii', a)")
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
            env[id(node.out)] = bind(node.prim, [env[id(v)] for v in node.inputs], node.params)
    return env


# Tracers get their NumPy-style operators from the namespace module, which needs this one:
# importing it here (last) means a traced value always has them, whatever was imported first.
from . import numpy_api  # noqa: E402
