"""A long kernel optimized in shards on two threads (codegen/llvm/shards.py, jit._sharded):
the shards are valid modules that define each part once, and the linked object computes what the
whole module does, errors included, from a fresh compile and from the disk cache."""
from __future__ import annotations

import gc
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import symgrad as sg
from symgrad import code_cache
from symgrad.compiler import Compiled

llvm_backend = pytest.importorskip("symgrad.codegen.llvm.backend")
import llvmlite.binding as llvm  # noqa: E402

from symgrad.codegen.llvm import jit, kernel, shards  # noqa: E402

TABLE = np.random.default_rng(2).standard_normal((3, 40))
BIG = np.random.default_rng(3).standard_normal((220, 40))  # 70 KB: reached through a pointer slot


def _long_program(x, i):
    """Loop nests of several shapes, transcendentals, a constant reached through a slot, a late index."""
    for step in range(12):
        x = x + 0.01 * (-TABLE[step % 3] * x + sg.sin(x))
        x = sg.concatenate([x[1:], x[:1] * 0.5])
    big = np.negative(BIG)  # made by the trace: a constant (BIG itself would be read at every call)
    return sg.sum(x ** 2) + sg.sum(sg.take(x, i)) + 1e-3 * sg.sum((big @ x) ** 2)


@pytest.fixture
def many_parts(monkeypatch):
    """Each loop nest a function of its own, so a short program has the parts of a long one; no code another
    test lowered (the tests count what is compiled)."""
    monkeypatch.setattr(kernel, "GROUPS_PER_FUNCTION", 1)
    code_cache._cache.clear()


def _ir_text(fn, *args):
    graph = Compiled(fn, backend="numpy").lower(*args).graph
    return llvm_backend.lower(graph).llvm_ir


def _defined(text) -> set:
    return {line.split('@"')[1].split('"')[0] for line in text.splitlines() if line.startswith("define")}


def test_each_part_is_defined_in_one_shard_and_every_shard_is_a_valid_module(many_parts):
    text = _ir_text(sg.value_and_grad(_long_program), np.linspace(-1, 1, 40), np.array([3, -1, 7]))
    texts = shards.split(text)
    assert texts is not None and len(texts) == 2
    parts = {name for name in _defined(text) if ".part" in name}
    assert len(parts) >= shards.MIN_PARTS
    owned = [_defined(t) & parts for t in texts]
    assert owned[0] and owned[1] and not owned[0] & owned[1] and owned[0] | owned[1] == parts
    assert _defined(text) - parts <= _defined(texts[0])  # the entry, the kernel, math: the first shard's
    assert 'define i32 @"SYMGRAD_entry"' not in texts[1]
    slot = next(line for line in text.splitlines() if line.startswith('@"SYMGRAD_') and "= global ptr" in line)
    assert slot.replace("= global", "= weak global") in texts[1]  # the first shard's definition wins
    jit._initialized()
    for shard in texts:
        context = llvm.create_context()
        module = llvm.parse_assembly(shard.replace(jit.PLACEHOLDER, "sg_"), context)
        module.verify()
        module.close()
        context.close()


def test_a_short_module_or_one_with_internal_state_is_not_split(many_parts):
    short = _ir_text(sg.value_and_grad(lambda x: sg.sum(sg.sin(x) ** 2)), np.ones(8))
    assert shards.split(short) is None
    text = _ir_text(sg.value_and_grad(_long_program), np.linspace(-1, 1, 40), np.array([3, -1, 7]))
    assert shards.split(text) is not None
    stateful = text + '\n@"SYMGRAD_counter" = internal global i32 0\n'  # copied into each shard: two counters
    assert shards.split(stateful) is None


def test_a_sharded_kernel_computes_what_the_whole_one_does(many_parts, monkeypatch):
    monkeypatch.setenv("SYMGRAD_CACHE", "0")  # compiled here, not read from the disk cache
    program = sg.value_and_grad(_long_program)
    x, i = np.linspace(-1, 1, 40), np.array([3, -1, 7])
    calls = []
    real = jit._sharded
    monkeypatch.setattr(jit, "_sharded", lambda *a: calls.append(1) or real(*a))
    sharded = sg.compile(program, backend="llvm")
    got = sharded(x, i)
    assert calls  # the kernel was optimized in shards
    with pytest.raises(IndexError, match="out of bounds"):
        sharded(x, np.array([3, 40, 1]))
    del sharded  # (while its code is loaded, the same IR would link it again, not compile it whole)
    code_cache._cache.clear()
    gc.collect()
    calls.clear()
    monkeypatch.setattr(jit, "OPTIMIZER_THREADS", 1)
    whole = sg.compile(program, backend="llvm")(x, i)
    assert not calls
    reference = sg.compile(program, backend="numpy")(x, i)
    for a, b, c in zip(got, whole, reference):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(a, c, rtol=1e-12, atol=1e-14)


def test_one_thread_optimizes_a_long_kernel_whole_without_loop_strength_reduction(many_parts, monkeypatch):
    monkeypatch.setenv("SYMGRAD_CACHE", "0")  # compiled here, not read from the disk cache
    monkeypatch.setenv("SYMGRAD_QUICK_CODE", "0")  # one code generation: the full code's
    program = sg.value_and_grad(_long_program)
    x, i = np.linspace(-1, 1, 40), np.array([3, -1, 7])
    sharded, options = [], []
    real_sharded, real_option = jit._sharded, llvm.set_option
    monkeypatch.setattr(jit, "_sharded", lambda *a: sharded.append(1) or real_sharded(*a))
    monkeypatch.setattr(llvm, "set_option", lambda name, option: options.append(option) or real_option(name, option))
    got = sg.compile(program, backend="llvm", threads=1)(x, i)
    assert not sharded and options == ["-disable-lsr", "-disable-lsr=false"]
    reference = sg.compile(program, backend="numpy")(x, i)
    for a, c in zip(got, reference):
        np.testing.assert_allclose(a, c, rtol=1e-12, atol=1e-14)


_CHILD = textwrap.dedent("""
    import sys
    import numpy as np, symgrad as sg
    from symgrad.codegen.llvm import jit, kernel
    sys.path.insert(0, "tests")
    from test_llvm_shards import _long_program
    kernel.GROUPS_PER_FUNCTION = 1
    if {forbid}:
        def refuse(*a, **k):
            raise AssertionError("compiled although the disk cache holds the code")
        jit.object_code = refuse
    value, grad = sg.compile(sg.value_and_grad(_long_program), backend="llvm")(np.linspace(-1, 1, 40),
                                                                                 np.array([3, -1, 7]))
    print(repr(float(value)), repr(grad.tolist()))
""")


def test_a_sharded_kernel_is_loaded_from_the_disk_cache_by_a_new_process(tmp_path):
    def child(forbid):
        env = {**os.environ, "SYMGRAD_CACHE_DIR": str(tmp_path), "SYMGRAD_CACHE": "1"}
        return subprocess.run([sys.executable, "-c", _CHILD.format(forbid=forbid)], capture_output=True, text=True,
                              env=env, cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    first = child(forbid=False)
    assert first.returncode == 0, first.stderr
    second = child(forbid=True)
    assert second.returncode == 0, second.stderr
    assert second.stdout == first.stdout
