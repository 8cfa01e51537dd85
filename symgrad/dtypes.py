"""The dtypes symgrad supports, their short printed names, and NumPy-2 type promotion."""
import numpy as np

FLOAT32 = np.dtype(np.float32)
FLOAT64 = np.dtype(np.float64)
INT32 = np.dtype(np.int32)
INT64 = np.dtype(np.int64)
BOOL = np.dtype(np.bool_)
# The small integers images and labels are stored in (never differentiable; they wrap, as NumPy's).
UINT8 = np.dtype(np.uint8)
INT8 = np.dtype(np.int8)
INT16 = np.dtype(np.int16)
UINT16 = np.dtype(np.uint16)
UINT32 = np.dtype(np.uint32)

SHORT_NAMES = {FLOAT32: "f32", FLOAT64: "f64", INT32: "i32", INT64: "i64", BOOL: "bool",
               UINT8: "u8", INT8: "i8", INT16: "i16", UINT16: "u16", UINT32: "u32"}
_BY_SHORT_NAME = {name: dtype for dtype, name in SHORT_NAMES.items()}


def canonical(dtype) -> np.dtype:
    """The supported np.dtype for `dtype` (a dtype, type, name or short name like 'f32')."""
    if isinstance(dtype, str) and dtype in _BY_SHORT_NAME:
        return _BY_SHORT_NAME[dtype]
    if isinstance(dtype, TorchDType):
        return dtype.dtype  # sg.half raises its own message
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


class TorchDType:
    """A PyTorch dtype name (`sg.float`, `sg.long` ...). NumPy reads it as the dtype it names
    (`np.dtype(sg.float)` is float32, through its `dtype` attribute) and it compares equal to it; the
    tensor factories see from it that a call is PyTorch's (see symgrad/eager/factories.py)."""

    __slots__ = ("name", "_dtype")

    def __init__(self, name: str, dtype):
        self.name = name
        self._dtype = None if dtype is None else np.dtype(dtype)

    @property
    def dtype(self) -> np.dtype:
        if self._dtype is None:
            raise TypeError(f"sg.{self.name}: symgrad has no half precision (float16); use sg.float (float32) "
                            f"or sg.double (float64)")
        return self._dtype

    def __eq__(self, other):
        if isinstance(other, TorchDType):
            return self._dtype == other._dtype and self._dtype is not None
        try:
            return self._dtype is not None and self._dtype == np.dtype(other)
        except TypeError:
            return NotImplemented

    def __hash__(self):
        return hash(self._dtype)

    def __repr__(self):
        return f"sg.{self.name}"

    @property
    def is_floating_point(self) -> bool:
        return self.dtype.kind == "f"


# PyTorch's dtype names: sg.float is float32, as torch.float; sg.half exists only to be refused clearly.
TORCH_DTYPES = {"float": TorchDType("float", FLOAT32), "double": TorchDType("double", FLOAT64),
                "long": TorchDType("long", INT64), "int": TorchDType("int", INT32), "bool": TorchDType("bool", BOOL),
                "short": TorchDType("short", INT16),
                "half": TorchDType("half", None), "float16": TorchDType("float16", None)}
