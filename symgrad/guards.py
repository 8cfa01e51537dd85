"""Guards: what a trace read from outside its arguments, and whether it still holds.

A trace bakes in everything the function read besides its arguments: globals, closure
cells, default values, attributes of user modules. After each trace, `snapshot(fn)`
records those reads by walking the bytecode of `fn` and of the Python functions it
reaches (as torch.compile's guards do); `Guard.failure()` later names the first read
that changed, so a cache can re-trace instead of returning a stale result.

Two strengths:
- `values=False` (sg.compile): a binding that is rebound fails its guard: a global, a closure
  cell, an attribute of a plain object (a bound method's object too), an item of a container
  (unless the code stores into state itself). Arrays are guarded by identity: the trace reads them
  afresh at every call (core.Reads; `with_reads` adds their shapes, and the contents of those handed
  to NumPy at trace time); an nn.Module by its layers, parameters, buffers and attributes.
- `values=True` (uncompiled transforms): the function must also be provably pure. Arrays
  and containers it read are guarded by content; anything whose state cannot be checked
  cheaply (a random generator, an object's attributes, a very large array, `print`)
  makes the snapshot impure, and the caller re-runs the function on every call.
"""
from __future__ import annotations

import builtins
import collections
import dis
import functools
import pickle
import random
import sys
import types

import numpy as np


def concrete_array(value) -> np.ndarray:
    """np.asarray(value), or an eager tensor's data even while it requires grad: its __array__ refuses then
    (a user's NumPy array of it keeps no history), but the guards and sg.compile's reads of it are traced."""
    exposed = getattr(value, "_exposed_array", None)
    return exposed() if exposed is not None else np.asarray(value)


_MISSING = object()
# Arrays are guarded by content up to this many bytes in all (about 0.1 ms of comparing per MiB
# and call); past it, re-running the function is as cheap as checking.
CONTENT_GUARD_BYTES = 1 << 20
# Containers (lists, dicts) up to this many items are guarded item by item.
CONTAINER_GUARD_ITEMS = 256
# Library code trusted not to keep state between calls, except under the impure prefixes.
_TRUSTED_ROOTS = frozenset({"builtins", "math", "cmath", "operator", "functools", "itertools", "collections",
                            "dataclasses", "enum", "abc", "typing", "numpy", "sympy", "symgrad", "scipy"})
# Under a trusted root, what keeps state: random generators, and symgrad's eager objects (tensors, modules).
_IMPURE_PREFIXES = ("numpy.random", "scipy.stats", "symgrad.eager", "symgrad.nn.modules", "symgrad.optim",
                    "symgrad.autograd")
_IMPURE_BUILTINS = frozenset({"print", "input", "open", "exec", "eval", "compile", "__import__", "globals",
                              "locals", "vars", "getattr", "setattr", "delattr", "breakpoint", "iter", "next"})
_IMMUTABLE = (int, float, complex, bool, str, bytes, frozenset, type(None), type(Ellipsis), range, slice,
              np.generic, np.dtype)


def _by_value(value) -> bool:
    """Whether a read is compared by value: an immutable, or a tuple of them (a dict's keys)."""
    if isinstance(value, tuple):
        return all(_by_value(item) for item in value)
    return isinstance(value, _IMMUTABLE) and not isinstance(value, (range, slice))


# Mutable containers guarded item by item (values mode); sets by their items' equality.
_CONTAINERS = (tuple, list, dict, collections.deque, set)
_MUTATING_OPS = frozenset({"STORE_SUBSCR", "DELETE_SUBSCR", "STORE_ATTR", "DELETE_ATTR", "STORE_GLOBAL",
                           "DELETE_GLOBAL"})
_MUTATING_METHODS = frozenset({"append", "extend", "insert", "pop", "popitem", "remove", "clear", "update",
                               "setdefault", "discard", "itemset", "setflags"})


