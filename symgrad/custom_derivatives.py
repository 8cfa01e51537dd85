"""`sg.custom_vjp` and `sg.custom_jvp`: functions whose derivatives are rules the user writes, with
JAX's decorators (`f.defvjp(f_fwd, f_bwd)`, `@f.defjvp`).

Called on concrete arrays outside any transform, the function simply runs. Traced (under grad, jvp,
vmap, compile...), a call becomes one node holding the graphs of the function and of its rules
(ops/custom.py); differentiation replays the rules (autodiff/custom.py), and the optimizer inlines the
function before lowering. The function and its rules must take the traced values they use as
arguments: a rule closing over a traced value of an enclosing trace would have no derivative with
respect to it, so that is an error rather than a silently missing term. Eager tensors
(`requires_grad`) have `sg.autograd.Function` for the same purpose.
"""
from __future__ import annotations

import functools
import threading

import numpy as np

from . import ir, pytree
from . import numpy_api as sg
from .core import ConcretizationError, TracerError, Tracer, bind, current_builder, fail
from .ops.control import results
from .static_args import bind_positions
from .ops.custom import custom_jvp_p, custom_vjp_p
from .tracing import as_input_array, function_name, trace_flat


def _closed(fn, args, what):
    """(graph, output tree) of fn traced on args, refusing a function that reads traced values of an
    enclosing trace."""
    graph, tree, captures = trace_flat(fn, args, name=function_name(fn), closed=True)
    if captures:
        raise TracerError(f"{what} {function_name(fn)} reads a traced value it is not given as an argument (a "
                          "closure over a value of an enclosing transform); pass that value as an argument")
    return graph, tree


def _leaves(args):
    """The argument leaves as values a trace can take: tracers as they are, the rest as arrays."""
    leaves, tree = pytree.flatten(list(args))
    names = pytree.leaf_names(list(args), [f"argument {i}" for i in range(len(args))])
    return [x if isinstance(x, Tracer) else as_input_array(x, name) for x, name in zip(leaves, names)], tree


def _types(values) -> list:
    return [ir.Value(tuple(np.shape(v)), v.dtype) for v in values]


def _same_types(what, expected, given):
    if len(expected) != len(given):
        fail(f"{what}: {len(given)} values, expected {len(expected)}", TypeError)
    for position, (want, got) in enumerate(zip(expected, given)):
        if (want.shape, np.dtype(want.dtype)) != (got.shape, np.dtype(got.dtype)):
            fail(f"{what}: value {position} is {got.type_str()}, expected {want.type_str()}", TypeError)


class _WithRules:
    """A function with derivative rules: outside any transform, or called by its own rules while they are
    traced (in this thread), it is the function; traced, one node holding it and its rules (`_bind`); on eager
    tensors, that node recorded (the rules are the tensors' backward, as sg.grad's).

    The arguments at `nondiff_argnums` (JAX's) are Python values (a function, a string, a number), hashable,
    put back in place for the function and given first to the rule: they have no derivative and are not
    traced. `sg.custom_vjp(nondiff_argnums=...)` without the function is a decorator."""

    def __new__(cls, fun=None, nondiff_argnums=None):
        if fun is None and nondiff_argnums is not None:  # (copy's cls.__new__(cls) makes an instance)
            return functools.partial(cls, nondiff_argnums=nondiff_argnums)
        return super().__new__(cls)

    def __init__(self, fun, nondiff_argnums=()):
        self.fun = fun
        self.nondiff_argnums = (nondiff_argnums,) if isinstance(nondiff_argnums, int) else tuple(nondiff_argnums)
        self._tracing = threading.local()
        self._traced = self._call  # (one object: the eager recorder keys its plans and shortcuts by the function)
        functools.update_wrapper(self, fun)

    def __call__(self, *args):
        if current_builder() is None:  # eager tensors among the arguments record the call as one node with its
            for arg in args:  # rules (traced once per signature, as an sg.* function), so backward follows them
                handler = getattr(type(arg), "__sg_function__", None)
                if handler is not None:
                    return handler(self._traced, args, {})
        return self._call(*args)

    def _call(self, *args):
        """The call as `__call__` describes it, on arrays or traced values; on eager tensors the recorder could
        not take as one node (several outputs, a pytree, nondiff_argnums), an autograd.Function of the rule."""
        if current_builder() is None or getattr(self._tracing, "active", False):
            if current_builder() is None:
                for leaf in pytree.flatten(list(args))[0]:  # (an eager tensor's type says how it takes the rule)
                    with_rules = getattr(type(leaf), "__sg_custom_rule__", None)
                    if with_rules is not None:
                        return with_rules(self, args)
            return self.fun(*args)
        missing = self._missing_rule()
        if missing:
            fail(missing, TypeError)
        static, dynamic = self._split(args)
        self._tracing.active = True
        try:
            return self._bind(static, dynamic)
        finally:
            self._tracing.active = False

    def _split(self, args):
        """((position, value) of the nondiff arguments, the other arguments), each nondiff one checked."""
        kind, name = type(self).__name__, function_name(self.fun)
        positions = set()
        for n in self.nondiff_argnums:
            if not isinstance(n, int) or not -len(args) <= n < len(args):
                fail(f"{kind} {name}: nondiff_argnums {self.nondiff_argnums} is out of range for {len(args)} "
                     "argument(s)", ValueError)
            positions.add(n % len(args))
        for n in sorted(positions):
            value = args[n]
            if isinstance(value, (Tracer, np.ndarray)):  # (a traced Python int: sg.compile retries with its value)
                fail(f"{kind} {name}: argument {n} is in nondiff_argnums but is an array or a traced value; "
                     "nondiff_argnums are for Python values (functions, strings, numbers; a number given to a "
                     "transform or sg.compile is traced unless in its static_argnums): pass an array as an "
                     "ordinary argument (a rule may return a zero cotangent for it, or None)",
                     ConcretizationError if isinstance(value, Tracer) else TypeError)
            try:
                hash(value)
            except TypeError:
                fail(f"{kind} {name}: argument {n} is in nondiff_argnums but is not hashable "
                     f"({type(value).__name__}); use a tuple for a list", TypeError)
        static = tuple((n, args[n]) for n in sorted(positions))
        return static, tuple(a for i, a in enumerate(args) if i not in positions)


