"""The static IR: typed values, nodes, graphs; the verifier and the printer.

A Graph is in SSA/ANF form: inputs, a topologically ordered list of nodes (one output
each), and outputs. Every value has a static shape and dtype. Node attributes are
plain hashable data (ints, tuples, dtypes, SymPy expressions, `Constant`), so a graph
hashes, pickles and lowers without calling back into Python.
"""
from __future__ import annotations

import hashlib
import types
from dataclasses import dataclass, field, fields

import numpy as np

from . import dtypes, pickling


class Value:
    """One SSA value. Identity is object identity; names are given at print time."""

    __slots__ = ("shape", "dtype", "hint", "__weakref__")

    def __init__(self, shape, dtype, hint=None):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)
        self.hint = hint  # a name (str) or ("ct", forward Value) for adjoint values

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def type_str(self) -> str:
        if is_tuple_dtype(self.dtype):
            return "(" + ", ".join(Value(shape, dtype).type_str() for shape, dtype in components(self.dtype)) + ")"
        return f"{dtypes.short_name(self.dtype)}[{','.join(map(str, self.shape))}]"

    def __repr__(self):
        return f"<Value {self.type_str()}>"


_new = object.__new__


def typed_value(shape: tuple, dtype: np.dtype) -> Value:
    """A Value of a type already normal (a tuple of ints, a NumPy dtype), made without normalizing it: an eager
    record's output (0.09 us against Value's 0.48)."""
    value = _new(Value)
    value.shape = shape
    value.dtype = dtype
    value.hint = None
    return value


# ----------------------------------------------------------------------------- tuple values
# A node has one output. A loop or a branch returns several arrays, so its output is one value of a
# tuple type, read by `result[index=k]` nodes. The tuple type is a NumPy structured dtype with one
# field per component (shape and dtype), so every value keeps a plain, hashable, picklable type.

def tuple_dtype(types) -> np.dtype:
    """The tuple type of components `types`, a list of (shape, dtype)."""
    return np.dtype([(f"r{i}", np.dtype(dtype), tuple(shape)) for i, (shape, dtype) in enumerate(types)])


def is_tuple_dtype(dtype) -> bool:
    return np.dtype(dtype).names is not None


def components(dtype) -> list:
    """The (shape, dtype) of each component of a tuple type."""
    fields = np.dtype(dtype).fields
    return [(fields[name][0].shape, fields[name][0].base) for name in np.dtype(dtype).names]


def is_differentiable(dtype) -> bool:
    """A float type, or a tuple type with a float component: what carries a (co)tangent."""
    if is_tuple_dtype(dtype):
        return any(dtypes.is_float(d) for _, d in components(dtype))
    return dtypes.is_float(dtype)


def subgraphs(node) -> list:
    """The graphs among a node's attributes (a loop's body, a switch's branches), in attribute order."""
    found = []
    for _, value in node.attrs:
        if isinstance(value, Graph):
            found.append(value)
        elif isinstance(value, tuple) and value and all(isinstance(v, Graph) for v in value):
            found.extend(value)
    return found


def map_subgraphs(graph: "Graph", rewrite) -> "Graph":
    """`graph` with every sub-graph attribute replaced by `rewrite(sub-graph)` (graph itself if none changes)."""
    nodes, changed = [], False
    for node in graph.nodes:
        attrs = node.attrs
        if subgraphs(node):
            attrs = tuple((name, _rewrite_attr(value, rewrite)) for name, value in node.attrs)
        if attrs != node.attrs or any(a is not b for (_, a), (_, b) in zip(attrs, node.attrs)):
            node = Node(node.prim, node.inputs, attrs, node.out, node.meta)
            changed = True
        nodes.append(node)
    return Graph(list(graph.inputs), nodes, list(graph.outputs), graph.name) if changed else graph


def _rewrite_attr(value, rewrite):
    if isinstance(value, Graph):
        return rewrite(value)
    if isinstance(value, tuple) and value and all(isinstance(v, Graph) for v in value):
        return tuple(rewrite(v) for v in value)
    return value


def all_nodes(graph: "Graph"):
    """Every node of `graph` and of its sub-graphs, at any depth."""
    for node in graph.nodes:
        yield node
        for sub in subgraphs(node):
            yield from all_nodes(sub)


