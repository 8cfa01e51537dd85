"""The core below the ops: Primitive, the graph Builder, `bind`, the Tracer base, and symgrad's errors.

Every primitive call goes through `bind`. With only concrete NumPy inputs it evaluates
the primitive's reference implementation (eager mode); with a Tracer among its inputs
it records a node into the innermost active Builder. Builders nest (for transforms of
transforms); a tracer of an enclosing builder used inside a nested one is captured as
an extra input of the nested graph, so closures over traced values work.

Tracers get their NumPy-style operators and methods from the front end (numpy_api), as
JAX's array methods are attached to its tracers: the core knows no op but `const`.
"""
from __future__ import annotations

import contextlib
import difflib
import importlib
import linecache
import math
import os
import sys
import threading

import numpy as np

from . import dtypes, ir
from .guards import concrete_array


class ShapeError(ValueError, RuntimeError):
    """Operands whose shapes cannot be combined; the message names both shapes. A RuntimeError too, which is what
    PyTorch raises there, so ported code's `except RuntimeError:` catches it."""


class UnsupportedOpError(TypeError):
    """An elementwise op uses a SymPy function symgrad cannot differentiate or the chosen backend
    cannot evaluate; the message names the op, the function and the backend, and what to do."""


class TracerError(TypeError):
    """A traced value was used where a concrete Python value is needed."""


class ConcretizationError(TracerError):
    """Python needed the value of a traced value (bool(), int(), an index, a range): a compiled function
    given Python ints retries with them as Python values (see static_args.python_value_positions)."""


# ----------------------------------------------------------------------------- the user's line

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
# The backends: inside the package once installed from a wheel; in a source tree (an editable
# install) the folder codegen/ beside it, mapped to symgrad.codegen.
_BACKENDS_DIR = (os.path.join(_PACKAGE_DIR, "codegen") if os.path.isdir(os.path.join(_PACKAGE_DIR, "codegen"))
                 else os.path.join(os.path.dirname(_PACKAGE_DIR), "codegen"))
# Frames in these directories are library code, never "the user's line".
_LIBRARY_DIRS = (_PACKAGE_DIR, _BACKENDS_DIR, os.path.dirname(os.path.abspath(np.__file__)))


def user_frame_summary() -> str:
    """'file:line: code' of the innermost frame outside symgrad (the user's line), or ''."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = os.path.abspath(frame.f_code.co_filename)
        in_scipy = frame.f_globals.get("__name__", "").partition(".")[0] == "scipy"  # an optional library
        if not filename.startswith(_LIBRARY_DIRS) and not filename.startswith("<symgrad") and not in_scipy:
            break
        frame = frame.f_back
    if frame is None:
        return ""
    code = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
    return f"{frame.f_code.co_filename}:{frame.f_lineno}: {code}"


def with_user_line(message: str) -> str:
    where = user_frame_summary()
    return f"{message}\n  at {where}" if where else message


def fail(message: str, kind=ShapeError):
    """Raise `kind` with the message and the user's source line."""
    raise kind(with_user_line(message)) from None


# ----------------------------------------------------------------------------- NumPy's functions on traced values

# NumPy's or SciPy's module -> where symgrad keeps its functions (sg.<path><name>)
_SYMGRAD_PATHS = {"numpy": "", "numpy.linalg": "linalg.", "scipy.linalg": "linalg.", "scipy.special": "scipy.special.",
                  "scipy.stats": "scipy.stats."}
# NumPy's and SciPy's names symgrad has under another name, or that a line of sg.* computes.
_OTHER_NAMES = {"expit": "sg.sigmoid", "true_divide": "sg.divide", "remainder": "sg.mod", "row_stack": "sg.vstack",
                "logit": "sg.log(p) - sg.log1p(-p)", "xlogy": "sg.where(x == 0, 0.0, x * sg.log(y))"}


def _symgrad_attribute(path: str):
    """What symgrad has at `path` ('linalg', 'scipy.special.gammaln'), or None."""
    value = importlib.import_module(__package__)
    try:
        for part in path.split("."):
            value = getattr(value, part)
    except (AttributeError, ImportError):
        return None
    return value


