"""`sg.device`: symgrad tensors live in host memory, so "cpu" is the one device; any other is a clear error."""
from __future__ import annotations


class device:
    """torch.device for the CPU: `sg.device("cpu")`, `sg.device("cpu", 0)`; `t.device` and `.to(device)` use it."""

    __slots__ = ("type", "index")

    def __init__(self, type="cpu", index=None):
        if isinstance(type, device):
            type, index = type.type, type.index
        self.type, self.index = _parse(type, index)

    def __eq__(self, other):
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def __repr__(self):
        return f"device(type='{self.type}')" if self.index is None else f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"


def _parse(name, index):
    if not isinstance(name, str):
        raise TypeError(f"device: expected a string such as 'cpu', got {name!r}")
    kind, _, number = name.partition(":")
    if number:
        index = int(number)
    if kind != "cpu":
        raise RuntimeError(f"device={name!r}: symgrad tensors live in host memory; the only device is 'cpu'")
    if index not in (None, 0):
        raise RuntimeError(f"device={name!r}, index {index}: symgrad has one CPU device (index 0)")
    return kind, index


CPU = device("cpu")


def check_device(value) -> None:
    """Accept None, 'cpu' (or 'cpu:0') and sg.device('cpu') (or a torch.device of the CPU, by its str);
    anything else is a clear error naming it."""
    if value is None or isinstance(value, device):
        return
    device(value if isinstance(value, str) else str(value))


class _NoAccelerator:
    """`sg.accelerator` and `sg.cuda` (as `sg.backends.mps`): there is none, so `device = "cuda" if
    sg.cuda.is_available() else "cpu"` (and its torch.accelerator and mps forms) picks the CPU."""

    @staticmethod
    def is_available() -> bool:
        return False

    @staticmethod
    def is_built() -> bool:
        return False

    @staticmethod
    def device_count() -> int:
        return 0

    @staticmethod
    def current_accelerator():
        return None

    @staticmethod
    def manual_seed(seed) -> None:
        """torch.cuda.manual_seed(_all) without a GPU: nothing to seed (PyTorch's calls do nothing then too)."""

    manual_seed_all = manual_seed

    @property
    def amp(self):
        """torch.cuda.amp, PyTorch's older name of torch.amp (nanoGPT's train.py builds its GradScaler there)."""
        from .. import amp
        return amp


accelerator = cuda = _NoAccelerator()


def set_default_device(device) -> None:
    """torch.set_default_device: the CPU is the one device, so only it is accepted."""
    check_device(device)


def get_default_device() -> "device":
    return CPU
