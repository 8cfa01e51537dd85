"""The dtypes symgrad supports, their short printed names, and NumPy-2 type promotion."""
import numpy as np

FLOAT32 = np.dtype(np.float32)
FLOAT64 = np.dtype(np.float64)
INT32 = np.dtype(np.int32)
INT64 = np.dtype(np.int64)
BOOL = np.dtype(np.bool_)

SHORT_NAMES = {FLOAT32: "f32", FLOAT64: "f64", INT32: "i32", INT64: "i64", BOOL: "bool"}
_BY_SHORT_NAME = {name: dtype for dtype, name in SHORT_NAMES.items()}


def canonical(dtype) -> np.dtype:
    """The supported np.dtype for `dtype` (a dtype, type, name or short name like 'f32')."""
    if isinstance(dtype, str) and dtype in _BY_SHORT_NAME:
        return _BY_SHORT_NAME[dtype]
    try:
        resolved = np.dtype(dtype)
    except TypeError as err:
        raise TypeError(f"unknown dtype {dtype!r}; symgrad supports {', '.join(SHORT_NAMES.values())}") from err
    if resolved not in SHORT_NAMES:
        raise TypeError(f"unsupported dtype {resolved} ({dtype!r}); symgrad supports "
                        f"{', '.join(str(d) for d in SHORT_NAMES)}")
    return resolved


def short_name(dtype: np.dtype) -> str:
    return SHORT_NAMES[np.dtype(dtype)]


def is_float(dtype) -> bool:
    return np.dtype(dtype).kind == "f"


def promote(dtypes, weak_scalars=()) -> np.dtype:
    """Result dtype of combining arrays of `dtypes` with Python scalars `weak_scalars` (NEP 50)."""
    if not dtypes:
        return canonical(np.result_type(*weak_scalars)) if weak_scalars else FLOAT64
    result = np.result_type(*dtypes)
    for scalar in weak_scalars:
        if isinstance(scalar, bool):
            continue
        if isinstance(scalar, float) and result.kind in "biu":
            result = FLOAT64
        elif isinstance(scalar, int) and result.kind == "b":
            result = INT64
    return canonical(result)


def float_result(dtype) -> np.dtype:
    """The float dtype a transcendental op returns for `dtype` (ints promote to float64)."""
    return np.dtype(dtype) if is_float(dtype) else FLOAT64
