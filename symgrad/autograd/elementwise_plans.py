"""Elementwise ops on eager tensors without rebuilding their SymPy expression on every call.

The elementwise front end (NumPy promotion, broadcasting, Python scalars baked into the
expression, the SymPy expression itself) depends only on the operands' shapes and dtypes
and the scalars' values. For tensors it is traced once per such signature into a few
primitive applications (a plan) and replayed by the eager recorder, which makes a small
eager op several times cheaper.
"""
from __future__ import annotations

import collections

from ..tracing import Builder, building
from .graph import Record

_PLANS_SIZE = 4096
_plans: "collections.OrderedDict" = collections.OrderedDict()


class Plan:
    """The primitive applications one elementwise call makes: (prim, operand indices, attrs, shape, dtype)."""

    def __init__(self, op, signature):
        builder = Builder()
        with building(builder):
            args = [builder.new_input(shape, dtype) if is_array else value
                    for is_array, shape, dtype, value in signature]
            graph = builder.finish([op(*args)])
        index = {id(v): i for i, v in enumerate(graph.inputs)}
        self.steps = []
        for node in graph.nodes:
            self.steps.append((node.prim, tuple(index[id(v)] for v in node.inputs), node.params, node.attrs,
                               node.out.dtype))
            index[id(node.out)] = len(index)
        self.output = index[id(graph.outputs[0])]
        self.label = Record.torch_name(op.name)  # the grad_fn name PyTorch gives this op

    def run(self, operands, recorder):
        """Apply the steps to the tensor operands through `recorder.apply` (the eager recorder)."""
        values = list(operands)
        for prim, inputs, attrs, frozen_attrs, dtype in self.steps:
            values.append(recorder.apply(prim, [values[i] for i in inputs], attrs, frozen_attrs, dtype))
        return values[self.output]


def plan_for(op, signature) -> Plan:
    """The cached plan of op for a signature: per argument (is_array, shape, dtype, scalar value)."""
    key = (op, signature)
    plan = _plans.get(key)
    if plan is None:
        plan = _plans[key] = Plan(op, signature)
        if len(_plans) > _PLANS_SIZE:
            _plans.popitem(last=False)
    return plan
