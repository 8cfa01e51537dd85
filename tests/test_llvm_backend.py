"""The LLVM backend's own behaviour: fusion and buffer planning, BLAS and its fallback,
index checks, large constants, the native fast path, and the on-disk object cache.
(Agreement with the NumPy backend on every primitive is tests/test_backend_parity.py.)"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import symgrad as sg
from symgrad.compiler import Compiled

llvm_backend = pytest.importorskip("symgrad.codegen.llvm.backend")
from symgrad.codegen.llvm import blas, jit, kernel  # noqa: E402
from llvmlite import ir  # noqa: E402


def _plan(fn, *args):
    """(KernelBuilder after build, loop groups) for the optimized graph of sg.compile(fn)."""
    graph = Compiled(fn, backend="numpy").lower(*args).graph
    builder = kernel.KernelBuilder(graph, ir.Module(), "k")
    builder.plan()
    return builder, builder.schedule()


def _rosen(x):
    return sg.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def test_value_and_gradient_of_an_elementwise_sum_is_one_loop():
    builder, groups = _plan(sg.value_and_grad(lambda x: sg.sum(sg.sin(x) * sg.exp(-x * x))), np.ones(1000))
    assert len(groups) == 1
    assert {type(job).__name__ for job in groups[0].jobs} == {"LoopJob"}
    assert len(groups[0].jobs) == 2  # the reduction and the gradient, in one loop nest


def test_a_long_program_of_small_arrays_computes_each_transcendental_once():
    """Past kernel.LONG_PROGRAM nodes, a small multi-use value costing a transcendental is stored, not
    recomputed in each loop nest that reads it (each recomputation is code LLVM compiles again)."""
    constants = [np.random.default_rng(i).normal(size=8) for i in range(40)]

    def loss(x):
        for i, c in enumerate(constants):  # x[i % 7]: steps that differ, so the loop stays unrolled
            x = sg.sin(x * c) + x[::-1] * 0.5 + x[i % 7]
        return sg.sum(x ** 2)

    graph = Compiled(sg.value_and_grad(loss), backend="numpy").lower(np.ones(8)).graph
    assert len(graph.nodes) > kernel.LONG_PROGRAM
    text = llvm_backend.lower(graph).llvm_ir
    assert text.count('call double @"symgrad.sin.f64"') == len(constants)
    assert '"vector-function-abi-variant"' in text  # sin is compiled once, called in vectors
    value, grad = sg.compile(sg.value_and_grad(loss))(np.linspace(-1, 1, 8))
    want_value, want_grad = sg.compile(sg.value_and_grad(loss), backend="numpy")(np.linspace(-1, 1, 8))
    np.testing.assert_allclose(value, want_value, rtol=1e-12)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-10)


def test_a_chain_of_stored_elementwise_values_runs_in_one_loop_nest():
    """A value stored because it has several readers is written and read at the same index: the
    jobs after it share its loop nest (one pass over memory, one loop for LLVM to compile)."""
    def chain(x):
        for c in (0.5, 0.7, 0.9):
            x = sg.tanh(x * c)
            x = x * sg.exp(x) + sg.sin(x)
        return sg.sum(x)
    builder, groups = _plan(sg.value_and_grad(chain), np.ones(1000))
    assert len(builder.buffers) >= 2  # values the gradient reads again
    assert len(groups) == 1
    x = np.linspace(-2, 2, 1000)
    value, grad = sg.compile(sg.value_and_grad(chain))(x)
    want_value, want_grad = sg.compile(sg.value_and_grad(chain), backend="numpy")(x)
    np.testing.assert_allclose(value, want_value, rtol=1e-13)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-13)


@pytest.mark.parametrize("reader", [lambda y: y[::-1], lambda y: y - sg.mean(y), lambda y: sg.roll(y, 1)])
def test_a_value_read_at_another_index_is_complete_before_it_is_read(reader):
    """Reversed, reduced or shifted, a stored value is read only after the loop writing it has ended."""
    def f(x):
        y = sg.sin(x) * sg.exp(x) + sg.cos(x)
        y = y * y + sg.tanh(y)  # stored: read twice
        return reader(y) * y
    x = np.linspace(-2, 2, 37)
    np.testing.assert_allclose(sg.compile(f)(x), sg.compile(f, backend="numpy")(x), rtol=1e-13)
    np.testing.assert_allclose(sg.compile(sg.grad(lambda x: sg.sum(f(x))))(x),
                               sg.compile(sg.grad(lambda x: sg.sum(f(x))), backend="numpy")(x), rtol=1e-12)


def test_a_loop_body_loads_each_element_once_however_many_jobs_read_it():
    graph = Compiled(sg.value_and_grad(lambda x: sg.sum(sg.sin(x) * x + sg.exp(x) * x * x)), backend="numpy").lower(
        np.ones(1000)).graph
    kernel_text = llvm_backend.lower(graph).llvm_ir.split('define internal i32 @"SYMGRAD_kernel.body"')[1].split("\n}")[0]
    assert kernel_text.count('getelementptr inbounds double, ptr %".1"') == 1  # x, read by the value's and
    # the gradient's jobs, and by the several terms of each


def test_a_value_stored_in_a_loop_body_is_read_back_without_a_load():
    def f(x):
        y = sg.sin(x) * 3
        return y, y * y + sg.exp(y) + (y > 0)
    x = np.linspace(-1, 1, 9)
    graph = Compiled(f, backend="numpy").lower(x).graph
    kernel_text = llvm_backend.lower(graph).llvm_ir.split('define internal i32 @"SYMGRAD_kernel.body"')[1].split("\n}")[0]
    assert kernel_text.count("load ") == 1  # x; y is stored into the first output and used as computed
    for got, expected in zip(sg.compile(f)(x), sg.compile(f, backend="numpy")(x)):
        np.testing.assert_allclose(got, expected, rtol=1e-15)
    flags = lambda x: (x > 0, ~(x > 0) | (x > 0.5))  # noqa: E731  (a bool stored as a byte, used as i1)
    for got, expected in zip(sg.compile(flags)(x), flags(x)):
        np.testing.assert_array_equal(got, expected)


def test_a_short_program_inlines_its_transcendentals():
    graph = Compiled(sg.value_and_grad(lambda x: sg.sum(sg.sin(x) * sg.cos(x))), backend="numpy").lower(
        np.ones(8)).graph
    text = llvm_backend.lower(graph).llvm_ir
    assert "alwaysinline" in text
    # the one function with vector variants: the check for arguments beyond the fast reduction's range
    variants = re.findall(r'"vector-function-abi-variant"="([^"]*)"', text)
    assert len(variants) == 1 and "symgrad.trig_argument.f64" in variants[0]


def test_rosenbrock_value_and_gradient_is_one_pass_without_intermediate_arrays():
    builder, groups = _plan(sg.value_and_grad(_rosen), np.ones(1000))
    assert builder.buffers == []  # every intermediate is recomputed inside the loops
    assert len(groups) == 1  # the value (over N-1 elements) runs inside the gradient's loop (N)
    assert groups[0].domain == (1000,)


def test_unslice_loops_are_split_where_the_slice_starts_and_ends():
    graph = Compiled(sg.grad(_rosen), backend="numpy").lower(np.ones(50)).graph
    text = llvm_backend.lower(graph).llvm_ir
    assert "select" not in text.split("define")[1].split("}")[0]  # no per-element bounds tests


def test_workspace_buffers_are_reused_once_dead():
    def chain(x, w):
        h = x
        for _ in range(4):
            h = sg.tanh(h @ w)
        return sg.sum(h)
    x, w = np.ones((32, 32)), np.eye(32) * 0.5
    builder, groups = _plan(chain, x, w)
    size = builder.allocate(groups)
    assert size < sum(kernel._round_up(b.nbytes) for b in builder.buffers)


def _ode_loss(steps, size, scale=1.0):
    """A fori_loop whose value_and_grad stacks `size` floats a step: a workspace of steps * size * 8 bytes."""
    k = np.linspace(0.5, 1.5, size) * scale
    return lambda x: sg.sum(sg.fori_loop(0, steps, lambda i, x: x + 0.01 * (-k * x + sg.sin(x)), x) ** 2)


def _minor_faults() -> int:
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def test_a_large_workspace_is_kept_from_call_to_call():
    """A 51 MB workspace, which malloc would map afresh every call (12,500 page faults, each page zeroed by the
    OS), is the block the last call left: no page faults after the first call, the same bits every call."""
    x = np.linspace(-1.0, 1.0, 64)
    f = sg.compile(sg.value_and_grad(_ode_loss(100_000, 64)))
    first = f(x)
    executable = f.lower(x).executable
    assert "atomicrmw xchg" in executable.llvm_ir
    executable.upgrade()  # (the first call's quick code, whose block its upgrade allocates again on its first call)
    f(x)
    before = _minor_faults()
    for _ in range(3):
        value, grad = f(x)
        assert value == first[0] and np.array_equal(grad, first[1])
    assert (_minor_faults() - before) / 3 < 500


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads the resident size from /proc")
def test_dropping_a_function_frees_the_workspace_it_keeps():
    import gc

    def resident() -> int:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    x = np.linspace(-1.0, 1.0, 8)
    start = resident()
    for scale in (1.0, 1.1, 1.2, 1.3, 1.4):  # five functions (five kernels) of a 64 MB workspace each
        f = sg.compile(sg.value_and_grad(_ode_loss(1_000_000, 8, scale)))
        f(x)
        del f
        gc.collect()
    assert resident() - start < 150 * 2 ** 20


@pytest.mark.parametrize("with_blas", [True, False])
def test_matmul_with_and_without_blas(monkeypatch, with_blas):
    if with_blas and not blas.addresses():
        pytest.skip("no BLAS found next to NumPy")
    if not with_blas:
        monkeypatch.setattr(blas, "worth_calling", lambda *a, **k: False)
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 20, 30)), rng.standard_normal((3, 30, 10))

    def f(a, b):
        return sg.sum(sg.tanh(a @ b)) + sg.sum(sg.swapaxes(a, -1, -2) @ a)
    value, (da, db) = sg.compile(sg.value_and_grad(f, argnums=(0, 1)), backend="llvm")(a, b)
    ref_value, (ref_da, ref_db) = sg.compile(sg.value_and_grad(f, argnums=(0, 1)), backend="numpy")(a, b)
    np.testing.assert_allclose(value, ref_value, rtol=1e-12)
    np.testing.assert_allclose(da, ref_da, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(db, ref_db, rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("product", [
    lambda a, v, u: a @ v,                      # matrix times column: gemv
    lambda a, v, u: a.T @ u,                    # transposed matrix times column
    lambda a, v, u: u @ a,                      # row times matrix: gemv on the transpose
    lambda a, v, u: v @ a.T,                    # row times transposed matrix
], ids=["A@v", "AT@u", "u@A", "v@AT"])
def test_matrix_vector_products_and_their_gradients(product):
    rng = np.random.default_rng(2)
    a, v, u = rng.standard_normal((40, 30)), rng.standard_normal(30), rng.standard_normal(40)

    def f(a, v, u):
        return sg.sum(sg.sin(product(a, v, u)))
    got = sg.compile(sg.value_and_grad(f, argnums=(0, 1, 2)), backend="llvm")(a, v, u)
    want = sg.compile(sg.value_and_grad(f, argnums=(0, 1, 2)), backend="numpy")(a, v, u)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    for g, w in zip(got[1], want[1]):
        np.testing.assert_allclose(g, w, rtol=1e-11, atol=1e-13)


def test_out_of_bounds_traced_index_raises_instead_of_reading_memory():
    f = sg.compile(lambda x, i: sg.sum(sg.take(x, i)), backend="llvm")
    x = np.arange(5.0)
    assert f(x, np.array([0, 4, -1])) == 8.0  # negative indices wrap, as in NumPy
    with pytest.raises(IndexError, match="out of bounds for an axis of size 5$"):
        f(x, np.array([0, 5, 1]))
    with pytest.raises(IndexError, match="out of bounds for an axis of size 5$"):
        f(x, np.array([-6, 0, 1]))


def _long_program(x, i, table):
    """Loop nests of several shapes, a constant too large to compile in (reached through a pointer slot
    in every function), and a traced index read late in the program."""
    for step in range(12):
        x = x + 0.01 * (-table[step % 3, :40] * x + sg.sin(x))
        x = sg.concatenate([x[1:], x[:1] * 0.5])
    return sg.sum(x ** 2) + sg.sum(sg.take(x, i)), x


def test_a_long_program_is_split_into_functions_and_agrees_with_numpy():
    """Past GROUPS_PER_FUNCTION loop nests the kernel calls several functions in turn (the optimizer's
    cost grows faster than a function's size); values, gradients and late errors are unchanged."""
    table = np.random.default_rng(2).standard_normal((3, 4000))  # 96 KB: more than INLINE_CONSTANT_BYTES
    x, i = np.linspace(-1, 1, 40), np.array([3, -1, 7])
    program = sg.value_and_grad(lambda x, i: _long_program(x, i, table)[0])
    native, reference = sg.compile(program, backend="llvm"), sg.compile(program, backend="numpy")
    assert ".part1" in native.lower(x, i).executable.llvm_ir  # two functions at least
    for got, want in zip(native(x, i), reference(x, i)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    with pytest.raises(IndexError, match="out of bounds"):
        native(x, np.array([3, 40, 1]))


def _many_outputs(x, i):
    """More outputs than kernel.MANY_ARGUMENTS: float64 vectors, 0-d values, an empty array, float32 and integer
    arrays, one value returned twice, and a traced index read late."""
    outputs = [sg.sin(x * (n + 1)) + x[n % 8] for n in range(90)]
    outputs += [sg.sum(o) for o in outputs[:5]] + [x[:0] * 2.0, sg.cos(x).astype(np.float32), sg.argmax(x)]
    return outputs + [outputs[3], sg.take(x, i)]


def _arguments(text):
    """Parameters of each function defined in LLVM IR `text`, by name."""
    return {name: params.count("ptr") for name, params in re.findall(r'^define [^@]*@"([^"]+)"\((.*?)\)', text, re.M)}


def test_a_kernel_of_many_outputs_takes_them_in_an_array_and_agrees_with_numpy():
    """Past kernel.MANY_ARGUMENTS inputs and outputs, the entry fills an array of their pointers in a loop and
    each part of the kernel takes only those it uses (LLVM's time grew faster than the count); the C kernel
    keeps its signature. Values, structure and a late error are the NumPy backend's."""
    x, i = np.linspace(-1.0, 1.0, 8), np.array([1, -1])
    native, reference = sg.compile(_many_outputs, backend="llvm"), sg.compile(_many_outputs, backend="numpy")
    got, want = native(x, i), reference(x, i)
    assert len(got) == len(want) == 100
    for a, b in zip(got, want):
        assert np.asarray(a).dtype == np.asarray(b).dtype and np.shape(a) == np.shape(b)
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)
    assert got[3] is not got[-2] and np.array_equal(got[3], got[-2])
    arguments = _arguments(native.lower(x, i).executable.llvm_ir)
    kernels = [n for n in arguments if n.endswith("_kernel")]
    assert len(kernels) == 1 and arguments[kernels[0]] == 102
    parts = [count for name, count in arguments.items() if ".part" in name]
    assert len(parts) > 1 and max(parts) < 80  # (the kernel takes 102)
    with pytest.raises(IndexError, match="out of bounds"):
        native(x, np.array([1, 8]))


@pytest.mark.parametrize("count", [20, 70])
def test_a_function_of_many_inputs_agrees_with_numpy_and_retraces_for_other_shapes(count):
    """Past pyentry.CHECKED_IN_A_LOOP inputs the entry checks the arrays in a loop (past kernel.MANY_ARGUMENTS it
    passes them in an array): float64, float32, 0-d, empty and integer inputs and Python floats, value and
    gradient as the NumPy backend's; an input of another shape, dtype or layout is traced or copied for."""
    def f(*xs):
        total = 0.0
        for k, x in enumerate(xs):
            total = total + (sg.sum(sg.tanh(x) * (k + 1.0)) if np.ndim(x) or k % 6 != 5 else x * 0.5)
        return total
    rng = np.random.default_rng(3)
    kinds = [(3, 4), (5,), (), (0,), "f32", "i64"]
    args = []
    for k in range(count):
        kind = kinds[k % 6]
        args.append(rng.standard_normal(5).astype(np.float32) if kind == "f32" else
                    np.arange(3) - k if kind == "i64" else rng.standard_normal(kind))
    args[2] = 0.75  # a Python float
    argnums = tuple(k for k, a in enumerate(args) if np.asarray(a).dtype.kind == "f")
    native = sg.compile(sg.value_and_grad(f, argnums=argnums), backend="llvm")
    reference = sg.compile(sg.value_and_grad(f, argnums=argnums), backend="numpy")
    for call in (args, [np.asfortranarray(a) if np.ndim(a) == 2 else a for a in args],
                 args[:-2] + [np.ones(4, np.float32), args[-1]]):
        (value, grads), (want_value, want_grads) = native(*call), reference(*call)
        np.testing.assert_allclose(value, want_value, rtol=1e-6)  # float32 sums in it
        for got, want in zip(grads, want_grads):
            assert np.asarray(got).dtype == np.asarray(want).dtype and np.shape(got) == np.shape(want)
            np.testing.assert_allclose(got, want, rtol=1e-5 if np.asarray(got).dtype == np.float32 else 1e-12)


def test_the_gradient_of_a_sum_over_many_outputs_agrees_with_numpy_and_finite_differences():
    def loss(x):
        total = 0.0
        for n in range(120):
            total = total + sg.sum(sg.sin(x * (n + 1) * 0.01) + x[n % 8] * sg.exp(-x * x))
        return total
    x = np.linspace(-0.5, 1.0, 8)
    value, grad = sg.compile(sg.value_and_grad(loss))(x)
    want_value, want_grad = sg.compile(sg.value_and_grad(loss), backend="numpy")(x)
    np.testing.assert_allclose(value, want_value, rtol=1e-12)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-11)
    step = 1e-6
    central = [(sg.compile(loss)(x + step * e) - sg.compile(loss)(x - step * e)) / (2 * step) for e in np.eye(8)]
    np.testing.assert_allclose(grad, central, rtol=1e-6)