def symgrad_function(path: str):
    """The public symgrad function at `path` ('linalg.det'), or None where symgrad has none."""
    value = _symgrad_attribute(path)
    return value if callable(value) and not isinstance(value, type(sys)) else None


def symgrad_equivalent(module: str, name: str):
    """symgrad's function of NumPy's or SciPy's `module.name` (np.tril -> sg.tril, scipy.special.gammaln ->
    sg.scipy.special.gammaln), or None."""
    prefix = _SYMGRAD_PATHS.get(module)
    return symgrad_function(prefix + name) if prefix is not None else None


def numpy_function_message(module: str, name: str, tracer) -> str:
    """What to say when NumPy's or SciPy's `module.name` gets a traced value: the symgrad function of that
    name where there is one, else symgrad's closest way, or that there is none."""
    shown = f"{module.replace('numpy', 'np', 1)}.{name}"
    what = f"{shown} was applied to a traced value {tracer.value.type_str()}"
    prefix = _SYMGRAD_PATHS.get(module)
    if symgrad_equivalent(module, name) is not None:
        return f"{what}; NumPy's and SciPy's functions cannot see traced values: use sg.{prefix}{name}"
    other = _OTHER_NAMES.get(name)
    if other is not None and (not other.startswith("sg.") or symgrad_function(other[3:].split("(")[0]) is not None):
        return f"{what}, and symgrad has no function of that name; the closest symgrad way: {other}"
    prefix = prefix or ""
    namespace = _symgrad_attribute(prefix.rstrip(".")) if prefix else importlib.import_module(__package__)
    names = [n for n in dir(namespace) if not n.startswith("_")] if namespace is not None else []
    close = [f"sg.{prefix}{n}" for n in difflib.get_close_matches(name, names, n=3, cutoff=0.8)]
    if close:
        return f"{what}, and symgrad has no function of that name; the closest: {', '.join(close)}"
    return (f"{what}, and symgrad has no equivalent (there is none): compute it from sg.* functions inside the "
            "traced function, or outside it on concrete arrays")


def _public_module(frame_module: str, name: str) -> str:
    """numpy.linalg._linalg -> numpy.linalg: the public module (NumPy's or SciPy's) offering `name`."""
    parts = frame_module.split(".")
    public = ".".join(parts[:next((i for i, p in enumerate(parts) if p.startswith("_")), len(parts))])
    for candidate in (public, parts[0]):
        if getattr(sys.modules.get(candidate), name, None) is not None:
            return candidate
    return public


def _calling_library_function():
    """(public module, name) of the NumPy or SciPy function whose call reached here, or None when the user's
    own code converted a traced value (np.asarray, an index into a NumPy array)."""
    frame, found = sys._getframe(2), None
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module.split(".")[0] in ("numpy", "scipy"):
            found = frame
        elif found is not None or not module.startswith(__package__ + "."):
            break
        frame = frame.f_back
    if found is None:
        return None
    name = found.f_code.co_name
    owner = found.f_locals.get("self")
    if owner is not None:  # a method: scipy.stats.norm.logpdf is norm_gen.logpdf
        name = f"{type(owner).__name__.removesuffix('_gen')}.{name}"
    return _public_module(found.f_globals.get("__name__", ""), name.split(".")[0]), name


# ----------------------------------------------------------------------------- primitives

REGISTRY: dict[str, "Primitive"] = {}


