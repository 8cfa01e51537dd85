"""The recorded graph of eager tensors: one `Record` per op (a tensor's `grad_fn`).

A record holds what backward needs and nothing else: the primitive and its attributes
(as in an IR node), its input and output `ir.Value`s (a tensor's value is one version of
its array: `value_of`), its parents (the records or leaf tensors its inputs came from), the
input and output arrays the adjoint may read, and the version each had when recorded.
"""
from __future__ import annotations

import itertools
import weakref

import numpy as np
import sympy as sp

from .. import ir
from ..ops import elementwise as E
from ..ops.ew import ew_p
from ..ops.indexing import take_p
from ..ops.linalg import matmul_p
from ..ops.reduce import reduce_max_p, reduce_min_p, reduce_prod_p
from ..ops.shape import broadcast_to_p, concatenate_p, convert_p, reduce_sum_p, reshape_p, transpose_p
from .tape import CONSTANT, MAX_ENTRIES, Kind, current_tape, written

_sequence = itertools.count()

# PyTorch's grad_fn names of the primitives and elementwise ops whose name PyTorch spells otherwise
# (any other op is named after itself: 'log1p' -> 'Log1PBackward0'), keyed by the op itself.
_TORCH_NAMES = {
    E.subtract: "Sub", E.multiply: "Mul", E.divide: "Div", E.power: "Pow", E.negative: "Neg", E.square: "Pow",
    E.arctan2: "Atan2", E.arcsin: "Asin", E.arccos: "Acos", E.arctan: "Atan", E.clip: "Clamp", E.less: "Lt",
    E.greater: "Gt", E.equal: "Eq",
    matmul_p: "Mm", reduce_sum_p: "Sum", reduce_max_p: "Max", reduce_min_p: "Min", reduce_prod_p: "Prod",
    reshape_p: "View", transpose_p: "Permute", broadcast_to_p: "Expand", take_p: "Index", convert_p: "ToCopy",
    concatenate_p: "Cat",
}
# ... and of an unnamed elementwise expression, by its outermost SymPy function (else that function's name).
_SYMPY_NAMES = {sp.Piecewise: "Where"}


def grad_fn_name(op) -> str:
    """PyTorch's grad_fn name for a primitive or elementwise op: subtract -> 'SubBackward0'."""
    name = _TORCH_NAMES.get(op) or op.name.replace("_", " ").title().replace(" ", "")
    return f"{name}Backward0"


class Results(tuple):
    """The value of a primitive with several results (eigh's, svd's, a custom_jvp call's...) in eager mode: its
    arrays, typed as the IR types such a value (shape (), a tuple dtype), which the tensors of its `result` nodes
    read."""

    shape = ()

    def __new__(cls, arrays, dtype):
        self = super().__new__(cls, (np.asarray(a, d) for a, (_, d) in zip(arrays, ir.components(dtype))))
        self.dtype = dtype
        return self


class VersionCounter:
    """How many times a tensor's data was modified in place (shared by tensors sharing data), whether
    that data was handed to or taken from NumPy (`exposed`: NumPy may write it unseen; True for good, or the
    number of arrays handed out by numpy() that NumPy still holds, 0 once none: see tensor._hand_to_numpy),
    and whether views of it were taken (`viewed`: tensors share it, so a write goes to it, not to a copy)."""

    __slots__ = ("value", "exposed", "viewed")

    def __init__(self):
        self.value = 0
        self.exposed = False
        self.viewed = False


class DerivedCounter(VersionCounter):
    """The counter of a value one call computed unrecorded from arrays NumPy may write, for a recorded op of the same
    call (a convolution's patches of its input): PyTorch's one op reads its input at backward, as NumPy left it, so
    the value is computed again from the arrays (`recompute`) if NumPy wrote one since its copy (`sources`: (copy,
    array) pairs) was kept. Exposed: its records take the general path, which reads it through `current`. `reads`:
    the (counter, version) of each tensor it was computed from, whose in-place writes since (`moved`) PyTorch refuses
    at backward, as a write to the one op's saved input."""

    __slots__ = ("sources", "recompute", "reads")

    def __init__(self, sources, recompute, reads):
        super().__init__()
        self.exposed = True
        self.sources = sources
        self.recompute = recompute
        self.reads = reads

    def moved(self) -> "tuple | None":
        """(version now, version read) of the first tensor it was computed from written in place since, or None."""
        for counter, version in self.reads:
            if counter.value != version:
                return counter.value, version
        return None

    def current(self, array: np.ndarray) -> np.ndarray:
        """The value as the arrays it is computed from now give it (`array`, the one computed then, if unwritten)."""
        return self.recompute() if written(self.sources) else array


# The version counter of a deferred plan's intermediate results: no tensor holds them, so nothing modifies it.
UNSEEN = VersionCounter()
UNSEEN_READ = (UNSEEN, 0)


