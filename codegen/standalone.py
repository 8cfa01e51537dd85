"""A Python function's source, renamed, for a generated module that must run without symgrad.

The NumPy backend calls the NumPy reference of a primitive it has no rule for; the module it
writes (and an ahead-of-time .py artifact) then defines that function from its source.
"""
from __future__ import annotations

import functools
import inspect
import math
import textwrap

import numpy as np


@functools.lru_cache(maxsize=None)
def standalone_source(fn, name: str) -> str | None:
    """fn's source defining `name`, or None when fn is not a named function of its own using only
    np and math (a lambda, a closure, default values, other globals, or no source kept)."""
    if (not inspect.isfunction(fn) or fn.__name__ == "<lambda>" or fn.__closure__ or fn.__defaults__
            or fn.__kwdefaults__):
        return None
    allowed = {"np": np, "math": math}
    if any(used in fn.__globals__ and fn.__globals__[used] is not allowed.get(used)
           for used in _global_names(fn.__code__)):
        return None
    try:
        source = textwrap.dedent(inspect.getsource(fn))
    except OSError:  # defined where Python keeps no source (an interactive session)
        return None
    return source.replace(f"def {fn.__name__}(", f"def {name}(", 1)


def _global_names(code) -> set:
    """The global (and attribute) names a code object and the functions nested in it use."""
    names = set(code.co_names)
    for const in code.co_consts:
        if inspect.iscode(const):
            names |= _global_names(const)
    return names
