"""Ahead-of-time compile: a function and example arguments -> an artifact that `sg.load` (or C) calls.

`compile(fn, example_args, grad=..., value_and_grad=..., out="build/mlp")` traces the forward
function and the requested gradient once, optimizes them, and writes, next to `NAME.json`
(metadata: arguments, outputs, errors, versions, the library's SHA-256):
- backend "llvm": `NAME.so`, a position-independent shared library with C entry points
  `NAME_forward`, `NAME_grad` / `NAME_value_and_grad` (constants are compiled in, and
  matrix products call a BLAS only through pointers sg.load sets to NumPy's, so it needs
  only libc and libm, so an op SciPy evaluates is refused here),
  and `NAME.h` declaring them;
- backend "numpy": `NAME.py`, a readable module importing only NumPy (and scipy.special when an
  op needs it; and `NAME.npz` when a constant is too large to write as a literal).
"""
from __future__ import annotations

import ast
import contextlib
import io
import json
import os
import re
import secrets
from dataclasses import dataclass, replace

import numpy as np

from . import __version__, dtypes, ir, pytree
from .backends import for_backend, missing_rules
from .code_cache import collection_paused
from .loader import (BACKENDS, ENTRY_KINDS, FORMAT, FORMAT_VERSION, artifact_base, file_sha256, metadata_symbol,
                     metadata_text, tree_to_json)
from .compiler import output_structure
from .core import UnsupportedOpError
from .ops import lapack
from .passes import optimize
from .tracing import argument_names, as_input_array, check_arguments, function_name, trace_flat
from .transforms import grad as grad_transform, value_and_grad as value_and_grad_transform

# --cpu choices (llvm): baseline x86-64, AVX2+FMA (x86 CPUs since about 2015), or this machine's.
CPUS = ("generic", "x86-64-v3", "host")

_C_TYPES = {dtypes.FLOAT64: "double", dtypes.FLOAT32: "float", dtypes.INT64: "int64_t", dtypes.INT32: "int32_t",
            dtypes.BOOL: "uint8_t", dtypes.UINT8: "uint8_t", dtypes.INT8: "int8_t", dtypes.INT16: "int16_t",
            dtypes.UINT16: "uint16_t", dtypes.UINT32: "uint32_t"}


@dataclass
class EntryGraph:
    """One entry point to write: its kind, optimized graph, output tree and output names."""

    kind: str
    graph: ir.Graph
    tree: pytree.TreeDef
    output_names: list


@dataclass
class Artifact:
    """What `compile` wrote: the metadata path, the library (.so or .py) and the other files."""

    metadata_path: str
    library_path: str
    files: list
    metadata: dict


@collection_paused()  # as sg.compile: collections walking the compiler's objects were 13% of its time
def compile(fn, example_args, grad=None, value_and_grad=False, out="build/artifact", backend="llvm",
            cpu="x86-64-v3", source=None) -> Artifact:
    """Compile fn for the shapes and dtypes of `example_args` (one array or scalar per parameter).

    grad: argument names or positions to differentiate (a name/int gives one gradient, a list a
    tuple of them); value_and_grad=True exports value-and-gradient instead of the gradient
    (differentiating the first argument if `grad` is not given). cpu (llvm): "x86-64-v3" (the
    default: AVX2 and FMA, x86 CPUs since about 2015), "generic" (any x86-64, several times
    slower: no FMA for the math kernels) or "host" (this machine's CPU); sg.load refuses a
    library whose CPU features the machine lacks.
    `source` is recorded in the metadata.
    """
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    if cpu not in CPUS:
        raise ValueError(f"unknown cpu {cpu!r}; choose one of {', '.join(CPUS)}")
    names = _check_signature(fn, example_args)
    arrays = [_example_array(value, name) for value, name in zip(example_args, names)]
    argnums = _argnums(grad, names, value_and_grad)
    fn_name = function_name(fn)
    entries = [_entry("forward", fn, arrays, fn_name, names)]
    if argnums is not None:
        kind, transform = ("value_and_grad", value_and_grad_transform) if value_and_grad else ("grad", grad_transform)
        entries.append(_entry(kind, transform(fn, argnums=argnums), arrays, fn_name, names, argnums))
    base = _artifact_path(out, fn_name)
    prefix = _identifier(os.path.basename(base))
    metadata = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "symgrad_version": __version__, "backend": backend,
        "function": fn_name, "source": source or f"{getattr(fn, '__module__', '?')}:{fn_name}", "prefix": prefix,
        "arguments": [{"name": n, "shape": list(a.shape), "dtype": str(a.dtype)} for n, a in zip(names, arrays)],
        "entries": {},
    }
    os.makedirs(os.path.dirname(base), exist_ok=True)
    entries = [replace(entry, graph=for_backend(entry.graph, backend)) for entry in entries]
    missing = {name for entry in entries for name in missing_rules(entry.graph, backend)}
    if missing:
        why = (" (sg.linalg's factorizations call the LAPACK of NumPy's bundled OpenBLAS, which was not found)"
               if missing & {prim.name for prim in lapack.PRIMITIVES} else "")
        raise UnsupportedOpError(f"{fn_name}: the {backend} backend cannot compile the primitive(s) "
                                 f"{', '.join(sorted(missing))} ahead of time{why}; use backend='numpy' "
                                 "(symgrad compile --backend numpy)")
    if backend == "llvm":
        files = _write_llvm(base, prefix, entries, metadata, cpu)
    else:
        files = _write_numpy(base, entries, metadata)
    library = files[0]
    metadata["sha256"] = file_sha256(library)
    metadata_path = base + ".json"
    _write_file(metadata_path, (json.dumps(metadata, indent=1, sort_keys=True) + "\n").encode())
    return Artifact(metadata_path, library, [metadata_path, *files], metadata)


