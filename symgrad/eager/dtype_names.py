"""PyTorch's dtype names, `sg.float`, `sg.double`, `sg.long`, `sg.int`, `sg.short`, `sg.bool` (and `sg.half`,
refused when used): symgrad.dtypes.TorchDType objects, looked up here by the package's lazy name table. Set from
the table, not by assignment, so that no code here sees the builtins float/int/bool shadowed."""
from ..dtypes import TORCH_DTYPES

globals().update(TORCH_DTYPES)