class Primitive:
    """An IR operation.

    shape_rule(inputs, **attrs) -> (shape, dtype): inputs are anything with .shape/.dtype.
    impl(*arrays, **attrs) -> ndarray: the NumPy reference implementation.
    vjp(ct, ans, *inputs, **attrs) -> one cotangent (or None) per input, written with primitives.
    jvp(tangents, ans, *inputs, **attrs) -> output tangent (or None); tangents hold None for zero.
    linear=True (with no jvp): the forward pass applies the primitive to the tangents (autodiff/forward.py).
    traced_always=True: recorded in an active trace even when every operand is a constant (a loop is
    compiled, never run while tracing).
    decompose(*inputs, **attrs) -> the same value written with other primitives: a backend with
    no rule of its own for this primitive lowers that instead (passes/decompose.py).
    """

    def __init__(self, name, shape_rule, impl, vjp=None, jvp=None, linear=False, decompose=None,
                 traced_always=False):
        if name in REGISTRY:  # the name identifies a primitive in printed, cached and pickled graphs
            raise ValueError(f"a primitive named {name!r} exists already, defined in {REGISTRY[name].defined_in}")
        self.name = name
        self.defined_in = sys._getframe(1).f_globals.get("__name__", "")  # the module to import to unpickle it
        self.shape_rule = shape_rule
        self.impl = impl
        self.vjp = vjp
        self.linear = linear
        self.jvp = jvp
        self.decompose = decompose
        self.traced_always = traced_always
        REGISTRY[name] = self

    def abstract_eval(self, inputs, **attrs):
        return self.shape_rule(inputs, **attrs)

    def __call__(self, *args, **attrs):
        return bind(self, args, attrs)

    def format_op(self, node: ir.Node, namer) -> str:
        if not node.attrs:
            return self.name
        return f"{self.name}[{', '.join(f'{k}={ir.format_attr(v)}' for k, v in node.attrs)}]"

    def rule_name(self, node: ir.Node) -> str:
        """The name printed beside the adjoint lines this node's rule emits."""
        return self.name

    def __repr__(self):
        return f"<primitive {self.name}>"

    def __reduce__(self):
        # by name through a module-level function: pickling `REGISTRY.__getitem__` would
        # pickle the whole registry dict by value, and unpickling it fails (KeyError)
        return (lookup, (self.name, self.defined_in))


def lookup(name: str, defined_in: str = "symgrad.ops") -> "Primitive":
    """The primitive called `name`, importing the module defining it first (used to unpickle graphs,
    as pickle imports a class's module)."""
    if name not in REGISTRY:
        importlib.import_module(defined_in)
    return REGISTRY[name]


def _const_shape(inputs, value):
    return value.array.shape, value.array.dtype


# A constant array of the graph (attribute `value`, an ir.Constant): what Builder.lift makes of arrays.
const_p = Primitive("const", _const_shape, lambda value: value.array)


# ----------------------------------------------------------------------------- building graphs

_state = threading.local()
# How many traces are being built, in all threads: eager code reads it (one global load) to skip looking
# for the current trace on every op (see tracing_anywhere).
_building_count = 0
_building_lock = threading.Lock()


def _stack() -> list:
    if not hasattr(_state, "builders"):
        _state.builders = []
    return _state.builders


class Builder:
    """Collects the nodes of one graph under construction."""

    def __init__(self, parent: "Builder | None" = None):
        self.parent = parent
        self.depth = 0 if parent is None else parent.depth + 1
        self.inputs: list[ir.Value] = []
        self.nodes: list[ir.Node] = []
        self.producers: dict = {}         # id(Value) -> the node computing it
        self.captures: list = []          # (outer Tracer, local input Value)
        self._captured: dict = {}
        self._constants: dict = {}
        self.meta = ir.NO_META  # the notes of the nodes added now (annotate): shared by them, replaced, never written
        # Python numbers in elementwise ops become constant operands instead of expression literals,
        # and constants are never merged by value: a trace's structure does not depend on values.
        # Nested traces inherit it.
        self.numbers_as_operands = parent.numbers_as_operands if parent is not None else False
        # sg.compile's reads (see Reads): what the root graph reads afresh at every call; nested traces share it
        self.reads: "Reads | None" = parent.reads if parent is not None else None

    def new_input(self, shape, dtype, hint=None, weak=False) -> "Tracer":
        """A new input; `weak` for a Python number's, whose dtype yields to arrays' (NEP 50, as JAX)."""
        value = ir.Value(shape, dtype, hint)
        self.inputs.append(value)
        return Tracer(value, self, weak)

    def add(self, prim, values, attrs, shape, dtype) -> "Tracer":
        out = ir.Value(shape, dtype)
        self.nodes.append(ir.Node(prim, tuple(values), ir.freeze_attrs(attrs), out, self.meta))
        self.producers[id(out)] = self.nodes[-1]
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
            if operand.builder.depth < 0:  # a concrete outer value (an eager tensor): a read, or else a constant
                return self._concrete(operand)
            key = id(operand.value)
            if key not in self._captured:
                local = ir.Value(operand.shape, operand.dtype, hint="captured")
                self._captured[key] = local
                self.captures.append((operand, local))
            return self._captured[key]
        refuse_masked(operand, "a constant of the traced function")
        source = self.reads.source_of(operand) if self.reads is not None else None
        if source is not None:
            return self.lift(self.reads.tracer(source))
        array = np.asarray(operand)
        by_value = array.size <= 16 and not self.numbers_as_operands  # else equal values must stay apart
        key = (array.shape, array.dtype.str, array.tobytes()) if by_value else id(operand)
        if key not in self._constants:
            self._constants[key] = (operand, self.add(const_p, (), {"value": ir.Constant(array)},
                                                      array.shape, array.dtype).value)
        return self._constants[key][1]

    def _concrete(self, operand) -> ir.Value:
        """An eager tensor used in the trace: read at every call under sg.compile, else its value now."""
        if self.reads is not None and self.reads.readable(concrete_array(operand)):
            return self.lift(self.reads.tracer(operand))
        return self.lift(concrete_array(operand))

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