class Guard:
    """The reads of one trace as Python expressions, compiled into one `holds()` test."""

    def __init__(self, checks, namespace, pure=True, impure_reason=None, arrays=None):
        self.checks = checks  # (description, boolean expression over `namespace`)
        self.namespace = namespace
        self.arrays = arrays or {}  # id -> the arrays read by identity (see _Walker.arrays)
        self.pure = pure
        self.impure_reason = impure_reason
        body = " and ".join(f"({test})" for _, test in checks) or "True"
        source = f"def holds():\n    try:\n        return {body}\n    except Exception:\n        return False\n"
        scope = dict(namespace)
        exec(compile(source, "<symgrad guard>", "exec"), scope)  # noqa: S102 - source built from our own templates
        self.holds = scope["holds"]  # truthy while every read is unchanged: one call, no loop

    def failure(self) -> str | None:
        """None while every read is unchanged, else a description of the first that changed."""
        for description, test in self.checks:
            try:
                if eval(test, dict(self.namespace)):  # noqa: S307 - our own expression
                    continue
            except Exception:  # noqa: BLE001 - a read that now raises (an emptied cell) has changed
                pass
            return description
        return None

    def __len__(self):
        return len(self.checks)


_GENERATORS = (np.random.Generator, np.random.RandomState, np.random.BitGenerator, random.Random)


def random_states(guard: Guard) -> bytes:
    """The states of the random generators a trace may draw from: NumPy's and Python's global ones and those the
    function reads (a global `rng = np.random.default_rng()`). A trace that moved one drew numbers it bakes in."""
    states = [np.random.get_state(legacy=False), random.getstate()]
    for value in guard.namespace.values():  # (a random.SystemRandom has no state to compare: its draws are not seen)
        if isinstance(value, _GENERATORS) and not isinstance(value, random.SystemRandom):
            state = value.getstate() if isinstance(value, random.Random) else (
                value.get_state(legacy=False) if isinstance(value, np.random.RandomState) else
                getattr(value, "bit_generator", value).state)
            states.append(state)
    return pickle.dumps(states)


def snapshot(fn, values: bool) -> Guard:
    """The guard over everything `fn` reads besides its arguments, as it is now."""
    walker = _Walker(values)
    try:
        walker.visit_callable(fn, getattr(fn, "__qualname__", "the function"))
    except _Impure as reason:
        return Guard(walker.checks, walker.namespace, pure=False, impure_reason=str(reason))
    except Exception as error:  # noqa: BLE001 - e.g. a structure too deep to walk: guard what was read
        if values:
            return Guard(walker.checks, walker.namespace, pure=False,
                         impure_reason=f"its reads could not be walked ({type(error).__name__}: {error})")
    return Guard(walker.checks, walker.namespace, arrays=walker.arrays)


def with_reads(guard: Guard, sources, sliced) -> Guard:
    """`guard` extended for a trace that reads `sources` afresh at every call (core.Reads): each must keep
    its shape and dtype, else the trace is redone. The arrays the guards read that the trace did not take
    as reads were handed to NumPy at trace time (`np.exp(W)`) or `sliced` (parts baked as constants): those
    are compared by content, up to CONTENT_GUARD_BYTES in all, so changing them in place re-traces; past that,
    the guard is impure and the function is traced at every call (it was baked, unchecked: a stale result)."""
    checks, namespace = list(guard.checks), dict(guard.namespace, _array=concrete_array)
    read = set()
    for source in sources:
        array = concrete_array(source)
        name = f"r{len(namespace)}"
        namespace.update({name: source, f"{name}_shape": array.shape, f"{name}_dtype": array.dtype})
        read_now = name if source is array else f"_array({name})"  # an eager tensor's array may be rebound
        checks.append((f"the shape and dtype of an array it reads ({_type_text(array)})",
                       f"(_r := {read_now}).shape == {name}_shape and _r.dtype == {name}_dtype"))
        base = source
        while isinstance(base, np.ndarray):
            read.add(id(base))
            base = base.base
    budget = CONTENT_GUARD_BYTES
    for array in guard.arrays.values():
        if id(array) in read and id(array) not in sliced:
            continue
        if array.nbytes > budget:
            return Guard(checks, namespace, pure=False, arrays=guard.arrays, impure_reason=(
                f"it hands an array of {array.nbytes} bytes to NumPy while traced (or reads a part of it), past "
                f"{CONTENT_GUARD_BYTES} bytes of arrays to compare on every call"))
        budget -= array.nbytes
        name = f"c{len(namespace)}"
        namespace[name] = (array, array.shape, array.dtype, array.tobytes())
        checks.append((f"the values of an array it hands to NumPy ({_type_text(array)})",
                       f"_same_content({name}[0], {name})"))
    return Guard(checks, namespace, arrays=guard.arrays)


