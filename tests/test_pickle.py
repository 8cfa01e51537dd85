"""Pickling compiled functions, transformed functions, traced graphs and loaded artifacts (issue 16, item 3).

Every check runs in fresh interpreters, each with a cache directory of its own: one process traces,
compiles and pickles; another unpickles and calls, counting traces (symgrad.compiler.trace_flat) and
LLVM compiles (jit.object_code), so "no retrace, no LLVM" is what the new process did, not a cache hit.
"""
import copy
import json
import os
import pickle
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import symgrad as sg
from symgrad.pickling import MissingFunction, NotPicklable

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HAS_LINKER = shutil.which(os.environ.get("CC", "cc").split()[0]) is not None

@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    """What this module's tests compile in this process goes to a cache of their own, not the user's."""
    monkeypatch.setenv("SYMGRAD_CACHE_DIR", str(tmp_path / "cache"))


# The user's module: imported by both processes (by reference, as pickle sends functions).
MODEL = '''
import numpy as np
import symgrad as sg

def loss(w, x, y):
    return sg.mean((sg.tanh(x @ w) - y) ** 2)

def row_norms(v):
    return sg.sqrt(sg.sum(v * v, axis=-1))

def looped(w, x, y):
    v = sg.fori_loop(0, 3, lambda i, c: 0.9 * c + sg.tanh(x @ c) @ x / 6, w)
    v = sg.while_loop(lambda s: s[0] < 4, lambda s: (s[0] + 1, s[1] * 1.1), (0, v))[1]
    return sg.sum((x @ v - y) ** 2)

def data(rows=6):
    rng = np.random.default_rng(0)
    return rng.normal(size=3), rng.normal(size=(rows, 3)), rng.normal(size=rows)
'''

# Traces, calls and pickles every kind of object; writes the pickles and the values they gave.
PRODUCER = '''
import os, pickle, sys
import numpy as np
import symgrad as sg
from symgrad.codegen.llvm import backend as llvm_backend
import model

out = sys.argv[1]
w, x, y = model.data()
objects, expected = {}, {}
for backend in ("llvm", "numpy"):
    made = {
        "compiled": (sg.compile(model.loss, backend=backend), (w, x, y)),
        "value_and_grad": (sg.compile(sg.value_and_grad(model.loss, argnums=(0, 1)), backend=backend), (w, x, y)),
        "lambda": (sg.compile(lambda w, x: sg.sum(sg.sin(x @ w) ** 2), backend=backend), (w, x)),
        "vmap": (sg.compile(sg.vmap(model.row_norms), backend=backend), (x,)),
        "loops": (sg.compile(sg.value_and_grad(model.looped), backend=backend), (w, x, y)),
    }
    for name, (fn, args) in made.items():
        objects[f"{backend}-{name}"] = fn
        expected[f"{backend}-{name}"] = fn(*args)
for name, fn in {"grad": sg.grad(model.loss), "jacobian": sg.jacobian(model.row_norms),
                 "hessian": sg.hessian(model.loss), "grad_lambda": sg.grad(lambda w, x, y: sg.sum(x @ w * y))}.items():
    args = (x,) if name == "jacobian" else (w, x, y)
    expected[name] = fn(*args)
    objects[name] = fn
objects["uncalled_vmap"] = sg.vmap(model.row_norms)
expected["uncalled_vmap"] = objects["uncalled_vmap"](x)
objects["graph"] = sg.trace(sg.grad(model.loss), w, x, y)
expected["graph"] = str(objects["graph"])


class FakeTarget(pickle.Pickler):
    """Pickles LLVM code as if compiled for another CPU (or damaged), to check the new process recompiles."""
    damage = False

    def reducer_override(self, obj):
        if isinstance(obj, llvm_backend.CarriedCode):
            if self.damage:
                return llvm_backend.CarriedCode, (obj.target, obj.key, obj.code[:-64] + bytes(64))
            return llvm_backend.CarriedCode, (("another-cpu", "+fake", *obj.target[2:]), obj.key, obj.code)
        return NotImplemented


with open(os.path.join(out, "objects.pkl"), "wb") as f:
    pickle.dump(objects, f)
for damage in (False, True):
    with open(os.path.join(out, "damaged.pkl" if damage else "faked.pkl"), "wb") as f:
        pickler = FakeTarget(f)
        pickler.damage = damage
        pickler.dump({k: v for k, v in objects.items() if k.startswith("llvm-")})
with open(os.path.join(out, "expected.pkl"), "wb") as f:
    pickle.dump(expected, f)
'''

