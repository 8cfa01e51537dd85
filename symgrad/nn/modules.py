"""`nn.Module` and the layers and losses of SPEC section 5, with PyTorch's names and behaviour."""
from __future__ import annotations

import collections
import math

import numpy as np

from .. import dtypes
from ..eager.device import check_device
from ..eager.graph import RemovableHandle
from ..eager.mode import no_grad
from ..eager.tensor import Tensor, from_numpy, random_generator, to_arguments
from .functional import (binary_cross_entropy, binary_cross_entropy_with_logits, cross_entropy, legacy_reduction,
                         linear, log_softmax, mse_loss, nll_loss, relu, sigmoid, softmax, tanh)
from .parameter import Parameter


class _Entry:
    """`module.name` for a parameter, submodule or buffer name of a Module class: the lookup `Module.__getattr__` makes,
    in one call. Without it Python's own lookup fails first, and making and catching its AttributeError costs ~0.8 us
    (a Linear's forward reads weight and bias). Installed on the class the first time `__getattr__` finds the name in
    a table, unless a class of its MRO has that name or overrides `__getattr__`; an attribute of the instance comes
    first, as it would without it."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    @staticmethod
    def install(cls, name) -> None:
        if cls.__getattr__ is Module.__getattr__ and not name.startswith("__") and \
                not any(name in klass.__dict__ for klass in cls.__mro__):
            setattr(cls, name, _Entry(name))

    def __get__(self, module, owner=None):
        name = self.name
        if module is None:
            raise AttributeError(f"type object '{owner.__name__}' has no attribute '{name}'")
        found = module.__dict__
        if name in found:
            return found[name]
        if type(module).__getattr__ is not Module.__getattr__:  # (a subclass of the class it was installed on that
            raise AttributeError(name)  # has its own: Python asks it next, once, as it would without the descriptor)
        for table in ("_parameters", "_modules", "_buffers"):
            entries = found.get(table)
            if entries is not None and name in entries:
                return entries[name]
        raise AttributeError(f"'{type(module).__name__}' object has no attribute '{name}'")

    def __set__(self, module, value):  # (Module.__setattr__ of a plain value: object.__setattr__ gets here)
        module.__dict__[self.name] = value

    def __delete__(self, module):
        try:
            del module.__dict__[self.name]
        except KeyError:
            raise AttributeError(self.name) from None


class _IncompatibleKeys(collections.namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What load_state_dict returns; printed as PyTorch prints it, `<All keys matched successfully>` when both are
    empty."""

    __slots__ = ()

    def __repr__(self):
        return "<All keys matched successfully>" if not self.missing_keys and not self.unexpected_keys else \
            super().__repr__()

    __str__ = __repr__


def _buffer(name, value):
    """`value` as buffer `name` holds it: a tensor or None, or a NumPy array as a tensor sharing its memory (symgrad's
    zeros(n), ones(n) and empty(n) give NumPy's arrays where PyTorch's give tensors); anything else is refused."""
    if isinstance(value, np.ndarray):
        return from_numpy(value)
    if value is not None and not isinstance(value, Tensor):
        raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' (torch Tensor or None expected)")
    return value


