"""`nn.ModuleList`, `nn.ModuleDict`, `nn.ParameterList` and `nn.ParameterDict`: submodules or parameters held in a
list or by name, registered as a module's own."""
from __future__ import annotations

from .modules import Module, ModuleSequence
from .parameter import Parameter


class ModuleList(ModuleSequence):
    """Modules in a list, registered as '0', '1', ..."""

    def __init__(self, modules=None):
        super().__init__()
        self.extend(modules or ())

    _of = classmethod(lambda cls, items: cls([module for _, module in items]))

    def _child_lines(self):
        """PyTorch's ModuleList layout: a run of equal modules is one line, `(0-5): 6 x TransformerEncoderLayer(`."""
        runs = []  # [first, last, repr]
        for index, module in enumerate(self):
            text = repr(module)
            if runs and runs[-1][2] == text:
                runs[-1][1] = index
            else:
                runs.append([index, index, text])
        return [(f"({first}): " if first == last else f"({first}-{last}): {last - first + 1} x ")
                + text.replace("\n", "\n  ") for first, last, text in runs]


class _NamedItems(Module):
    """A dict-like container of this module's own modules or parameters (`store` names which), in insertion
    order."""

    store = None

    def __init__(self, items=None):
        super().__init__()
        if items is not None:
            self.update(items)

    def _items(self) -> dict:
        return getattr(self, type(self).store)

    def __getitem__(self, key):
        return self._items()[key]

    def __delitem__(self, key):
        del self._items()[key]

    def __len__(self):
        return len(self._items())

    def __iter__(self):
        return iter(self._items())

    def __contains__(self, key):
        return key in self._items()

    def keys(self):
        return self._items().keys()

    def items(self):
        return self._items().items()

    def values(self):
        return self._items().values()

    def pop(self, key):
        return self._items().pop(key)

    def clear(self):
        self._items().clear()

    def update(self, items):
        for key, value in (items.items() if hasattr(items, "items") else items):
            self[key] = value


class ModuleDict(_NamedItems):
    """Modules by name, in insertion order."""

    store = "_modules"

    def __setitem__(self, key, module):
        self.add_module(key, module)

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


class ParameterDict(_NamedItems):
    """Parameters by name, in insertion order."""

    store = "_parameters"

    def __setitem__(self, key, value):
        self._parameters[key] = _as_parameter(value)
