"""The backend registry and `lower(graph)`, the one entry sg.compile, the transforms and the eager API use.

A backend is `lower(graph, structure, python_floats, threads, quick) -> executable`; `structure` nests
output indices in tuples the way a function returns them, and an executable may use it to return
results ready-made from an `entry` (see compiler.Lowered.fast), which takes Python floats at the input
positions `python_floats` (0-d float64 inputs traced weakly typed) and arrays everywhere else;
`threads` is how many threads its large loops may use (`thread_count`); `quick`, whether the code may run only
once or twice (see lower). A primitive a backend has no rule for reaches it written with other primitives, where
it declares how (`Primitive.decompose`, see `for_backend`). The backends' own code lives in symgrad.codegen.
"""
from __future__ import annotations

import importlib.util
import logging
import os
import types

from . import ir
from .core import UnsupportedOpError
from .passes import optimize
from .passes.decompose import decompose

log = logging.getLogger("symgrad")

BACKENDS = {}
RULE_CHECKS = {}  # backend name -> has_rule(prim): whether it lowers prim itself


def register_backend(name, lower, has_rule=None):
    """Make `lower(graph, structure, python_floats, threads, quick) -> executable` available as `backend=name`;
    `has_rule(prim)` says which primitives it lowers itself (default: all), the others reach it decomposed."""
    BACKENDS[name] = lower
    if has_rule is not None:
        RULE_CHECKS[name] = has_rule


def default_backend() -> str:
    """'llvm' once that backend is registered, else 'numpy'."""
    return "llvm" if "llvm" in BACKENDS else "numpy"


def check_backend(name) -> str:
    """`name` (None: the default backend), or a ValueError listing the registered ones."""
    name = name or default_backend()
    if name not in BACKENDS:
        raise ValueError(f"unknown backend {name!r}; available: {sorted(BACKENDS)}")
    return name


def thread_count(threads=None) -> int:
    """The threads a kernel's large loops run on: `threads` when given, else $SYMGRAD_NUM_THREADS, else
    the cores this process may use. A clear ValueError for anything but a positive integer."""
    source = "threads"
    if threads is None:
        text = os.environ.get("SYMGRAD_NUM_THREADS", "").strip()
        if not text:
            return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        source, threads = "SYMGRAD_NUM_THREADS", int(text) if text.isdigit() else text
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"{source} must be a positive whole number of threads, not {threads!r}")
    return threads


def lower(graph: ir.Graph, backend=None, structure=None, python_floats=(), threads=None, quick=False):
    """`graph` lowered to an executable: call it with flat arrays, get the flat outputs. `quick`: code that may run
    only once or twice, compiled for that (an executable with `upgrade()` replaces it by faster code later).

    The backend is chosen before lowering: with no `backend` named, a graph holding a primitive
    the default backend cannot lower (no rule, no decomposition) runs on the NumPy backend; a
    backend named explicitly that cannot lower it is a clear UnsupportedOpError. `threads`: see
    thread_count.
    """
    name = check_backend(backend)
    lowered = for_backend(graph, name)
    missing = missing_rules(lowered, name)
    if missing and backend is None and name != "numpy":
        log.info("symgrad: %s runs on the NumPy backend, which lowers %s", graph.name, ", ".join(missing))
        name, lowered = "numpy", for_backend(graph, "numpy")
        missing = missing_rules(lowered, name)
    if missing:
        raise UnsupportedOpError(f"{graph.name}: the {name} backend cannot lower the primitive(s) {', '.join(missing)}"
                                 + ("; use backend='numpy'" if name != "numpy" else ""))
    return BACKENDS[name](lowered, structure, python_floats, thread_count(threads), quick)


def missing_rules(graph: ir.Graph, name) -> list:
    """Names of the primitives in `graph` backend `name` has no rule for."""
    has_rule = RULE_CHECKS.get(name)
    return [] if has_rule is None else sorted({node.prim.name for node in ir.all_nodes(graph) if not has_rule(node.prim)})


def for_backend(graph: ir.Graph, name) -> ir.Graph:
    """`graph` with the primitives backend `name` has no rule for written with others, where they
    declare how (the graph itself when there is nothing to decompose)."""
    has_rule = RULE_CHECKS.get(name)
    decomposed = graph if has_rule is None else decompose(graph, has_rule)
    return graph if decomposed is graph else optimize(decomposed)  # the new nodes get CSE, folding, fusion


# The backends are imported when first used: llvmlite is needed only to run native code.
def _numpy_lower(graph, structure=None, python_floats=(), threads=1, quick=False):  # NumPy's calls decide threads
    from .codegen import numpy_backend
    return numpy_backend.lower(graph)  # an executable of arrays only, without an entry


def _numpy_has_rule(prim) -> bool:
    from .codegen import numpy_backend
    return numpy_backend.has_rule(prim)


def _llvm_lower(graph, structure=None, python_floats=(), threads=1, quick=False):
    from .codegen.llvm import backend
    return backend.lower(graph, structure, python_floats, threads, quick)


def _llvm_has_rule(prim) -> bool:
    from .codegen.llvm import rules
    return rules.has_rule(prim)


register_backend("numpy", _numpy_lower, _numpy_has_rule)
if importlib.util.find_spec("llvmlite") is not None:
    register_backend("llvm", _llvm_lower, _llvm_has_rule)


# `sg.backends.mps`, read as tutorials read PyTorch's flags (`"mps" if torch.backends.mps.is_available() else
# "cpu"`): no accelerator. (This module is symgrad's compiler backends, not PyTorch's flags; it may not import the
# eager layer's `sg.cuda`, which says the same.)
mps = types.SimpleNamespace(is_available=lambda: False, is_built=lambda: False)
