"""How a compiled or transformed function pickles the Python function it was made from.

The function travels as pickle itself sends it (a module-level function by reference), inside
the pickle as bytes of its own. A function pickle cannot save (a lambda, a closure), or one the
unpickling process cannot find (a function of the pickling process's `__main__`), becomes a
MissingFunction there: the unpickled object runs every signature it carries, and only a call that
needs a new trace raises, naming the function. Nothing is unpickled beyond what pickle does.
Also here: how the IR's SymPy attributes pickle exactly (ExactExpression), and why these objects
copy as themselves (CopiedAsItself).
"""
from __future__ import annotations

import inspect
import pickle


class MissingFunctionError(RuntimeError):
    """A function unpickled without its Python function was called with a signature it does not carry."""


class NotPicklable(pickle.PicklingError):
    """A symgrad function that carries neither its Python function nor a traced signature: `reason` says why."""

    def __init__(self, message: str, reason: str):
        super().__init__(message)
        self.reason = reason


class MissingFunction:
    """Stands for a user function that did not travel with a pickle; calling it raises MissingFunctionError."""

    def __init__(self, name: str, reason: str, signature=None):
        self.__name__ = self.__qualname__ = name
        self.reason = reason
        if signature is not None:  # the function's parameters: argument names, static_argnums
            self.__signature__ = signature

    def __call__(self, *args, **kwargs):
        raise MissingFunctionError(
            f"{self.__name__} was unpickled without its Python function ({self.reason}), so it runs only the "
            "signatures it was pickled with and cannot trace a new one: define the function at module level in a "
            "module both processes import, or call it with these argument shapes and dtypes (or .lower(...) them) "
            "before pickling")

    def __reduce__(self):
        return MissingFunction, (self.__name__, self.reason, getattr(self, "__signature__", None))

    def __repr__(self) -> str:
        return f"<symgrad MissingFunction {self.__name__}: {self.reason}>"


def function_state(fn) -> tuple:
    """(pickled bytes or None, name, why it could not be pickled, signature or None): what a pickle
    carries of `fn`."""
    name = getattr(fn, "__name__", type(fn).__name__)
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        signature = None
    if isinstance(fn, MissingFunction):
        return None, name, fn.reason, signature
    try:
        return pickle.dumps(fn, protocol=pickle.HIGHEST_PROTOCOL), name, None, signature
    except NotPicklable as error:  # a transformed function of a lambda: say what the lambda is
        return None, name, error.reason, signature
    except (pickle.PicklingError, TypeError, AttributeError) as error:
        return None, name, f"pickle cannot save it: {error}", signature


def restored_function(state: tuple):
    """The function of a `function_state`, or a MissingFunction saying why this process cannot have it."""
    data, name, reason, signature = state
    if data is not None:
        try:
            return pickle.loads(data)
        except Exception as error:  # ImportError, AttributeError (another process's __main__), ...
            reason = f"this process cannot unpickle it: {type(error).__name__}: {error}"
    return MissingFunction(name, reason, signature)


def picklable(value) -> bool:
    """Whether pickle can save `value` (a Python value a trace read, such as a static argument)."""
    try:
        pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError):
        return False
    return True


def check_carries_something(state: tuple, signatures: int, what: str) -> None:
    """A pickle of an object with no function and no traced signature would be useless: refuse it now."""
    data, name, reason, _ = state
    if data is None and not signatures:
        raise NotPicklable(
            f"cannot pickle {what} {name}: {reason}, and it has no traced signature to carry; define the function "
            "at module level, or call it (or .lower(...) it) with the argument shapes it will get, then pickle it",
            reason)


class ExactExpression:
    """A SymPy expression pickled with the order of its arguments. SymPy's own pickle rebuilds an Add or
    Mul by evaluating it, which may order its terms otherwise; lowering follows that order, so the
    unpickled graph would give other code (not the code a pickle carries) and other roundings."""

    __slots__ = ("kind", "args")

    def __init__(self, expr):
        self.kind = type(expr)
        self.args = tuple(exact_state(arg) for arg in expr.args)

    def rebuilt(self):
        args = tuple(restored_state(arg) for arg in self.args)
        from_args = getattr(self.kind, "_from_args", None)  # Add, Mul: kept as they are, not evaluated again
        return from_args(args) if from_args is not None else self.kind(*args)

    def __getstate__(self):
        return self.kind, self.args

    def __setstate__(self, state):
        self.kind, self.args = state


def _is_expression(value) -> bool:
    """A SymPy expression with arguments (told without importing SymPy, which loading an artifact avoids)."""
    return hasattr(value, "func") and hasattr(value, "is_Atom") and not value.is_Atom and bool(value.args)


def exact_state(value):
    """`value` (a node attribute) for a pickle, its SymPy expressions as ExactExpression."""
    if isinstance(value, tuple):
        return tuple(exact_state(item) for item in value)
    return ExactExpression(value) if _is_expression(value) else value


def restored_state(value):
    """The attribute `exact_state` pickled."""
    if isinstance(value, tuple):
        return tuple(restored_state(item) for item in value)
    return value.rebuilt() if isinstance(value, ExactExpression) else value


class CopiedAsItself:
    """copy.copy and copy.deepcopy give the object itself, as they give a function: without this they
    would go through the pickle (__reduce__), re-linking code and refusing a lambda that traced nothing."""

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self
