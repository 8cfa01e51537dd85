"""Ahead-of-time compile (symgrad.aot, the `symgrad compile` command) and loading (symgrad.load)."""
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import symgrad as sg
from symgrad import cli
from symgrad.loader import ArtifactError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "examples", "aot")
sys.path.insert(0, EXAMPLE)
import mlp  # noqa: E402  (examples/aot/mlp.py)

MLP_ARGS = ["--arg", "w1=f32[4,8]", "--arg", "b1=f32[8]", "--arg", "w2=f32[8,3]", "--arg", "b2=f32[3]",
            "--arg", "x=f32[5,4]", "--arg", "y=f32[5,3]"]
# Writing a shared library links it with the system C compiler; without one those tests skip.
HAS_LINKER = shutil.which(os.environ.get("CC", "cc").split()[0]) is not None
needs_linker = pytest.mark.skipif(not HAS_LINKER, reason="linking a shared library needs a C compiler")
# A subprocess prelude in which importing these fails, as on a machine without them.
BLOCK = "import sys\nfor name in {names!r}:\n    sys.modules[name] = None\n"


def run_python(code: str, *args, block=("sympy", "llvmlite")) -> str:
    prelude = BLOCK.format(names=list(block))
    result = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code), *args], capture_output=True,
                            text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


def expected_mlp():
    return sg.compile(sg.value_and_grad(mlp.loss, argnums=(0, 1, 2, 3)))(*mlp.fixed_inputs())


@pytest.fixture(scope="module")
def mlp_artifact(tmp_path_factory):
    """The MLP loss compiled by the command line (python -m symgrad), with value and gradient."""
    if not HAS_LINKER:
        pytest.skip("linking a shared library needs a C compiler")
    out = str(tmp_path_factory.mktemp("aot") / "mlp")
    result = subprocess.run([sys.executable, "-m", "symgrad", "compile", os.path.join(EXAMPLE, "mlp.py") + ":loss",
                             *MLP_ARGS, "--grad", "w1,b1,w2,b2", "--value-and-grad", "--out", out],
                            capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [out + ".json", out + ".so", out + ".h"]
    return out


def copy_artifact(base, directory):
    for suffix in (".json", ".so", ".h", ".py", ".npz"):
        if os.path.exists(base + suffix):
            shutil.copy(base + suffix, os.path.join(directory, "mlp" + suffix))
    return os.path.join(directory, "mlp")


# ----------------------------------------------------------------------------- loading

def test_load_in_a_process_without_sympy_or_llvmlite(mlp_artifact):
    stdout = run_python("""
        import json, sys
        import numpy as np
        sys.path.insert(0, sys.argv[2])
        import symgrad, mlp
        step = symgrad.load(sys.argv[1])
        value, grads = step.value_and_grad(*mlp.fixed_inputs())
        loss = step(*mlp.fixed_inputs())
        heavy = [m for m in ("sympy", "llvmlite") if sys.modules.get(m) is not None]
        print(json.dumps({"value": float(value), "loss": float(loss), "grads": [g.tolist() for g in grads],
                          "heavy": heavy, "grad_entry": step.grad is None}))
    """, mlp_artifact, EXAMPLE)
    got = json.loads(stdout)
    value, grads = expected_mlp()
    assert got["heavy"] == [] and got["grad_entry"]
    np.testing.assert_allclose(got["value"], value, rtol=1e-5)
    np.testing.assert_allclose(got["loss"], value, rtol=1e-5)
    for g, e in zip(got["grads"], grads):
        np.testing.assert_allclose(np.array(g, np.float32), e, rtol=1e-4, atol=1e-6)


def test_loaded_function_matches_compiled_and_keeps_the_signature(mlp_artifact):
    loaded = sg.load(mlp_artifact + ".so")  # any of the artifact's file names works
    args = mlp.fixed_inputs()
    value, grads = loaded.value_and_grad(*args)
    expected_value, expected_grads = expected_mlp()
    assert value.dtype == np.float32 and value.shape == ()
    assert isinstance(grads, tuple) and [g.shape for g in grads] == [a.shape for a in args[:4]]
    np.testing.assert_allclose(value, expected_value, rtol=1e-5)
    for g, e in zip(grads, expected_grads):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-6)
    names = ["w1", "b1", "w2", "b2", "x", "y"]
    assert list(__import__("inspect").signature(loaded).parameters) == names
    by_keyword = loaded(**dict(zip(names, args)))
    np.testing.assert_allclose(by_keyword, expected_value, rtol=1e-5)
    fortran = [np.asfortranarray(a) for a in args]  # non-contiguous inputs are copied, not misread
    np.testing.assert_allclose(loaded(*fortran), expected_value, rtol=1e-5)