@pytest.mark.parametrize("n", [48, 1000])
def test_a_gradient_summing_many_slices_agrees_with_numpy(n):
    """The gradient of many slices of one array sums as many unslices; a short loop (48) is not split into more
    than kernel.UNSLICE_PIECES pieces (each a copy of the loop body) but tests the index, a long one (1000) is."""
    def loss(x):
        step = n // 14
        parts = [x[k:k + 3 * step] * (k + 1) for k in range(0, 10 * step, step)]
        return sum(sg.sum(sg.sin(p)) for p in parts + [x[5:n - 9:3], x[::-2] * 0.5, x[-1:], x[:1]])
    x = np.linspace(-2.0, 3.0, n)
    value, grad = sg.compile(sg.value_and_grad(loss))(x)
    want_value, want_grad = sg.compile(sg.value_and_grad(loss), backend="numpy")(x)
    np.testing.assert_allclose(value, want_value, rtol=1e-12)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-12, atol=1e-14)


def test_a_long_straight_line_program_agrees_with_numpy():
    """A program that does not repeat (each step one of several operations) stays straight-line code, split
    into functions of bounded size."""
    rng = np.random.default_rng(5)
    kinds, scales, a = rng.integers(0, 4, 300), rng.uniform(0.5, 1.5, 300), rng.standard_normal((8, 8)) * 0.3
    steps = [lambda x, c: sg.sin(x) * c, lambda x, c: x + 0.01 * sg.tanh(x * c),
             lambda x, c: a @ x * 0.1 + x, lambda x, c: x - sg.mean(x) * c]

    def loss(x):
        for kind, c in zip(kinds, scales):
            x = steps[kind](x, c)
        return sg.sum(x ** 2)
    x = np.linspace(-1.0, 1.0, 8)
    native = sg.compile(sg.value_and_grad(loss))
    assert ".part2" in native.lower(x).executable.llvm_ir
    for got, want in zip(native(x), sg.compile(sg.value_and_grad(loss), backend="numpy")(x)):
        np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-14)