def _check_signature(fn, example_args) -> list:
    """fn's parameter names for these arguments; an error if fn cannot take them positionally."""
    if isinstance(example_args, (np.ndarray, str)) or not isinstance(example_args, (tuple, list)):
        raise TypeError("example_args must be a tuple or list with one array or scalar per parameter")
    check_arguments(fn, example_args)
    return argument_names(fn, len(example_args))


def _example_array(value, name) -> np.ndarray:
    if isinstance(value, (tuple, list, dict)):
        raise TypeError(f"argument {name}: an AOT artifact takes one array per parameter, not a "
                        f"{type(value).__name__} (pass its arrays as separate parameters)")
    return as_input_array(value, name)


def _argnums(grad, names, value_and_grad):
    """grad (None, name, position, or a list of them) -> argnums as sg.grad takes them."""
    if grad is None:
        return 0 if value_and_grad else None

    def position(item):
        if isinstance(item, str):
            if item not in names:
                raise ValueError(f"grad {item!r}: no such argument; the function takes ({', '.join(names)})")
            return names.index(item)
        if isinstance(item, int) and -len(names) <= item < len(names):
            return item % len(names)
        raise ValueError(f"grad={item!r}: not an argument name or position of ({', '.join(names)})")
    if isinstance(grad, (str, int)):
        return position(grad)
    positions = tuple(position(item) for item in grad)
    if not positions:
        raise ValueError("grad: no argument to differentiate")
    return positions


def _entry(kind, fn, arrays, fn_name, names, argnums=None) -> EntryGraph:
    graph, tree, captures = trace_flat(fn, arrays, name=f"{fn_name}_{kind}")
    if captures:
        raise TypeError(f"{fn_name}: an AOT-compiled function cannot close over traced values")
    graph = optimize(ir.verify(graph))
    wrt = [names[i] for i in ((argnums,) if isinstance(argnums, int) else argnums or ())]
    if kind == "forward":
        output_names = _leaf_names(tree, "out")
    elif kind == "grad":
        output_names = [f"grad_{n}" for n in wrt]
    else:
        output_names = _leaf_names(tree.children[0], "value") + [f"grad_{n}" for n in wrt]
    unique = []
    for name in map(_identifier, output_names):  # a C prototype needs names distinct from the arguments'
        while name in names or name in unique:
            name += "_"
        unique.append(name)
    return EntryGraph(kind, graph, tree, unique)


def _leaf_names(tree, base) -> list:
    return pytree.leaf_names([pytree.unflatten(tree, range(tree.num_leaves))], [base])


def _entry_metadata(entry: EntryGraph, symbol: str, errors=()) -> dict:
    outputs = [{"name": n, "shape": list(v.shape), "dtype": str(v.dtype)}
               for n, v in zip(entry.output_names, entry.graph.outputs)]
    return {"symbol": symbol, "outputs": outputs, "tree": tree_to_json(entry.tree), "errors": list(errors)}


