"""Constant lifting: constants become graph inputs, so their values are not structure.

Used where a function re-runs on every call (its reads cannot be guarded): each trace
bakes in fresh arrays (random draws, data read through an object), and lifting them
makes traces that differ only in those values share one structure, hence one compiled
executable. Such graphs give up folding their constants; a Python number written into an
elementwise expression stays structure. Not part of the default pipeline.
"""
from __future__ import annotations

from .. import ir
from ..core import Reads, const_p


def lift_constants(graph: ir.Graph) -> tuple[ir.Graph, list]:
    """(graph with each non-empty constant replaced by a new trailing input, the constants' arrays)."""
    inputs, nodes, arrays = list(graph.inputs), [], []
    for node in graph.nodes:
        array = node.params["value"].array if node.prim is const_p else None
        if array is not None and Reads.readable(array):
            inputs.append(node.out)
            arrays.append(array)
        else:
            nodes.append(node)
    return ir.Graph(inputs, nodes, list(graph.outputs), graph.name), arrays