def test_a_few_transcendentals_are_inlined_and_many_are_calls():
    """Past kernel.INLINED_MATH transcendentals a short program calls its math kernels too (100 inlined sines
    cost more to compile than 200 called); the values are the same."""
    def outputs(count):
        return lambda x: [sg.sin(x * (n + 1)) for n in range(count)]
    x = np.linspace(-1.0, 1.0, 8)
    for count, outlined in ((4, False), (kernel.INLINED_MATH + 1, True)):
        native = sg.compile(outputs(count))
        assert ('@"symgrad.sin.f64.v4"' in native.lower(x).executable.llvm_ir) == outlined  # vector variants
        for got, want in zip(native(x), sg.compile(outputs(count), backend="numpy")(x)):
            np.testing.assert_allclose(got, want, rtol=1e-15)


def test_a_large_closed_over_constant_is_pointed_to_not_compiled_in():
    table = np.random.default_rng(1).standard_normal((300, 300))
    f = sg.compile(lambda x: sg.sum((table @ x) ** 2), backend="llvm")
    x = np.linspace(0, 1, 300)
    np.testing.assert_allclose(f(x), np.sum((table @ x) ** 2), rtol=1e-12)
    assert len(f.lower(x).executable.llvm_ir) < table.nbytes / 10


def test_repeated_calls_take_the_native_path_and_return_fresh_arrays():
    f = sg.compile(sg.value_and_grad(_rosen), backend="llvm")
    x = np.linspace(-1, 1, 10)
    v1, g1 = f(x)
    assert f._fast is not None
    v2, g2 = f(x)
    assert g1 is not g2 and np.array_equal(g1, g2)
    g1[:] = 0  # results belong to the caller
    assert np.array_equal(f(x)[1], g2)