def _type_text(array) -> str:
    return f"{array.dtype}{list(array.shape)}"


class _Impure(Exception):
    """Raised inside the walk when a read cannot be guarded (values mode only)."""


def _same_content(current, expected) -> bool:
    array, shape, dtype, data = expected
    return current is array and current.shape == shape and current.dtype == dtype and current.tobytes() == data


def _class_entry(kind, name):
    """What the class dict of `kind` or the first base defining `name` holds: a classmethod object rather than
    the fresh bound method each getattr makes, which no identity guard would ever match."""
    return next((vars(cls)[name] for cls in kind.__mro__ if name in vars(cls)), _MISSING)


@functools.lru_cache(maxsize=4096)
def _code_facts(code: types.CodeType):
    """(global names read, all names used (attributes named by a string constant too), imported modules, whether
    it mutates state) of a code tree.

    Filling a container the function itself just built (`outs = []; outs.append(h)`, `d = {}; d[k] = v`)
    changes nothing outside the call; any other item or attribute store or mutating method call counts."""
    global_names, imports, mutates = set(), set(), False
    names = set(code.co_names) | {c for c in code.co_consts if isinstance(c, str) and c.isidentifier()}
    instructions = list(dis.get_instructions(code))
    own = _own_containers(instructions)
    for i, instruction in enumerate(instructions):
        before = instructions[i - 1] if i else None
        if instruction.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
            global_names.add(instruction.argval)
        elif instruction.opname == "IMPORT_NAME":
            imports.add(instruction.argval)
        elif instruction.opname == "STORE_SUBSCR":  # container, then a key of one instruction
            simple_key = before is not None and before.opname in ("LOAD_CONST", "LOAD_FAST")
            mutates |= not (simple_key and i >= 2 and _loads(instructions[i - 2], own))
        elif instruction.opname in _MUTATING_OPS:
            mutates = True
        elif instruction.opname in ("LOAD_METHOD", "LOAD_ATTR") and instruction.argval in _MUTATING_METHODS:
            mutates |= not _loads(before, own)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            inner = _code_facts(const)
            global_names |= inner[0]
            names |= inner[1]
            imports |= inner[2]
            mutates |= inner[3]
    return frozenset(global_names), frozenset(names), frozenset(imports), mutates


def _own_containers(instructions) -> set:
    """Local names only ever assigned a container built right there ([], {}, set literals; also
    `a, b = [], {}`, which builds both, then stores them one after the other)."""
    fresh = {}
    for i, instruction in enumerate(instructions):
        if instruction.opname == "STORE_FAST":
            j = i - 1
            while j >= 0 and instructions[j].opname == "STORE_FAST":
                j -= 1
            first = j - (i - 1 - j)  # as many builds before the run of stores as it has stores before i
            built = (first >= 0 and all(instructions[k].opname in ("BUILD_LIST", "BUILD_MAP", "BUILD_SET")
                                        for k in range(first, j + 1))
                     and not any(instructions[k].is_jump_target for k in range(first + 1, i + 1)))  # x = G if c else []
            fresh[instruction.argval] = fresh.get(instruction.argval, True) and built
    return {name for name, built in fresh.items() if built}


