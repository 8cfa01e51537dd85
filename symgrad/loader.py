"""`sg.load`: call an ahead-of-time compiled artifact (symgrad.aot) with only NumPy and ctypes.

An artifact is `NAME.json` (metadata) beside `NAME.so` (LLVM backend: C entry points) or
`NAME.py` (NumPy backend). Loading an artifact runs its code, like importing a module; before
any of it runs (dlopen runs a library's constructors), loading checks the artifact's format and
symgrad version, that the library is a regular file beside the metadata, its SHA-256 against the
metadata, the CPU features it was built to use, and (read from the file) that the metadata is the
one compiled into it. Calls check every argument's count, shape and dtype, naming the argument.
A loaded artifact pickles as its metadata and the bytes of its files; unpickling writes them to a
private temporary directory and loads them from there, with every check above.
"""
from __future__ import annotations

import builtins
import ctypes
import hashlib
import inspect
import json
import os
import platform
import stat
import tempfile
import types

import numpy as np

from . import __version__, elf, pytree

FORMAT = "symgrad-aot"
FORMAT_VERSION = 1
ENTRY_KINDS = ("forward", "grad", "value_and_grad")
BACKENDS = ("llvm", "numpy")
# Metadata fields load reads before any code of the artifact runs, and their types.
_FIELDS = {"backend": str, "library": str, "sha256": str, "prefix": str, "function": str, "arguments": list,
           "entries": dict}


class ArtifactError(ValueError):
    """An artifact that must not be loaded: missing, corrupt, modified, or from another version."""


def metadata_text(metadata: dict) -> str:
    """The canonical text of the metadata without its hash: what the library embeds."""
    return json.dumps({k: v for k, v in metadata.items() if k != "sha256"}, sort_keys=True, separators=(",", ":"))


def metadata_symbol(metadata: dict) -> str:
    return metadata["prefix"] + "_symgrad_metadata"


def tree_to_json(tree: pytree.TreeDef) -> dict:
    return {"kind": tree.kind, "keys": list(tree.keys), "children": [tree_to_json(c) for c in tree.children]}


def tree_from_json(data: dict) -> pytree.TreeDef:
    return pytree.TreeDef(data["kind"], tuple(data["keys"]), tuple(tree_from_json(c) for c in data["children"]))


def load(path: str) -> "LoadedFunction":
    """Load the artifact written by `symgrad compile ... --out path` (path with or without suffix).

    Loading an artifact runs its code, as importing a module does: load only artifacts you would
    import. Every check (metadata, file names, hashes, CPU, embedded metadata) happens first."""
    base = artifact_base(path)
    metadata = _read_metadata(base + ".json")
    directory = os.path.dirname(os.path.abspath(base))
    library = _ArtifactFile(directory, metadata["library"], metadata["sha256"])
    files = {metadata["library"]: library.data}
    if "data" in metadata:  # the constants file of a NumPy artifact
        data = _ArtifactFile(directory, metadata["data"].get("file"), metadata["data"].get("sha256"))
        files[metadata["data"]["file"]] = data.data
    if metadata["backend"] == "llvm":
        _check_cpu(metadata["target"])
        _check_embedded_metadata(library, metadata)
        code = _NativeLibrary(library, metadata)
    else:
        code = _PythonModule(library, metadata)
    try:
        return LoadedFunction(metadata, code, files)
    except (KeyError, TypeError, IndexError, AttributeError) as err:
        raise ArtifactError(f"{base}.json: malformed artifact metadata ({err!r})") from None