def _identifier(name: str) -> str:
    """An ASCII identifier (C and Python) made from `name`: the artifact's prefix, its output names."""
    name = re.sub(r"[^0-9A-Za-z_]", "_", name)
    return name if name and not name[0].isdigit() else "_" + name


def _artifact_path(out, fn_name: str) -> str:
    """`out` as the user means it, absolute and without suffix: a directory (written with a trailing
    separator, or one that exists) holds an artifact named after the function, and the suffix of one
    of the artifact's files is dropped (build/mlp.so -> build/mlp)."""
    out = os.fspath(out)
    if not out:
        raise ValueError("out: empty path; give DIR/NAME (the artifact's files are NAME.json, ...) or DIR/")
    if out.endswith(("/", os.sep)) or os.path.isdir(out):
        out = os.path.join(out, fn_name)
    return os.path.abspath(artifact_base(out))


def _write_file(path: str, data: bytes) -> None:
    """Write through a temporary file and rename, so a reader never sees half a file. The file is created
    with mode 0666 less the umask, as a compiler creates its outputs: every file of an artifact gets the
    same permissions, so an artifact built for others can be read (and loaded) by them."""
    temporary = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.{secrets.token_hex(8)}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


# ----------------------------------------------------------------------------- LLVM: .so + .h

def _write_llvm(base, prefix, entries, metadata, cpu) -> list:
    from symgrad.codegen.llvm.shared_library import SharedLibrary

    library = SharedLibrary(prefix, cpu)
    kernels = [library.add_kernel(entry.graph, f"{prefix}_{entry.kind}") for entry in entries]
    for entry, kernel in zip(entries, kernels):
        metadata["entries"][entry.kind] = _entry_metadata(entry, f"{prefix}_{entry.kind}", library.errors)
        structure = output_structure(entry.tree)
        library.add_python_entry(kernel, entry.graph, f"{prefix}_{entry.kind}_python",
                                 structure if structure is not None else tuple(range(len(entry.graph.outputs))))
        metadata["entries"][entry.kind]["python"] = {"symbol": f"{prefix}_{entry.kind}_python",
                                                      "returns": "result" if structure is not None else "flat"}
    metadata["python_runtime"] = {"table": library.runtime_table.name, "symbols": list(library.runtime_symbols)}
    metadata["blas_slots"] = library.blas_slots()
    metadata["lapack_slots"] = library.lapack_slots()
    metadata["library"] = os.path.basename(base) + ".so"
    metadata["target"] = library.target()
    library.embed_string(metadata_symbol(metadata), metadata_text(metadata))
    _write_file(base + ".so", library.link(os.path.basename(base) + ".so"))
    header = base + ".h"
    _write_file(header, c_header(metadata).encode())
    return [base + ".so", header]


