"""Calling SciPy's C implementations of special functions from native code, without the GIL.

`scipy.special.cython_special` exports its scalar functions (`double gammaln(double)`,
declared `noexcept nogil`) as capsules in `__pyx_capi__`. A kernel calls one through an
external symbol `symgrad_scipy_<name>` that the JIT links to the capsule's address in
this process, as it links BLAS: object code (and so the disk cache) holds names, never
addresses. Cython's `cpdef` functions take a trailing `int skip_dispatch`, passed as 0.
The Hurwitz zeta (polygamma of order >= 1), which cython_special lacks, is native (zeta.py).
"""
from __future__ import annotations

from llvmlite import ir

from symgrad.codegen import runtime

from . import zeta
from .types import F64, I32

PREFIX = "symgrad_scipy_"
# scipy.special functions cython_special does not export, emitted as native code instead:
# name -> (arity, call(builder, module, *args)).
NATIVE = {"zeta": (2, zeta.call)}


def _signature(arity: int) -> str:
    """The capsule signature of Cython's all-double variant of a function of `arity` arguments."""
    return "double (" + ", ".join(["double"] * arity + ["int __pyx_skip_dispatch"]) + ")"


def _capsules() -> dict:
    import scipy.special.cython_special as cython_special  # only reached once SciPy is known to be installed
    return cython_special.__pyx_capi__


def capsule_name(name: str, arity: int) -> str | None:
    """The `__pyx_capi__` key of the real (double) variant of scipy.special's `name`, if it has one.

    Fused functions are exported once per type as `__pyx_fuse_<i><name>`; the signature picks the double one."""
    capsules = _capsules()
    for key in (name, *(f"__pyx_fuse_{i}{name}" for i in range(3))):
        capsule = capsules.get(key)
        if capsule is not None and runtime.capsule_name(capsule) == _signature(arity):
            return key
    return None


def available(name: str, arity: int) -> bool:
    """Whether native code can compute scipy.special's `name` of `arity` arguments."""
    return NATIVE.get(name, (None,))[0] == arity or capsule_name(name, arity) is not None


def declare(module: ir.Module, name: str, arity: int) -> ir.Function:
    """The external `double symgrad_scipy_<name>(double..., i32 skip_dispatch)` in `module`."""
    symbol = PREFIX + name
    existing = module.globals.get(symbol)
    if existing is not None:
        return existing
    return ir.Function(module, ir.FunctionType(F64, [F64] * arity + [I32]), symbol)


def used(module) -> list[str]:
    """The scipy.special names `module` (an llvmlite.ir module) calls."""
    return sorted(symbol[len(PREFIX):] for symbol in module.globals if symbol.startswith(PREFIX))


def addresses(module) -> dict[str, int]:
    """Link table for the SciPy functions `module` calls: symbol -> address in this process."""
    table = {}
    for name in used(module):
        arity = len(module.globals[PREFIX + name].args) - 1
        table[PREFIX + name] = runtime.capsule_address(_capsules()[capsule_name(name, arity)])
    return table


def call(builder: ir.IRBuilder, module: ir.Module, name: str, args: list) -> ir.Value:
    """A call of scipy.special's `name` on double `args` (SciPy's C function, or symgrad's NATIVE one)."""
    if name in NATIVE:
        return NATIVE[name][1](builder, module, *args)
    return builder.call(declare(module, name, len(args)), [*args, ir.Constant(I32, 0)])