class Module:
    """Base class: parameters and submodules assigned as attributes are registered by name."""

    def __init__(self):
        object.__setattr__(self, "_parameters", collections.OrderedDict())
        object.__setattr__(self, "_modules", collections.OrderedDict())
        object.__setattr__(self, "_buffers", collections.OrderedDict())
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign attributes before Module.__init__() call")
        if name in self._buffers:  # (an array, as sg.zeros(n) gives, was a plain attribute: the buffer left state_dict)
            self._buffers[name] = _buffer(name, value)
            return
        if name in self._parameters and not isinstance(value, Parameter):
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                "(nn.Parameter or None expected)")
            self._parameters[name] = None
            return
        if name in self._modules and not isinstance(value, (Module, Parameter)):  # (it was silently dropped)
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module '{name}' "
                                "(nn.Module or None expected)")
            self._modules[name] = None
            return
        for kind, table in ((Parameter, self._parameters), (Module, self._modules)):
            if isinstance(value, kind):  # a replaced entry keeps its place in parameters(), as in PyTorch
                for other in (self._parameters, self._modules, self._buffers):
                    if other is not table:
                        other.pop(name, None)
                self.__dict__.pop(name, None)  # `self.bias = None` first: the attribute would hide the parameter
                table[name] = value
                return
        self._parameters.pop(name, None)
        self._modules.pop(name, None)
        self._buffers.pop(name, None)
        object.__setattr__(self, name, value)

    def __getattr__(self, name):
        for table in ("_parameters", "_modules", "_buffers"):
            entries = self.__dict__.get(table, {})
            if name in entries:
                _Entry.install(type(self), name)
                return entries[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for table in (self._parameters, self._modules, self._buffers):
            if name in table:
                del table[name]
                return
        object.__delattr__(self, name)

    def register_parameter(self, name, param):
        if param is None:
            self._parameters[name] = None
        else:
            setattr(self, name, param)

    def add_module(self, name, module):
        self._modules[name] = module

    def register_buffer(self, name, tensor, persistent=True):
        """A tensor the module keeps (running statistics): in state_dict when persistent, never a parameter."""
        tensor = _buffer(name, tensor)
        self._parameters.pop(name, None)
        self._modules.pop(name, None)
        self.__dict__.pop(name, None)
        self._buffers[name] = tensor
        (self._non_persistent.discard if persistent else self._non_persistent.add)(name)

    def named_buffers(self, prefix="", recurse=True):
        modules = self.named_modules(prefix) if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for name, buffer in module._buffers.items():
                if buffer is not None:
                    yield (f"{module_prefix}.{name}" if module_prefix else name), buffer

    def buffers(self, recurse=True):
        return (buffer for _, buffer in self.named_buffers(recurse=recurse))

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"Module [{type(self).__name__}] is missing the required \"forward\" function")

    def __call__(self, *args, **kwargs):
        hooks = self.__dict__.get("_call_hooks")
        if hooks is None:
            return self.forward(*args, **kwargs)
        for hook in list(hooks["pre"]):
            changed = hook(self, args)
            if changed is not None:
                args = changed if isinstance(changed, tuple) else (changed,)
        output = self.forward(*args, **kwargs)
        for hook in list(hooks["post"]):
            changed = hook(self, args, output)
            output = output if changed is None else changed
        return output

    def _hook_list(self, when) -> list:
        if "_call_hooks" not in self.__dict__:
            object.__setattr__(self, "_call_hooks", {"pre": [], "post": []})
        return self._call_hooks[when]

    def register_forward_pre_hook(self, hook):
        """hook(module, args) before each forward: a value it returns replaces the positional arguments."""
        hooks = self._hook_list("pre")
        hooks.append(hook)
        return RemovableHandle(hooks, hook)

    def register_forward_hook(self, hook):
        """hook(module, args, output) after each forward: a value it returns replaces the output."""
        hooks = self._hook_list("post")
        hooks.append(hook)
        return RemovableHandle(hooks, hook)

    def apply(self, fn):
        """fn(module) on every submodule, children first, then on itself (PyTorch's order): itself."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def requires_grad_(self, requires_grad=True):
        for parameter in self.parameters():
            parameter.requires_grad_(requires_grad)
        return self

    def get_submodule(self, target):
        module = self
        for name in target.split(".") if target else ():
            if name not in module._modules:
                raise AttributeError(f"{type(module).__name__} has no attribute `{name}`")
            module = module._modules[name]
        return module

    def get_parameter(self, target):
        path, _, name = target.rpartition(".")
        module = self.get_submodule(path)
        if module._parameters.get(name) is None:
            raise AttributeError(f"{type(module).__name__} has no parameter `{name}`")
        return module._parameters[name]

    def register_module(self, name, module):
        self.add_module(name, module)

    def cuda(self, device=None):
        raise RuntimeError("symgrad runs on the CPU only: there is no CUDA device (use .to('cpu') or nothing)")

    def half(self):
        raise TypeError("symgrad has no float16 tensors: use .float() (float32) or .double()")

    def named_modules(self, prefix=""):
        yield prefix, self
        for name, module in self._modules.items():
            yield from module.named_modules(f"{prefix}.{name}" if prefix else name)

    def modules(self):
        return (module for _, module in self.named_modules())

    def children(self):
        return iter(self._modules.values())

    def named_children(self):
        return iter(self._modules.items())

    def named_parameters(self, prefix="", recurse=True):
        seen = set()
        modules = self.named_modules(prefix) if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for name, param in module._parameters.items():
                if param is not None and id(param) not in seen:
                    seen.add(id(param))
                    yield (f"{module_prefix}.{name}" if module_prefix else name), param

    def parameters(self, recurse=True):
        return (param for _, param in self.named_parameters(recurse=recurse))

    def zero_grad(self, set_to_none=True):
        for param in self.parameters():
            _zero_grad(param, set_to_none)

    def train(self, mode=True):
        for module in self.modules():
            object.__setattr__(module, "training", bool(mode))
        return self

    def eval(self):
        return self.train(False)

    def state_dict(self):
        """name -> detached tensor sharing the data: each module's parameters, then its persistent buffers, then
        its children's (PyTorch's order)."""
        return collections.OrderedDict((name, value.detach()) for name, value in self._state_items())

    def _state_items(self):
        for prefix, module in self.named_modules():
            entries = list(module._parameters.items()) + [(name, buffer) for name, buffer in module._buffers.items()
                                                          if name not in module._non_persistent]
            for name, value in entries:
                if value is not None:
                    yield (f"{prefix}.{name}" if prefix else name), value

    def load_state_dict(self, state_dict, strict=True):
        for prefix, module in list(self.named_modules()):  # a lazy module not called yet takes the loaded sizes
            if hasattr(type(module), "_materialize_from"):
                module._materialize_from(state_dict, f"{prefix}." if prefix else "")
        own = dict(self._state_items())
        missing = [name for name in own if name not in state_dict]
        unexpected = [name for name in state_dict if name not in own]
        if strict and (missing or unexpected):
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}: missing keys {missing}, "
                               f"unexpected keys {unexpected}")
        with no_grad():
            for name, value in state_dict.items():
                if name in own:
                    array = np.asarray(value._data if isinstance(value, Tensor) else value)
                    if array.shape != own[name].shape:
                        raise RuntimeError(f"size mismatch for {name}: copying a param with shape {array.shape}, "
                                           f"the shape in current model is {own[name].shape}")
                    own[name].copy_(array)
        return _IncompatibleKeys(missing, unexpected)

    def extra_repr(self) -> str:
        return ""

    def __repr__(self):
        """PyTorch's layout: extra_repr's lines, then one line per child (each indented), or all on one line when
        extra_repr is one line and there is no child."""
        extra = self.extra_repr()
        lines = (extra.split("\n") if extra else []) + self._child_lines()
        if len(lines) == 1 and not self._modules:
            return f"{type(self).__name__}({lines[0]})"
        return f"{type(self).__name__}(" + "".join(f"\n  {line}" for line in lines) + ("\n)" if lines else ")")

    def _child_lines(self):
        return [f"({name}): " + repr(module).replace("\n", "\n  ") for name, module in self._modules.items()]

    # ------------------------------------------------------------------ PyTorch's moves (issue 14)
    def to(self, *args, dtype=None, device=None, non_blocking=False):
        """model.to(device) / to(dtype) / to(device, dtype): the CPU is the one device; a float dtype converts
        every floating-point parameter (and its .grad) and buffer (BatchNorm's running statistics) in place, so
        optimizers keep their references. Itself."""
        dtype = to_arguments(args, dtype, device)
        if dtype is not None:
            dtype = dtypes.canonical(dtype)
            if dtype.kind != "f":
                raise TypeError(f"nn.Module.to only accepts floating point dtypes, but got desired dtype={dtype}")
            for param in self.parameters():
                if param.is_floating_point():
                    param.data = param._data.astype(dtype)
                    if param.grad is not None:
                        param.grad = param.grad._data.astype(dtype)
            for buffer in self.buffers():
                if buffer is not None and buffer.is_floating_point():
                    buffer.data = buffer._data.astype(dtype)
        return self

    def cpu(self):
        return self

    def share_memory(self):
        """Every parameter, its gradient and buffer moved into memory shared with processes forked afterwards
        (Tensor.share_memory_), as PyTorch's hogwild training does before starting its workers."""
        for tensor in (*self.parameters(), *self.buffers()):
            tensor.share_memory_()
            if tensor.grad is not None:
                tensor.grad.share_memory_()
        return self

    def float(self):
        return self.to(dtypes.FLOAT32)

    def double(self):
        return self.to(dtypes.FLOAT64)


def _zero_grad(param, set_to_none):
    if param.grad is None:
        return
    if set_to_none:
        param.grad = None
    else:
        param.grad.detach_()
        param.grad.zero_()


class Linear(Module):
    """y = x @ weight.T + bias, initialized as PyTorch does: U(-1/sqrt(in), 1/sqrt(in)).

    The default dtype is float64 (symgrad's default); pass dtype=sg.float32 for PyTorch's. `device` comes before
    `dtype`, as in PyTorch (a subclass passing `bias, device, dtype` positionally set the dtype to the device)."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        check_device(device)
        self.in_features, self.out_features = in_features, out_features
        dtype = dtypes.canonical(dtype or dtypes.FLOAT64)
        bound = 1 / math.sqrt(in_features) if in_features > 0 else 0
        uniform = random_generator().uniform
        self.weight = Parameter(uniform(-bound, bound, (out_features, in_features)).astype(dtype))
        if bias:
            self.bias = Parameter(uniform(-bound, bound, (out_features,)).astype(dtype))
        else:
            self.register_parameter("bias", None)

    def forward(self, input):
        return linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class ModuleSequence(Module):
    """Modules in order, indexed by position (ModuleList, Sequential): item assignment keeps a module's name,
    deletion and insertion renumber them '0', '1', ... as PyTorch does."""

    def _renumber(self, modules):
        self._modules.clear()
        for index, module in enumerate(modules):
            self.add_module(str(index), module)

    def __getitem__(self, index):
        if isinstance(index, slice):  # (name, module) pairs: Sequential keeps the names, ModuleList renumbers
            return type(self)._of(list(self._modules.items())[index])
        return list(self._modules.values())[index]

    def __setitem__(self, index, module):
        self.add_module(list(self._modules)[index], module)

    def __delitem__(self, index):
        modules = list(self._modules.values())
        del modules[index]
        self._renumber(modules)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules):
        return self.extend(modules)

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        for module in modules:
            self.append(module)
        return self

    def insert(self, index, module):
        modules = list(self._modules.values())
        modules.insert(index, module)
        self._renumber(modules)


class Sequential(ModuleSequence):
    """Apply the given modules in order."""

    def __init__(self, *modules):
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], collections.OrderedDict):
            for name, module in modules[0].items():
                self.add_module(name, module)
        else:
            self.extend(modules)

    @classmethod
    def _of(cls, items):
        """A slice, its modules under their names, as PyTorch's (the neural-style tutorial prints model[:i + 1])."""
        return cls(collections.OrderedDict(items))

    def forward(self, input):
        for module in self._modules.values():
            input = module(input)
        return input


class ReLU(Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return relu(input, self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Tanh(Module):
    def forward(self, input):
        return tanh(input)


class Sigmoid(Module):
    def forward(self, input):
        return sigmoid(input)


class Softmax(Module):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return softmax(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    def forward(self, input):
        return log_softmax(input, self.dim)


class Identity(Module):
    def forward(self, input):
        return input


class Flatten(Module):
    """Flatten dimensions start_dim..end_dim (by default all but the batch dimension)."""

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return Tensor.flatten(input, self.start_dim, self.end_dim)  # PyTorch's meaning on a traced array too

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class _Loss(Module):
    """A loss module: `loss(input, target, reduction)`, a loss of nn.functional."""

    loss = None

    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        self.reduction = legacy_reduction(size_average, reduce, reduction)

    def forward(self, input, target):
        return type(self).loss(input, target, reduction=self.reduction)


class MSELoss(_Loss):
    loss = staticmethod(mse_loss)


class _WeightedLoss(_Loss):
    """A loss with a `weight` buffer and other options of its functional form (`options`: their names)."""

    options = ()

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean", **options):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight if weight is None or isinstance(weight, Tensor) else Tensor._wrap(
            np.asarray(weight)))
        for name in self.options:
            setattr(self, name, options.pop(name, type(self).defaults[name]))
        if options:
            raise TypeError(f"{type(self).__name__}() got unexpected keyword arguments {sorted(options)}")

    def forward(self, input, target):
        options = {name: getattr(self, name) for name in self.options}
        return type(self).loss(input, target, weight=self.weight, reduction=self.reduction, **options)


class CrossEntropyLoss(_WeightedLoss):
    """Cross-entropy of logits (N, C) against class indices (N,) or class probabilities (N, C)."""

    loss = staticmethod(cross_entropy)
    options, defaults = ("ignore_index", "label_smoothing"), {"ignore_index": -100, "label_smoothing": 0.0}

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                 label_smoothing=0.0):  # (PyTorch's positional order: ignore_index before reduce)
        super().__init__(weight, size_average, reduce, reduction, ignore_index=ignore_index,
                         label_smoothing=label_smoothing)


class NLLLoss(_WeightedLoss):
    loss = staticmethod(nll_loss)
    options, defaults = ("ignore_index",), {"ignore_index": -100}

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction, ignore_index=ignore_index)


class BCELoss(_WeightedLoss):
    loss = staticmethod(binary_cross_entropy)


class BCEWithLogitsLoss(_WeightedLoss):
    loss = staticmethod(binary_cross_entropy_with_logits)

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean", pos_weight=None):
        super().__init__(weight, size_average, reduce, reduction)
        self.register_buffer("pos_weight", pos_weight if pos_weight is None or isinstance(pos_weight, Tensor) else
                             Tensor._wrap(np.asarray(pos_weight)))

    def forward(self, input, target):
        return binary_cross_entropy_with_logits(input, target, weight=self.weight, reduction=self.reduction,
                                                pos_weight=self.pos_weight)