def c_header(metadata: dict) -> str:
    """The C header declaring the library's entry points, with shapes, dtypes and error texts."""
    prefix = metadata["prefix"]
    guard = prefix.upper()
    own_macros = {f"{guard}_H", f"{guard}_SYMGRAD_VERSION", f"{guard}_FORMAT_VERSION"}
    arguments = c_names([a["name"] for a in metadata["arguments"]], own_macros)
    params = ", ".join(a["name"] for a in metadata["arguments"])
    renamed = [f"{a['name']} -> {c}" for a, c in zip(metadata["arguments"], arguments) if a["name"] != c]
    lines = [
        f"/* {prefix}.h: generated by symgrad {metadata['symgrad_version']} from {metadata['source']}; do not edit.",
        f" * {metadata['function']}({params}), built for {metadata['target']['triple']} ("
        f"{_cpu_text(metadata['target'])}). Link with the library: cc main.c {prefix}.so -lm",
        " *",
        " * Every array is a C-contiguous (row-major) buffer of exactly the shape shown, aligned for its",
        " * element type; outputs are written, never read, and must not overlap inputs.",
        " * Entry points return 0, or an error number k > 0 (text: " + prefix + "_error_message(k)).",
        " * Reentrant and thread-safe: each call computes in a workspace of its own (a few KiB at most on the",
        " * caller's stack, a larger one malloc'd for the call: a failed malloc returns an \"out of memory\"",
        " * error), so any entry point may be called from several threads at once. Set the BLAS pointers",
        " * below before the first call (the BLAS ones if at all). A call starts no threads: it computes on its caller's.",
        *([" *", " * Parameter names C cannot take are renamed (" + C_NAME_RULE + "): " + ", ".join(renamed) + "."]
          if renamed else []),
        " */",
    ]
    lines = [_c_comment_text(line) for line in lines] + [
        f"#ifndef {guard}_H", f"#define {guard}_H", "", "#include <stdint.h>", "",
        f"#define {guard}_SYMGRAD_VERSION {_c_string(metadata['symgrad_version'])}",
        f"#define {guard}_FORMAT_VERSION {int(metadata['format_version'])}", "",
        "#ifdef __cplusplus", 'extern "C" {', "#endif", "",
    ]
    for kind in ENTRY_KINDS:
        entry = metadata["entries"].get(kind)
        if entry is None:
            continue
        outputs = c_names([o["name"] for o in entry["outputs"]], own_macros | set(arguments))
        rows = [(f"const {_C_TYPES[np.dtype(a['dtype'])]} *{c}", a) for a, c in zip(metadata["arguments"], arguments)]
        rows += [(f"{_C_TYPES[np.dtype(o['dtype'])]} *{c}", o) for o, c in zip(entry["outputs"], outputs)]
        width = max(len(text) for text, _ in rows) + 1
        lines.append(_c_comment_text(f"/* {kind}: {_entry_summary(metadata, kind)} */"))
        lines.append(f"int32_t {entry['symbol']}(")
        for index, (text, spec) in enumerate(rows):
            end = "," if index < len(rows) - 1 else ");"
            lines.append(f"    {(text + end).ljust(width + 1)} /* {_type_text(spec)} */")
        lines.append("")
    for name, symbol in sorted(metadata.get("blas_slots", {}).items()):
        lines.append(f"/* Optional: set to a CBLAS {name} taking 64-bit integers (e.g. OpenBLAS's ILP64")
        lines.append(" * cblas_" + name + "64_) for BLAS-speed matrix products; left NULL, symgrad's own loops run. */")
        lines.append(f"extern void *{symbol};")
        lines.append("")
    for name, symbol in sorted(metadata.get("lapack_slots", {}).items()):
        lines.append(f"/* Required: set to LAPACK's {name} (the Fortran interface with 64-bit integers, e.g. OpenBLAS's")
        lines.append(f" * ILP64 {name}_64_); left NULL, an entry point calling it returns an error. */")
        lines.append(f"extern void *{symbol};")
        lines.append("")
    lines.append(f"/* The text of an error number returned by an entry point of {prefix}. */")
    lines.append(f"static inline const char *{prefix}_error_message(int32_t status) {{")
    lines.append("    switch (status) {")
    lines.append('    case 0: return "ok";')
    for number, message in enumerate(metadata["entries"]["forward"]["errors"], start=1):
        lines.append(f"    case {number}: return {_c_string(message)};")
    lines += ['    default: return "unknown error";', "    }", "}", "",
              "#ifdef __cplusplus", "}", "#endif", f"#endif /* {guard}_H */", ""]
    return "\n".join(lines)


# C and C++ keywords (C23 and C++20 included): a parameter cannot take these names.
_C_KEYWORDS = frozenset("""
    auto break case char const continue default do double else enum extern float for goto if inline int long
    register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while
    alignas alignof bool constexpr false nullptr static_assert thread_local true typeof typeof_unqual
    and and_eq asm bitand bitor catch char8_t char16_t char32_t class compl concept consteval constinit const_cast
    co_await co_return co_yield decltype delete dynamic_cast explicit export friend mutable namespace new noexcept
    not not_eq operator or or_eq private protected public reinterpret_cast requires static_cast template this
    throw try typeid typename using virtual wchar_t xor xor_eq
    NULL EOF errno assert stdin stdout stderr offsetof
""".split())
# Macros <stdint.h> defines (INT32_MAX, UINT64_C, SIZE_MAX, ...), which would replace a parameter's name.
_STDINT_MACRO = re.compile(r"(U?INT|PTRDIFF|SIG_ATOMIC|SIZE|WCHAR|WINT)[A-Z0-9_]*_(MIN|MAX|C)")
C_NAME_RULE = ("characters other than ASCII letters, digits and _ become _; a name starting with a digit or _ "
               "gets arg_ in front; a C or C++ keyword, a name ending in _t, or a macro of <stdint.h>, of the "
               "header or a common one (NULL, errno, ...) gets _ appended, as does a name equal to an earlier one")