# Unpickles, calls with the producer's arguments, and reports what it had to do.
CONSUMER = '''
import json, os, pickle, sys
import numpy as np
import symgrad as sg
import symgrad.compiler
from symgrad import pytree
from symgrad.codegen.llvm import jit
import model

counts = {"traces": 0, "compiles": 0}
trace_flat, object_code = symgrad.compiler.trace_flat, jit.object_code

def counted_trace(*args, **kwargs):
    counts["traces"] += 1
    return trace_flat(*args, **kwargs)

def counted_compile(text, *args, **kwargs):
    if 'ModuleID = "symgrad_pool"' not in text:  # the thread pool: runtime code, compiled once per machine
        counts["compiles"] += 1
    return object_code(text, *args, **kwargs)

symgrad.compiler.trace_flat, jit.object_code = counted_trace, counted_compile
out, name = sys.argv[1], sys.argv[2]
with open(os.path.join(out, name), "rb") as f:
    objects = pickle.load(f)
with open(os.path.join(out, "expected.pkl"), "rb") as f:
    expected = pickle.load(f)
w, x, y = model.data()
report = {"unpickling": dict(counts)}
for key, fn in objects.items():
    if key == "graph":
        report[key] = {"equal": str(fn) == expected[key]}
        continue
    args = {"lambda": (w, x), "vmap": (x,), "jacobian": (x,)}.get(key.split("-")[-1], (w, x, y))
    if key == "uncalled_vmap":
        args = (x,)
    before = dict(counts)
    got = fn(*args)
    same = all(np.array_equal(a, b) for a, b in zip(pytree.flatten(got)[0], pytree.flatten(expected[key])[0]))
    report[key] = {"equal": bool(same), "traces": counts["traces"] - before["traces"],
                   "compiles": counts["compiles"] - before["compiles"]}
    if key.endswith("lambda"):
        try:
            fn(*(a[:2] if a.ndim else a for a in args))  # a signature it does not carry
        except Exception as error:
            report[key]["new_signature_error"] = f"{type(error).__name__}: {error}"
for backend in ("llvm", "numpy") if name == "objects.pkl" else ():  # a module-level function travelled:
    before = counts["traces"]  # a new signature is traced as usual
    got = objects[f"{backend}-compiled"](w, x[:4], y[:4])
    expected_value = np.mean((np.tanh(x[:4] @ w) - y[:4]) ** 2)
    report[f"{backend}-new-signature"] = {"equal": bool(np.isclose(got, expected_value, rtol=1e-14)),
                                          "traces": counts["traces"] - before}
print(json.dumps(report))
'''


