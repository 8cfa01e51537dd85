"""Elementwise fusion: an `ew` node used once, by another `ew` node, is substituted into it
with SymPy, so a chain of elementwise ops becomes one node (one loop, no temporaries).

Expressions are built over one symbol per graph value, so substituting a producer inserts its
expression as it is (no renaming walk over it), and each node that remains is rewritten over
its input symbols once: the pass costs time linear in the graph, however long a chain fuses.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import sympy as sp

from .. import dtypes, ir
from ..ops.elementwise_registry import input_symbol
from ..ops.ew import ew_p

# Fused expressions larger than this (nodes of the expression tree: one or two per operation) are
# left unfused. Each node's own expression is counted once; fused sizes are added up, not recounted.
MAX_FUSED_NODES = 300


@dataclass
class _Fused:
    """An ew node's expression over value symbols, its tree size, the numeric dtypes it computes
    with (its operands' and its output's), the nodes absorbed into it, and whether it holds a Piecewise."""

    node: ir.Node
    expr: object
    size: int
    numeric: frozenset
    absorbed: tuple = ()
    piecewise: bool = False


def _numeric(values) -> frozenset:
    return frozenset(v.dtype for v in values if v.dtype != dtypes.BOOL)


def _fusable(producer: _Fused, consumer: ir.Node) -> bool:
    """Same one compute dtype, or a bool producer feeding a condition."""
    if producer.node.out.dtype == dtypes.BOOL:
        return True
    consumer_numeric = _numeric((*consumer.inputs, consumer.out))
    return len(producer.numeric) == 1 and producer.numeric == consumer_numeric


@functools.lru_cache(maxsize=4096)
def _measured(expr) -> tuple:
    """(tree size, whether it holds a Piecewise, the symbols it reads in a condition) of a node's own expression,
    in one walk (cached: a long program's nodes repeat a few expressions). A condition is a Piecewise's, or any
    argument of a function lowered as its `evaluation()` (ops/functions.py: cbrt's and xlogy's cases). No
    Piecewise is substituted there: SymPy folds a condition holding one (piecewise_fold, a rewrite as ITE, as_set,
    simplify), which costs more than the loop it saves and, unevaluated, could recurse without end (hardtanh's
    clamp of a clamp), divide by zero (relu6) or fail (isnan has no set)."""
    size, piecewise, conditions = 0, False, set()
    for part in sp.preorder_traversal(expr):
        size += 1
        if isinstance(part, sp.Piecewise):
            piecewise = True
            for _, condition in part.args:
                conditions |= condition.free_symbols
        elif hasattr(part, "evaluation"):
            conditions |= part.free_symbols
    return size, piecewise, frozenset(conditions)


class _Symbols:
    """One SymPy symbol per graph value, with the assumptions `input_symbol` gives its dtype."""

    def __init__(self):
        self._by_value = {}

    def __call__(self, value) -> sp.Symbol:
        symbol = self._by_value.get(id(value))
        if symbol is None:
            name = f"v{len(self._by_value)}"
            symbol = sp.Dummy(name) if np.dtype(value.dtype) == dtypes.BOOL else sp.Dummy(name, real=True)
            self._by_value[id(value)] = symbol
        return symbol


def _substituted(node: ir.Node, candidates: dict, symbol_of: _Symbols) -> _Fused:
    """`node`'s expression over value symbols, with its fusable single-use producers substituted."""
    params = node.params
    mapping, numeric, absorbed = {}, set(_numeric((node.out,))), []
    size, piecewise, conditions = _measured(params["expr"])
    for arg, value in zip(params["args"], node.inputs):
        producer = candidates.get(id(value))
        if producer is not None and _fusable(producer, node) and size + producer.size <= MAX_FUSED_NODES and \
                not (producer.piecewise and arg in conditions):
            mapping[arg] = producer.expr
            size += producer.size
            numeric |= producer.numeric
            piecewise |= producer.piecewise
            absorbed.append(producer)
        else:
            mapping[arg] = symbol_of(value)
            numeric |= _numeric((value,))
    return _Fused(node, params["expr"].xreplace(mapping), size, frozenset(numeric), tuple(absorbed), piecewise)


def _rewritten(fused: _Fused, operands: list, symbol_of: _Symbols) -> ir.Node:
    """The fused node over the operands its expression still uses, with canonical input symbols."""
    free = fused.expr.free_symbols
    used = [v for v in operands if symbol_of(v) in free] or operands[:1]
    canonical = {symbol_of(v): input_symbol(i, v.dtype) for i, v in enumerate(used)}
    attrs = {"expr": fused.expr.xreplace(canonical), "args": tuple(canonical.values()),
             "dtype": fused.node.params["dtype"]}
    node = fused.node
    return ir.Node(ew_p, tuple(used), ir.freeze_attrs(attrs), node.out, node.meta)


def _operands(fused: _Fused) -> list:
    """The graph values a fused expression reads, in the order its nodes' inputs name them (an
    absorbed producer's inputs in place of its value)."""
    operands = []
    _visit(fused, operands, set())
    return operands


def _visit(current: _Fused, operands: list, seen: set) -> None:
    """Append to `operands` the values `current` reads not `seen` yet (a module function: a nested one
    calling itself is a reference cycle, left to the cyclic collector with everything it holds)."""
    inner = {id(producer.node.out): producer for producer in current.absorbed}
    for value in current.node.inputs:
        if id(value) in inner:
            _visit(inner[id(value)], operands, seen)
        elif id(value) not in seen:
            seen.add(id(value))
            operands.append(value)


def fuse(graph: ir.Graph) -> ir.Graph:
    """Fuse single-use `ew` producers into their `ew` consumers, in one topological sweep.

    Expressions are composed, not simplified: SymPy would decide x != x (False) where NaN != NaN. The
    whole pass runs in one `sp.evaluate(False)`, because each change of that flag empties SymPy's cache."""
    with sp.evaluate(False):
        return _fuse(graph)


def _fuse(graph: ir.Graph) -> ir.Graph:
    uses = graph.consumers()  # graph outputs count as uses, so an output is never absorbed
    symbol_of = _Symbols()
    candidates = {}  # id(value) -> _Fused defining it, for ew values used exactly once
    results, absorbed_ids = [], set()
    for node in graph.nodes:
        if node.prim is ew_p:
            fused = _substituted(node, candidates, symbol_of)
            for producer in fused.absorbed:
                absorbed_ids.add(id(producer.node))
                del candidates[id(producer.node.out)]
            if uses.get(id(node.out)) == 1:
                candidates[id(node.out)] = fused
            results.append(fused)
        else:
            results.append(node)
    nodes = []
    for item in results:
        if isinstance(item, ir.Node):
            nodes.append(item)
        elif id(item.node) not in absorbed_ids:
            nodes.append(_rewritten(item, _operands(item), symbol_of) if item.absorbed else item.node)
    return ir.Graph(list(graph.inputs), nodes, list(graph.outputs), graph.name)