def plan_step_reads(inputs, inner_only, reads) -> tuple:
    """(saved arrays, versions read) of the record of one step of a deferred plan (Record.make)."""
    if inner_only is not None:
        return inner_only
    saved, versions = [], []
    for index in inputs:  # (one loop, not two list comprehensions: each is a call on Python 3.11)
        if index < 0:
            saved.append(None)
            versions.append(UNSEEN_READ)
        else:
            read = reads[index]
            saved.append(read[1])
            versions.append(read[2])
    return tuple(saved), tuple(versions)


def value_of(t) -> ir.Value:
    """The IR value of tensor `t` at its array's current version: its record's output while that version is the one
    the record made, else the value `t` carries for this version (a leaf's, a constant's, a tensor written in place
    unrecorded), made at its first read. A write (its counter's version, shared by views) or `.data =` (a value held
    for the new array, its record's output no longer) gives a new value, so a value is one version of one array; an
    array NumPy may write unseen (`exposed`) has no known version, and each read is a value of its own."""
    counter = t._version
    node = t._node
    held = t._value
    held = held[0] if held is not None and held[1] is counter and held[2] == counter.value else None
    if node is not None and held is None:  # (one held with a node: another array since, `.data =`)
        made = node.out_version
        if made[0] is counter and made[1] == counter.value:
            return node.output()
    if counter.exposed:
        array = t._data
        return ir.typed_value(array.shape, array.dtype)
    if held is not None:
        return held
    array = t._data
    value = ir.typed_value(array.shape, array.dtype)
    t._value = (value, counter, counter.value)
    return value


class Rare:
    """The fields of a record that few records use, made only for those (`Record.rare`): its hooks, the tensor that
    called retain_grad(), an autograd.Function and its ctx, the operands next_functions shows, and what
    saved_tensors_hooks packed (symgrad.eager.saved_hooks)."""

    __slots__ = ("hooks", "retained", "function", "ctx", "shown_parents", "packed")

    def __init__(self, function=None, ctx=None):
        self.hooks = ()             # a list once a hook is registered
        self.retained = None        # weakref to the non-leaf tensor that called retain_grad()
        self.function = function
        self.ctx = ctx
        self.shown_parents = None   # a user-level op's operands' parents, for next_functions (tensor.labelled)
        self.packed = None          # [(unpack_hook, what pack_hook returned, the array saved)]


_COMMON = Rare()  # what a record without a Rare of its own reads (never written: `Record.rare` makes one)


