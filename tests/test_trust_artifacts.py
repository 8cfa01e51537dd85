"""Issue 15: loaded artifacts are checked before their code runs, generated code cannot be injected
into, edge shapes and indices raise, and the command line writes what the user means."""
import hashlib
import json
import os
import shutil
import subprocess

import numpy as np
import pytest

import symgrad as sg
from symgrad import elf
from symgrad.loader import ArtifactError

CC = shutil.which(os.environ.get("CC", "cc").split()[0])
needs_cc = pytest.mark.skipif(CC is None, reason="building a shared library needs a C compiler")


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    """Compiling in these tests never touches the user's disk cache."""
    monkeypatch.setenv("SYMGRAD_CACHE_DIR", str(tmp_path / "cache"))


def square_sum(x):
    return sg.sum(x * x)


def build(directory, name="sq", backend="llvm", fn=square_sum, args=(np.ones(3),)):
    out = os.path.join(directory, name)
    sg.aot.compile(fn, args, grad=0, out=out, backend=backend)
    return out


def edit_metadata(base, **fields):
    with open(base + ".json") as f:
        metadata = json.load(f)
    metadata.update(fields)
    with open(base + ".json", "w") as f:
        json.dump(metadata, f)
    return metadata


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


# ----------------------------------------------------------------------------- item 2: loading

def evil_library(directory, marker, symbol=None, text=""):
    """A shared library whose constructor creates `marker`: running any of its code shows."""
    source = os.path.join(directory, "evil.c")
    exported = f'const char {symbol}[] = {json.dumps(text)};\n' if symbol else ""
    with open(source, "w") as f:
        f.write('#include <stdio.h>\n__attribute__((constructor)) static void run(void) {\n'
                f'    FILE *f = fopen({json.dumps(marker)}, "w"); if (f) fclose(f);\n}}\n' + exported)
    library = os.path.join(directory, "evil.so")
    subprocess.run([CC, "-shared", "-fPIC", "-o", library, source], check=True, capture_output=True, timeout=120)
    return library


@needs_cc
def test_a_library_whose_embedded_metadata_differs_is_refused_before_its_constructors_run(tmp_path):
    base = build(tmp_path)
    marker = str(tmp_path / "ran")
    with open(base + ".json") as f:
        metadata = json.load(f)
    from symgrad.loader import metadata_symbol
    for text in ("not the metadata", None):  # other metadata, or no metadata symbol at all
        library = evil_library(tmp_path, marker, metadata_symbol(metadata) if text else None, text or "")
        os.replace(library, base + ".so")
        edit_metadata(base, sha256=sha256(base + ".so"))  # the hash passes: the library itself is checked
        with pytest.raises(ArtifactError, match="does not describe this library|not a library symgrad wrote"):
            sg.load(base)
        assert not os.path.exists(marker)


@needs_cc
@pytest.mark.parametrize("name", ["../evil.so", "ABSOLUTE", "sub/evil.so", "..", ".", "", 7, None])
def test_the_library_must_be_a_file_beside_the_metadata(tmp_path, name):
    base = build(tmp_path / "art")
    marker = str(tmp_path / "ran")
    library = evil_library(tmp_path, marker)  # evil.so in the parent directory, with its hash given
    os.makedirs(tmp_path / "art" / "sub", exist_ok=True)
    shutil.copy(library, tmp_path / "art" / "sub" / "evil.so")
    name = library if name == "ABSOLUTE" else name
    edit_metadata(base, library=name, sha256=sha256(library))
    with pytest.raises(ArtifactError, match="not a file beside it|malformed artifact metadata"):
        sg.load(base)
    assert not os.path.exists(marker)


@needs_cc
def test_the_library_must_be_a_regular_file(tmp_path):
    base = build(tmp_path)
    marker = str(tmp_path / "ran")
    library = evil_library(tmp_path, marker)
    os.remove(base + ".so")
    os.symlink(library, base + ".so")
    edit_metadata(base, sha256=sha256(library))
    with pytest.raises(ArtifactError, match="sq.so: not a regular file"):
        sg.load(base)
    os.remove(base + ".so")
    os.mkdir(base + ".so")
    with pytest.raises(ArtifactError, match="sq.so: not a regular file"):
        sg.load(base)
    assert not os.path.exists(marker)