def test_wrong_signature_names_the_argument(mlp_artifact):
    loaded = sg.load(mlp_artifact)
    args = list(mlp.fixed_inputs())
    with pytest.raises(TypeError, match="'y'"):
        loaded(*args[:5])
    with pytest.raises(TypeError, match="too many"):
        loaded(*args, args[0])
    with pytest.raises(ValueError, match=r"argument w1 must have shape \(4, 8\), got \(8, 4\)"):
        loaded(args[0].T.copy(), *args[1:])
    with pytest.raises(TypeError, match="argument x must be float32.*got float64"):
        loaded.value_and_grad(*args[:4], args[4].astype(np.float64), args[5])
    with pytest.raises(TypeError, match="argument b2 must be float32.*got str"):
        loaded(*args[:3], "b2", *args[4:])


def test_corrupt_or_modified_artifact_refuses_to_load(mlp_artifact, tmp_path):
    base = copy_artifact(mlp_artifact, tmp_path)
    with open(base + ".so", "r+b") as f:
        f.seek(os.path.getsize(base + ".so") // 2)
        byte = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(ArtifactError, match="SHA-256 .* does not match"):
        sg.load(base)
    os.remove(base + ".so")
    with pytest.raises(ArtifactError, match="missing"):
        sg.load(base)
    with pytest.raises(FileNotFoundError, match="no symgrad artifact"):
        sg.load(tmp_path / "nothing")
    with open(base + ".json", "w") as f:
        f.write("{not json")
    with pytest.raises(ArtifactError, match="corrupt artifact metadata"):
        sg.load(base)


def edit_metadata(base, edit):
    with open(base + ".json") as f:
        metadata = json.load(f)
    edit(metadata)
    with open(base + ".json", "w") as f:
        json.dump(metadata, f)


@pytest.mark.parametrize("field, value", [("symgrad_version", "0.0.1"), ("format_version", 99)])
def test_artifact_of_another_version_refuses_to_load(mlp_artifact, tmp_path, field, value):
    base = copy_artifact(mlp_artifact, tmp_path)
    edit_metadata(base, lambda m: m.__setitem__(field, value))
    with pytest.raises(ArtifactError, match="compile it again"):
        sg.load(base)


def test_edited_metadata_does_not_describe_the_library(mlp_artifact, tmp_path):
    base = copy_artifact(mlp_artifact, tmp_path)  # larger shapes would make the code read out of bounds
    edit_metadata(base, lambda m: m["arguments"][0].__setitem__("shape", [40, 8]))
    with pytest.raises(ArtifactError, match="does not describe this library"):
        sg.load(base)


def test_library_for_a_cpu_with_missing_features_refuses_to_load(mlp_artifact, tmp_path):
    base = copy_artifact(mlp_artifact, tmp_path)
    edit_metadata(base, lambda m: m["target"].update(cpu="future", requires=["avx1024"]))
    with pytest.raises(ArtifactError, match="this CPU lacks avx1024"):
        sg.load(base)


@needs_linker
def test_host_cpu_build_loads_here(tmp_path):
    out = str(tmp_path / "host")
    artifact = sg.aot.compile(lambda x: sg.sum(sg.sin(x) ** 2), (np.ones(100),), grad=0, out=out, cpu="host")
    assert artifact.metadata["target"]["cpu"] != "generic"
    loaded = sg.load(out)
    x = np.linspace(-3, 3, 100)
    np.testing.assert_allclose(loaded(x), np.sum(np.sin(x) ** 2), rtol=1e-12)
    np.testing.assert_allclose(loaded.grad(x), np.sin(2 * x), rtol=1e-12, atol=1e-15)


# ----------------------------------------------------------------------------- the C example

@needs_linker
def test_c_program_prints_value_and_gradient(mlp_artifact, tmp_path):
    build = os.path.dirname(mlp_artifact)
    program = str(tmp_path / "mlp_demo")
    subprocess.run(["cc", "-O2", "-I", build, os.path.join(EXAMPLE, "main.c"), mlp_artifact + ".so", "-lm",
                    "-Wl,-rpath," + build, "-o", program], check=True, capture_output=True, timeout=120)
    lines = subprocess.run([program], check=True, capture_output=True, text=True, timeout=60).stdout.splitlines()
    printed = {line.split()[0]: np.array(line.split()[1:], dtype=np.float64) for line in lines}
    value, grads = expected_mlp()
    assert list(printed) == ["value", "grad_w1", "grad_b1", "grad_w2", "grad_b2"]
    np.testing.assert_allclose(printed["value"], [value], rtol=1e-5)
    for name, expected in zip(["grad_w1", "grad_b1", "grad_w2", "grad_b2"], grads):
        np.testing.assert_allclose(printed[name], expected.ravel(), rtol=1e-4, atol=1e-6)


def test_header_declares_entry_points_with_shapes(mlp_artifact):
    with open(mlp_artifact + ".h") as f:
        header = f.read()
    assert '#define MLP_SYMGRAD_VERSION "' + sg.__version__ + '"' in header
    assert re.search(r"int32_t mlp_value_and_grad\(\s+const float \*w1,\s+/\* float32\[4,8\] \*/", header)
    assert re.search(r"float \*grad_b2\);\s+/\* float32\[3\] \*/", header)
    assert "int32_t mlp_grad(" not in header and "several threads at once" in header


# ----------------------------------------------------------------------------- Python API and runtime errors

def gather(x, i):
    return sg.sum(x[i] ** 2)


@needs_linker
def test_index_error_from_native_code_is_raised(tmp_path):
    out = str(tmp_path / "gather")
    sg.aot.compile(gather, (np.ones(5), np.zeros(3, np.int64)), grad="x", out=out)
    loaded = sg.load(out)
    x = np.arange(5.0)
    np.testing.assert_allclose(loaded.grad(x, np.array([0, 4, -1])), [0, 0, 0, 0, 16])
    with pytest.raises(IndexError, match="out of bounds"):
        loaded(x, np.array([0, 5, 1]))
    with open(out + ".h") as f:
        assert 'case 1: return "an integer index is out of bounds for an axis of size 5";' in f.read()


@pytest.mark.parametrize("backend", [pytest.param("llvm", marks=needs_linker), "numpy"])
def test_large_constants_and_output_structure(tmp_path, backend):
    """A constant over 64 KiB is compiled in (llvm) or shipped in NAME.npz (numpy); outputs keep their tree."""
    weights = np.linspace(0.0, 1.0, 10_000)
    x, s = np.linspace(-1, 1, 10_000), 3.0

    def f(x, s):
        return sg.sum(x * weights) * s + s

    artifact = sg.aot.compile(f, (x, s), grad=["x", "s"], out=str(tmp_path / "const"), backend=backend)
    assert (str(tmp_path / "const.npz") in artifact.files) == (backend == "numpy")
    if backend == "numpy":  # the constants file is checked like the module
        np.savez(tmp_path / "const.npz", **{k: v + 1 for k, v in np.load(tmp_path / "const.npz").items()})
        with pytest.raises(ArtifactError, match="const.npz: SHA-256"):
            sg.load(tmp_path / "const")
        artifact = sg.aot.compile(f, (x, s), grad=["x", "s"], out=str(tmp_path / "const"), backend=backend)
    loaded = sg.load(tmp_path / "const")
    np.testing.assert_allclose(loaded(x, s), np.sum(x * weights) * s + s, rtol=1e-12)
    dx, ds = loaded.grad(x, s)
    np.testing.assert_allclose(dx, weights * s, rtol=1e-12)
    np.testing.assert_allclose(ds, np.sum(x * weights) + 1.0, rtol=1e-12)

    def g(x, s):
        return {"total": sg.sum(x) * s, "parts": [x * 2.0, (s,)]}

    sg.aot.compile(g, (x[:3], s), out=str(tmp_path / "tree"), backend=backend)
    result = sg.load(tmp_path / "tree")(x[:3], s)
    assert sorted(result) == ["parts", "total"] and isinstance(result["parts"], list)
    np.testing.assert_allclose(result["parts"][0], x[:3] * 2.0)
    assert result["parts"][1] == (3.0,) and result["total"] == np.sum(x[:3]) * 3.0


@needs_linker
def test_a_function_of_many_arguments_is_called_with_them_in_an_array(tmp_path):
    """Past kernel.MANY_ARGUMENTS arguments the library's Python entry checks them in a loop and calls the kernel
    with them in an array, as the JIT's does (it called a kernel of 141 parameters with each); the C kernel keeps
    its signature."""
    count = 70
    names = [f"a{k}" for k in range(count)]
    scope = {"sg": sg}
    exec(f"def f({', '.join(names)}):\n    return " + " + ".join(f"sg.sum(sg.tanh({n}) * {k + 1}.0)"
                                                      for k, n in enumerate(names)), scope)
    rng = np.random.default_rng(0)
    args = [rng.standard_normal((2, 3) if k % 2 else 4) for k in range(count)]
    args[5], args[6] = np.array(0.5), np.zeros(0)
    out = str(tmp_path / "many")
    sg.aot.compile(scope["f"], tuple(args), grad=["a0", "a5", "a69"], out=out)
    loaded = sg.load(out)
    want = sum(np.sum(np.tanh(a)) * (k + 1) for k, a in enumerate(args))
    np.testing.assert_allclose(loaded(*args), want, rtol=1e-12)
    for got, k in zip(loaded.grad(*args), (0, 5, 69)):
        np.testing.assert_allclose(got, (1 - np.tanh(args[k]) ** 2) * (k + 1), rtol=1e-12)
    with pytest.raises((TypeError, ValueError), match="a3"):
        loaded(*args[:3], np.zeros(5), *args[4:])
    with open(out + ".h") as f:
        assert "int32_t many_grad(" in f.read()  # the C kernel of 73 pointers


def test_python_api_argument_errors(tmp_path):
    with pytest.raises(TypeError, match="called with 1 argument"):
        sg.aot.compile(gather, (np.ones(3),), out=str(tmp_path / "a"))
    with pytest.raises(ValueError, match="grad 'z': no such argument"):
        sg.aot.compile(gather, (np.ones(3), np.zeros(1, np.int64)), grad="z", out=str(tmp_path / "a"))
    with pytest.raises(TypeError, match="argument x: an AOT artifact takes one array per parameter"):
        sg.aot.compile(gather, ((np.ones(3),), np.zeros(1, np.int64)), out=str(tmp_path / "a"))
    with pytest.raises(ValueError, match="unknown backend"):
        sg.aot.compile(gather, (np.ones(3), np.zeros(1, np.int64)), out=str(tmp_path / "a"), backend="cuda")


def test_an_op_scipy_evaluates_is_refused_by_the_llvm_library_and_runs_in_the_numpy_module(tmp_path):
    """A shared library needs only libc and libm, so it cannot call SciPy; the NumPy module imports it."""
    special = pytest.importorskip("scipy.special")
    import sympy
    loggamma = sg.elementwise("aot_loggamma", sympy.loggamma)
    f = lambda x: sg.sum(loggamma(x))  # noqa: E731
    with pytest.raises(sg.UnsupportedOpError, match=r"'aot_loggamma'.* uses scipy.special.gammaln.*libc and libm.*"
                                                    r"backend='numpy'"):
        sg.aot.compile(f, (np.ones(3),), value_and_grad=True, out=str(tmp_path / "lg"))
    assert not os.path.exists(tmp_path / "lg.so")
    artifact = sg.aot.compile(f, (np.ones(3),), value_and_grad=True, out=str(tmp_path / "lg"), backend="numpy")
    with open(artifact.library_path) as source:
        assert "NumPy and SciPy are needed" in source.read()
    x = np.array([0.5, 2.5, 7.0])
    value, grad = sg.load(str(tmp_path / "lg")).value_and_grad(x)
    np.testing.assert_allclose(value, special.gammaln(x).sum(), rtol=1e-13)
    np.testing.assert_allclose(grad, special.psi(x), rtol=1e-13)


# ----------------------------------------------------------------------------- the NumPy backend

def test_numpy_backend_writes_a_standalone_module(tmp_path):
    out = str(tmp_path / "mlp")
    assert cli.main(["compile", os.path.join(EXAMPLE, "mlp.py") + ":loss", *MLP_ARGS, "--grad", "w1,b1,w2,b2",
                     "--backend", "numpy", "--out", out]) == 0
    with open(out + ".py") as f:
        source = f.read()
    assert re.findall(r"^import (\w+)", source, re.M) == ["math", "numpy"]
    inputs = str(tmp_path / "inputs.npz")
    np.savez(inputs, *mlp.fixed_inputs())
    stdout = run_python("""
        import importlib.util, json, sys
        import numpy as np
        spec = importlib.util.spec_from_file_location("mlp_aot", sys.argv[1] + ".py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        inputs = np.load(sys.argv[2])
        args = [inputs[f"arr_{i}"] for i in range(len(inputs.files))]
        print(json.dumps({"loss": float(module.forward(*args)), "grads": [g.tolist() for g in module.grad(*args)]}))
    """, out, inputs, block=("sympy", "llvmlite", "symgrad"))
    got = json.loads(stdout)
    value, grads = expected_mlp()
    np.testing.assert_allclose(got["loss"], value, rtol=1e-5)
    for g, e in zip(got["grads"], grads):
        np.testing.assert_allclose(np.array(g, np.float32), e, rtol=1e-4, atol=1e-6)
    loaded = sg.load(out)  # sg.load takes NumPy artifacts too, with the same checks
    np.testing.assert_allclose(loaded(*mlp.fixed_inputs()), value, rtol=1e-5)
    with pytest.raises(ValueError, match="argument y must have shape"):
        loaded(*mlp.fixed_inputs()[:5], np.ones((5, 4), np.float32))


# ----------------------------------------------------------------------------- command-line errors

@pytest.mark.parametrize("argv, message", [
    (["missing.py:loss"], "missing.py: no such file"),
    (["MLP:loss"], "missing w1, b1, w2, b2, x, y"),
    (["MLP"], "expected FILE.py:FUNCTION"),
    (["MLP:lossy"], "has no function 'lossy' (it defines: fixed_inputs, loss)"),
    (["MLP:loss", "--arg", "w1=f32[4,,8]"], "malformed shape [4,,8]"),
    (["MLP:loss", "--arg", "w1:f32[4,8]"], "malformed; expected NAME=DTYPE[d0,d1,...]"),
    (["MLP:loss", "--arg", "w1=f16[4,8]"], "unknown dtype 'f16'"),
    (["MLP:loss", *MLP_ARGS[:-2]], "does not match loss(w1, b1, w2, b2, x, y): missing y"),
    (["MLP:loss", *MLP_ARGS, "--arg", "z=f32[]"], "unknown z"),
    (["MLP:loss", *MLP_ARGS, "--arg", "x=f32[2]"], "--arg x given twice"),
    (["MLP:loss", "--arg", "w1=f32[4,99999999999999999999]"], "shape [4,99999999999999999999] is too large"),
    (["MLP:loss", "--arg", "w1=f32[4," + "9" * 5000 + "]"], "is too large"),
    (["MLP:loss", "--arg", "w1=f64[4294967296,4294967296]"], "is too large (its bytes must fit in a 64-bit size)"),
])
def test_command_line_errors(tmp_path, capsys, argv, message):
    argv = [a.replace("MLP", os.path.join(EXAMPLE, "mlp.py")) if a.startswith("MLP") else a for a in argv]
    assert cli.main(["compile", *argv, "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("symgrad compile: error: ") and message in err and err.count("\n") == 1


def test_command_line_error_while_compiling(tmp_path, capsys):
    argv = ["compile", os.path.join(EXAMPLE, "mlp.py") + ":loss", *MLP_ARGS, "--grad", "w1,q", "--out",
            str(tmp_path / "x")]
    assert cli.main(argv) == 1
    assert "grad 'q': no such argument; the function takes (w1, b1, w2, b2, x, y)" in capsys.readouterr().err
    assert not os.path.exists(tmp_path / "x.json")


@needs_linker
def test_python_api_example_script(tmp_path):
    result = subprocess.run([sys.executable, os.path.join(EXAMPLE, "mlp.py"), str(tmp_path / "mlp")],
                            capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "gradients match sg.compile" in result.stdout


def test_every_public_name_resolves_lazily():
    assert all(getattr(sg, name) is not None for name in sg.__all__ if name != "newaxis")
    assert sg.newaxis is None  # (NumPy's)
    assert callable(sg.compile) and callable(sg.tensor) and callable(sg.symbolic)  # not their submodules


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
@needs_linker
def test_header_compiles_when_output_names_meet_argument_names(tmp_path):
    def h(out, value, mask):
        return sg.sum(sg.where(mask, out * value, 0.0))
    args = (np.ones(3, np.float32), np.float32(2.0), np.ones(3, bool))
    artifact = sg.aot.compile(h, args, grad=["out", "value"], value_and_grad=True, out=str(tmp_path / "h"))
    names = [o["name"] for o in artifact.metadata["entries"]["value_and_grad"]["outputs"]]
    assert names == ["value_", "grad_out", "grad_value"]
    subprocess.run(["cc", "-fsyntax-only", "-Wall", "-Werror", "-x", "c", str(tmp_path / "h.h")], check=True,
                   timeout=60)
    value, (d_out, d_value) = sg.load(tmp_path / "h").value_and_grad(np.arange(3, dtype=np.float32), 2.0,
                                                                     np.array([True, False, True]))
    assert value == 4.0 and d_out.tolist() == [2.0, 0.0, 2.0] and d_value == 2.0


@needs_linker
def test_calls_from_several_threads_do_not_share_a_workspace(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    def f(a, b):
        return sg.sum((a @ b) ** 2)  # the product is stored in the entry point's static workspace
    n = 200
    sg.aot.compile(f, (np.ones((n, n)), np.ones((n, n))), out=str(tmp_path / "f"), cpu="host")
    loaded = sg.load(tmp_path / "f")
    inputs = [(np.full((n, n), k / n), np.eye(n)) for k in range(1, 5)]
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda k: [loaded(*inputs[k]) for _ in range(10)], range(4)))
    assert all(np.isclose(r, (k + 1) ** 2, rtol=1e-12) for k, rs in enumerate(results) for r in rs)


@needs_linker
def test_loaded_library_multiplies_through_numpys_blas_or_its_own_loops(tmp_path):
    import ctypes

    from symgrad.codegen import runtime
    if not runtime.blas_addresses():
        pytest.skip("no BLAS found next to NumPy")

    def f(a, b):
        return sg.sum(sg.tanh(a @ b))
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((40, 30)), rng.standard_normal((30, 20))
    sg.aot.compile(f, (a, b), grad=("a", "b"), value_and_grad=True, out=str(tmp_path / "f"))
    loaded = sg.load(tmp_path / "f")
    slot = ctypes.c_void_p.in_dll(loaded.code.library, loaded.metadata["blas_slots"]["dgemm"])
    assert slot.value == runtime.blas_addresses()["dgemm"]  # set by the loader
    expected = sg.compile(sg.value_and_grad(f, argnums=(0, 1)))(a, b)
    with_blas = loaded.value_and_grad(a, b)
    slot.value = None  # what a C program that sets no BLAS gets: symgrad's own loops
    with_loops = loaded.value_and_grad(a, b)
    for got in (with_blas, with_loops):
        np.testing.assert_allclose(got[0], expected[0], rtol=1e-12)
        for g, e in zip(got[1], expected[1]):
            np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)


@needs_linker
def test_a_loaded_convolution_fills_its_patches_by_example_through_blas_or_its_own_loops(tmp_path):
    """A convolution's products read one example's patches at a time (filled just before each BLAS call) and
    its weights for every example from one place; with the BLAS slot empty, symgrad's loops read the same."""
    import ctypes

    from symgrad.codegen import runtime
    if not runtime.blas_addresses():
        pytest.skip("no BLAS found next to NumPy")

    def f(x, w1, w2):
        hidden = sg.nn.functional.relu(sg.nn.functional.conv2d(x, w1, padding=1))
        return sg.sum(sg.sin(sg.nn.functional.conv2d(hidden, w2, stride=2)))
    rng = np.random.default_rng(4)
    x, w1, w2 = rng.standard_normal((3, 2, 9, 8)), rng.standard_normal((4, 2, 3, 3)), rng.standard_normal((5, 4, 2, 3))
    sg.aot.compile(f, (x, w1, w2), grad=("x", "w1", "w2"), value_and_grad=True, out=str(tmp_path / "f"))
    loaded = sg.load(tmp_path / "f")
    slot = ctypes.c_void_p.in_dll(loaded.code.library, loaded.metadata["blas_slots"]["dgemm"])
    expected = sg.compile(sg.value_and_grad(f, argnums=(0, 1, 2)), backend="numpy")(x, w1, w2)
    with_blas = loaded.value_and_grad(x, w1, w2)
    slot.value = None
    with_loops = loaded.value_and_grad(x, w1, w2)
    for got in (with_blas, with_loops):
        np.testing.assert_allclose(got[0], expected[0], rtol=1e-12)
        for g, e in zip(got[1], expected[1]):
            np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)


@needs_linker
def test_loaded_library_is_called_through_its_native_python_entry(tmp_path):
    def f(x, s):
        return sg.sum(sg.sin(x) * s)
    x = np.linspace(-1, 1, 6)
    sg.aot.compile(f, (x, 2.0), grad="x", value_and_grad=True, out=str(tmp_path / "f"))
    loaded = sg.load(tmp_path / "f")
    assert loaded.fast is not None and loaded.value_and_grad.fast is not None  # runtime table filled
    value, gradient = loaded.value_and_grad(x, 2.0)  # the function's own output structure, from native code
    assert np.isclose(value, 2 * np.sin(x).sum()) and np.allclose(gradient, 2 * np.cos(x))
    assert loaded.value_and_grad(x, 2.0)[1] is not gradient  # fresh outputs
    np.testing.assert_allclose(loaded.value_and_grad(x, s=2.0)[1], 2 * np.cos(x))  # keywords: Python path
    strided = np.linspace(-1, 1, 11)[::2]
    np.testing.assert_allclose(loaded.value_and_grad(strided, 2.0)[1], 2 * np.cos(strided))  # a strided view
    with pytest.raises(ValueError, match="argument x must have shape"):
        loaded(np.ones(5), 2.0)


def test_probing_the_namespace_needs_numpy_alone():
    """hasattr/dir on symgrad, as tools and tests do, must not need (or import) SymPy or llvmlite."""
    out = run_python("""
        import symgrad as sg
        assert not hasattr(sg, "__wrapped__") and not hasattr(sg, "sin")
        assert "load" in dir(sg) and callable(sg.load)
        import sys
        assert sys.modules.get("sympy") is None and sys.modules.get("llvmlite") is None
        print("ok")
    """)
    assert out.strip() == "ok"


def test_the_collector_is_paused_while_compiling_and_left_as_it_was(tmp_path, monkeypatch):
    """aot.compile pauses Python's cyclic collector, as sg.compile does (its collections were 13% of the time of
    a 400-step program), and leaves it as it was, whether the compile succeeds or fails."""
    import gc
    import symgrad.aot as aot
    during = []
    optimize = aot.optimize
    monkeypatch.setattr(aot, "optimize", lambda graph: (during.append(gc.isenabled()), optimize(graph))[1])
    assert gc.isenabled()
    artifact = aot.compile(lambda x: sg.sum(sg.sin(x)), (np.zeros(3),), out=str(tmp_path / "f"), backend="numpy")
    assert gc.isenabled() and during and not any(during)
    with pytest.raises(ValueError):
        aot.compile(lambda x: x, (np.zeros(3),), out=str(tmp_path / "g"), backend="fortran")
    assert gc.isenabled() and os.path.exists(artifact.metadata_path)