def _run(directory, script, *args, cache):
    env = {**os.environ, "SYMGRAD_CACHE_DIR": str(cache), "SYMGRAD_CACHE": "1",
           "PYTHONPATH": os.pathsep.join([str(directory), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run([sys.executable, "-c", script, *map(str, args)], capture_output=True, text=True,
                            env=env, cwd=directory, timeout=600)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def pickles(tmp_path_factory):
    """A directory holding model.py, the producer's pickles and the values it computed."""
    directory = tmp_path_factory.mktemp("pickles")
    (directory / "model.py").write_text(MODEL)
    _run(directory, PRODUCER, directory, cache=directory / "producer-cache")
    return directory


def _consume(directory, name, tmp_path):
    return json.loads(_run(directory, CONSUMER, directory, name, cache=tmp_path / "consumer-cache"))


def test_an_unpickled_function_runs_the_code_it_carries_without_retracing_or_llvm(pickles, tmp_path):
    report = _consume(pickles, "objects.pkl", tmp_path)
    assert report.pop("unpickling") == {"traces": 0, "compiles": 0}
    assert report.pop("graph") == {"equal": True}
    for backend in ("llvm", "numpy"):
        assert report.pop(f"{backend}-new-signature") == {"equal": True, "traces": 1}
    uncalled = report.pop("uncalled_vmap")  # a vmap not compiled traces on every call, as before pickling
    assert uncalled["equal"]
    for backend in ("llvm", "numpy"):
        assert f"{backend}-value_and_grad" in report
    for key, result in report.items():
        assert result["equal"], key
        assert result["traces"] == 0, key
        assert result["compiles"] == 0, key
    for key in ("llvm-lambda", "numpy-lambda"):
        assert "MissingFunctionError" in report[key]["new_signature_error"]
        assert "without its Python function" in report[key]["new_signature_error"]
    assert len(list((tmp_path / "consumer-cache").glob("llvm/*.o"))) == 1  # only the new signature's code


@pytest.mark.parametrize("name", ["faked.pkl", "damaged.pkl"])
def test_code_for_another_cpu_or_damaged_code_is_compiled_again_from_the_ir(pickles, tmp_path, name):
    report = _consume(pickles, name, tmp_path)
    unpickling = report.pop("unpickling")
    assert unpickling["traces"] == 0
    assert unpickling["compiles"] == len(report) == 5  # one signature each
    for key, result in report.items():
        assert result["equal"], key
        assert result["traces"] == 0, key


POOL = '''
import multiprocessing
import numpy as np
import symgrad as sg
import model

if __name__ == "__main__":
    gradient = sg.compile(sg.grad(model.loss))
    chunks = [model.data(rows) for rows in (4, 5, 6, 7)]
    expected = [gradient(*chunk) for chunk in chunks]
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        got = pool.starmap(gradient, chunks)
    assert all(np.array_equal(a, b) for a, b in zip(got, expected)), (got, expected)
    print("ok", len(got))
'''


def test_a_pool_maps_a_compiled_gradient(pickles, tmp_path):
    script = tmp_path / "pool_main.py"
    script.write_text(POOL)
    env = {**os.environ, "SYMGRAD_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONPATH": os.pathsep.join([str(pickles), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["ok", "4"]


def test_a_function_with_nothing_to_carry_is_refused_at_pickle_time():
    with pytest.raises(NotPicklable, match="no traced signature to carry"):
        pickle.dumps(sg.compile(lambda v: sg.sum(v)))
    with pytest.raises(NotPicklable, match="define the function at module level"):
        pickle.dumps(sg.grad(lambda v: sg.sum(v * v)))


def test_an_unpicklable_function_travels_as_a_missing_function_that_says_why():
    compiled = sg.compile(lambda v: sg.sum(v * v), backend="numpy")
    compiled(np.ones(3))
    again = pickle.loads(pickle.dumps(compiled))
    assert isinstance(again.fn, MissingFunction) and "pickle cannot save it" in again.fn.reason
    np.testing.assert_array_equal(again(np.ones(3)), 3.0)
    twice = pickle.loads(pickle.dumps(again))  # an unpickled function pickles again
    np.testing.assert_array_equal(twice(np.full(3, 2.0)), 12.0)
    with pytest.raises(sg.pickling.MissingFunctionError, match="runs only the signatures it was pickled with"):
        twice(np.ones(4))


@pytest.mark.skipif(not HAS_LINKER, reason="linking a shared library needs a C compiler")
@pytest.mark.parametrize("backend", ["llvm", "numpy"])
def test_a_loaded_artifact_pickles_with_its_files(tmp_path, monkeypatch, backend):
    (tmp_path / "model.py").write_text(MODEL)
    monkeypatch.syspath_prepend(str(tmp_path))
    import model
    w, x, y = model.data()
    sg.aot.compile(model.loss, (w, x, y), grad="w", out=str(tmp_path / "artifact"), backend=backend)
    loaded = sg.load(str(tmp_path / "artifact"))
    payload = pickle.dumps((loaded, loaded.grad))
    shutil.rmtree(tmp_path / "cache", ignore_errors=True)
    for suffix in (".json", ".so", ".py", ".h"):
        if (tmp_path / ("artifact" + suffix)).exists():
            (tmp_path / ("artifact" + suffix)).unlink()  # the pickle carries the files
    script = textwrap.dedent("""
        import pickle, sys
        import numpy as np
        import model
        loaded, grad = pickle.loads(sys.stdin.buffer.read())
        w, x, y = model.data()
        print(repr(float(loaded(w, x, y))), list(grad(w, x, y)))
    """)
    env = {**os.environ, "SYMGRAD_CACHE_DIR": str(tmp_path / "child-cache"),
           "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run([sys.executable, "-c", script], input=payload, capture_output=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr.decode()
    expected = f"{float(loaded(w, x, y))!r} {list(loaded.grad(w, x, y))}"
    assert result.stdout.decode().strip() == expected


def _power_sum(v, n):
    return sg.sum(v ** n)


def test_static_arguments_pickle_with_the_code_of_each_static_value():
    x = np.linspace(0.0, 1.0, 5)
    power_sum = sg.compile(lambda v, n, mode="sum": sg.sum(v ** n) if mode == "sum" else sg.max(v ** n),
                           static_argnums=1, static_argnames="mode")
    gradient = sg.grad(_power_sum, static_argnums=1)  # by reference (a grad with static arguments keeps no code)
    expected = [power_sum(x, 2), power_sum(x, 3, mode="max"), gradient(x, 2), gradient(x, 3)]
    power_sum, gradient = pickle.loads(pickle.dumps((power_sum, gradient)))
    # the lambda did not travel: these calls run the carried code, without a trace
    got = [power_sum(x, 2), power_sum(x, 3, mode="max"), gradient(x, 2), gradient(x, 3)]
    for a, b in zip(got, expected):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(sg.pickling.MissingFunctionError):
        power_sum(x, 4)


def _loop(x):
    return sg.sum(sg.fori_loop(0, 4, lambda i, c: c * sg.sin(c) + 0.5, x))


def _while(x):
    return sg.while_loop(lambda c: c[0] < 6, lambda c: (c[0] + 1, c[1] * 1.5), (0, x))[1].sum()


@sg.custom_vjp
def _clipped_sin(x):
    return sg.sin(x)


_clipped_sin.defvjp(lambda x: (sg.sin(x), x), lambda x, g: (sg.clip(g * sg.cos(x), -0.5, 0.5),))


@pytest.mark.parametrize("fn", [_loop, _while, lambda x: sg.sum(_clipped_sin(x) ** 2)])
@pytest.mark.parametrize("backend", ["llvm", "numpy"])
def test_graphs_with_loops_and_custom_rules_pickle(fn, backend):
    x = np.linspace(0.1, 0.9, 4)
    graph = sg.trace(sg.value_and_grad(fn), x)
    again = pickle.loads(pickle.dumps(graph))
    assert again == graph and str(again) == str(graph)
    compiled = sg.compile(sg.grad(fn), backend=backend)
    expected = compiled(x)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(compiled))(x), expected)


def test_copies_of_a_compiled_function_are_the_function_as_for_python_functions():
    for fn in (sg.compile(lambda v: sg.sum(v)), sg.grad(lambda v: sg.sum(v * v)),
               sg.compile(lambda v, n: sg.sum(v ** n), static_argnums=1)):
        assert copy.copy(fn) is fn and copy.deepcopy({"f": fn})["f"] is fn


def test_python_values_a_trace_read_pickle_with_the_code_compiled_for_them():
    x = np.linspace(0.0, 1.0, 6)
    head_sum = sg.compile(lambda v, n, mode: sg.sum(v[:n]) if mode == "sum" else sg.max(v[:n]))
    expected = [head_sum(x, 3, "sum"), head_sum(x, 4, "max"), head_sum(x[:5], 2, "sum")]
    again = pickle.loads(pickle.dumps(head_sum))
    assert isinstance(again.fn, MissingFunction)  # so these calls cannot have traced
    assert [again(x, 3, "sum"), again(x, 4, "max"), again(x[:5], 2, "sum")] == expected
    with pytest.raises(sg.pickling.MissingFunctionError):
        again(x, 5, "sum")


SCALE = 1.0  # rebound by the test below between a call and the pickle


def _scaled_sum(v):
    return sg.sum(sg.sin(v) * SCALE)


def _scaled_power_sum(v, n):
    return sg.sum(sg.sin(v) ** n * SCALE)


@pytest.mark.parametrize("make, static", [
    (lambda: sg.compile(_scaled_sum), ()), (lambda: sg.compile(_scaled_sum, backend="numpy"), ()),
    (lambda: sg.compile(sg.value_and_grad(_scaled_sum)), ()),
    (lambda: sg.compile(_scaled_power_sum, static_argnums=1), (2,))])
def test_a_pickle_after_a_read_global_was_rebound_carries_no_trace_of_the_old_value(monkeypatch, make, static):
    x = np.linspace(0.0, 1.0, 5)
    monkeypatch.setattr(sys.modules[__name__], "SCALE", 1.0)
    fn = make()
    fn(x, *static)  # traced with SCALE = 1
    monkeypatch.setattr(sys.modules[__name__], "SCALE", 3.0)
    again = pickle.loads(pickle.dumps(fn))
    for got, want in zip(sg.pytree.flatten(again(x, *static))[0], sg.pytree.flatten(fn(x, *static))[0]):
        np.testing.assert_array_equal(got, want)
    power = static[0] if static else 1
    np.testing.assert_allclose(sg.pytree.flatten(again(x, *static))[0][0], 3.0 * np.sum(np.sin(x) ** power), rtol=1e-14)