class custom_vjp(_WithRules):
    """A function with a reverse-mode rule of its own (jax.custom_vjp):

        @sg.custom_vjp
        def f(x): ...
        def f_fwd(x): return f(x), residuals        # residuals: any pytree of arrays
        def f_bwd(residuals, g): return (gx,)       # one cotangent per argument (None: zero)
        f.defvjp(f_fwd, f_bwd)

    With nondiff_argnums, fwd takes the function's arguments and bwd(*nondiff arguments, residuals, g) returns
    a cotangent for each of the others, as in JAX.
    """

    def __init__(self, fun, nondiff_argnums=()):
        super().__init__(fun, nondiff_argnums)
        self.fwd = self.bwd = None

    def defvjp(self, fwd, bwd):
        self.fwd, self.bwd = fwd, bwd
        return self

    def _missing_rule(self):
        if self.fwd is None:
            return f"custom_vjp {function_name(self.fun)}: call defvjp(fwd, bwd) before differentiating it"
        return None

    def _bind(self, static, args):
        leaves, in_tree = _leaves(args)
        example = pytree.unflatten(in_tree, _types(leaves))
        fun, out_tree = _closed(bind_positions(self.fun, static), example, "custom_vjp function")
        fwd, fwd_tree = _closed(bind_positions(self.fwd, static), example, "custom_vjp fwd rule")
        if fwd_tree.kind not in ("tuple", "list") or len(fwd_tree.children) != 2 or fwd_tree.children[0] != out_tree:
            fail(f"custom_vjp {function_name(self.fun)}: fwd must return (output, residuals) with the output "
                 "structured as the function's", TypeError)
        _same_types(f"custom_vjp {function_name(self.fun)}: fwd's output", fun.outputs,
                    fwd.outputs[:len(fun.outputs)])
        residual_tree = fwd_tree.children[1]
        residuals = pytree.unflatten(residual_tree, [ir.Value(v.shape, v.dtype) for v in fwd.outputs[len(fun.outputs):]])
        cotangents = pytree.unflatten(out_tree, [ir.Value(v.shape, v.dtype) for v in fun.outputs])
        bwd = self._backward(residuals, cotangents, static, args, leaves)
        outs = results(bind(custom_vjp_p, leaves, dict(fun=fun, fwd=fwd, bwd=bwd)))
        return pytree.unflatten(out_tree, outs)

    def _backward(self, residuals, cotangents, static, args, leaves) -> ir.Graph:
        """bwd as a graph (residual leaves, cotangent leaves) -> one cotangent per argument leaf."""
        name = function_name(self.fun)
        which = "differentiable argument (those not in nondiff_argnums)" if static else "argument"

        def backward(residuals, cotangents):
            pulled = self.bwd(*[value for _, value in static], residuals, cotangents)
            if not isinstance(pulled, (tuple, list)) or len(pulled) != len(args):
                fail(f"custom_vjp {name}: bwd must return a tuple with one cotangent per {which} ({len(args)})",
                     TypeError)
            flat = []
            for arg, ct in zip(args, pulled):
                arg_leaves, arg_tree = pytree.flatten(arg)
                if ct is None:
                    flat += [None] * len(arg_leaves)
                    continue
                ct_leaves, ct_tree = pytree.flatten(ct)
                if ct_tree != arg_tree:
                    fail(f"custom_vjp {name}: bwd's cotangent {ct_tree} does not match its argument {arg_tree}",
                         TypeError)
                flat += ct_leaves
            return [(sg.zeros(np.shape(leaf), leaf.dtype) if ct is None else ct) for ct, leaf in zip(flat, leaves)]

        graph, _ = _closed(backward, (residuals, cotangents), "custom_vjp bwd rule")
        _same_types(f"custom_vjp {name}: bwd's cotangents", _types(leaves), graph.outputs)
        return graph


