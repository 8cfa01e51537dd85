"""`nn.ModuleList`, `nn.ModuleDict`, `nn.ParameterList` and `nn.ParameterDict`: submodules or parameters held in a
list or by name, registered as a module's own."""
from __future__ import annotations

from .modules import Module
from .parameter import Parameter


class ModuleList(Module):
    """Modules in a list, registered as '0', '1', ..."""

    def __init__(self, modules=None):
        super().__init__()
        self.extend(modules or ())

    def _renumber(self, modules):
        self._modules.clear()
        for index, module in enumerate(modules):
            self.add_module(str(index), module)

    def __getitem__(self, index):
        modules = list(self._modules.values())
        return ModuleList(modules[index]) if isinstance(index, slice) else modules[index]

    def __setitem__(self, index, module):
        modules = list(self._modules.values())
        modules[index] = module
        self._renumber(modules)

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


class ModuleDict(Module):
    """Modules by name, in insertion order."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def pop(self, key):
        return self._modules.pop(key)

    def clear(self):
        self._modules.clear()

    def update(self, modules):
        for key, module in (modules.items() if hasattr(modules, "items") else modules):
            self[key] = module


def _as_parameter(value):
    """A Parameter as is; another tensor or array becomes one (PyTorch's containers wrap them too)."""
    return value if isinstance(value, Parameter) else Parameter(value)


class ParameterList(Module):
    """Parameters in a list, registered as '0', '1', ..."""

    def __init__(self, values=None):
        super().__init__()
        for value in values or ():
            self.append(value)

    def __getitem__(self, index):
        parameters = list(self._parameters.values())
        return ParameterList(parameters[index]) if isinstance(index, slice) else parameters[index]

    def __setitem__(self, index, value):
        self._parameters[str(range(len(self))[index])] = _as_parameter(value)

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters.values())

    def __iadd__(self, values):
        return self.extend(values)

    def append(self, value):
        self._parameters[str(len(self))] = _as_parameter(value)
        return self

    def extend(self, values):
        for value in values:
            self.append(value)
        return self


class ParameterDict(Module):
    """Parameters by name, in insertion order."""

    def __init__(self, parameters=None):
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key):
        return self._parameters[key]

    def __setitem__(self, key, value):
        self._parameters[key] = _as_parameter(value)

    def __delitem__(self, key):
        del self._parameters[key]

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters)

    def __contains__(self, key):
        return key in self._parameters

    def keys(self):
        return self._parameters.keys()

    def items(self):
        return self._parameters.items()

    def values(self):
        return self._parameters.values()

    def pop(self, key):
        return self._parameters.pop(key)

    def update(self, parameters):
        for key, value in (parameters.items() if hasattr(parameters, "items") else parameters):
            self[key] = value
