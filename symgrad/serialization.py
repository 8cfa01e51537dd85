"""`sg.save(obj, f)` and `sg.load(f)`: state dicts (and any nesting of dicts, lists and tuples of tensors, arrays,
numbers, strings and None) in a NumPy .npz file, read back with np.load(allow_pickle=False): loading a file never
runs code from it.

The file is an ordinary .npz: one entry per tensor or array (`a0`, `a1`, ...) and `__symgrad_state__`, the JSON
description of the structure (as UTF-8 bytes). `sg.load` tells the two kinds of file apart by content: a file
holding that entry is a saved state; anything else is an ahead-of-time compiled artifact (symgrad.loader.load,
SPEC section 4), which loads with NumPy alone. This module therefore imports the eager tensor class only when it
saves or loads tensors.
"""
from __future__ import annotations

import collections
import io
import json
import os
import zipfile

import numpy as np

from . import loader

STATE_ENTRY = "__symgrad_state__"
FORMAT = "symgrad-state"
FORMAT_VERSION = 1


def save(obj, f, pickle_module=None, pickle_protocol=None, _use_new_zipfile_serialization=True) -> None:
    """Write `obj` to `f` (a path, written as given, or a binary file object). PyTorch's pickling arguments are
    accepted for ported code and must stay at their defaults: nothing is pickled."""
    if pickle_module is not None or pickle_protocol is not None:
        raise TypeError("sg.save pickles nothing: pickle_module / pickle_protocol are not supported")
    arrays = []
    root = _encode(obj, arrays, "obj")
    description = json.dumps({"format": FORMAT, "version": FORMAT_VERSION, "root": root}, allow_nan=True)
    entries = {f"a{i}": array for i, array in enumerate(arrays)}
    entries[STATE_ENTRY] = np.frombuffer(description.encode("utf-8"), np.uint8)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as stream:  # a file object: np.savez would append .npz to a path
            np.savez(stream, **entries)
    else:
        np.savez(f, **entries)


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **kwargs):
    """What sg.save wrote to `f` (path or binary file object); for a path to an ahead-of-time compiled artifact,
    that artifact (symgrad.loader.load). `map_location` may name the CPU; `weights_only` is always true here."""
    if is_saved_state(f):
        if map_location is not None and not callable(map_location) and not isinstance(map_location, dict):
            from .eager.device import check_device  # the eager API only for a saved state (see the module doc)
            check_device(map_location)
        return _read(f)
    if not isinstance(f, (str, os.PathLike)):
        raise ValueError("sg.load: this file object does not hold a state saved by sg.save")
    return loader.load(f)


def is_saved_state(f) -> bool:
    """Whether `f` (a path or a seekable binary file object) is a zip archive holding sg.save's description."""
    try:
        if isinstance(f, (str, os.PathLike)):
            if not os.path.isfile(f):
                return False
            with zipfile.ZipFile(f) as archive:
                return STATE_ENTRY + ".npy" in archive.namelist()
        position = f.tell()
        try:
            with zipfile.ZipFile(f) as archive:
                return STATE_ENTRY + ".npy" in archive.namelist()
        finally:
            f.seek(position)
    except (zipfile.BadZipFile, OSError, io.UnsupportedOperation):
        return False


# ----------------------------------------------------------------------------- writing
def _encode(obj, arrays: list, where: str):
    """A JSON node for obj; tensors and arrays go to `arrays` and are referred to by position."""
    from .eager.tensor import Tensor  # the eager API only when saving (see the module doc)
    from .nn.parameter import Parameter
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, int):
        return {"int": str(obj)}  # exact, however large
    if isinstance(obj, float):
        return {"float": repr(obj)}  # repr round-trips, inf and nan included
    if isinstance(obj, Tensor):
        arrays.append(np.asarray(obj._data, order="C"))
        return {"tensor": len(arrays) - 1, "requires_grad": bool(obj.requires_grad),
                "parameter": isinstance(obj, Parameter)}
    if isinstance(obj, (np.ndarray, np.generic)):
        array = np.asarray(obj)
        if array.dtype.kind in "OV":
            raise TypeError(f"sg.save: {where} is an array of Python objects (dtype {array.dtype}); only arrays of "
                            f"numbers, booleans or strings can be saved")
        arrays.append(np.asarray(array, order="C"))
        return {"array" if isinstance(obj, np.ndarray) else "scalar": len(arrays) - 1}
    if isinstance(obj, (list, tuple)) and not hasattr(obj, "_fields"):
        items = [_encode(item, arrays, f"{where}[{i}]") for i, item in enumerate(obj)]
        return {"list" if isinstance(obj, list) else "tuple": items}
    if isinstance(obj, dict):
        kind = "ordered_dict" if isinstance(obj, collections.OrderedDict) else "dict"
        return {kind: [[_key(key, where), _encode(value, arrays, f"{where}[{key!r}]")] for key, value in obj.items()]}
    raise TypeError(f"sg.save: {where} is a {type(obj).__name__}; it saves tensors, arrays, numbers, strings, None "
                    f"and dicts, lists and tuples of them (save model.state_dict(), not the model)")


def _key(key, where):
    if key is None or isinstance(key, (bool, str)):
        return key
    if isinstance(key, int):
        return {"int": str(key)}
    if isinstance(key, float):
        return {"float": repr(key)}
    raise TypeError(f"sg.save: a key of {where} is a {type(key).__name__}; keys must be strings or numbers")


# ----------------------------------------------------------------------------- reading
def _read(f):
    with np.load(f, allow_pickle=False) as archive:
        try:
            description = json.loads(bytes(archive[STATE_ENTRY]).decode("utf-8"))
            if description.get("format") != FORMAT or description.get("version") != FORMAT_VERSION:
                raise ValueError(f"format {description.get('format')!r} version {description.get('version')!r}")
            arrays = {name: archive[name] for name in archive.files if name != STATE_ENTRY}
            return _decode(description["root"], arrays)
        except (ValueError, KeyError, TypeError, AttributeError, json.JSONDecodeError) as err:
            raise ValueError(f"sg.load: {_name(f)} is not a state sg.save wrote, or is damaged ({err!r})") from None


def _decode(node, arrays: dict):
    from .eager.tensor import Tensor  # the eager API only for a saved state (see the module doc)
    from .nn.parameter import Parameter
    if node is None or isinstance(node, (bool, str)):
        return node
    if "tensor" in node:
        data = arrays[f"a{node['tensor']}"]
        if node["parameter"]:
            return Parameter(data, requires_grad=node["requires_grad"])
        return Tensor(data, requires_grad=node["requires_grad"])
    (kind, value), = node.items()
    if kind == "int":
        return int(value)
    if kind == "float":
        return float(value)
    if kind == "array":
        return arrays[f"a{value}"]
    if kind == "scalar":
        return arrays[f"a{value}"][()]
    if kind in ("list", "tuple"):
        items = [_decode(item, arrays) for item in value]
        return items if kind == "list" else tuple(items)
    if kind in ("dict", "ordered_dict"):
        pairs = ((_decode(key, arrays), _decode(item, arrays)) for key, item in value)
        return collections.OrderedDict(pairs) if kind == "ordered_dict" else dict(pairs)
    raise ValueError(f"unknown entry {kind!r}")


def _name(f) -> str:
    return repr(os.fspath(f)) if isinstance(f, (str, os.PathLike)) else "the file object"
