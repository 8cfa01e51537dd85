"""`Primitive`: one IR operation declared in one place (shape rule, reference impl, vjp, jvp)."""
from __future__ import annotations

from .. import ir

REGISTRY: dict[str, "Primitive"] = {}


class ShapeError(ValueError):
    """Operands whose shapes cannot be combined; the message names both shapes."""


class UnsupportedOpError(TypeError):
    """An elementwise op uses a SymPy function symgrad cannot differentiate or the chosen backend
    cannot evaluate; the message names the op, the function and the backend, and what to do."""


class Primitive:
    """An IR operation.

    shape_rule(inputs, **attrs) -> (shape, dtype): inputs are anything with .shape/.dtype.
    impl(*arrays, **attrs) -> ndarray: the NumPy reference implementation.
    vjp(ct, ans, *inputs, **attrs) -> one cotangent (or None) per input, written with primitives.
    jvp(tangents, ans, *inputs, **attrs) -> output tangent (or None); tangents hold None for zero.
    linear=True derives jvp by applying the primitive to the tangents.
    decompose(*inputs, **attrs) -> the same value written with other primitives: a backend with
    no rule of its own for this primitive lowers that instead (passes.decompose).
    """

    def __init__(self, name, shape_rule, impl, vjp=None, jvp=None, linear=False, decompose=None):
        self.name = name
        self.shape_rule = shape_rule
        self.impl = impl
        self.vjp = vjp
        self.linear = linear
        self.decompose = decompose
        self.jvp = jvp if jvp is not None else (self._linear_jvp if linear else None)
        REGISTRY[name] = self

    def abstract_eval(self, inputs, **attrs):
        return self.shape_rule(inputs, **attrs)

    def __call__(self, *args, **attrs):
        from ..tracing import bind
        return bind(self, args, attrs)

    def format_op(self, node: ir.Node, namer) -> str:
        if not node.attrs:
            return self.name
        return f"{self.name}[{', '.join(f'{k}={ir.format_attr(v)}' for k, v in node.attrs)}]"

    def rule_name(self, node: ir.Node) -> str:
        """The name printed beside the adjoint lines this node's rule emits."""
        return self.name

    def _linear_jvp(self, tangents, ans, *inputs, **attrs):
        from ..tracing import zeros_like_value
        if all(t is None for t in tangents):
            return None
        filled = [t if t is not None else zeros_like_value(x) for t, x in zip(tangents, inputs)]
        return self(*filled, **attrs)

    def __repr__(self):
        return f"<primitive {self.name}>"

    def __reduce__(self):
        # by name through a module-level function: pickling `REGISTRY.__getitem__` would
        # pickle the whole registry dict by value, and unpickling it fails (KeyError)
        return (lookup, (self.name,))


def lookup(name: str) -> "Primitive":
    """The registered primitive called `name` (used to unpickle graphs)."""
    return REGISTRY[name]
