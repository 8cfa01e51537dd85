"""`sg.amp` (and `sg.cuda.amp`): PyTorch's mixed-precision helpers as programs build them on a CPU, disabled.

Training scripts make `GradScaler(enabled=dtype == 'float16')` and `autocast(..., enabled=use_amp)` and run the same
loop either way; disabled, both do nothing, as PyTorch's. Enabled, they would change the numbers (float16 or
bfloat16 compute, scaled gradients with skipped steps), which symgrad does not do: a clear error, not a silent
float32 run."""
import contextlib


def _refuse_enabled(name: str, enabled: bool) -> None:
    if enabled:
        raise NotImplementedError(f"{name}(enabled=True): symgrad has no mixed-precision training; pass "
                                  "enabled=False (what PyTorch programs do on a CPU)")


class GradScaler:
    """torch.amp.GradScaler with enabled=False: scale() returns the loss, step() steps the optimizer."""

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        _refuse_enabled("GradScaler", enabled)

    def scale(self, outputs):
        return outputs

    def unscale_(self, optimizer) -> None:
        """Nothing to unscale."""

    def step(self, optimizer, *args, **kwargs):
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None) -> None:
        """No scale to update."""

    def is_enabled(self) -> bool:
        return False

    def get_scale(self) -> float:
        return 1.0  # PyTorch's disabled scaler says 1.0 too

    def state_dict(self) -> dict:
        return {}

    def load_state_dict(self, state_dict) -> None:
        """A disabled scaler's state is empty."""


def autocast(device_type="cuda", dtype=None, enabled=True, cache_enabled=None):
    """torch.autocast with enabled=False: a context (or decorator) that changes nothing."""
    _refuse_enabled("autocast", enabled)
    return contextlib.nullcontext()
