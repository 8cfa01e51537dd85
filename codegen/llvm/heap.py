"""Raw memory in native code: copies, and libc's heap (malloc, realloc, free) for memory whose size
is only found at run time (the tape of a while loop's reverse pass, tape.py). A shared library
links the heap functions from libc (the C compiler links it by default); the JIT resolves them to
this process's (`addresses`)."""
from __future__ import annotations

import ctypes

from llvmlite import ir

from .types import I1, I64, PTR

# A heap block (a kernel's workspace, a while loop's tape) up to this many bytes is kept from call to call
# where the kernel keeps blocks (KernelBuilder.kept_slot): one each per compiled function, as long as it lives.
KEPT_BYTES = 1 << 30

_SIGNATURES = {"malloc": (PTR, [I64]), "realloc": (PTR, [PTR, I64]), "free": (ir.VoidType(), [PTR])}


def function(module: ir.Module, name: str) -> ir.Function:
    """The declaration of libc's `name` (malloc, realloc or free) in `module`, made on first use."""
    if name in module.globals:
        return module.globals[name]
    result, arguments = _SIGNATURES[name]
    return ir.Function(module, ir.FunctionType(result, arguments), name)


# libc's functions LLVM itself lowers its memory intrinsics to (a large `copy` becomes a call of memcpy)
_LOWERED = ("memcpy", "memmove", "memset")


def addresses() -> dict[str, int]:
    """Their addresses in this process, and those of the functions LLVM lowers its memory intrinsics to, for the
    JIT's symbol table: a disk-cache entry's undefined symbols must resolve there before this process has an
    engine (memcpy did not: such entries were recompiled in every process)."""
    libc = ctypes.CDLL(None)
    return {name: ctypes.cast(getattr(libc, name), ctypes.c_void_p).value for name in (*_SIGNATURES, *_LOWERED)}


def copy(k, target, source, nbytes: int):
    """Emit a copy of `nbytes` bytes from `source` to `target` (which do not overlap)."""
    if nbytes:
        memcpy = k.module.declare_intrinsic("llvm.memcpy", [PTR, PTR, I64])
        k.b.call(memcpy, [target, source, ir.Constant(I64, nbytes), ir.Constant(I1, 0)])
