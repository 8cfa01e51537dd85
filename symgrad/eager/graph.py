"""The recorded graph of eager tensors: one `Record` per op (a tensor's `grad_fn`).

A record holds what backward needs and nothing else: the primitive and its attributes
(as in an IR node), its parents (the records or leaf tensors its inputs came from), the
input and output arrays the adjoint may read, and the version each had when recorded.
"""
from __future__ import annotations

import itertools
import weakref

_sequence = itertools.count()

# PyTorch's names for the grad_fn of ops whose IR name differs.
_TORCH_NAMES = {
    "add": "Add", "subtract": "Sub", "multiply": "Mul", "divide": "Div", "power": "Pow", "negative": "Neg",
    "square": "Pow", "reciprocal": "Reciprocal", "arctan2": "Atan2", "arcsin": "Asin", "arccos": "Acos",
    "arctan": "Atan", "maximum": "Maximum", "minimum": "Minimum", "clip": "Clamp", "where": "Where",
    "matmul": "Mm", "reduce_sum": "Sum", "reduce_max": "Max", "reduce_min": "Min", "reduce_prod": "Prod",
    "reshape": "View", "transpose": "Permute", "broadcast_to": "Expand", "slice": "Slice", "take": "Index",
    "convert": "ToCopy", "concatenate": "Cat", "relu": "Relu", "sigmoid": "Sigmoid", "logaddexp": "Logaddexp",
    "less": "Lt", "greater": "Gt", "equal": "Eq", "mean": "Mean", "mse_loss": "MseLoss", "nll_loss": "NllLoss",
    "linear": "Addmm", "log_softmax": "LogSoftmax", "softmax": "Softmax",
}
_SYMPY_NAMES = {"Add": "Add", "Mul": "Mul", "Pow": "Pow", "Abs": "Abs", "Piecewise": "Where"}


class VersionCounter:
    """How many times a tensor's data was modified in place (shared by tensors sharing data)."""

    __slots__ = ("value",)

    def __init__(self):
        self.value = 0


class Record:
    """One recorded op: `grad_fn` of the tensor it produced. `function` is set for autograd.Function."""

    __slots__ = ("prim", "attrs", "parents", "in_types", "saved", "versions", "out", "out_version",
                 "out_type", "seq", "hooks", "retained", "function", "ctx", "released", "label", "__weakref__")

    def __init__(self, prim, attrs, parents, in_types, saved, versions, out, out_version,
                 function=None, ctx=None):
        self.prim = prim
        self.attrs = attrs
        self.parents = parents          # per input: a Record, a leaf Tensor requiring grad, or None
        self.in_types = in_types        # per input: (shape, dtype)
        self.saved = saved              # per input: its array when recorded
        self.versions = versions        # per input: (VersionCounter, version when recorded)
        self.out = out
        self.out_version = out_version
        self.out_type = (out.shape, out.dtype)
        self.seq = next(_sequence)      # creation order: a topological order of the recorded graph
        self.hooks = []
        self.retained = None            # weakref to the non-leaf tensor that called retain_grad()
        self.function = function
        self.ctx = ctx
        self.released = False
        self.label = None               # the PyTorch name of the user-level op, when known

    def release(self):
        """Free the saved values (after a backward without retain_graph)."""
        self.saved = tuple(None for _ in self.parents)
        self.out = None
        self.released = True
        if self.ctx is not None:
            self.ctx.release()

    def retain(self, tensor):
        self.retained = weakref.ref(tensor)

    def retained_tensor(self):
        return self.retained() if self.retained is not None else None

    def name(self) -> str:
        """PyTorch-style name: 'MulBackward0', 'TanhBackward0', 'MmBackward0', or 'MyFunctionBackward'."""
        if self.label is not None:
            return self.label
        if self.function is not None:
            return f"{self.function.__name__}Backward"
        base = self.prim.name
        if base == "ew":
            attrs = dict(self.attrs)
            op = attrs.get("name")
            if op is None:
                func = attrs["expr"].func.__name__
                return f"{_SYMPY_NAMES.get(func, func.capitalize())}Backward0"
            base = op
        return Record.torch_name(base)

    @staticmethod
    def torch_name(op_name: str) -> str:
        """'subtract' -> 'SubBackward0': PyTorch's grad_fn name for an op of that name."""
        return f"{_TORCH_NAMES.get(op_name, op_name.replace('_', ' ').title().replace(' ', ''))}Backward0"

    @property
    def next_functions(self):
        """(parent grad_fn or leaf accumulator or None, 0) per input, as PyTorch shows them."""
        return tuple((_AccumulateGrad(p) if p is not None and not isinstance(p, Record) else p, 0)
                     for p in self.parents)

    def register_hook(self, fn):
        self.hooks.append(fn)
        return RemovableHandle(self.hooks, fn)

    def __repr__(self):
        return f"<{self.name()} object at {hex(id(self))}>"


class _AccumulateGrad:
    """What PyTorch shows for a leaf in `next_functions`."""

    def __init__(self, variable):
        self.variable = variable

    def name(self):
        return "AccumulateGrad"

    def __repr__(self):
        return f"<AccumulateGrad object at {hex(id(self))}>"


class RemovableHandle:
    """Returned by register_hook: `.remove()` unregisters the hook."""

    def __init__(self, hooks: list, fn):
        self._hooks = hooks
        self._fn = fn

    def remove(self):
        if self._fn in self._hooks:
            self._hooks.remove(self._fn)