def _loads(instruction, own) -> bool:
    """Whether `instruction` loads one of the function's own containers."""
    return instruction is not None and instruction.opname in ("LOAD_FAST", "LOAD_FAST_CHECK") and \
        instruction.argval in own


def _module_name(value) -> str:
    return getattr(value, "__module__", None) or type(value).__module__ or ""


def _trusted(module_name: str, qualname: str = "") -> bool:
    if module_name.split(".")[0] not in _TRUSTED_ROOTS:
        return False
    full = f"{module_name}.{qualname}" if qualname else module_name
    return not full.startswith(_IMPURE_PREFIXES)


class _Walker:
    """Visits the reads of a function, recording guards; in values mode it also proves purity."""

    def __init__(self, values: bool):
        self.values = values
        self.checks = []
        self.namespace = {"_MISSING": _MISSING, "_same_content": _same_content, "_class_entry": _class_entry}
        self.seen = set()
        self.content_bytes = 0
        self.mutating = False  # some code walked so far stores into state (then sg.compile leaves containers be)
        self.arrays = {}  # id -> the arrays guarded by identity (sg.compile reads them afresh at every call)

    def name(self, obj) -> str:
        """A name for `obj` in the guard's namespace."""
        name = f"o{len(self.namespace)}"
        self.namespace[name] = obj
        return name

    def impure(self, reason: str):
        if self.values:
            raise _Impure(reason)

    def guard(self, description, fetch, value):
        """Record one read (`fetch`, an expression): by content for arrays (values mode), by value for
        immutables, else by identity."""
        expected = self.name(value)
        if self.values and isinstance(value, np.ndarray):
            self.content_bytes += value.nbytes
            if self.content_bytes > CONTENT_GUARD_BYTES:
                self.impure(f"{description} (an array of {value.nbytes} bytes) brings the arrays it reads past "
                            f"{CONTENT_GUARD_BYTES} bytes, too many to compare on every call")
            expected = self.name((value, value.shape, value.dtype, value.tobytes()))
            test = f"_same_content({fetch}, {expected})"
        elif _by_value(value):
            variable = f"_{expected}"
            test = f"type({variable} := {fetch}) is {self.name(type(value))} and {variable} == {expected}"
        else:
            test = f"{fetch} is {expected}"
            if isinstance(value, np.ndarray):
                self.arrays[id(value)] = value
        self.checks.append((description, test))

    def visit_read(self, description, fetch, names):
        """A binding the code read (`fetch`, an expression): guard it, then whatever it leads to."""
        value = eval(fetch, self.namespace)  # noqa: S307 - our own expression
        self.guard(description, fetch, value)
        if value is not _MISSING:
            self.visit_value(value, description, names)

    def visit_value(self, value, description, names):
        if isinstance(value, (_IMMUTABLE, np.ufunc, np.ndarray)):
            return
        if isinstance(value, types.ModuleType):
            self.visit_module(value, names)
        elif isinstance(value, _CONTAINERS):
            self.visit_container(value, description, names)
        elif isinstance(value, type):  # calling a library class builds a fresh object: no state carried over
            if value.__module__.split(".")[0] not in _TRUSTED_ROOTS:
                self.impure(f"{description} is the class {value.__qualname__}, whose code is not checked")
                self.visit_class(value, names)
        else:
            self.visit_callable(value, description, names)

    def visit_container(self, container, description, names):
        if id(container) in self.seen or self._left_frozen():
            return
        self.seen.add(id(container))
        if len(container) > CONTAINER_GUARD_ITEMS:
            self.impure(f"{description} holds {len(container)} items, too many to check every call")
            return  # (sg.compile: its items stay as the trace read them)
        name = self.name(container)
        if isinstance(container, set):  # no order to read items by: guard them all by equality
            self.guard(f"the items of {description}", f"frozenset({name})", frozenset(container))
            for item in container:
                self.visit_value(item, f"an item of {description}", names)
            return
        if isinstance(container, dict):
            self.guard(f"the keys of {description}", f"tuple({name})", tuple(container))
        elif isinstance(container, (list, collections.deque)):
            self.guard(f"the length of {description}", f"len({name})", len(container))
        keys = list(container) if isinstance(container, dict) else range(len(container))
        for key in keys:
            self.visit_read(f"{description}[{key!r}]", f"{name}[{self.name(key)}]", names)

    def visit_module(self, module, names):
        key = (id(module), names)
        if key in self.seen:
            return
        self.seen.add(key)
        trusted = _trusted(module.__name__)
        missing = frozenset(name for name in names if name not in vars(module))
        if not trusted and missing:  # a name read and missing may be added later (getattr(config, "x", 1.0))
            self.checks.append((f"that module {module.__name__} defines none of {sorted(missing)}",
                                f"{self.name(vars(module).keys())}.isdisjoint({self.name(missing)})"))  # a live view
        for name in names:
            if trusted:
                try:
                    value = getattr(module, name)
                except AttributeError:
                    continue
                self.visit_library_value(value, f"{module.__name__}.{name}", names)
            elif name in vars(module):
                self.visit_read(f"{module.__name__}.{name}", f"{self.name(vars(module))}.get({name!r}, _MISSING)",
                                names)

    def _left_frozen(self) -> bool:
        """sg.compile's guards skip the items and attributes of a function that stores into state (a trace
        counter, a log list): guarded, its own stores would fail them, and it would re-trace on every call."""
        return not self.values and self.mutating

    def visit_library_value(self, value, description, names):
        """An attribute of a trusted library module: not guarded, only checked for known impurity."""
        if isinstance(value, types.ModuleType):
            self.visit_module(value, names)
        elif callable(value) and not isinstance(value, type):
            qualname = getattr(value, "__qualname__", "")
            if not _trusted(_module_name(value), qualname) or getattr(value, "__name__", "") in _IMPURE_BUILTINS:
                self.impure(f"{description} keeps state between calls")

    def visit_callable(self, fn, description, names=frozenset()):
        if id(fn) in self.seen:
            return
        self.seen.add(id(fn))
        if isinstance(fn, functools.partial):  # its bound arguments are reads like closure cells
            self.visit_callable(fn.func, description)
            partial = self.name(fn)
            for i in range(len(fn.args)):
                self.visit_read(f"argument {i} of {description}", f"{partial}.args[{i}]", frozenset())
            self.guard(f"the keywords of {description}", f"tuple({partial}.keywords)", tuple(fn.keywords))
            for key in fn.keywords:
                self.visit_read(f"keyword {key!r} of {description}", f"{partial}.keywords[{key!r}]", frozenset())
            return
        if isinstance(fn, types.MethodType):
            self.impure(f"{description} is a method of {type(fn.__self__).__name__}, whose attributes are not "
                        "checked")
            facts = _code_facts(fn.__func__.__code__)
            if facts[3] and not _trusted(fn.__func__.__module__ or ""):
                self.mutating = True  # a method storing into its object (a call counter): known before it is walked
            self.visit_value(fn.__self__, f"the object of {description}", facts[1])
            self.visit_callable(fn.__func__, description)
            return
        if isinstance(fn, types.BuiltinFunctionType):
            owner = fn.__self__
            if owner is None or isinstance(owner, types.ModuleType):
                module = owner.__name__ if owner is not None else _module_name(fn)
                if not _trusted(module, fn.__name__) or (module == "builtins" and fn.__name__ in _IMPURE_BUILTINS):
                    self.impure(f"{description} ({module}.{fn.__name__}) keeps state or has side effects")
            else:
                self.impure(f"{description} is a method of {type(owner).__name__}, which may keep state")
            return
        if isinstance(fn, types.FunctionType):
            self.visit_function(fn)
            return
        self.visit_object(fn, description, names)

    def visit_object(self, obj, description, names):
        """Any other object: a library object is trusted unless it is known to keep state (a random
        generator, an eager tensor); a plain user object is read like a dict of its attributes."""
        kind = type(obj)
        wrapped = getattr(obj, "__wrapped__", None)
        if wrapped is not None and _trusted(kind.__module__):
            self.visit_callable(wrapped, description)
        elif isinstance(obj, property):
            for accessor in (obj.fget, obj.fset, obj.fdel):
                if accessor is not None:
                    self.visit_callable(accessor, description)
        elif _trusted(kind.__module__) and _trusted(_module_name(obj), getattr(obj, "__qualname__", "")):
            return
        elif _plain(obj):
            self.visit_plain_object(obj, description, names)
        elif not self.values and _torch_module(obj):
            self.visit_torch_module(obj, description, names)
        else:
            self.impure(f"{description} is a {kind.__name__} object, whose state is not checked")

    def visit_plain_object(self, obj, description, names):
        """The attributes that the reading code or any method of the object's class names."""
        if self._left_frozen():
            return
        kind, attributes = type(obj), getattr(obj, "__dict__", {})
        functions = [f for cls in kind.__mro__[:-1] for value in vars(cls).values() for f in _functions_of(value)]
        names = names.union(*(_code_facts(f.__code__)[1] for f in functions), {"__call__"})
        self.guard(f"the attribute names of {description}", f"tuple({self.name(attributes)})", tuple(attributes))
        slots = {name for name in names if isinstance(_class_entry(kind, name), types.MemberDescriptorType)}
        for name in sorted(names):
            if name in attributes:
                self.visit_read(f"{description}.{name}", f"{self.name(attributes)}.get({name!r}, _MISSING)", names)
            elif name in slots:  # a __slots__ attribute, held by the object outside any dict
                self.visit_read(f"{description}.{name}", f"getattr({self.name(obj)}, {name!r}, _MISSING)", names)
        self.visit_class(kind, names.difference(attributes, slots))

    def visit_class(self, kind, names):
        """The attributes of a user's class that the reading code names (K.scale: rebinding it re-traces)."""
        key = (id(kind), frozenset(names))
        if key in self.seen or self._left_frozen():
            return
        self.seen.add(key)
        for cls in kind.__mro__[:-1]:  # a name read and missing (getattr(K, 's', 1.0)) may be added later
            if id(cls) not in self.seen:
                self.seen.add(id(cls))
                self.guard(f"the attribute names of class {cls.__qualname__}", f"tuple(vars({self.name(cls)}))",
                           tuple(vars(cls)))
        for name in sorted(names):
            if _defined_by_class(kind, name) and not (name.startswith("__") and name != "__call__"):
                self.visit_read(f"{kind.__qualname__}.{name}", f"_class_entry({self.name(kind)}, {name!r})", names)
                entry = _class_entry(kind, name)
                if isinstance(entry, classmethod):  # its cls is kind: the attributes its code names
                    self.visit_class(kind, _code_facts(entry.__func__.__code__)[1])

    def visit_torch_module(self, module, description, names):
        """An nn.Module (PyTorch's layout): its parameters, buffers and submodules by identity, so that
        rebinding one re-traces (their values are read at every call: core.Reads), and its other attributes
        (`training`: model.eval() re-traces) as a plain object's."""
        if self._left_frozen():
            return
        attributes = vars(module)
        for table in _MODULE_TABLES:
            self.visit_container(attributes[table], f"{description}.{table}", names)
        self.guard(f"the attribute names of {description}", f"tuple({self.name(attributes)})", tuple(attributes))
        for name in attributes:
            if name not in _MODULE_TABLES:
                self.visit_read(f"{description}.{name}", f"{self.name(attributes)}.get({name!r}, _MISSING)", names)
        for cls in type(module).__mro__[:-1]:  # the user's own layers' code; symgrad's layers only read the above
            if cls.__module__.partition(".")[0] != "symgrad":
                for value in vars(cls).values():
                    if isinstance(value, types.FunctionType):
                        self.visit_callable(value, f"{cls.__qualname__}.{value.__name__}")

    def visit_function(self, fn):
        """A Python function: library code is trusted (its closure is not); user code is read."""
        name = fn.__qualname__
        trusted = _trusted(fn.__module__ or "")
        global_names, names, imports, mutates = _code_facts(fn.__code__)
        if mutates and not trusted:
            self.mutating = True  # known before its cells are walked
        for cell_name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            if not _filled(cell):
                continue
            what, fetch = f"closure variable {cell_name!r} of {name}", f"{self.name(cell)}.cell_contents"
            if trusted and not isinstance(cell.cell_contents, (np.ndarray, list, dict)):
                # library code never rebinds its own cells: only what the value leads to needs guards
                self.visit_value(cell.cell_contents, what, _code_facts(fn.__code__)[1])
            else:
                self.visit_read(what, fetch, _code_facts(fn.__code__)[1])
        if trusted:
            return
        if mutates:
            self.impure(f"{name} assigns to a global, an attribute or an item, or calls a mutating method")
        for global_name in sorted(global_names):
            self.visit_read(f"global {global_name!r} of {name}", self.global_fetch(fn.__globals__, global_name),
                            names)
        for module_name in sorted(imports):
            module = sys.modules.get(module_name)
            if module is not None:
                self.visit_module(module, names)
        if fn.__defaults__:
            self.visit_read(f"the default arguments of {name}", f"{self.name(fn)}.__defaults__", names)
        if fn.__kwdefaults__:
            self.visit_read(f"the keyword defaults of {name}", f"{self.name(fn)}.__kwdefaults__", names)

    def global_fetch(self, namespace, name) -> str:
        """The expression LOAD_GLOBAL evaluates: the module's binding, else the builtin."""
        if name in namespace:
            return f"{self.name(namespace)}[{name!r}]"  # a deleted name raises, and the guard fails
        return (f"(_MISSING if {name!r} in {self.name(namespace)} else "
                f"{self.name(vars(builtins))}.get({name!r}, _MISSING))")


