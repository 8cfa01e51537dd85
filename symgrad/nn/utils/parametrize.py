"""`nn.utils.parametrize`, PyTorch's: `register_parametrization(module, "weight", p)` makes `module.weight` the
value p(original) computed at each read, the original kept as `module.parametrizations.weight.original` (or
original0, original1, ... when p's right_inverse gives several), as PyTorch names them in state_dict. The module's
class becomes a subclass of its own holding the property, as PyTorch's (`Parametrized<Class>`)."""
from __future__ import annotations

from ...eager.mode import no_grad
from ...eager.tensor import Tensor
from ..container import ModuleDict, ModuleList
from ..parameter import Parameter


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order to its original(s)."""

    def __init__(self, modules, original, unsafe=False):
        super().__init__(modules)
        self.unsafe = unsafe
        first = modules[0]
        with no_grad():
            value = first.right_inverse(original) if hasattr(first, "right_inverse") else original
        is_parameter = isinstance(original, Parameter)
        values = value if isinstance(value, (tuple, list)) else (value,)
        self.is_tensor = not isinstance(value, (tuple, list))
        for k, item in enumerate(values):
            name = "original" if self.is_tensor else f"original{k}"
            item = item if isinstance(item, Tensor) else Tensor._wrap(item)
            if is_parameter:
                setattr(self, name, Parameter(item.detach(), requires_grad=original.requires_grad))
            else:
                self.register_buffer(name, item.detach())

    def originals(self) -> tuple:
        return (self.original,) if self.is_tensor else tuple(
            getattr(self, f"original{k}") for k in range(len(self._parameters) + len(self._buffers)))

    def forward(self):
        value = self[0](*self.originals())
        for parametrization in list(self)[1:]:
            value = parametrization(value)
        return value

    def right_inverse(self, value) -> None:
        """Set the original(s) so that the parametrized value becomes `value` (each right_inverse, last first)."""
        with no_grad():
            for parametrization in reversed(list(self)):
                value = parametrization.right_inverse(value) if hasattr(parametrization, "right_inverse") else value
            values = (value,) if self.is_tensor else tuple(value)
            for original, item in zip(self.originals(), values):
                original.data = item.detach() if isinstance(item, Tensor) else item


def is_parametrized(module, tensor_name=None) -> bool:
    parametrizations = module.__dict__.get("_modules", {}).get("parametrizations")
    if not isinstance(parametrizations, ModuleDict):
        return False
    return len(parametrizations) > 0 if tensor_name is None else tensor_name in parametrizations


def _parametrized_class(module):
    """The module's class, made a subclass of its own the first time (where the properties go)."""
    cls = type(module)
    if not getattr(cls, "_parametrized_subclass", False):
        cls = type(f"Parametrized{cls.__name__}", (cls,),
                   {"_parametrized_subclass": True, "__module__": cls.__module__})
        module.__class__ = cls
    return cls


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """module.<tensor_name> becomes parametrization(original); a second registration on the same name chains."""
    if is_parametrized(module, tensor_name):
        module.parametrizations[tensor_name].append(parametrization)
        return module
    original = getattr(module, tensor_name)
    if not isinstance(original, Tensor):
        raise ValueError(f"Module '{module}' parametrization of '{tensor_name}' needs a parameter or a buffer, got "
                         f"{type(original).__name__}")
    parametrized = ParametrizationList([parametrization], original, unsafe=unsafe)
    delattr(module, tensor_name)
    if not is_parametrized(module):
        module.parametrizations = ModuleDict()
    module.parametrizations[tensor_name] = parametrized
    setattr(_parametrized_class(module), tensor_name, property(
        lambda self: self.parametrizations[tensor_name](),
        lambda self, value: self.parametrizations[tensor_name].right_inverse(value)))
    return module


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Undo register_parametrization: the tensor becomes a parameter again, of the parametrized value (or, with
    leave_parametrized=False, of the original, which needs a single one)."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrized = module.parametrizations[tensor_name]
    if leave_parametrized:
        with no_grad():
            value = parametrized()
    elif parametrized.is_tensor:
        value = parametrized.original
    else:
        raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is parametrized in "
                         "terms of a sequence of tensors.")
    trainable = any(isinstance(o, Parameter) for o in parametrized.originals())
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    if trainable:
        setattr(module, tensor_name, Parameter(value.detach()))
    else:
        module.register_buffer(tensor_name, value.detach())
    if not is_parametrized(module):
        del module.parametrizations
        module.__class__ = type(module).__bases__[0]
    return module