def test_a_numpy_module_outside_the_directory_is_never_imported(tmp_path):
    base = build(tmp_path / "art", backend="numpy")
    marker = tmp_path / "ran"
    evil = tmp_path / "evil.py"
    evil.write_text(f"open({str(marker)!r}, 'w').close()\n")
    edit_metadata(base, library="../evil.py", sha256=sha256(evil))
    with pytest.raises(ArtifactError, match="'../evil.py', not a file beside it"):
        sg.load(base)
    edit_metadata(base, library="sq.py", data={"file": "../evil.py", "sha256": sha256(evil)},
                  sha256=sha256(base + ".py"))
    with pytest.raises(ArtifactError, match="'../evil.py', not a file beside it"):
        sg.load(base)
    assert not marker.exists()


@pytest.mark.parametrize("fields, message", [
    ({"backend": "cuda"}, "malformed artifact metadata"),
    ({"library": ["sq.py"]}, "fields library"),
    ({"sha256": None}, "fields sha256"),
    ({"arguments": "x"}, "fields arguments"),
    ({"data": "sq.npz"}, "malformed artifact metadata"),
])
def test_malformed_metadata_is_an_artifact_error(tmp_path, fields, message):
    base = build(tmp_path, backend="numpy")
    edit_metadata(base, **fields)
    with pytest.raises(ArtifactError, match=message):
        sg.load(base)