def test_other_inputs_leave_the_native_path_and_still_work():
    f = sg.compile(lambda x: sg.sum(x * x), backend="llvm")
    x = np.arange(6.0)
    assert f(x) == 55.0
    assert f(x[::2]) == 20.0  # not contiguous: copied
    assert f(x.astype(np.float32)) == 55.0  # new dtype: retraced
    assert f(2.0) == 4.0  # a Python float
    assert len(f.cache_info()) == 4
    with pytest.raises(TypeError, match="x"):
        f(np.array(["a"]))


def test_lowered_text_shows_the_llvm_ir():
    text = sg.compile(lambda x: sg.sum(sg.exp(x)), backend="llvm").lower(np.ones(4)).as_text()
    assert "reduce_sum" in text and "define" in text


_CHILD = textwrap.dedent("""
    import numpy as np, symgrad as sg
    from symgrad.codegen.llvm import jit
    if {forbid}:
        def refuse(*a, **k):
            raise AssertionError("compiled although the disk cache holds the code")
        jit.object_code = jit.quick_object_code = refuse  # (a first call's code is quick: see jit.py)
    f = sg.compile(sg.value_and_grad(lambda x: sg.sum(sg.sin(x) ** 2)), backend="llvm")
    print(float(f(np.linspace(0, 1, 7))[0]))
""")


