"""`sg.autograd.graph`, PyTorch's torch.autograd.graph: saved_tensors_hooks and save_on_cpu (see
symgrad.eager.saved_hooks for which tensors an op saves and what unpack_hook must give back)."""
from ..eager import saved_hooks


class saved_tensors_hooks:
    """Context manager: pack_hook(tensor) for each tensor an op saves for its backward while it is open,
    unpack_hook(packed) when the backward runs that op; innermost hooks win when nested."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self):
        saved_hooks.push(self.pack_hook, self.unpack_hook)
        return self

    def __exit__(self, *exc_info):
        saved_hooks.pop()
        return False


class save_on_cpu(saved_tensors_hooks):
    """PyTorch's offloading of saved tensors to the CPU, where symgrad's already are: the tensors as they are."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        super().__init__(lambda tensor: tensor, lambda tensor: tensor)
