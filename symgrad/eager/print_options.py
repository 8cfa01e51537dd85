"""`sg.set_printoptions` and `sg.get_printoptions`: how tensors print, with PyTorch's options and profiles
(read by symgrad.eager.tensor.format_tensor)."""
from __future__ import annotations

import dataclasses
import math


@dataclasses.dataclass
class PrintOptions:
    """Decimals shown, the element count past which a tensor is summarized, the elements kept at each end of a
    summarized axis, the line width, and scientific notation forced (True), refused (False) or chosen (None)."""
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: "bool | None" = None


OPTIONS = PrintOptions()
_PROFILES = {"default": PrintOptions(), "short": PrintOptions(precision=2, edgeitems=2),
             "full": PrintOptions(threshold=math.inf)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """PyTorch's set_printoptions: a profile ('default', 'short', 'full') first, then the options given;
    sci_mode is always set (None: chosen from the values, PyTorch's default)."""
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions: profile {profile!r} is not one of {sorted(_PROFILES)}")
        for field in dataclasses.fields(PrintOptions):
            setattr(OPTIONS, field.name, getattr(_PROFILES[profile], field.name))
    for name, value in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                        ("linewidth", linewidth)):
        if value is not None:
            setattr(OPTIONS, name, value)
    OPTIONS.sci_mode = sci_mode


def get_printoptions() -> dict:
    return dataclasses.asdict(OPTIONS)