def _filled(cell) -> bool:
    """False for a closure cell not yet assigned (a trace cannot have read it)."""
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _functions_of(entry) -> list:
    """The Python functions a class entry runs on an instance: a method, a property's accessors (a property v reading
    self._v names _v), a static or class method's function."""
    if isinstance(entry, property):
        candidates = (entry.fget, entry.fset, entry.fdel)
    elif isinstance(entry, (staticmethod, classmethod)):
        candidates = (entry.__func__,)
    else:
        candidates = (entry,)
    return [f for f in candidates if isinstance(f, types.FunctionType)]


def _defined_by_class(kind, name) -> bool:
    """Whether `kind` or a base other than object defines `name` (a class without __call__ still has
    type's, a fresh method-wrapper at each lookup, which no identity guard would ever match)."""
    return any(name in vars(cls) for cls in kind.__mro__[:-1])


_MODULE_TABLES = ("_parameters", "_buffers", "_modules")


def _torch_module(obj) -> bool:
    """An object laid out as PyTorch's nn.Module: its attributes live in these tables and its __dict__."""
    attributes = getattr(obj, "__dict__", {})
    return all(isinstance(attributes.get(table), dict) for table in _MODULE_TABLES) and "training" in attributes


def _plain(obj) -> bool:
    """An object whose attribute reads are plain lookups in its __dict__ (or __slots__) and its classes'."""
    kind = type(obj)
    generic = kind.__getattribute__ is object.__getattribute__ or kind is types.SimpleNamespace
    held = hasattr(obj, "__dict__") or any("__slots__" in vars(cls) for cls in kind.__mro__[:-1])
    return held and generic and not hasattr(kind, "__getattr__")
