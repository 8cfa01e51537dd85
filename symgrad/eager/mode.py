"""Gradient mode: whether tensor ops are recorded for backward (`no_grad`, `enable_grad`).

The flag is per thread, as in PyTorch. Both context managers also work as decorators.
"""
from __future__ import annotations

import functools
import threading


class _State(threading.local):
    """The thread's mode: `enabled` unless set otherwise (a class default, read without a failed lookup)."""

    enabled = True


state = _State()  # (read directly on the eager hot paths: `state.enabled`, without a call)


def is_grad_enabled() -> bool:
    """True when operations on tensors that require grad are recorded."""
    return state.enabled


def _set(enabled: bool) -> None:
    state.enabled = enabled


class _GradMode:
    """A context manager (and decorator) that sets the gradient mode and restores it on exit."""

    __slots__ = ("_previous",)  # (no instance dict to make on entering: a training step enters no_grad once or twice)
    enabled = True

    def __enter__(self):
        self._previous = state.enabled
        state.enabled = self.enabled
        return self

    def __exit__(self, *exc):
        state.enabled = self._previous
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with type(self)():
                return fn(*args, **kwargs)
        return wrapper


class no_grad(_GradMode):
    """Do not record operations: results do not require grad (for evaluation and updates)."""

    __slots__ = ()
    enabled = False


class enable_grad(_GradMode):
    """Record operations again, e.g. inside a `no_grad` block."""

    __slots__ = ()
    enabled = True


class set_grad_enabled(_GradMode):
    """Set the mode explicitly: `with sg.set_grad_enabled(is_training): ...`."""

    def __init__(self, mode: bool):
        self.enabled = bool(mode)
        self._previous = is_grad_enabled()
        _set(self.enabled)  # like PyTorch, it also takes effect when called as a function

    def __enter__(self):
        return self

    def __call__(self, fn):
        mode = self.enabled
        _set(self._previous)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)
        return wrapper


class inference_mode(_GradMode):
    """PyTorch's inference_mode: here no_grad (its results are ordinary tensors that do not require grad);
    inference_mode(False) leaves the mode alone. A context manager, a decorator, and a bare decorator."""

    def __new__(cls, mode=True):
        if callable(mode):  # @sg.inference_mode without parentheses
            decorator = super().__new__(cls)
            decorator.mode = True
            return decorator(mode)
        return super().__new__(cls)

    def __init__(self, mode=True):
        self.mode = bool(mode) if not callable(mode) else True

    def __enter__(self):
        self._previous = is_grad_enabled()
        _set(self._previous and not self.mode)
        return self

    def __call__(self, fn):
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(mode):
                return fn(*args, **kwargs)
        return wrapper
