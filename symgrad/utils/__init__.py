"""`sg.utils`: PyTorch's torch.utils names that tutorials use (`sg.utils.data`)."""
from . import data

__all__ = ["data"]