class Constant:
    """A read-only array usable as a hashable node attribute."""

    __slots__ = ("array", "_digest")

    def __init__(self, array):
        array = np.array(array, copy=True)
        array.setflags(write=False)
        self.array = array
        self._digest = hashlib.sha1(array.tobytes() + str((array.shape, array.dtype.str)).encode()).hexdigest()

    def __eq__(self, other):
        return isinstance(other, Constant) and self._digest == other._digest

    def __hash__(self):
        return hash(self._digest)

    def __getstate__(self):
        return {"array": self.array}

    def __setstate__(self, state):
        self.__init__(state["array"])

    def __repr__(self):
        if self.array.size <= 6:
            return np.array2string(self.array, separator=", ").replace("\n", "")
        return f"<{self.array.size} values #{self._digest[:8]}>"


NO_META = types.MappingProxyType({})  # the `meta` of a node without notes: shared, read-only (a writer replaces it)


@dataclass(eq=False, slots=True)
class Node:
    """`out = prim(*inputs, **attrs)`. `meta` holds printing/diagnostic notes, never semantics. Slotted, and without
    notes sharing one empty `meta`: a graph holds many, and an eager record (symgrad.eager.graph) is to become one,
    made per recorded op."""

    prim: object
    inputs: tuple
    attrs: tuple  # sorted ((name, value), ...)
    out: Value
    meta: dict = field(default_factory=lambda: NO_META)

    @property
    def params(self) -> dict:
        return dict(self.attrs)

    def key(self):
        """Structural identity used by CSE: op, attributes and input identities."""
        return (self.prim.name, self.attrs, tuple(id(v) for v in self.inputs))

    def __getstate__(self):
        """Pickled as a dict of its fields (as before it had slots), its SymPy attributes exactly as they are
        (pickling.exact_state)."""
        state = {f.name: getattr(self, f.name) for f in fields(self)}
        return {**state, "attrs": pickling.exact_state(self.attrs), "meta": dict(self.meta)}

    def __setstate__(self, state):
        for name, value in state.items():
            setattr(self, name, pickling.restored_state(value) if name == "attrs" else value)


def freeze_attrs(attrs: dict) -> tuple:
    return tuple(sorted(attrs.items()))


@dataclass(eq=False)
class Graph:
    inputs: list
    nodes: list
    outputs: list
    name: str = "f"

    def producers(self) -> dict:
        """Map id(value) -> the node that defines it."""
        return {id(node.out): node for node in self.nodes}

    def consumers(self) -> dict:
        """Map id(value) -> number of uses (by nodes and graph outputs)."""
        counts = {}
        for node in self.nodes:
            for value in node.inputs:
                counts[id(value)] = counts.get(id(value), 0) + 1
        for value in self.outputs:
            counts[id(value)] = counts.get(id(value), 0) + 1
        return counts

    def structure_key(self):
        """A hashable summary of the graph's structure (ops, attrs, types, wiring), exact: two graphs with equal
        keys compute the same function (the compiled-code cache, symgrad.code_cache, relies on it)."""
        index = {id(v): i for i, v in enumerate(self.inputs)}
        items = [tuple((v.shape, _dtype_key(v.dtype)) for v in self.inputs)]
        for node in self.nodes:
            items.append((node.prim.name, _exact(node.attrs), tuple(index[id(v)] for v in node.inputs),
                          node.out.shape, _dtype_key(node.out.dtype)))
            index[id(node.out)] = len(index)
        items.append(tuple(index[id(v)] for v in self.outputs))
        return tuple(items)

    def __hash__(self):
        return hash(self.structure_key())

    def __eq__(self, other):
        return isinstance(other, Graph) and self.structure_key() == other.structure_key()

    def __str__(self):
        return format_graph(self)


def _dtype_key(dtype: np.dtype):
    """A dtype as a key: its string, or for a tuple type (whose string, '|V16', is only its size) the dtype itself."""
    return dtype.str if dtype.names is None else dtype


def _exact(attrs):
    """Attributes as a key that equal but different values do not share: 0.0 and -0.0, 1 and 1.0 and True compare
    equal in Python, and a node computes differently with each. (The attributes themselves when none is such a
    value, as most are: a graph's key is made without copying them.)"""
    return attrs if _plain(attrs) else _tagged(attrs)


_TAGGED = frozenset({float, complex, bool})  # and NumPy's scalars


def _plain(value) -> bool:
    kind = type(value)
    if kind is tuple:
        return all(map(_plain, value))
    return kind not in _TAGGED and not isinstance(value, np.generic)  # (a graph's equality is its exact key)