def _child(cache_dir, forbid, extra_env=None):
    env = {**os.environ, "SYMGRAD_CACHE_DIR": str(cache_dir), "SYMGRAD_CACHE": "1", **(extra_env or {})}
    result = subprocess.run([sys.executable, "-c", _CHILD.format(forbid=forbid)], capture_output=True, text=True,
                            env=env, cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return result


def test_a_new_process_loads_object_code_from_the_disk_cache(tmp_path):
    first = _child(tmp_path, forbid=False)
    assert first.returncode == 0, first.stderr
    assert list((tmp_path / "llvm").glob("*.o"))
    second = _child(tmp_path, forbid=True)
    assert second.returncode == 0, second.stderr
    assert second.stdout == first.stdout


def test_a_corrupt_cache_entry_is_recompiled_not_loaded(tmp_path):
    assert _child(tmp_path, forbid=False).returncode == 0
    for entry in (tmp_path / "llvm").glob("*.o"):
        entry.write_bytes(entry.read_bytes()[:-40] + b"\0" * 40)
    assert _child(tmp_path, forbid=True).returncode != 0  # would have to compile
    again = _child(tmp_path, forbid=False)
    assert again.returncode == 0, again.stderr


def test_the_disk_cache_can_be_turned_off(tmp_path):
    result = _child(tmp_path, forbid=False, extra_env={"SYMGRAD_CACHE": "0"})
    assert result.returncode == 0, result.stderr
    assert not (tmp_path / "llvm").exists()


def test_cache_key_changes_with_the_ir():
    assert jit.cache_key("a") != jit.cache_key("b")


@pytest.mark.parametrize("shape,axis", [((1_000_000, 2), 0), ((2, 1_000_000), 1), ((4, 250_000, 2), 1),
                                        ((2, 500_000, 2), (0, 1))])
def test_float32_sums_and_means_along_an_axis_are_accurate(shape, axis):
    # A float32 running sum of 1e6 terms in [0, 1) is off by ~1e-5; accumulated in float64 the
    # result is the float32 rounding of the exact sum (NumPy's pairwise sum: only along the last axis).
    x = np.random.default_rng(0).random(shape, dtype=np.float32)
    exact = x.astype(np.float64).sum(axis=axis)
    for fn, expected in [(sg.sum, exact), (sg.mean, exact / (x.size // exact.size))]:
        got = sg.compile(lambda a: fn(a, axis=axis))(x)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, expected, rtol=2e-7, err_msg=fn.__name__)


_INNER_REDUCTIONS = [((4, 3, 5, 6), (0, 2, 3)), ((3, 7), 1), ((3, 70), 1), ((2, 3, 9, 8), (0, 2, 3)),
                     ((2, 3, 80), (0, 2)), ((2, 3, 4), (1, 2)), ((0, 3, 80), (0, 2)), ((3, 0, 80), 2),
                     ((3, 4, 0), (0, 2)), ((5, 1, 1), (1, 2)), ((5, 1, 64), (1, 2))]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
@pytest.mark.parametrize("shape,axis", _INNER_REDUCTIONS)
def test_reductions_over_innermost_axes_fold_each_row_as_numpy(shape, axis, dtype):
    """Sums, products, maxima and minima whose innermost axes are all reduced fold each row of FOLDED_ROW or more
    elements in a register, then into the kept element (a convolution's bias gradient sums (N, H, W)), shorter
    rows in memory: NumPy's values, empty ones included (the identity); infinities and NaN propagate; float32
    sums accumulate in float64."""
    x = (np.random.default_rng(1).standard_normal(shape) * 20).astype(dtype)
    if dtype == np.float64 and x.size > 3:
        x.flat[[0, 1, 2]] = np.inf, -np.inf, np.nan
    for fn, reference in [(sg.sum, np.sum), (sg.prod, np.prod), (sg.max, np.max), (sg.min, np.min)]:
        if reference in (np.max, np.min) and x.size == 0:
            continue  # NumPy raises (no identity): symgrad's error is tested with the reductions
        with np.errstate(all="ignore"):
            expected = reference(x, axis=axis)
            got = sg.compile(lambda a: fn(a, axis=axis))(x)
        assert got.dtype == expected.dtype and got.shape == expected.shape, fn.__name__
        np.testing.assert_allclose(got, expected, rtol=1e-6 if dtype == np.float32 else 1e-12, err_msg=fn.__name__)


def test_the_maximum_over_innermost_axes_keeps_the_first_of_equal_zeros():
    x = np.zeros((2, 2, 64))
    x[0, :, 0], x[1, 0, 0], x[1, 1, 1:] = -0.0, -0.0, -0.0  # first zeros: -0.0, -0.0; then -0.0, 0.0
    for axis, signs in [((1, 2), [True, True]), (2, [[True, True], [True, False]])]:
        np.testing.assert_array_equal(np.signbit(sg.compile(lambda a: sg.max(a, axis=axis))(x)), signs)


def test_the_gradient_through_an_innermost_reduction_is_exact():
    x, w = np.random.default_rng(2).standard_normal((3, 4, 70)), np.arange(1.0, 5)
    grad = sg.compile(sg.grad(lambda a: sg.sum(sg.sum(a * a, axis=(0, 2)) * w)))(x)
    np.testing.assert_allclose(grad, 2 * x * w[:, None], rtol=1e-14)


def test_integer_power_with_an_array_exponent_is_a_clear_error():
    """It raised a bare NotImplementedError from the expression printer; NumPy's backend computes it."""
    base, exponent = np.array([3, -2, 0, 5]), np.array([2, 3, 1, 0])
    with pytest.raises(sg.UnsupportedOpError, match="constant powers"):
        sg.compile(lambda x, y: x ** y)(base, exponent)
    np.testing.assert_array_equal(sg.compile(lambda x, y: x ** y, backend="numpy")(base, exponent), base ** exponent)
    np.testing.assert_array_equal(sg.compile(lambda x: x ** 3)(base), base ** 3)
    np.testing.assert_allclose(sg.compile(lambda x, y: x ** y)(base.astype(float), exponent), base ** exponent.astype(float))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("exponent", [1.5, 2.5, -1.5, -2.5, 3.5])
def test_a_half_integer_power_at_minus_zero_and_minus_infinity_is_numpys(dtype, exponent):
    """x ** n/2 is x**k * sqrt(x) natively, which gave (-inf) ** 2.5 NaN (NumPy: inf), (-inf) ** -2.5 NaN (0),
    (-0) ** 2.5 -0 (0) and (-0) ** -2.5 -inf (inf), where the NumPy backend gave NumPy's (C's pow's) values."""
    x = np.array([-0.0, -np.inf, np.inf, 0.0, 4.0, -4.0, 2.25, np.nan], dtype)
    with np.errstate(all="ignore"):
        want = np.power(x, dtype(exponent))
        for backend in ("llvm", "numpy"):
            for f in (lambda a: a ** exponent, lambda a: sg.power(a, exponent)):
                got = sg.compile(f, backend=backend)(x)
                assert got.dtype == want.dtype
                np.testing.assert_allclose(got, want, rtol=2e-7 if dtype == np.float32 else 1e-15, err_msg=backend)
                numbers = ~np.isnan(want)
                np.testing.assert_array_equal(np.signbit(got[numbers]), np.signbit(want[numbers]), err_msg=backend)
        grads = [sg.compile(sg.grad(lambda a: sg.sum(a ** exponent)), backend=b)(x) for b in ("llvm", "numpy")]
    np.testing.assert_allclose(grads[0], grads[1], rtol=2e-7 if dtype == np.float32 else 1e-15)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.bool_])
@pytest.mark.parametrize("backend", ["numpy", "llvm", "eager"])
def test_integer_to_a_negative_integer_number_is_numpys_error(dtype, backend):
    """x ** -3 on integers computed 1 // x**3 in integers, silently 0 (at a zero base of a bool, -2**63),
    where NumPy raises ValueError (and PyTorch a RuntimeError)."""
    base = np.array([2, 0, 1, -3]).astype(dtype)
    run = (lambda f: f(sg.tensor(base))) if backend == "eager" else (lambda f: sg.compile(f, backend=backend)(base))
    for exponent in (-1, -3):
        with pytest.raises(ValueError, match="Integers to negative integer powers are not allowed"):
            run(lambda x: x ** exponent)
    np.testing.assert_array_equal(np.asarray(run(lambda x: x ** 2)), base ** 2)
    np.testing.assert_array_equal(np.asarray(run(lambda x: x ** 0)), base ** 0)
    np.testing.assert_allclose(np.asarray(run(lambda x: x ** -1.0)), base.astype(float) ** -1.0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_an_integer_result_of_float_comparisons_compares_the_floats(dtype):
    """Fused, `where(x > 0.5, 1, 0)` is one expression with a float input and an integer result: it is
    computed in the float type (in integers, 0.7 > 0.5 read 0 > 0.5)."""
    x = np.array([0.7, 0.2, 1.5, -0.5, np.nan], dtype)
    k = np.array([3, 4, 5, 6, 7])
    programs = [lambda x, k: sg.where(x > 0.5, 1, 0), lambda x, k: sg.where(x > 0.5, k * 2, k) + (x < 0),
                lambda x, k: sg.where(x * 1e-49 > 1e-50, sg.astype(x, np.float32) * 2, 3.0)]
    for f in programs:
        want = f(x, k)
        for backend in ("llvm", "numpy"):
            got = sg.compile(f, backend=backend)(x, k)
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)


def test_gradient_of_a_pytree_of_many_leaves_matches_numpy():
    """A gradient of 600 leaves ends with one block summing 600 scalars after a few stores, the block whose
    instruction selection grew quadratically (jit._initialized's token-factor limit): its values are NumPy's,
    zeros, a 0-d leaf and an empty leaf among them."""
    rng = np.random.default_rng(0)
    tree = {f"k{i:03d}": (rng.standard_normal(5), [rng.standard_normal((2, 3))]) for i in range(300)}
    tree["k000"] = (np.zeros(5), [np.zeros((0, 3))])
    tree["k001"] = (np.array(0.5), [np.zeros((2, 3))])

    def loss(t):
        return sum(sg.sum(sg.tanh(a) * (i + 1.0)) + sg.sum(b * b) for i, (a, [b]) in enumerate(t.values()))

    value, grad = sg.compile(sg.value_and_grad(loss), backend="llvm")(tree)
    want = sum(np.sum(np.tanh(a) * (i + 1.0)) + np.sum(b * b) for i, (a, [b]) in enumerate(tree.values()))
    assert np.isclose(value, want, rtol=1e-12)
    for i, (key, (a, [b])) in enumerate(tree.items()):
        np.testing.assert_allclose(grad[key][0], (i + 1.0) * (1 - np.tanh(a) ** 2), rtol=1e-12)
        np.testing.assert_allclose(grad[key][1][0], 2 * b, rtol=1e-12)
        assert grad[key][0].shape == np.shape(a) and grad[key][1][0].shape == b.shape