def c_names(names: list, reserved: set = frozenset()) -> list:
    """Python names -> distinct C parameter names, by C_NAME_RULE; names C can take are kept."""
    result = []
    for name in names:
        name = re.sub(r"[^0-9A-Za-z_]", "_", name)
        if not name or name[0].isdigit() or name[0] == "_":
            name = "arg_" + name
        if name in _C_KEYWORDS or name.endswith("_t") or _STDINT_MACRO.fullmatch(name) or name in reserved:
            name += "_"
        while name in result or name in reserved:
            name += "_"
        result.append(name)
    return result


def _c_string(text: str) -> str:
    """A C string literal of `text` (UTF-8): printable ASCII as is, every other byte, quote, backslash
    and ? (trigraphs) as a three-digit octal escape."""
    data = text.encode("utf-8", "backslashreplace")
    return '"' + "".join(chr(b) if 0x20 <= b < 0x7F and chr(b) not in '"\\?' else f"\\{b:03o}" for b in data) + '"'


def _c_comment_text(line: str) -> str:
    """One line of a /* */ comment holding `line`'s text: non-printable and non-ASCII characters escaped,
    and no */, /* or ?? (a trigraph) left inside, so no text can end the comment or splice a line."""
    opening, closing = line.startswith("/*"), line.endswith("*/") and len(line) > 2
    body = line[2 if opening else 0:len(line) - 2 if closing else len(line)]
    body = "".join(c if " " <= c <= "~" else c.encode("unicode_escape").decode("ascii") for c in body)
    while "*/" in body or "/*" in body or "??" in body:
        body = body.replace("*/", "* /").replace("/*", "/ *").replace("??", "? ?")
    if closing and body.endswith("/"):
        body += " "
    return ("/*" if opening else "") + body + ("*/" if closing else "")


def _cpu_text(target: dict) -> str:
    needs = f"; needs {' '.join(target['requires'])}" if target["requires"] else ""
    return f"CPU {target['cpu']}{needs}"


def _type_text(spec: dict) -> str:
    return f"{spec['dtype']}[{','.join(map(str, spec['shape']))}]"


def _entry_summary(metadata: dict, kind: str) -> str:
    entry = metadata["entries"][kind]
    outputs = ", ".join(o["name"] for o in entry["outputs"])
    what = {"forward": metadata["function"], "grad": f"gradient of {metadata['function']}",
            "value_and_grad": f"value and gradient of {metadata['function']}"}[kind]
    return f"{what} -> ({outputs})"


# ----------------------------------------------------------------------------- NumPy: standalone .py

def _write_numpy(base, entries, metadata) -> list:
    from symgrad.codegen import numpy_backend

    helpers, sections, data = [], [], {}
    for entry in entries:
        executable = numpy_backend.lower(entry.graph)
        source = executable.source.removeprefix("import math\nimport numpy as np\n\n")
        for text in numpy_backend.HELPERS.values():
            if text in source:
                source = source.replace(text, "", 1)
                if text not in helpers:
                    helpers.append(text)
        sections.append(_numpy_section(entry, executable, source.strip("\n"), data))
        metadata["entries"][entry.kind] = _entry_metadata(entry, f"_{entry.kind}")
    metadata["library"] = os.path.basename(base) + ".py"
    files = [base + ".py"]
    imports = ["import math", "import numpy as np"]
    if data:
        files.append(base + ".npz")
        archive = io.BytesIO()
        np.savez(archive, **data)
        _write_file(files[1], archive.getvalue())
        metadata["data"] = {"file": os.path.basename(files[1]), "sha256": file_sha256(files[1])}
        imports = ["import math", "import os", "", "import numpy as np", "",
                   f"_DATA = np.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "
                   f"{os.path.basename(base) + '.npz'!r}))"]
    needs_scipy = numpy_backend.HELPERS["_special"] in helpers  # an op evaluated by scipy.special
    _write_file(files[0], "\n".join([_module_docstring(metadata, entries, needs_scipy), *imports, "", *helpers,
                                     *sections]).encode())
    return files