def _tagged(value):
    if type(value) is tuple:
        return tuple(map(_tagged, value))
    return (type(value), repr(value)) if not _plain(value) else value


class IRError(Exception):
    """The graph breaks an IR invariant (found by `verify`)."""


def verify(graph: Graph) -> Graph:
    """Check single assignment, definition before use, and every type against its shape rule."""
    defined = set()
    for value in graph.inputs:
        if id(value) in defined:
            raise IRError(f"input {value} is listed twice")
        defined.add(id(value))
    for position, node in enumerate(graph.nodes):
        for value in node.inputs:
            if id(value) not in defined:
                raise IRError(f"node {position} ({node.prim.name}) uses a value before it is defined")
        if id(node.out) in defined:
            raise IRError(f"node {position} ({node.prim.name}) assigns a value twice")
        shape, dtype = node.prim.abstract_eval([v for v in node.inputs], **node.params)
        if tuple(shape) != node.out.shape or np.dtype(dtype) != node.out.dtype:
            raise IRError(f"node {position} ({node.prim.name}) declares {node.out.type_str()} but its shape "
                          f"rule gives {Value(shape, dtype).type_str()}")
        for sub in subgraphs(node):
            verify(sub)
        defined.add(id(node.out))
    for value in graph.outputs:
        if id(value) not in defined:
            raise IRError(f"output {value} is not defined in the graph")
    return graph


# ----------------------------------------------------------------------------- printing

class Namer:
    """Assigns printable names: inputs by their hints, adjoint values as ct_<primal>, others v0, v1, ..."""

    def __init__(self):
        self.names = {}
        self.taken = set()
        self.counter = 0

    def __call__(self, value: Value) -> str:
        name = self.names.get(id(value))
        if name is None:
            name = self._fresh(value)
            self.names[id(value)] = name
            self.taken.add(name)
        return name

    def _fresh(self, value):
        hint = value.hint
        if isinstance(hint, tuple) and hint[0] == "ct" and id(hint[1]) in self.names:
            base = "ct_" + self.names[id(hint[1])]
        elif isinstance(hint, str):
            base = hint
        else:
            while f"v{self.counter}" in self.taken:
                self.counter += 1
            return f"v{self.counter}"
        name, suffix = base, 1
        while name in self.taken:
            name, suffix = f"{base}_{suffix}", suffix + 1
        return name


def format_attr(value) -> str:
    if isinstance(value, np.dtype):
        return dtypes.short_name(value)
    if isinstance(value, Graph):  # printed in full below the node
        return value.name
    if isinstance(value, tuple) and value and all(isinstance(v, Graph) for v in value):
        return "(" + ", ".join(v.name for v in value) + ")"
    return str(value)


def format_graph(graph: Graph) -> str:
    namer = Namer()
    params = ", ".join(f"{namer(v)}: {v.type_str()}" for v in graph.inputs)
    out_types = [v.type_str() for v in graph.outputs]
    result = out_types[0] if len(out_types) == 1 else f"({', '.join(out_types)})"
    rows, section = [], None
    for node in graph.nodes:
        if node.meta.get("section") != section:
            section = node.meta.get("section")
            if section:
                rows.append((f"# {section}", None, None))
        op = node.prim.format_op(node, namer)
        args = " ".join(namer(v) for v in node.inputs)
        rhs = f"{op} {args}".rstrip()
        lhs = f"{namer(node.out)}: {node.out.type_str()}"
        rows.append((lhs, rhs, node.meta.get("rule")))
        for sub in subgraphs(node):  # a loop's body, a switch's branches: nested and indented
            rows.extend(("  " + line, None, None) for line in format_graph(sub).splitlines())
    width = max((len(lhs) for lhs, rhs, _ in rows if rhs is not None), default=0)
    body_width = max((len(f"{lhs:<{width}} = {rhs}") for lhs, rhs, _ in rows if rhs is not None), default=0)
    lines = [f"def {graph.name}({params}) -> {result}:"]
    for lhs, rhs, rule in rows:
        if rhs is None:
            lines.append(f"  {lhs}")
            continue
        line = f"{lhs:<{width}} = {rhs}"
        if rule:
            line = f"{line:<{body_width}}  # {rule}"
        lines.append("  " + line)
    lines.append("  return " + ", ".join(namer(v) for v in graph.outputs))
    return "\n".join(lines)