class Reads:
    """What a function compiled by sg.compile reads besides its arguments that it must read afresh at every
    call rather than bake into its code: the arrays its guards found (globals, closure cells, attributes,
    items; views of them too) and eager tensors (a model's parameters). Each becomes a trailing input of the
    root graph, so changing one in place (`W[0] = 5`, `W -= lr * g`, an optimizer's step) is seen by the
    next call, with no re-trace; under jax.jit those would stay frozen at the values of the trace."""

    def __init__(self, arrays: dict):
        self.arrays = arrays    # id -> an array the guards read by identity
        self.builder = None     # the root graph's (set by tracing.trace_flat)
        self.sources: list = []  # what each trailing input reads: an array, or an eager tensor
        self.sliced: dict = {}   # id -> the arrays read through a part of them (baked: see source_of)
        self._tracers: dict = {}

    @staticmethod
    def readable(array) -> bool:
        """Arrays a compiled entry can take: a supported dtype, at least one element."""
        return array.size > 0 and array.dtype in dtypes.SHORT_NAMES

    def source_of(self, array):
        """`array` if it is an array the guards read or a view of all of one (`W.T`), else None: a constant
        of the trace. A part of one (`V[i]` in a Python loop) stays a constant, so that loops over the rows of
        a table still roll into one; the guards then compare the whole array by content (`sliced`)."""
        if not isinstance(array, np.ndarray) or not self.readable(array):
            return None
        base = array
        while isinstance(base, np.ndarray):
            if self.arrays.get(id(base)) is base:
                if base.size == array.size:
                    return array
                self.sliced[id(base)] = base
                return None
            base = base.base
        return None

    def tracer(self, source) -> "Tracer":
        """The root graph's input reading `source`, created at its first use."""
        tracer = self._tracers.get(id(source))
        if tracer is None:
            array = concrete_array(source)
            tracer = self._tracers[id(source)] = self.builder.new_input(array.shape, array.dtype, "read")
            self.sources.append(source)
        return tracer


@contextlib.contextmanager
def building(builder: Builder):
    global _building_count
    with _building_lock:
        _building_count += 1
    _stack().append(builder)
    try:
        yield builder
    finally:
        _stack().pop()
        with _building_lock:
            _building_count -= 1


def tracing_anywhere() -> bool:
    """Whether some thread is building a trace (then `current_builder()` says whether this one is)."""
    return _building_count > 0


def current_builder() -> "Builder | None":
    stack = _stack()
    return stack[-1] if stack else None


def note_random_draw() -> None:
    """Count a random draw made while this thread traces: a trace that drew is not cached (compiler.py)."""
    _state.draws = random_draws() + 1


def random_draws() -> int:
    """How many random draws this thread made while tracing."""
    return getattr(_state, "draws", 0)


