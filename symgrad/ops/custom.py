"""Functions with derivative rules of their own: the `custom_vjp` and `custom_jvp` primitives.

A node holds the function's graph (`fun`) and its rules' graphs: `fwd` (the function's outputs, then the
residuals its reverse rule reads) and `bwd` (residuals and output cotangents -> input cotangents) for
custom_vjp; `jvp` (primals and tangents -> outputs, then output tangents) for custom_jvp. Its value, a
tuple (ir.tuple_dtype) read by `result` nodes, is fun's outputs: the NumPy reference runs fun, and the
optimizer inlines fun before a backend sees the node (passes/inline.py). The derivative rules need the
autodiff passes, a layer above, which attaches them (autodiff/custom.py); the decorators users write
are in symgrad/custom_derivatives.py.
"""
from __future__ import annotations

from .. import ir
from ..core import Primitive
from .control import _check_types, _types, evaluate


def _call_shape(inputs, fun, **rules):
    _check_types(f"the custom-derivative function {fun.name}", _types(fun.inputs), _types(inputs))
    return (), ir.tuple_dtype(_types(fun.outputs))


def _call_impl(*arrays, fun, **rules):
    return tuple(evaluate(fun, arrays))


custom_vjp_p = Primitive("custom_vjp", _call_shape, _call_impl)
custom_jvp_p = Primitive("custom_jvp", _call_shape, _call_impl)
CUSTOM_CALLS = (custom_vjp_p, custom_jvp_p)