def _unpickled(metadata: dict, files: dict) -> "LoadedFunction":
    """A pickled loaded artifact: its files written to a private temporary directory, loaded from there."""
    with tempfile.TemporaryDirectory(prefix="symgrad-unpickled-") as scratch:  # 0700
        for name, data in files.items():
            if not _is_file_name(name):
                raise ArtifactError(f"a pickled artifact names {name!r}, not a file name")
            with open(os.open(os.path.join(scratch, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as f:
                f.write(data)
        base = os.path.join(scratch, os.path.splitext(metadata["library"])[0])
        with open(os.open(base + ".json", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w", encoding="utf-8") as f:
            json.dump(metadata, f)
        return load(base)  # the libraries and the constants file are open: the directory can go


def artifact_base(path: str) -> str:
    """The artifact's path without the suffix of one of its files (build/mlp.so -> build/mlp)."""
    path = os.fspath(path)
    root, suffix = os.path.splitext(path)
    return root if suffix in (".json", ".so", ".py", ".h", ".npz") else path


def _read_metadata(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            metadata = json.load(f)
    except FileNotFoundError:
        raise FileNotFoundError(f"no symgrad artifact at {path!r} (write one with `symgrad compile ... --out`)") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ArtifactError(f"{path}: corrupt artifact metadata ({err})") from None
    if not isinstance(metadata, dict) or metadata.get("format") != FORMAT:
        raise ArtifactError(f"{path}: not a symgrad artifact")
    if metadata.get("format_version") != FORMAT_VERSION or metadata.get("symgrad_version") != __version__:
        raise ArtifactError(f"{path}: artifact written by symgrad {metadata.get('symgrad_version')} (format "
                            f"{metadata.get('format_version')}); this is symgrad {__version__} (format "
                            f"{FORMAT_VERSION}): compile it again with `symgrad compile`")
    fields = {**_FIELDS, **({"target": dict} if metadata.get("backend") == "llvm" else {})}
    malformed = [key for key, kind in fields.items() if not isinstance(metadata.get(key), kind)]
    if malformed or metadata["backend"] not in BACKENDS or not isinstance(metadata.get("data", {}), dict):
        raise ArtifactError(f"{path}: malformed artifact metadata (fields {', '.join(malformed) or 'backend, data'})")
    return metadata


def file_sha256(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class _ArtifactFile:
    """A file the metadata names beside it, read once (never through a symbolic link) and checked
    against its SHA-256: the bytes the other checks read before anything is loaded."""

    def __init__(self, directory: str, name, sha256: str):
        if not _is_file_name(name):
            raise ArtifactError(f"{directory}: the artifact's metadata names {name!r}, not a file beside it "
                                "(a bare file name, without directories)")
        self.path = os.path.join(directory, name)
        try:
            if not stat.S_ISREG(os.lstat(self.path).st_mode):
                raise ArtifactError(f"{self.path}: not a regular file (a symbolic link, directory or device)")
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except FileNotFoundError:
            raise ArtifactError(f"{self.path}: missing (the artifact's metadata names it)") from None
        except OSError as err:
            raise ArtifactError(f"{self.path}: cannot be opened ({err.strerror})") from None
        with open(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise ArtifactError(f"{self.path}: not a regular file")
            self.data = f.read()
        digest = hashlib.sha256(self.data).hexdigest()
        if digest != sha256:
            raise ArtifactError(f"{self.path}: SHA-256 {digest[:16]}... does not match the metadata's "
                                f"{str(sha256)[:16]}...: the file is corrupt or was modified; compile it again")


def _is_file_name(name) -> bool:
    """A bare file name: no directory part, not absolute, not '.' or '..'."""
    return (isinstance(name, str) and name not in ("", ".", "..") and "\0" not in name
            and not any(sep in name for sep in (os.sep, os.altsep, "/") if sep))


def _check_embedded_metadata(library: _ArtifactFile, metadata: dict) -> None:
    """The library's machine is this one, and the metadata it embeds is the .json's, read from the file."""
    try:
        expected = elf.MACHINES.get(platform.machine())
        if expected is not None and elf.machine(library.data) != expected:
            raise ArtifactError(f"{library.path}: built for another kind of machine (ELF machine "
                                f"{elf.machine(library.data)}; this is {platform.machine()})")
        embedded = elf.exported_bytes(library.data, metadata_symbol(metadata))
    except elf.ELFError as err:
        raise ArtifactError(f"{library.path}: not a library symgrad wrote ({err})") from None
    if embedded != metadata_text(metadata).encode() + b"\0":
        raise ArtifactError(f"{library.path}: the metadata file does not describe this library (was it edited?)")


def _check_cpu(target: dict) -> None:
    """A library tuned for its build machine's CPU refuses a CPU without the features it uses."""
    required = target.get("requires", [])
    if not required:
        return
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            flags = set().union(*(line.split(":", 1)[1].split() for line in f if line.startswith("flags")))
    except OSError:
        raise ArtifactError(f"built for CPU {target['cpu']!r} (needs {', '.join(required)}) and this machine's CPU "
                            "features cannot be read; compile with --cpu generic") from None
    missing = [name for name in required if name not in flags]
    if missing:
        raise ArtifactError(f"built for CPU {target['cpu']!r}; this CPU lacks {', '.join(missing)}: "
                            "compile again on this machine or with --cpu generic")


class _NativeLibrary:
    """The shared library of an LLVM artifact: C entry points returning an error status."""

    def __init__(self, library: _ArtifactFile, metadata: dict):
        self.path = library.path
        # CDLL calls release the GIL: entry points are reentrant (a workspace per call).
        self.library = ctypes.CDLL(os.path.abspath(self.path))
        if not _embeds(self.library, metadata):
            # dlopen handed back the library loaded earlier from this path (the file was rewritten since,
            # as recompiling in a notebook does): load the bytes checked above from a private copy.
            self.library = _load_private_copy(library, metadata)
        self._connect_blas(metadata.get("blas_slots", {}))
        self._connect_lapack(metadata.get("lapack_slots", {}))
        self.python_entries = self._connect_runtime(metadata.get("python_runtime"))

    def _connect_blas(self, slots: dict) -> None:
        """Point the library's gemm slots at NumPy's BLAS (left empty, it multiplies with its own loops)."""
        from symgrad.codegen import runtime
        found = runtime.blas_addresses()
        for name, symbol in slots.items():
            if name in found:
                ctypes.c_void_p.in_dll(self.library, symbol).value = found[name]

    def _connect_lapack(self, slots: dict) -> None:
        """Point the library's LAPACK slots at NumPy's LAPACK (left empty, a call raises a clear RuntimeError)."""
        from symgrad.codegen import runtime
        found = runtime.lapack_addresses()
        for name, symbol in slots.items():
            if name in found:
                ctypes.c_void_p.in_dll(self.library, symbol).value = found[name]

    def _connect_runtime(self, spec) -> bool:
        """Fill the table through which the library's CPython entries reach CPython and NumPy;
        False (calls then go through ctypes) if this process cannot name every symbol."""
        from symgrad.codegen import runtime
        if not spec:
            return False
        addresses = runtime.symbol_addresses()
        if any(name not in addresses for name in spec["symbols"]):
            return False
        table = (ctypes.c_void_p * len(spec["symbols"])).in_dll(self.library, spec["table"])
        for position, name in enumerate(spec["symbols"]):
            table[position] = addresses[name]
        return True

    def python_entry(self, spec: dict):
        """The native CPython entry (checks arguments, allocates outputs), or None."""
        if not self.python_entries or "python" not in spec:
            return None
        from symgrad.codegen import runtime
        address = ctypes.cast(self.library[spec["python"]["symbol"]], ctypes.c_void_p).value
        return runtime.make_builtin(address, spec["python"]["symbol"], owner=self)

    def entry(self, symbol: str, count: int):
        function = self.library[symbol]
        function.restype = ctypes.c_int32
        function.argtypes = [ctypes.c_void_p] * count
        return function


def _embeds(handle, metadata: dict) -> bool:
    """Whether the loaded library `handle` embeds exactly this metadata."""
    try:
        embedded = ctypes.c_char.in_dll(handle, metadata_symbol(metadata))
    except ValueError:
        return False
    return ctypes.string_at(ctypes.addressof(embedded)) == metadata_text(metadata).encode()


def _load_private_copy(library: _ArtifactFile, metadata: dict):
    """dlopen the checked bytes of `library` from a fresh private directory (a new path, a new library)."""
    with tempfile.TemporaryDirectory(prefix="symgrad-load-") as scratch:
        copy = os.path.join(scratch, os.path.basename(library.path))
        with open(copy, "wb") as f:
            f.write(library.data)
        try:
            handle = ctypes.CDLL(copy)
        except OSError as err:
            raise ArtifactError(f"{library.path}: this process holds an older library loaded from this path, "
                                f"and a private copy could not be loaded ({err}); load it in a new process") from None
    if not _embeds(handle, metadata):
        raise ArtifactError(f"{library.path}: the metadata file does not describe this library")
    return handle


class _PythonModule:
    """The standalone module of a NumPy artifact: functions returning a tuple of arrays."""

    def __init__(self, source: _ArtifactFile, metadata: dict):
        self.module = types.ModuleType(f"symgrad_artifact_{metadata['prefix']}_{metadata['sha256'][:12]}")
        self.module.__file__ = source.path
        exec(builtins.compile(source.data, source.path, "exec"), vars(self.module))  # the bytes hashed

    def entry(self, symbol: str, count: int):
        return getattr(self.module, symbol)


class _Argument:
    """One argument's name, shape and dtype, and the check every call makes."""

    def __init__(self, spec: dict):
        self.name, self.shape, self.dtype = spec["name"], tuple(spec["shape"]), np.dtype(spec["dtype"])
        self.type_text = f"{self.dtype}[{','.join(map(str, self.shape))}]"

    def checked(self, value, where: str) -> np.ndarray:
        """`value` as a C-contiguous aligned array of exactly this shape and dtype, or an error."""
        if type(value) is np.ndarray and value.dtype == self.dtype and value.shape == self.shape \
                and value.flags.c_contiguous and value.flags.aligned:  # the common case, decided quickly
            return value
        if isinstance(value, np.ma.MaskedArray):
            raise TypeError(f"{where}: argument {self.name}: NumPy masked arrays are not supported (their mask "
                            "would be dropped); pass value.filled(fill) or np.asarray(value)")
        if type(value) is not np.ndarray:
            value = self._from_scalar_or_list(value, where)
        if value.dtype != self.dtype:
            raise TypeError(f"{where}: argument {self.name} must be {self.type_text}, got {value.dtype} "
                            f"(convert with .astype(np.{self.dtype}))")
        if value.shape != self.shape:
            raise ValueError(f"{where}: argument {self.name} must have shape {self.shape}, got {value.shape} "
                             f"(an AOT artifact has fixed shapes)")
        if not (value.flags.c_contiguous and value.flags.aligned):
            value = np.ascontiguousarray(value)
        return value

    def _from_scalar_or_list(self, value, where):
        if isinstance(value, (bool, int, float)) and not isinstance(value, np.generic):
            kind = "b" if isinstance(value, bool) else "i" if isinstance(value, int) else "f"
            if self.shape == () and kind in {"b": "b", "i": "iuf", "f": "f"}[self.dtype.kind]:
                return np.asarray(value, dtype=self.dtype)
        if isinstance(value, (str, bytes, complex)) or value is None:
            raise TypeError(f"{where}: argument {self.name} must be {self.type_text}, got {type(value).__name__}")
        try:
            return np.asarray(value)
        except (TypeError, ValueError) as err:
            raise TypeError(f"{where}: argument {self.name} must be {self.type_text}: {err}") from None


def _address(array: np.ndarray) -> int:
    """The data pointer, the cheap way when the array is writable and non-empty."""
    if array.flags.writeable and array.nbytes:
        return ctypes.addressof(ctypes.c_char.from_buffer(array))
    return array.ctypes.data


def _rebuilder(tree: pytree.TreeDef):
    """flat outputs -> the function's output structure (one array and flat tuples without a tree walk)."""
    if tree.kind == "leaf":
        return lambda flat: flat[0]
    if tree.kind == "tuple" and all(child.kind == "leaf" for child in tree.children):
        return tuple
    return lambda flat: pytree.unflatten(tree, flat)


class Entry:
    """One entry point of an artifact (forward, grad or value_and_grad), called like the function."""

    def __init__(self, kind: str, spec: dict, arguments: list, code, native: bool, name: str, owner=None):
        self.kind, self.arguments, self.native = kind, arguments, native
        self.owner = owner  # the LoadedFunction of a .grad or .value_and_grad entry
        self.outputs = [(tuple(o["shape"]), np.dtype(o["dtype"])) for o in spec["outputs"]]
        self.tree = tree_from_json(spec["tree"])
        self.rebuild = _rebuilder(self.tree)
        self.errors = spec.get("errors", [])
        self.__name__ = name if kind == "forward" else f"{name}.{kind}"
        self.__signature__ = inspect.Signature(
            [inspect.Parameter(a.name, inspect.Parameter.POSITIONAL_OR_KEYWORD) for a in arguments])
        count = len(arguments) + (len(self.outputs) if native else 0)
        self.function = code.entry(spec["symbol"], count)
        self.fast = code.python_entry(spec) if native else None  # NumPy artifacts have none
        self.fast_returns_result = native and spec.get("python", {}).get("returns") == "result"

    def __call__(self, *args, **kwargs):
        if self.fast is not None and not kwargs:  # native checks: about the cost of a JIT call
            result = self.fast(*args)
            if result is not NotImplemented:
                return result if self.fast_returns_result else self.rebuild(list(result))
        if kwargs or len(args) != len(self.arguments):
            args = self._bind(args, kwargs)
        arrays = [a.checked(v, self.__name__) for a, v in zip(self.arguments, args)]
        if not self.native:
            flat = [np.array(o) if not (isinstance(o, np.ndarray) and o.flags.writeable) else o
                    for o in self.function(*arrays)]
            return self.rebuild(flat)
        outputs = [np.empty(shape, dtype) for shape, dtype in self.outputs]
        status = self.function(*map(_address, arrays), *map(_address, outputs))
        if status:
            if 0 < status <= len(self.errors):
                from symgrad.codegen import runtime
                message = self.errors[status - 1]
                raise getattr(builtins, runtime.exception_name(message))(f"{self.__name__}: {message}")
            raise RuntimeError(f"{self.__name__}: native code returned unknown status {status}")
        return self.rebuild(outputs)

    def _bind(self, args, kwargs) -> list:
        try:
            bound = self.__signature__.bind(*args, **kwargs)
        except TypeError as err:
            params = ", ".join(f"{a.name}: {a.type_text}" for a in self.arguments)
            raise TypeError(f"{self.__name__}({params}): {err}") from None
        return [bound.arguments[a.name] for a in self.arguments]

    def __repr__(self) -> str:
        params = ", ".join(f"{a.name}: {a.type_text}" for a in self.arguments)
        return f"<symgrad artifact entry {self.__name__}({params})>"

    def __reduce__(self):
        """An entry pickles as its artifact's entry of this kind."""
        return getattr, (self.owner, self.kind)


class LoadedFunction(Entry):
    """A loaded artifact: calling it runs the forward function; `.grad` / `.value_and_grad` are the
    compiled gradient entries (None when the artifact has none); `.metadata` is its description."""

    def __init__(self, metadata: dict, code, files: dict):
        self.metadata, self.code, self.files = metadata, code, files
        arguments = [_Argument(spec) for spec in metadata["arguments"]]
        native = metadata["backend"] == "llvm"
        name = metadata["function"]
        entries = metadata["entries"]
        super().__init__("forward", entries["forward"], arguments, code, native, name)
        self.grad = self.value_and_grad = None
        for kind in ENTRY_KINDS[1:]:
            if kind in entries:
                setattr(self, kind, Entry(kind, entries[kind], arguments, code, native, name, self))

    def __reduce__(self):
        return _unpickled, (self.metadata, self.files)