def bind(prim, args, attrs):
    """Apply `prim` to `args`: evaluate eagerly on arrays, or record a node when tracing."""
    builder = None
    for arg in args:
        if isinstance(arg, Tracer) and (builder is None or arg.builder.depth > builder.depth):
            builder = arg.builder
    if builder is None and prim.traced_always:
        builder = current_builder()
    if builder is not None and builder.depth < 0 and _building_count:
        builder = current_builder() or builder  # eager tensors inside a trace: the op joins it (see Reads)
    if builder is None:
        arrays = [a if isinstance(a, tuple) else np.asarray(a) for a in args]  # a tuple: a loop's results
        shape, dtype = _shape_rule(prim, arrays, attrs)
        if ir.is_tuple_dtype(dtype):
            return tuple(prim.impl(*arrays, **attrs))
        result = np.asarray(prim.impl(*arrays, **attrs))
        return result if result.dtype == dtype else result.astype(dtype)
    if not builder.active:
        raise TracerError(with_user_line("a traced value was used after its trace finished (leaked tracer)"))
    values = [builder.lift(a) for a in args]
    shape, dtype = _shape_rule(prim, values, attrs)
    return builder.add(prim, values, attrs, shape, dtype)


def refuse_masked(value, name: str) -> None:
    """A NumPy masked array is an error, as in JAX: converting it would silently drop its mask. (None exists before
    numpy.ma is imported, so the check does not import it: ~10 ms of a program's first call.)"""
    masked = sys.modules.get("numpy.ma")
    if masked is not None and isinstance(value, masked.MaskedArray):
        fail(f"{name}: NumPy masked arrays are not supported (their mask would be dropped); pass value.filled(fill) "
             "to choose what masked entries hold, or np.asarray(value) for the data", TypeError)


def _shape_rule(prim, inputs, attrs):
    try:
        shape, dtype = prim.abstract_eval(inputs, **attrs)
    except ShapeError as err:
        if "\n  at " in str(err):
            raise
        raise ShapeError(with_user_line(str(err))) from None
    for part_shape, part_dtype in (ir.components(dtype) if ir.is_tuple_dtype(dtype) else [(shape, dtype)]):
        _check_addressable(prim, part_shape, np.dtype(part_dtype))
    return shape, dtype


# The most bytes one array may hold: NumPy's limit, and what the backends' 64-bit sizes can count.
MAX_ARRAY_BYTES = np.iinfo(np.intp).max


def _check_addressable(prim, shape, dtype) -> None:
    """A result too large for a 64-bit size is an error, as in NumPy, which counts it without its
    zero-length axes (native sizes would wrap around: a wrong number, or a loop that never ends)."""
    if math.prod(int(d) for d in shape if d) * max(dtype.itemsize, 1) > MAX_ARRAY_BYTES:
        raise ShapeError(with_user_line(
            f"{prim.name}: the result's shape {tuple(shape)} of {dtype} is too large: its bytes (zero-length "
            f"axes aside, as NumPy counts) exceed what a {np.iinfo(np.intp).bits}-bit size can count"))


class Tracer:
    """A symbolic array: a Value of the graph being built. numpy_api gives it NumPy's operators and methods."""

    __slots__ = ("value", "builder", "weak")
    __array_priority__ = 1000

    def __init__(self, value: ir.Value, builder: Builder, weak=False):
        self.value = value
        self.builder = builder
        self.weak = weak  # a Python number's value (or computed from those only): weakly typed, as in NumPy

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
        raise ConcretizationError(with_user_line(
            f"{what} of a traced value {self.value.type_str()}: its value is not known while tracing. "
            "Python control flow (if/while/and/or) on traced values is not supported; use sg.where(cond, a, b) "
            "to choose between values, sg.cond/sg.switch to choose between computations, sg.while_loop for a "
            "loop that stops on a traced condition"))

    def __bool__(self):
        self._concrete_error("bool()")

    def __float__(self):
        self._concrete_error("float()")

    def __int__(self):
        self._concrete_error("int()")

    def __index__(self):
        self._concrete_error("using as an index")

    def __array__(self, *args, **kwargs):
        caller = _calling_library_function()
        if caller is not None:
            raise TracerError(with_user_line(numpy_function_message(*caller, self)))
        raise TracerError(with_user_line(
            f"a traced value {self.value.type_str()} was converted to a NumPy array (np.asarray, np.array, or an "
            "index into a NumPy array): inside traced or compiled code use sg.asarray / sg.array, and index a NumPy "
            "constant c with a traced index i as sg.array(c)[i] or sg.take(c, i)"))

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d traced array")
        return (self[i] for i in range(self.shape[0]))

    def __hash__(self):
        return id(self)