class Record(ir.Node):
    """One recorded op, an IR node (`prim`, `attrs`, `inputs`, `out`, as a trace's) that is also `grad_fn` of the
    tensor it produced: a run of records is a graph as they are (adjoint.StageGraph). An autograd.Function's
    record has its `function` and ctx (in `extra`, with the other rarely set fields: `Rare`)."""

    __slots__ = ("_parents", "saved", "versions", "array", "out_version", "seq", "extra", "released", "label",
                 "viewed", "tape", "position", "entry", "value", "unmade", "__weakref__")
    meta = ir.NO_META  # (no notes: a class attribute, not a store per record)

    @classmethod
    def deferred(cls, step, parents, saved, versions, counter, tape, position, version=0, label=None) -> "Record":
        """The record of an op whose value is deferred: its structure is the captured `step`
        (symgrad.eager.tensor._defer); `saved` holds the leaf and constant operands (None for a record's);
        its value will be at `version` of `counter` (a view's is its operand's counter); `label` its name.
        Its input and output values are made when something reads them (`valued`, `output`)."""
        record = cls.__new__(cls)
        record.prim, record.attrs = step[0], step[1]
        record.entry = step[4]
        record.out = record.inputs = None
        record._parents = parents
        record.unmade = None
        record.saved = saved
        record.versions = versions
        record.array = None
        record.out_version = (counter, version)
        record.seq = next(_sequence)
        record.extra = None
        record.released = False
        record.label = label
        record.viewed = False
        record.tape = tape
        record.position = position
        record.value = None
        return record

    hooks = property(lambda self: (self.extra or _COMMON).hooks)
    retained = property(lambda self: (self.extra or _COMMON).retained)
    function = property(lambda self: (self.extra or _COMMON).function)
    ctx = property(lambda self: (self.extra or _COMMON).ctx)
    shown_parents = property(lambda self: (self.extra or _COMMON).shown_parents)

    def rare(self) -> Rare:
        """The record's rarely set fields, to write one (made at the first)."""
        if self.extra is None:
            self.extra = Rare()
        return self.extra

    @property
    def in_types(self) -> tuple:
        """Per input: its (shape, dtype)."""
        return tuple((value.shape, value.dtype) for value in self.valued().inputs)

    @property
    def out_type(self) -> tuple:
        return self.output().shape, self.out.dtype

    def output(self) -> ir.Value:
        """Its output value (a deferred record's made now: `deferred`)."""
        out = self.out
        if out is None:
            out = self.out = ir.typed_value(*self.entry[4])
        return out

    def valued(self) -> "Record":
        """The record with its input and output values, which a deferred record makes only when something reads
        them (a backward on the general path, an op recorded on its result): a deferred op is the next of a
        captured step, and a steady step never reads them. An operand at the version it read is its parent's
        output or, read as its array is, the leaf's value (value_of); one written since, or read from a copy (of an
        array NumPy may have written: symgrad.eager.tape's rule), gets a value of its own."""
        if self.inputs is None:
            values = []
            for parent, array, (counter, version), (shape, dtype) in zip(self.parents, self.saved, self.versions,
                                                                         self.entry[3]):
                if isinstance(parent, Record):  # (a record a user read as grad_fn is of a subclass: shown)
                    if parent.out_version[0] is counter and parent.out_version[1] == version:
                        values.append(parent.output())
                        continue
                elif parent is not None and parent._version is counter and counter.value == version and \
                        array is parent._data:
                    values.append(value_of(parent))
                    continue
                values.append(ir.typed_value(shape, dtype))
            self.inputs = tuple(values)
        self.output()
        return self

    @property
    def parents(self) -> tuple:
        """Per input: a Record, a leaf Tensor requiring grad, or None."""
        if self._parents is None:
            if self.value is None:  # still deferred: computing its step so far makes the records in tape order
                self.tape.force()
            else:
                self.make()
        return self._parents

    def make(self) -> list:
        """The records of a deferred plan's intermediate results, in tape order, made now: a plan deferred at
        once (symgrad.eager.tensor._defer_plan) leaves them `unmade`, (its steps, its operands' reads), until
        something needs them; [] when there is nothing to make."""
        if self.unmade is None:
            return []
        steps, reads = self.unmade
        self.unmade = None
        made, count, start = [], len(steps), self.position - len(steps) + 1
        for k, (step, inputs, inner_only) in enumerate(steps):
            parents = []
            for index in inputs:
                parents.append(made[index] if index < 0 else reads[index][0])
            if k == count - 1:
                self._parents = tuple(parents)
                break
            saved, versions = plan_step_reads(inputs, inner_only, reads)
            record = Record.deferred(step, tuple(parents), saved, versions, UNSEEN, self.tape, start + k)
            record.seq = self.seq - (count - 1 - k) / count  # between the records before and this one
            self.tape.intermediates.add(record.position)
            if self.released or (self.value is not None and self.array is None):  # freed by a backward, as its step
                record.saved, record.released = (None,) * len(inputs), True
            made.append(record)
        return made

    @classmethod
    def of_op(cls, prim, attrs, operands, arrays, out, function=None, ctx=None, kind=None, tape=None) -> "Record":
        """The record of `out` = prim(*operands) (tensors, whose arrays were `arrays` when it ran), the tape's next
        entry (Tape.append), of `kind` (a tape.Kind: one of its own when the caller knows none). One loop over the
        operands reads what the record keeps of each and where the tape says it comes from. Its input and output
        values are made when something reads them (`valued`), as a deferred record's: an op whose backward runs
        captured, or none, never reads them; but now when an operand is a record's output that it no longer holds as
        made (written since, or given another array by `.data =`: value_of, which `valued` could not tell later), or
        a constant NumPy does not share (one value per version, which its readers share: adjoint.StageGraph's
        inputs; `valued` gives a constant a value of its own, as value_of gives one NumPy may write). `tape`: the
        thread's tape when the caller read it, else None."""
        if tape is None or len(tape.digests) >= MAX_ENTRIES:  # (current_tape(), without its call and read)
            tape = current_tape()
        if tape.capture is not None:  # (before the sources are read: it may compute what the tape defers)
            tape.abandon()
        parents, versions, key, valued = [], [], [kind], True
        for t in operands:
            counter = t._version
            version = counter.value
            node = t._node
            if node is not None:  # an earlier record's output: on this tape, at the version it made?
                parents.append(node)
                made = node.out_version
                if node.tape is not tape or made[0] is not counter or made[1] != version:
                    tape.regular = False
                    valued = False
                elif t._value is not None and t._value[1] is counter and t._value[2] == version:  # (`.data =`)
                    valued = False
                key.append(node.position)
            elif t._requires_grad:
                parents.append(t)
                slot = tape.leaf_slots.get(id(t)) if tape.hinted <= 0 else None  # (Tape.leaf_source's usual case,
                if slot is not None and tape.leaves[slot]() is t:  # without its call)
                    key.append(-3 - slot)
                else:
                    key.append(tape.leaf_source(t))
            else:
                parents.append(None)
                key.append(CONSTANT)
                valued = valued and counter.exposed  # (one value per version of a constant: its readers share it)
            versions.append((counter, version))
        array = out._data
        if kind is None:
            kind = key[0] = Kind(prim, attrs, tuple((a.shape, a.dtype) for a in arrays), (array.shape, array.dtype))
        record = cls.__new__(cls)  # (its fields stored here, without a call of __init__ with a dozen arguments)
        record.prim = prim
        record.attrs = attrs
        record._parents = tuple(parents)  # per input: a Record, a leaf Tensor requiring grad, or None
        record.inputs = None if valued else tuple(value_of(t) for t in operands)  # per input: its ir.Value (`valued`)
        record.saved = tuple(arrays)      # per input: its array when recorded
        record.versions = tuple(versions)  # per input: (VersionCounter, version when recorded)
        record.out = None                 # the output's ir.Value, made by `output` when read
        record.array = array              # the output's array (None once freed)
        record.out_version = (out._version, out._version.value)
        record.seq = next(_sequence)      # creation order: a topological order of the recorded graph
        record.extra = None if function is None else Rare(function, ctx)  # the rarely set fields, made when one is
        record.released = False
        record.label = kind.label         # the PyTorch name of the user-level op, when known
        record.viewed = False             # its output views an operand's array and shares its version counter
        record.value = None               # a deferred record's output, once computed (symgrad.eager.tensor._defer)
        record.unmade = None              # a deferred plan's records not made yet (see `make`)
        tape.append(record, tuple(key))
        return record

    def mark_view(self, flag=True) -> None:
        """Note whether this record's output views an operand's memory, on the record (a stale view is rebased:
        symgrad.eager.tensor._refuse_stale_view) and on its tape (a capture defers it as a view: whole_backward)."""
        self.viewed = flag
        if flag:
            self.tape.views.add(self.position)
        else:
            self.tape.views.discard(self.position)

    def release(self):
        """Free the saved values (after a backward without retain_graph)."""
        self.saved = (None,) * len(self.parents)
        self.array = None
        self.released = True
        if self.ctx is not None:
            self.ctx.release()

    def retain(self, tensor):
        self.rare().retained = weakref.ref(tensor)
        self.tape.regular = False  # Python must see this gradient mid-backward

    def retained_tensor(self):
        return self.retained() if self.retained is not None else None

    def name(self) -> str:
        """PyTorch-style name: 'MulBackward0', 'TanhBackward0', 'MmBackward0', or 'MyFunctionBackward'."""
        if self.label is not None:
            return self.label
        if self.function is not None:
            return f"{self.function.__name__}Backward"
        if self.prim is not ew_p:
            return grad_fn_name(self.prim)
        attrs = dict(self.attrs)
        if "name" in attrs:  # a named elementwise op
            return grad_fn_name(E.ELEMENTWISE[attrs["name"]])
        func = attrs["expr"].func
        return f"{_SYMPY_NAMES.get(func, func.__name__.capitalize())}Backward0"

    @property
    def next_functions(self):
        """(parent grad_fn or leaf accumulator or None, 0) per input, as PyTorch shows them: for a user-level op
        made of several primitives, per input of that op."""
        parents = self.parents if self.shown_parents is None else self.shown_parents
        return tuple((AccumulateGrad(p) if p is not None and not isinstance(p, Record) else shown(p), 0)
                     for p in parents)

    def register_hook(self, fn):
        self.tape.regular = False  # Python must see this gradient mid-backward
        rare = self.rare()
        if not rare.hooks:
            rare.hooks = []
        rare.hooks.append(fn)
        return RemovableHandle(rare.hooks, fn)

    def __repr__(self):
        return f"<{self.name()} object at {hex(id(self))}>"


_SHOWN_TYPES = {}  # name -> the subclass of Record of that name


def shown(record):
    """`record` as a user sees a grad_fn: of a class named as it, as PyTorch's (type(y.grad_fn).__name__ is
    'MulBackward0'). The class, a Record without fields of its own, is made once per name and given when a user
    reads the record (grad_fn, next_functions), not when an op records it."""
    if record is None:
        return None
    name = record.name()
    cls = _SHOWN_TYPES.get(name)
    if cls is None:  # (a C++ class's name, torch::autograd::CopyBackwards, names a Python class CopyBackwards)
        cls = _SHOWN_TYPES[name] = type(name.rpartition("::")[2], (Record,), {"__slots__": (), "__module__": __name__})
    record.__class__ = cls
    return record


class AccumulateGrad:
    """What PyTorch shows for a leaf in `next_functions`; the end of the graph (no next_functions of its own)."""

    next_functions = ()

    def __init__(self, variable):
        self.variable = variable

    def name(self):
        return "torch::autograd::AccumulateGrad"  # (PyTorch's, the C++ class's)

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
