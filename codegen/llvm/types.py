"""LLVM types for symgrad's dtypes: how each is stored in memory and computed with."""
import numpy as np
from llvmlite import ir

from symgrad import dtypes

I1 = BOOL = ir.IntType(1)
I8 = ir.IntType(8)
I16 = ir.IntType(16)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
F32 = ir.FloatType()
F64 = ir.DoubleType()
PTR = ir.PointerType()

_STORAGE = {dtypes.FLOAT32: F32, dtypes.FLOAT64: F64, dtypes.INT32: I32, dtypes.INT64: I64, dtypes.BOOL: I8,
            dtypes.UINT8: I8, dtypes.INT8: I8, dtypes.INT16: I16, dtypes.UINT16: I16, dtypes.UINT32: I32}


def storage_type(dtype) -> ir.Type:
    """The type of one element in memory (bool is a byte, as in NumPy)."""
    return _STORAGE[np.dtype(dtype)]


def value_type(dtype) -> ir.Type:
    """The type of one element in registers (bool is i1)."""
    return BOOL if np.dtype(dtype) == dtypes.BOOL else storage_type(dtype)


def is_unsigned(dtype) -> bool:
    """Whether integers of `dtype` compare, divide, widen and convert as unsigned (LLVM's iN carries no sign)."""
    return np.dtype(dtype).kind == "u"


def cast(builder: ir.IRBuilder, value, source, target):
    """Convert a register value of dtype `source` to dtype `target` with NumPy's semantics: unsigned sources
    widen with zext and convert with uitofp; a float becomes a small or unsigned integer through int64, wrapping
    as in NumPy (-1.0 -> uint8 255, 3e9 -> uint32), where a direct fptoui/fptosi would be poison."""
    source, target = np.dtype(source), np.dtype(target)
    to_type = value_type(target)
    if source == target:
        return value
    if target == dtypes.BOOL:
        zero = ir.Constant(value.type, 0)
        return builder.fcmp_unordered("!=", value, zero) if source.kind == "f" else builder.icmp_unsigned("!=", value, zero)
    if source == dtypes.BOOL:
        return builder.uitofp(value, to_type) if target.kind == "f" else builder.zext(value, to_type)
    if source.kind == "f" and target.kind == "f":
        return builder.fpext(value, to_type) if target.itemsize > source.itemsize else builder.fptrunc(value, to_type)
    if source.kind == "f" and (target.itemsize < 4 or is_unsigned(target)):
        return builder.trunc(builder.fptosi(value, I64), to_type)
    if source.kind == "f":
        return builder.fptosi(value, to_type)
    if target.kind == "f":
        return (builder.uitofp if is_unsigned(source) else builder.sitofp)(value, to_type)
    if target.itemsize == source.itemsize:  # int8 <-> uint8: the same bits
        return value
    if target.itemsize < source.itemsize:
        return builder.trunc(value, to_type)
    return (builder.zext if is_unsigned(source) else builder.sext)(value, to_type)