class custom_jvp(_WithRules):
    """A function with a forward-mode rule of its own (jax.custom_jvp), which reverse mode transposes:

        @sg.custom_jvp
        def f(x): ...
        @f.defjvp
        def f_jvp(primals, tangents):
            (x,), (t,) = primals, tangents
            return f(x), tangent_out

    With nondiff_argnums, the rule is f_jvp(*nondiff arguments, primals, tangents), primals and tangents
    holding the other arguments, as in JAX.
    """

    def __init__(self, fun, nondiff_argnums=()):
        super().__init__(fun, nondiff_argnums)
        self.jvp = None

    def defjvp(self, jvp):
        self.jvp = jvp
        return jvp

    def defjvps(self, *jvps):
        """One rule per argument, jvp_i(tangent_i, primal_out, *primals) -> its term of the output tangent
        (None: the output does not depend on it); the terms are summed, as JAX's defjvps."""
        name = function_name(self.fun)
        if self.nondiff_argnums:
            fail(f"custom_jvp {name}: defjvps cannot be used with nondiff_argnums (JAX's rule); use defjvp", TypeError)

        def jvp(primals, tangents):
            if len(jvps) != len(primals):
                fail(f"custom_jvp {name}: defjvps was given {len(jvps)} rules for {len(primals)} arguments", TypeError)
            out = self(*primals)
            out_leaves, out_tree = pytree.flatten(out)
            total = [sg.zeros_like(leaf) for leaf in out_leaves]
            for rule, tangent in zip(jvps, tangents):
                if rule is not None:
                    total = [a + b for a, b in zip(total, pytree.flatten(rule(tangent, out, *primals))[0])]
            return out, pytree.unflatten(out_tree, total)

        self.defjvp(jvp)

    def _missing_rule(self):
        if self.jvp is None:
            name = function_name(self.fun)
            return f"custom_jvp {name}: define its rule with @{name}.defjvp before differentiating it"
        return None

    def _bind(self, static, args):
        name = function_name(self.fun)
        leaves, in_tree = _leaves(args)
        types = _types(leaves)
        fun, out_tree = _closed(bind_positions(self.fun, static), pytree.unflatten(in_tree, types),
                                "custom_jvp function")
        tangent_types = [ir.Value(v.shape, v.dtype) for v in types]  # an integer's tangent: zeros of its type

        def rule(primal_leaves, tangent_leaves):
            primals = tuple(pytree.unflatten(in_tree, primal_leaves))
            tangents = tuple(pytree.unflatten(in_tree, tangent_leaves))
            out = self.jvp(*[value for _, value in static], primals, tangents)
            if not isinstance(out, (tuple, list)) or len(out) != 2:
                fail(f"custom_jvp {name}: the rule must return (primal output, tangent output)", TypeError)
            primal_out, tangent_out = (pytree.flatten(part) for part in out)
            if primal_out[1] != out_tree or tangent_out[1] != out_tree:
                fail(f"custom_jvp {name}: the rule's outputs must be structured as the function's", TypeError)
            return primal_out[0] + tangent_out[0]

        jvp, _ = _closed(rule, (types, tangent_types), "custom_jvp rule")
        _same_types(f"custom_jvp {name}: the rule's outputs", fun.outputs + fun.outputs, jvp.outputs)
        jvp = ir.Graph(jvp.inputs, jvp.nodes, jvp.outputs, f"{name}_jvp")
        outs = results(bind(custom_jvp_p, leaves, dict(fun=fun, jvp=jvp)))
        return pytree.unflatten(out_tree, outs)