def _numpy_section(entry: EntryGraph, executable, source: str, data: dict) -> str:
    """One entry's generated code, its function named _<kind> and every other module-level name
    (constants, loop bodies, branches) prefixed: the entries share the module, and each numbers its
    own `_step_0`, so an unprefixed later one would replace an earlier entry's loop body."""
    kind = entry.kind
    namespace, parameters = executable._fn.__globals__, executable.parameters
    renames = {executable.function_name: f"_{kind}"}
    lines = []
    for line in source.splitlines():
        defined = re.match(r"def (\w+)\(|(\w+) = ", line)
        passed = re.match(r"# (\w+): .* \(passed in by the loader\)$", line)
        if defined and (defined.group(1) or defined.group(2)) != executable.function_name:
            name = defined.group(1) or defined.group(2)
            renames[name] = f"_{kind}_{name}"
        elif passed:
            array = namespace[passed.group(1)]
            same = [key for key, known in data.items() if known.dtype == array.dtype and np.array_equal(known, array)]
            renames[passed.group(1)] = same[0] if same else f"_{kind}_{passed.group(1)}"
            if same:  # an earlier entry's constant: stored once
                continue
            data[renames[passed.group(1)]] = array
            line = f'{renames[passed.group(1)]} = _DATA["{renames[passed.group(1)]}"]'
        lines.append(line)
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, renames)) + r")\b")
    body = pattern.sub(lambda m: renames[m.group(1)], "\n".join(lines))
    params = ", ".join(parameters)
    outputs = ", ".join(entry.output_names)
    returns = _tree_text(entry.tree, iter(entry.output_names))
    public = [f"def {kind}({params}):",
              "    " + _python_docstring(f"{_KIND_TEXT[kind]}: returns {returns}."),
              f"    {outputs}{',' if len(entry.output_names) == 1 else ''} = _{kind}({params})",
              f"    return {returns}"]
    return f"# ---- {kind}\n{body}\n\n\n" + "\n".join(public) + "\n\n"


_KIND_TEXT = {"forward": "The function", "grad": "Its gradient", "value_and_grad": "Its value and gradient"}


def _tree_text(tree: pytree.TreeDef, names) -> str:
    """Python source rebuilding `tree` from variables named by `names` (in leaf order)."""
    if tree.kind == "leaf":
        return next(names)
    if tree.kind == "none":
        return "None"
    items = [_tree_text(child, names) for child in tree.children]
    if tree.kind == "dict":
        return "{" + ", ".join(f"{_python_literal(key)}: {item}" for key, item in zip(tree.keys, items)) + "}"
    if tree.kind == "list":
        return "[" + ", ".join(items) + "]"
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def _module_docstring(metadata: dict, entries, needs_scipy: bool = False) -> str:
    args = ", ".join(f"{a['name']}: {_type_text(a)}" for a in metadata["arguments"])
    params = ", ".join(a["name"] for a in metadata["arguments"])
    lines = [f'{metadata["function"]}, compiled ahead of time by symgrad {metadata["symgrad_version"]} from '
             f"{metadata['source']} (NumPy backend).", "", f"Arguments: {args}.",
             f"{'NumPy and SciPy are' if needs_scipy else 'Only NumPy is'} needed. Shapes and dtypes are not checked "
             "here (symgrad.load checks them).", ""]
    lines += [f"    {e.kind}({params}) -> {_tree_text(e.tree, iter(e.output_names))}" for e in entries]
    return _python_docstring("\n".join(lines) + "\n")


def _python_docstring(text: str) -> str:
    """A triple-quoted literal of `text` that no text can end early: backslashes and quotes escaped, and every
    character Python does not print but the newline (a surrogate of an undecodable file name included)."""
    def escape(c: str) -> str:
        if c in "\\\"":
            return "\\" + c
        return c if c == "\n" or c.isprintable() else c.encode("unicode_escape").decode("ascii")
    return '"""' + "".join(map(escape, text)) + '"""'


def _python_literal(key) -> str:
    """repr(key) for a dict key of the output, when that is a literal giving the key back."""
    text = repr(key)
    try:
        if type(ast.literal_eval(text)) is type(key) and ast.literal_eval(text) == key:
            return text
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        pass
    raise TypeError(f"output dict key {text[:40]}: a --backend numpy artifact writes only keys that are Python "
                    "literals (str, int, float, bool, None)")
