"""Derivative rules of the custom-derivative primitives (ops/custom.py): the user's rules, replayed.

custom_vjp: reverse mode replays `fwd` for the residuals and `bwd` for the input cotangents; forward
mode is an error, as in JAX (a reverse rule says nothing about tangents). custom_jvp: forward mode
replays `jvp`; reverse mode is the reverse pass through `jvp` with respect to its tangent inputs: the
output tangents are linear in them, so that pass is the transpose JAX derives by linearizing.
"""
from __future__ import annotations

from .. import dtypes
from ..core import UnsupportedOpError, with_user_line
from ..ops.custom import custom_jvp_p, custom_vjp_p
from ..ops.shape import broadcast_to_p, zeros_like_value
from ..tracing import inline
from .reverse import backward_pass


def _filled(values, like) -> list:
    """values with zeros of the types of `like` in place of None."""
    return [v if v is not None else zeros_like_value(x) for v, x in zip(values, like)]


def _outputs(graph, operands) -> list:
    env = inline(graph, list(operands))
    return [env[id(v)] for v in graph.outputs]


def _custom_vjp_vjp(ct, ans, *inputs, fun, fwd, bwd):
    residuals = _outputs(fwd, inputs)[len(fun.outputs):]
    cts = _filled(list(ct), fun.outputs)
    pulled = _outputs(bwd, residuals + cts)
    return [p if dtypes.is_float(x.dtype) else None for p, x in zip(pulled, inputs)]


def _custom_vjp_jvp(tangents, ans, *inputs, fun, fwd, bwd):
    raise UnsupportedOpError(with_user_line(
        f"forward mode (jvp, jacfwd, hessian) of {fun.name}, a custom_vjp function: its rule gives reverse "
        "mode only, as in JAX; define it with sg.custom_jvp to have both"))


def _custom_jvp_jvp(tangents, ans, *inputs, fun, jvp):
    outs = _outputs(jvp, list(inputs) + _filled(list(tangents), inputs))
    return outs[len(fun.outputs):]


def _tangent_placeholder(x):
    """Zeros for a tangent input whose cotangent is wanted: never a literal `const` (a 0-d zero is one), whose
    cotangent a loop's reverse rule drops as going nowhere (control._float_positions): the gradient was 0."""
    zero = zeros_like_value(x)
    return broadcast_to_p(zero, shape=()) if x.shape == () else zero


def _custom_jvp_vjp(ct, ans, *inputs, fun, jvp):
    count = len(inputs)
    env = inline(jvp, list(inputs) + [_tangent_placeholder(x) for x in inputs])
    seeds = [(id(out), c) for out, c in zip(jvp.outputs[len(fun.outputs):], ct)
             if c is not None and dtypes.is_float(out.dtype)]
    cts = backward_pass(jvp, env, seeds) if seeds else {}
    return [cts.get(id(tangent)) for tangent in jvp.inputs[count:]]


def _custom_vjp_primal(*inputs, fun, fwd, bwd):
    return _outputs(fwd, inputs)[:len(fun.outputs)]


custom_vjp_p.vjp, custom_vjp_p.jvp, custom_vjp_p.primal_of_rule = _custom_vjp_vjp, _custom_vjp_jvp, _custom_vjp_primal
custom_jvp_p.vjp, custom_jvp_p.jvp = _custom_jvp_vjp, _custom_jvp_jvp
