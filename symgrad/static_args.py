"""Static arguments (JAX's `static_argnums` / `static_argnames`): Python values a trace reads as they are
(a length, a mode string, an int driving `%` or a slice), part of the cache key, so each distinct value
gets code of its own. The other arguments, positional or by keyword, are traced as usual."""
from __future__ import annotations

import inspect
import pickle

from . import pickling
from .caches import Recent, scalar_token

_VAR_POSITIONAL, _KEYWORD_ONLY, _VAR_KEYWORD = (int(inspect.Parameter.VAR_POSITIONAL), int(inspect.Parameter.KEYWORD_ONLY),
                                                int(inspect.Parameter.VAR_KEYWORD))
STATIC_VALUES_KEPT = 32  # distinct static values a function keeps compiled code for, most recent first


def has_static(static_argnums, static_argnames) -> bool:
    """Whether any argument is static (static_argnums=0 names the first one)."""
    return static_argnums not in (None, ()) or static_argnames not in (None, ())


class StaticArgs(pickling.CopiedAsItself):
    """fn called with some arguments static: `make(inner)` builds the traced-and-cached function (compile,
    grad, value_and_grad) of `inner`, fn with those values bound, once per distinct static values."""

    def __init__(self, fn, make, static_argnums=(), static_argnames=(), argnums=None, recipe=None):
        """recipe = (factory, options): factory(fn, **options) makes it again (how it pickles)."""
        self.fn = self.__wrapped__ = fn
        self.__name__ = getattr(fn, "__name__", "f")
        self._make = make
        self._recipe = recipe
        try:
            self._signature = inspect.signature(fn)
        except (TypeError, ValueError):
            raise TypeError(f"static arguments need the signature of {self.__name__}, which Python cannot give")
        positional = [p.name for p in self._signature.parameters.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
        names = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
        # positions past the named parameters, taken by *args (lambda *a: ...): static by position, as JAX's are
        self._var_positions = tuple(sorted(n for n in nums if n >= len(positional) and any(
            p.kind == p.VAR_POSITIONAL for p in self._signature.parameters.values())))
        for n in nums:
            if not -len(positional) <= n < len(positional) and n not in self._var_positions:
                raise ValueError(f"static_argnums {n} is out of range for {self.__name__}'s {len(positional)} "
                                 "positional parameter(s)")
        unknown = [n for n in names if n not in self._signature.parameters]
        if unknown:
            raise ValueError(f"static_argnames {unknown} are not parameters of {self.__name__}")
        self._static = set(names) | {positional[n] for n in nums if n not in self._var_positions}
        self._positional = positional
        self._argnums = argnums  # the differentiated positions (grad), checked against the static ones
        if argnums is not None:
            for n in (argnums,) if isinstance(argnums, int) else argnums:
                if n < len(positional) and positional[n] in self._static:
                    raise ValueError(f"argument {positional[n]!r} is both differentiated (argnums) and static")
        self._compiled = Recent(STATIC_VALUES_KEPT)

    def __call__(self, *args, **kwargs):
        if self._var_positions and len(args) <= self._var_positions[-1]:
            raise TypeError(f"{self.__name__}: static_argnums {self._var_positions[-1]} needs "
                            f"{self._var_positions[-1] + 1} positional arguments, got {len(args)}")
        by_position = tuple((n, args[n], _types(args[n])) for n in self._var_positions)
        args = tuple(a for n, a in enumerate(args) if n not in self._var_positions)
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as err:
            raise TypeError(f"{self.__name__}: {err}") from None
        static = tuple((name, value, _types(value)) for name, value in bound.arguments.items() if name in self._static)
        dynamic = [name for name in bound.arguments if name not in self._static]
        key = (static, tuple(dynamic), by_position)
        try:
            hash(key)
        except TypeError:
            bad = next(name for name, value, _ in static + by_position if not hashable(value))
            raise TypeError(f"{self.__name__}: the static argument {bad!r} must be hashable (it selects the compiled "
                            "code); pass arrays as ordinary arguments") from None
        return self._entry(key)(*(bound.arguments[name] for name in dynamic))

    def _entry(self, key):
        """The compiled function of key = (static (name, value, types) triples, dynamic names), now the most
        recent."""
        entry = self._compiled.used(key)
        if entry is None:
            static, dynamic = {name: value for name, value, _ in key[0]}, list(key[1])
            order = [name for name in self._signature.parameters if name in static or name in dynamic]
            fn = bind_positions(self.fn, tuple((n, value) for n, value, _ in key[2])) if key[2] else self.fn
            entry = self._compiled.keep(key, self._make(self._bound(fn, static, dynamic, order),
                                                        self._remapped(dynamic)))
        return entry

    def __reduce__(self):
        """Pickled as the call that made it and, per static values, the signatures compiled for them."""
        if self._recipe is None:
            raise pickle.PicklingError(f"{self.__name__} (taking keyword arguments) is internal and does not pickle")
        factory, options = self._recipe
        state = pickling.function_state(self.fn)
        pickling.check_carries_something(state, sum(entry.signature_count() for entry in self._compiled.values()),
                                         "the function with static arguments")
        carried = [(key, entry.carried()) for key, entry in self._compiled.items() if pickling.picklable(key)]
        return _restore, (factory, state, options, carried)

    def _bound(self, fn, static: dict, dynamic: list, order: list):
        """fn (self.fn, its static *args bound) of the dynamic arguments (in signature order, positionally), the
        static ones bound."""
        # tuples of plain values only (not the Signature): what a trace reads is guarded by value
        params = tuple((p.name, int(p.kind)) for p in self._signature.parameters.values())
        static, dynamic = tuple(static.items()), tuple(dynamic)

        def inner(*values):
            arguments = dict(static)
            arguments.update(zip(dynamic, values))
            args, kwargs, by_keyword = [], {}, False  # inspect.BoundArguments' args and kwargs
            for name, kind in params:
                if kind in (_KEYWORD_ONLY, _VAR_KEYWORD):
                    continue
                if name not in arguments:
                    by_keyword = True  # a parameter left to its default: the later ones go by name
                elif by_keyword:
                    kwargs[name] = arguments[name]
                elif kind == _VAR_POSITIONAL:
                    args.extend(arguments[name])
                else:
                    args.append(arguments[name])
            for name, kind in params:  # keyword-only and **kwargs come after
                if kind == _KEYWORD_ONLY and name in arguments:
                    kwargs[name] = arguments[name]
                elif kind == _VAR_KEYWORD and name in arguments:
                    kwargs.update(arguments[name])
            return fn(*args, **kwargs)

        inner.__name__ = self.__name__
        return inner

    def _remapped(self, dynamic: list):
        """argnums as positions among the dynamic arguments."""
        if self._argnums is None:
            return None
        nums = (self._argnums,) if isinstance(self._argnums, int) else tuple(self._argnums)
        remapped = tuple(dynamic.index(self._positional[n]) for n in nums)
        return remapped[0] if isinstance(self._argnums, int) else remapped


def _restore(factory, state, options, carried) -> StaticArgs:
    """An unpickled function with static arguments, holding the code compiled for each static value."""
    static_args = factory(pickling.restored_function(state), **options)
    for key, signatures in carried:
        static_args._entry(key).carry(signatures)
    return static_args


def _types(value):
    """The type of a static value, and of its items in a tuple: 1, 1.0 and True are equal and hash alike, but
    a trace can tell them apart (isinstance, //, a dtype), so each gets code of its own, as in JAX; so do -0.0 and
    0.0 (x / s is -inf or inf) by caches.scalar_token."""
    if isinstance(value, tuple):
        return type(value), tuple(_types(item) for item in value)
    return scalar_token(value)


def hashable(value) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def python_value_positions(args, ints: bool) -> tuple[int, ...]:
    """Positions of the arguments a trace takes as Python values without being told: strings, None and
    functions, which cannot be arrays, and Python ints and bools when `ints` (a compiled function tries
    them traced first, and passes them as Python values once its trace needs their value: a range, a
    slice, an `if`), as autograd users expect."""
    return tuple(i for i, a in enumerate(args)
                 if isinstance(a, (str, bytes)) or a is None or (callable(a) and not hasattr(a, "shape"))
                 or (ints and type(a) in (int, bool)))


def bind_positions(fn, static: tuple):
    """fn of its other positional arguments, with (position, value) pairs of `static` put back in place."""
    static = tuple(sorted(static, key=lambda pair: pair[0]))  # a tuple: what a trace reads is guarded by value

    def bound(*dynamic):
        args = list(dynamic)
        for position, value in static:
            args.insert(position, value)
        return fn(*args)

    bound.__name__ = getattr(fn, "__name__", "f")
    try:  # the names of the remaining parameters, for error messages
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return bound
    if all(i < len(parameters) and parameters[i].kind in (parameters[i].POSITIONAL_ONLY,
                                                          parameters[i].POSITIONAL_OR_KEYWORD) for i, _ in static):
        positions = {i for i, _ in static}
        bound.__signature__ = inspect.Signature([p for i, p in enumerate(parameters) if i not in positions])
    return bound