@needs_cc
def test_a_damaged_or_foreign_library_is_refused_from_its_bytes(tmp_path):
    """Every truncation, a wrong machine, and garbage with a matching hash: an ArtifactError, never
    a crash, and nothing loaded."""
    base = build(tmp_path)
    with open(base + ".so", "rb") as f:
        good = f.read()
    rng = np.random.default_rng(0)
    damaged = [good[:n] for n in (0, 3, 16, 63, 64, 200, len(good) // 2, len(good) - 1)]
    damaged.append(bytes(rng.integers(0, 256, 4096, dtype=np.uint8)))
    damaged.append(good[:18] + (183).to_bytes(2, "little") + good[20:])  # an AArch64 library on x86-64
    for data in damaged:
        with open(base + ".so", "wb") as f:
            f.write(data)
        edit_metadata(base, sha256=hashlib.sha256(data).hexdigest())
        with pytest.raises(ArtifactError, match="not a library symgrad wrote|built for another kind of machine"):
            sg.load(base)


def test_the_elf_reader_checks_every_offset():
    with pytest.raises(elf.ELFError, match="not an ELF64"):
        elf.exported_bytes(b"\x7fELF\x01\x01" + bytes(58), "x")
    header = bytearray(b"\x7fELF\x02\x01" + bytes(58))
    header[40:48] = (10 ** 12).to_bytes(8, "little")  # section headers far past the end
    header[58:60], header[60:62] = (64).to_bytes(2, "little"), (3).to_bytes(2, "little")
    with pytest.raises(elf.ELFError, match="truncated"):
        elf.exported_bytes(bytes(header), "x")


@needs_cc
def test_a_library_rewritten_at_a_loaded_path_loads_anew_in_the_same_process(tmp_path):
    """dlopen hands back the library already loaded from a path (recompiling in a notebook): the loader
    then loads the checked bytes of the new one from a private copy."""
    base = build(tmp_path)
    first = sg.load(base)
    assert first(np.arange(3.0)) == 5.0
    build(tmp_path, fn=lambda x: sg.sum(x * x * x))
    second = sg.load(base)
    assert second(np.arange(3.0)) == 9.0 and second.grad(np.arange(3.0)).tolist() == [0.0, 3.0, 12.0]
    assert first(np.arange(3.0)) == 5.0  # the first keeps its own code
    assert second.fast is not None  # the copy's runtime table is filled like any library's


# ----------------------------------------------------------------------------- item 3: generated code

# Directories whose path would run code if pasted into a docstring ("""), end or open a C comment
# (*/*), splice a line (the trigraph ??/), and hold a backslash and a non-ASCII letter.
NASTY_DIR = os.path.join('p"""+__import__("os").system("touch PWNED")+"""*', "* ??", "\\ \u03bb")


def nasty_source(tmp_path):
    directory = tmp_path / NASTY_DIR
    directory.mkdir(parents=True)
    source = directory / "model.py"
    source.write_text("import symgrad as sg\n\n\ndef loss(x, y):\n    return sg.sum(sg.sin(x) * y)\n")
    return str(source)


def test_a_numpy_module_from_a_path_holding_triple_quotes_imports_cleanly(tmp_path, monkeypatch):
    from symgrad import cli
    monkeypatch.chdir(tmp_path)
    source = nasty_source(tmp_path)
    out = tmp_path / NASTY_DIR / "art"
    assert cli.main(["compile", source + ":loss", "--arg", "x=f64[3]", "--arg", "y=f64[3]", "--grad", "x",
                     "--backend", "numpy", "--out", str(out)]) == 0
    import importlib.util
    spec = importlib.util.spec_from_file_location("nasty_artifact", str(out) + ".py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # imported from the path holding the quotes
    assert not (tmp_path / "PWNED").exists()
    assert f"from {source}:loss (NumPy backend)" in module.__doc__
    x, y = np.linspace(0, 1, 3), np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(module.forward(x, y), np.sum(np.sin(x) * y))
    np.testing.assert_allclose(module.grad(x, y), np.cos(x) * y)
    np.testing.assert_allclose(sg.load(out).grad(x, y), np.cos(x) * y)


def c_syntax_check(header, tmp_path, compiler, language, std):
    """Compile a file including `header` after common system headers, warnings as errors."""
    program = tmp_path / f"use.{language}"
    program.write_text("#include <errno.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <assert.h>\n"
                       f'#include "{os.path.basename(header)}"\nint main(void) {{ return 0; }}\n')
    result = subprocess.run([compiler, "-fsyntax-only", "-Wall", "-Wextra", "-Werror", "-pedantic", f"-std={std}",
                             "-I", os.path.dirname(header), str(program)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


# Python parameter names C cannot take: keywords, <stdint.h> types and macros, common macros, non-ASCII,
# the header's own guard macro.
C_HOSTILE = ["int", "double", "char", "signed", "new", "int32_t", "idx", "INT32_MAX", "errno", "_Bool", "\u03bb",
             "NULL", "SQ_H", "int_"]


def hostile_function():
    namespace = {"sg": sg}
    exec(f"def hostile({', '.join(C_HOSTILE)}):\n"
         "    return (sg.sum(int * double) + sg.sum(signed[idx]) + sg.sum(INT32_MAX * \u03bb) + int32_t\n"
         "            + sg.sum(sg.where(_Bool, char, new)) + sg.sum(errno + NULL + SQ_H + int_))\n", namespace)
    return namespace["hostile"]


def hostile_arguments():
    args = {name: np.full(3, k + 1.0) for k, name in enumerate(C_HOSTILE)}
    args.update(idx=np.array([0, 2], np.int32), int32_t=np.float64(0.5), _Bool=np.array([True, False, True]))
    return list(args.values())


@needs_cc
def test_a_header_compiles_whatever_the_names_and_paths(tmp_path):
    directory = tmp_path / NASTY_DIR
    directory.mkdir(parents=True)
    out = str(directory / "sq")
    artifact = sg.aot.compile(hostile_function(), hostile_arguments(), grad=["int", "double"], value_and_grad=True,
                              out=out, source=str(directory / "model.py") + ":hostile")
    header = out + ".h"
    with open(header, encoding="ascii") as f:  # ASCII: non-ASCII names and paths are escaped
        text = f.read()
    for declared in ["const double *int_,", "const double *int32_t_,", "const int32_t *idx,", "*INT32_MAX_,",
                     "const uint8_t *arg__Bool,", "*arg__,", "*NULL_,", "*SQ_H_,", "*int__,", "double *grad_int,"]:
        assert declared in text
    assert "Parameter names C cannot take are renamed" in text and "int -> int_," in text
    c_syntax_check(header, tmp_path, CC, "c", "c99")  # c99: trigraphs on
    c_syntax_check(header, tmp_path, CC, "c", "c11")
    if shutil.which("c++"):
        c_syntax_check(header, tmp_path, shutil.which("c++"), "cpp", "c++17")
    assert [a["name"] for a in artifact.metadata["arguments"]] == C_HOSTILE  # Python keeps the Python names
    args = hostile_arguments()
    value, (d_int, d_double) = sg.load(out).value_and_grad(*args)
    expected = (np.sum(args[0] * args[1]) + np.sum(args[3][[0, 2]]) + np.sum(args[7] * args[10]) + 0.5
                + np.sum(np.where(args[9], args[2], args[4])) + np.sum(args[8] + args[11] + args[12] + args[13]))
    np.testing.assert_allclose(value, expected, rtol=1e-12)
    np.testing.assert_allclose(d_int, args[1])
    np.testing.assert_allclose(d_double, args[0])


def test_error_texts_and_versions_are_c_string_literals():
    from symgrad.aot import _c_comment_text, _c_string
    assert _c_string('a "b" \\ ??/ \u03bb\n') == '"a \\042b\\042 \\134 \\077\\077/ \\316\\273\\012"'
    for text in ["*/", "/*/", "a*//*b", "??/", "x/", "\u2028\udcff"]:
        body = _c_comment_text("/* " + text + "*/")[2:-2]
        assert "*/" not in body and "/*" not in body and "??" not in body and body.isascii() and not body.endswith("/")


def test_numpy_backend_names_are_python_identifiers_that_never_collide():
    """Dict keys that differ only in punctuation, parameters named like np or a builtin, and a function
    named np: the generated source compiles and computes what NumPy computes."""
    def np_(np, sum, _x, p):
        return sg.sum(np * sum + _x) + sg.sum(p["a b"] * 2 + p["a_b"] + p["a.b"])
    np_.__name__ = "np"
    arrays = [np.full(2, 1.5), np.full(2, 3.0), np.ones(2), {"a b": np.ones(2), "a_b": np.zeros(2), "a.b": np.ones(2)}]
    expected = sg.compile(sg.value_and_grad(np_, argnums=(0, 3)), backend="llvm")(*arrays)
    f = sg.compile(sg.value_and_grad(np_, argnums=(0, 3)), backend="numpy")
    got = f(*arrays)
    np.testing.assert_allclose(got[0], expected[0])
    np.testing.assert_allclose(got[1][0], expected[1][0])
    for key in arrays[3]:
        np.testing.assert_allclose(got[1][1][key], expected[1][1][key])
    assert "def np_value_and_grad(np_, sum_, a_x, p_a_b, p_a_b_, p_a_b__)" in f.lower(*arrays).source


def test_output_keys_reach_a_numpy_module_only_as_literals(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # where the injected command would write
    def f(x):
        return {'k"""; import os; os.system("touch PWNED"); """': x * 2.0, "plain": x}
    out = str(tmp_path / "keys")
    sg.aot.compile(f, (np.ones(2),), out=out, backend="numpy")
    result = sg.load(out)(np.arange(2.0))
    assert sorted(result) == sorted(f(0)) and result["plain"].tolist() == [0.0, 1.0]
    assert not (tmp_path / "PWNED").exists()

    class Key(str):
        pass
    with pytest.raises(TypeError, match="keys that are Python literals"):
        sg.aot.compile(lambda x: {Key("k"): x}, (np.ones(2),), out=out, backend="numpy")


def test_an_llvm_module_name_cannot_break_the_ir_text():
    from symgrad import ir
    from symgrad.codegen.llvm import backend
    from symgrad.tracing import trace_flat
    graph, _, _ = trace_flat(lambda x: sg.sum(sg.sin(x)), [np.ones(3)])
    graph = ir.Graph(graph.inputs, graph.nodes, graph.outputs, 'f"\n!0 = !{}\nbad')
    executable = backend.lower(graph)
    assert executable.llvm_ir.startswith('; ModuleID = "f___0_______bad"\n')
    np.testing.assert_allclose(executable(np.ones(3))[0], 3 * np.sin(1.0))


# ----------------------------------------------------------------------------- item 7: the command line

MLP = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples", "aot", "mlp.py")
MLP_ARGS = ["--arg", "w1=f32[4,8]", "--arg", "b1=f32[8]", "--arg", "w2=f32[8,3]", "--arg", "b2=f32[3]",
            "--arg", "x=f32[5,4]", "--arg", "y=f32[5,3]"]


@pytest.mark.parametrize("backend", [pytest.param("llvm", marks=needs_cc), "numpy"])
@pytest.mark.parametrize("out, written", [
    ("build/", "build/loss"),  # a directory: the artifact is named after the function
    ("existing", "existing/loss"),  # an existing directory, as cp and mv read it
    ("build/mlp.so", "build/mlp"),  # a suffix of one of the artifact's files is dropped
    ("build/mlp.json", "build/mlp"),
    ("build/mlp", "build/mlp"),
])
def test_out_writes_where_the_user_means(tmp_path, monkeypatch, capsys, backend, out, written):
    from symgrad import cli
    monkeypatch.chdir(tmp_path)
    (tmp_path / "existing").mkdir()
    assert cli.main(["compile", MLP + ":loss", *MLP_ARGS, "--grad", "w1", "--backend", backend, "--out", out]) == 0
    suffixes = [".json", ".so", ".h"] if backend == "llvm" else [".json", ".py"]
    expected = [str(tmp_path / written) + suffix for suffix in suffixes]
    assert capsys.readouterr().out.split() == expected
    files = sorted(str(p) for p in tmp_path.rglob("*") if p.is_file())
    assert files == sorted(expected)  # nothing hidden, nothing doubled (name.so.so)
    loaded = sg.load(tmp_path / written)
    assert loaded.metadata["prefix"] == os.path.basename(written)
    assert loaded.grad is not None


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077])
@pytest.mark.parametrize("backend", [pytest.param("llvm", marks=needs_cc), "numpy"])
def test_the_files_of_an_artifact_have_one_mode_from_the_umask(tmp_path, umask, backend):
    weights = np.linspace(0, 1, 10_000)  # the NumPy artifact ships it in NAME.npz

    def f(x):
        return sg.sum(x * weights)
    old = os.umask(umask)
    try:
        artifact = sg.aot.compile(f, (np.ones(10_000),), grad=0, out=str(tmp_path / "art"), backend=backend)
    finally:
        os.umask(old)
    modes = {os.path.basename(p): os.stat(p).st_mode & 0o7777 for p in artifact.files}
    assert len(modes) == 3  # .json .so .h, or .json .py .npz
    assert set(modes.values()) == {0o666 & ~umask}, modes
    assert sorted(os.listdir(tmp_path)) == sorted(modes)  # no temporary file left
    np.testing.assert_allclose(sg.load(tmp_path / "art").grad(np.ones(10_000)), weights)


# ----------------------------------------------------------------------------- item 6: edges

BACKENDS = ["numpy", "llvm"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(2 ** 32, 2 ** 32, 2), (2 ** 31, 2 ** 31, 0), (2 ** 40, 2 ** 40)])
def test_a_shape_too_large_for_64_bits_is_a_clear_error(backend, dtype, shape):
    """NumPy refuses such an array (zero-length axes aside); native sizes would wrap (a silent 0.0)."""
    def f(x):
        return sg.sum(sg.broadcast_to(x, shape))
    x = np.ones(1, dtype)
    with pytest.raises(ValueError, match=r"broadcast_to: the result's shape .* is too large.*64-bit size"):
        sg.compile(f, backend=backend)(x)
    with pytest.raises(ValueError, match="too large"):
        sg.compile(sg.grad(f), backend=backend)(x)
    with pytest.raises(ValueError, match="too large"):
        f(sg.tensor(x, requires_grad=True))  # eager
    with pytest.raises(ValueError):
        np.broadcast_to(x, shape)  # the same limit as NumPy's


def test_the_limit_is_numpys_byte_count():
    """2**62 bytes trace (nothing is allocated until the program runs); 2**63 do not, as in NumPy."""
    from symgrad.tracing import trace_flat
    graph, _, _ = trace_flat(lambda x: sg.sum(sg.broadcast_to(x, (2 ** 29, 2 ** 30))), [np.ones(1)])
    assert graph.nodes[0].out.shape == (2 ** 29, 2 ** 30)
    with pytest.raises(ValueError, match="too large"):
        trace_flat(lambda x: sg.sum(sg.broadcast_to(x, (2 ** 30, 2 ** 30))), [np.ones(1)])
    with pytest.raises(ValueError):
        np.empty((2 ** 30, 2 ** 30))


EMPTY_GATHERS = {  # the gathered result is empty, the index is not: it is still checked
    "rows": (lambda x, i: x[i], (5, 0), np.array([7])),
    "columns": (lambda x, i: x[:, i], (0, 5), np.array([-6])),
    "take": (lambda x, i: sg.take(x, i, axis=0), (5, 0), np.array([0, 5])),
    "scalar": (lambda x, i: x[i], (5, 0), np.array(7)),
    "two": (lambda x, i: x[i, i], (5, 5, 0), np.array([7])),
}


@pytest.mark.parametrize("case", list(EMPTY_GATHERS))
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_an_out_of_range_index_raises_even_when_the_gather_is_empty(case, backend, dtype):
    f, shape, index = EMPTY_GATHERS[case]
    x = np.ones(shape, dtype)
    with pytest.raises(IndexError):
        np.ones(shape)[index] if case != "columns" else np.ones(shape)[:, index]  # NumPy raises too
    with pytest.raises(IndexError, match="out of bounds"):
        sg.compile(f, backend=backend)(x, index)
    with pytest.raises(IndexError, match="out of bounds"):  # the gradient scatters into an empty array
        sg.compile(sg.grad(lambda x, i: sg.sum(f(x, i))), backend=backend)(x, index)
    with pytest.raises(IndexError, match="out of bounds"):
        f(sg.tensor(x, requires_grad=True), sg.tensor(index))  # eager
    good = np.zeros_like(index)
    assert sg.compile(f, backend=backend)(x, good).size == 0
    assert sg.compile(sg.grad(lambda x, i: sg.sum(f(x, i))), backend=backend)(x, good).shape == shape


@needs_cc
def test_an_artifact_checks_the_indices_of_an_empty_gather(tmp_path):
    out = str(tmp_path / "g")
    sg.aot.compile(lambda x, i: sg.sum(x[i]), (np.ones((5, 0)), np.zeros(1, np.int64)), grad=0, out=out)
    loaded = sg.load(out)
    assert loaded(np.ones((5, 0)), np.array([4])) == 0.0
    for entry in (loaded, loaded.grad):
        with pytest.raises(IndexError, match="out of bounds"):
            entry(np.ones((5, 0)), np.array([5]))


MASKED = np.ma.masked_array([1.0, 2.0, 3.0], mask=[False, True, False])


@pytest.mark.parametrize("call", [
    lambda: sg.compile(lambda x: sg.sum(x * 2))(MASKED),
    lambda: sg.compile(lambda x: sg.sum(x * 2), backend="numpy")(MASKED),
    lambda: sg.grad(lambda x: sg.sum(x * 2))(MASKED),
    lambda: sg.vjp(lambda x: x * 2, np.ones(3))[1](MASKED),
    lambda: sg.compile(lambda d: sg.sum(d["a"]))({"a": MASKED}),
    lambda: sg.compile(lambda x: sg.sum(x * MASKED))(np.ones(3)),  # closed over
    lambda: sg.tensor(MASKED),
    lambda: sg.tensor(np.ones(3)) * MASKED,
    lambda: sg.from_numpy(MASKED),
], ids=["compile", "compile-numpy", "grad", "vjp-cotangent", "pytree-leaf", "closure", "tensor", "tensor-op",
        "from_numpy"])
def test_masked_arrays_are_refused_as_jax_does(call):
    with pytest.raises(TypeError, match="NumPy masked arrays are not supported .*mask would be dropped.*filled"):
        call()


def test_a_loaded_artifact_refuses_a_masked_array(tmp_path):
    out = build(tmp_path, backend="numpy")
    with pytest.raises(TypeError, match="argument x: NumPy masked arrays are not supported"):
        sg.load(out)(MASKED)
