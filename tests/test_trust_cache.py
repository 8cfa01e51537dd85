"""The compile cache cannot be used to run someone else's code, and what it keeps is bounded.

Every test uses a temporary cache directory (SYMGRAD_CACHE_DIR), in this process or in a child.
"""
import gc
import hashlib
import os
import pickle
import stat
import struct
import subprocess
import sys
import textwrap
import warnings
import weakref

import numpy as np
import pytest

import symgrad as sg
from symgrad import code_cache
from symgrad.caches import Recent
from symgrad.codegen.llvm import disk_cache, jit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
X = np.linspace(-1.0, 1.0, 33)


@pytest.fixture(autouse=True)
def full_code(monkeypatch):
    """Full code from the first call, in this process and its children: the tests count compiles by object_code,
    and read and plant entries under the full code's keys (quick code is read through the same checks)."""
    monkeypatch.setenv("SYMGRAD_QUICK_CODE", "0")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A fresh private cache directory for this test, its one-warning flag reset, an empty cache of lowered code in
    this process (code_cache) and a count of compiles."""
    monkeypatch.setattr(code_cache, "_cache", Recent(code_cache.CODE_KEPT))
    monkeypatch.setenv("SYMGRAD_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("SYMGRAD_CACHE", "1")
    monkeypatch.delenv("SYMGRAD_CACHE_MAX_BYTES", raising=False)
    monkeypatch.setattr(disk_cache, "_warned", False)
    compiles = []
    real = jit.object_code
    monkeypatch.setattr(jit, "object_code", lambda *a, **k: compiles.append(1) or real(*a, **k))
    return tmp_path / "cache" / "llvm", compiles


def _function(tag: float):
    """A compiled function whose code (and so cache key) is its own for each `tag`."""
    return sg.compile(lambda x: sg.sum(sg.sin(x) * tag + x ** 2))


def _expected(tag: float) -> float:
    return float(np.sum(np.sin(X) * tag + X ** 2))


def _run_and_drop(tag: float) -> float:
    """Compile, call and drop a function (and the process's cached code), so the next one with `tag` is read from
    disk (not this process)."""
    value = float(_function(tag)(X))
    code_cache._cache.clear()
    gc.collect()
    return value


def _make_private(directory) -> None:
    """Create the cache directory and its parent 0700, as symgrad would."""
    for path in (directory.parent, directory):
        path.mkdir(exist_ok=True)
        path.chmod(0o700)


def _entries(directory):
    return sorted(directory.glob("*.o"))


def test_directories_are_0700_and_entries_0600_whatever_the_umask(cache):
    directory, _ = cache
    old = os.umask(0)
    try:
        assert _run_and_drop(0.25) == pytest.approx(_expected(0.25))
    finally:
        os.umask(old)
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert stat.S_IMODE(directory.parent.stat().st_mode) == 0o700
    (entry,) = _entries(directory)
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600


def test_an_entry_is_read_back_instead_of_compiling_and_marked_used(cache):
    directory, compiles = cache
    _run_and_drop(0.5)
    assert len(compiles) == 1
    (entry,) = _entries(directory)
    os.utime(entry, (1.0, 1.0))
    assert _run_and_drop(0.5) == pytest.approx(_expected(0.5))
    assert len(compiles) == 1
    assert entry.stat().st_mtime > 1.0  # the size cap evicts what was used least recently


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o702])
def test_a_cache_directory_others_can_write_is_not_used_with_one_warning(cache, mode):
    directory, compiles = cache
    _make_private(directory)
    directory.chmod(mode)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        values = [_run_and_drop(tag) for tag in (1.5, 1.75, 1.5)]
    assert values == pytest.approx([_expected(1.5), _expected(1.75), _expected(1.5)])
    assert len(compiles) == 3 and not list(directory.iterdir())  # nothing read, nothing written
    messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(messages) == 1 and "writable by group or others" in messages[0] and str(directory) in messages[0]


def test_a_parent_directory_others_can_write_is_not_used(cache):
    directory, compiles = cache
    directory.parent.mkdir()
    directory.parent.chmod(0o777)
    with pytest.warns(RuntimeWarning, match="writable by group or others"):
        _run_and_drop(1.25)
    assert not directory.exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_an_entry_owned_by_another_user_is_recompiled_and_replaced(cache):
    directory, compiles = cache
    _run_and_drop(2.5)
    (entry,) = _entries(directory)
    os.chown(entry, 65534, 65534)
    with pytest.warns(RuntimeWarning, match="owned by uid 65534"):
        assert _run_and_drop(2.5) == pytest.approx(_expected(2.5))
    assert len(compiles) == 2
    assert entry.stat().st_uid == os.geteuid()  # the foreign entry was overwritten by our own


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a directory to another user needs root")
def test_a_cache_directory_owned_by_another_user_is_not_used(cache):
    directory, compiles = cache
    _make_private(directory)
    os.chown(directory, 65534, 65534)
    with pytest.warns(RuntimeWarning, match="owned by uid 65534"):
        assert _run_and_drop(2.75) == pytest.approx(_expected(2.75))
    assert not list(directory.iterdir())


def test_an_entry_others_can_write_is_recompiled(cache):
    directory, compiles = cache
    _run_and_drop(3.5)
    (entry,) = _entries(directory)
    entry.chmod(0o666)
    with pytest.warns(RuntimeWarning, match="writable by group or others"):
        assert _run_and_drop(3.5) == pytest.approx(_expected(3.5))
    assert len(compiles) == 2
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600


def test_a_symlink_in_place_of_an_entry_is_not_followed(cache, tmp_path):
    directory, compiles = cache
    _run_and_drop(4.5)
    (entry,) = _entries(directory)
    elsewhere = tmp_path / "elsewhere.o"
    elsewhere.write_bytes(entry.read_bytes())  # a valid entry: following the link would load it
    entry.unlink()
    entry.symlink_to(elsewhere)
    with pytest.warns(RuntimeWarning, match="link"):
        assert _run_and_drop(4.5) == pytest.approx(_expected(4.5))
    assert len(compiles) == 2
    assert not entry.is_symlink()


def test_a_fifo_in_place_of_an_entry_does_not_block(cache):
    directory, compiles = cache
    _run_and_drop(4.75)
    (entry,) = _entries(directory)
    entry.unlink()
    os.mkfifo(entry, 0o600)
    with pytest.warns(RuntimeWarning, match="not a regular file"):
        assert _run_and_drop(4.75) == pytest.approx(_expected(4.75))
    assert len(compiles) == 2


# Junk that passes the entry's hash: each is planted under the key of the child's function, which
# must still compute the right value, compile again and replace the entry, so a later process loads it.
_CHILD = textwrap.dedent("""
    import numpy as np, symgrad as sg
    from symgrad.codegen.llvm import jit
    compiles = []
    real = jit.object_code
    jit.object_code = lambda *a, **k: compiles.append(1) or real(*a, **k)
    x = np.linspace(-1.0, 1.0, 33)
    print(repr(float(sg.compile(lambda x: sg.sum(sg.sin(x) * 5.5 + x ** 2))(x))), len(compiles))
""")


def _child(cache_dir):
    """(value, compiles) of a fresh process computing the function the junk test damages the entry of."""
    env = {**os.environ, "SYMGRAD_CACHE_DIR": str(cache_dir), "SYMGRAD_CACHE": "1"}
    env.pop("SYMGRAD_CACHE_MAX_BYTES", None)
    result = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, env=env, cwd=ROOT,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    value, compiles = result.stdout.split()
    return float(value), int(compiles)


def _plant(entry, key: str, code: bytes) -> None:
    """Write `code` as the entry of `key`, with the hash a reader checks."""
    entry.write_bytes(hashlib.sha256(key.encode() + code).digest() + code)
    entry.chmod(0o600)


def _sections(code: bytes):
    """(offset of its header, type, offset, size, link, info) of each section of an ELF64 LE object."""
    shoff, = struct.unpack_from("<Q", code, 0x28)
    shnum, = struct.unpack_from("<H", code, 0x3C)
    result = []
    for i in range(shnum):
        at = shoff + 64 * i
        _, kind, _, _, offset, size, link, info, _, _ = struct.unpack_from("<IIQQQQIIQQ", code, at)
        result.append((at, kind, offset, size, link, info))
    return result


def _patched(code: bytes, offset: int, fmt: str, value) -> bytes:
    data = bytearray(code)
    struct.pack_into(fmt, data, offset, value)
    return bytes(data)


def _junk(code: bytes, other: bytes) -> dict:
    """Damaged variants of a valid object `code` (and `other`, a valid object of another key)."""
    sections = _sections(code)
    rela = next(s for s in sections if s[1] == 4)
    symtab = next(s for s in sections if s[1] == 2)
    symbols = [symtab[2] + at for at in range(24, symtab[3], 24)]
    defined = next(at for at in symbols if struct.unpack_from("<H", code, at + 6)[0] not in (0, 0xFFF1, 0xFFF2))
    exported = next(at for at in symbols if code[at + 4] >> 4 == 1 and struct.unpack_from("<H", code, at + 6)[0])
    section_symbol = next(at for at in symbols if code[at + 4] & 0xF == 3)
    unwind = next(s for s in sections if s[1] == 0x70000001)
    text = next(s for s in sections if s[1] == 1 and s[3])  # a PROGBITS section with contents
    rng = np.random.default_rng(0)
    return {
        "random bytes": rng.bytes(len(code)),
        "empty": b"",
        "an ELF magic and zeros": b"\x7fELF" + bytes(200),
        "truncated to half": code[:len(code) // 2],
        "truncated by one byte": code[:-1],
        "another machine": _patched(code, 18, "<H", 183),
        "a shared object": _patched(code, 16, "<H", 3),
        "a section table past the end": _patched(code, 0x28, "<Q", len(code) + 64),
        "too many sections": _patched(code, 0x3C, "<H", 60000),
        "a section past the end": _patched(code, sections[2][0] + 24, "<Q", 1 << 40),
        "a huge zero-filled section": _patched(_patched(code, sections[2][0] + 4, "<I", 8),
                                               sections[2][0] + 32, "<Q", 1 << 44),
        "a relocation outside its section": _patched(code, rela[2], "<Q", 1 << 32),
        "a relocation of a missing symbol": _patched(code, rela[2] + 8, "<Q", (10 ** 6 << 32) | 1),
        "an unknown relocation type": _patched(code, rela[2] + 8, "<Q", (1 << 32) | 0xEE),
        "a symbol outside its section": _patched(code, defined + 8, "<Q", 1 << 40),
        "a symbol name outside the strings": _patched(code, symtab[2] + 24, "<I", 1 << 30),
        "an undefined symbol nothing provides": code.replace(b"symgrad_rt_Py_IncRef", b"symgrad_rt_Py_IncReX"),
        "a global file symbol": _patched(code, exported + 4, "<B", 0x14),
        "an undefined section symbol": _patched(code, section_symbol + 6, "<H", 0),
        "a thread-local section": _patched(code, text[0] + 8, "<Q", 0x406),
        "an unwind table that is not loaded": _patched(code, unwind[0] + 8, "<Q", 0),
        "a 32-bit absolute relocation": _patched(code, rela[2] + 8, "<Q", (1 << 32) | 10),
        "a section name outside the names": _patched(code, sections[1][0], "<I", 1 << 30),
        "another key's object": other,
    }


def test_junk_with_a_valid_hash_is_recompiled_never_loaded(tmp_path):
    cache_dir = tmp_path / "cache"
    expected = _child(cache_dir)
    assert expected[1] == 1
    (entry,) = list((cache_dir / "llvm").glob("*.o"))
    key, code = entry.stem, entry.read_bytes()[32:]
    other = tmp_path / "other"
    env = {**os.environ, "SYMGRAD_CACHE_DIR": str(other)}
    subprocess.run([sys.executable, "-c", "import numpy as np, symgrad as sg; "
                    "sg.compile(lambda x: sg.sum(sg.cos(x)))(np.ones(3))"], env=env, cwd=ROOT, check=True)
    (other_entry,) = list((other / "llvm").glob("*.o"))
    script = textwrap.dedent(f"""
        import hashlib, pickle, sys
        import numpy as np, symgrad as sg
        from symgrad import code_cache
        from symgrad.codegen.llvm import jit
        cases = pickle.load(open({str(tmp_path / "cases.pkl")!r}, "rb"))
        entry = {str(entry)!r}
        compiles = []
        real = jit.object_code
        jit.object_code = lambda *a, **k: compiles.append(1) or real(*a, **k)
        x = np.linspace(-1.0, 1.0, 33)
        for name, junk in cases.items():
            with open(entry, "wb") as out:
                out.write(hashlib.sha256({key!r}.encode() + junk).digest() + junk)
            before = len(compiles)
            code_cache._cache.clear()  # (the code this process lowered: the disk cache is read again)
            value = float(sg.compile(lambda x: sg.sum(sg.sin(x) * 5.5 + x ** 2))(x))
            assert value == {expected[0]!r}, (name, value)
            assert len(compiles) == before + 1, name
            print(name, flush=True)
    """)
    cases = _junk(code, other_entry.read_bytes()[32:])
    (tmp_path / "cases.pkl").write_bytes(pickle.dumps(cases))
    env = {**os.environ, "SYMGRAD_CACHE_DIR": str(cache_dir), "SYMGRAD_CACHE": "1"}
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=ROOT,
                            timeout=600)
    assert result.returncode == 0, f"after {result.stdout.split(chr(10))[-2:]}: {result.stderr[-2000:]}"
    assert result.stdout.split("\n")[:-1] == list(cases)
    assert _child(cache_dir) == (expected[0], 0)  # the last junk was replaced by good code


def test_an_entry_filed_under_the_wrong_key_does_not_break_later_calls(cache):
    directory, compiles = cache
    _run_and_drop(6.5)
    _run_and_drop(6.75)
    first, second = _entries(directory)
    _plant(first, first.stem, second.read_bytes()[32:])  # the other key's code, with a hash that passes
    values = [_run_and_drop(6.5), _run_and_drop(6.75), _run_and_drop(6.5), _run_and_drop(6.75)]
    assert values == pytest.approx([_expected(6.5), _expected(6.75)] * 2)
    assert len(compiles) == 3  # the misfiled entry was recompiled once, then read back


def test_the_objects_this_process_emits_pass_the_entry_checks(cache):
    """The checks accept what LLVM emits for kernels using BLAS, loops, tapes and big constants."""
    directory, compiles = cache
    big = np.linspace(0.0, 1.0, 20_000)

    def loop(x):
        return sg.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, sg.sin(c[1]) * 1.5), (0, x))[1]
    functions = [
        (lambda w, x: sg.sum(sg.tanh(x @ w) ** 2), (np.ones((40, 30)), np.ones((50, 40)))),
        (lambda x: sg.sum(x * big), (np.ones(20_000),)),
        (lambda x: sg.sum(loop(x)), (np.ones(5),)),
    ]
    for fn, args in functions:
        step = sg.value_and_grad(fn)
        first = sg.compile(step)(*args)
        gc.collect()
        before = len(compiles)
        again = sg.compile(step)(*args)
        assert len(compiles) == before  # read back from disk, not recompiled
        np.testing.assert_allclose(again[0], first[0])


# ----------------------------------------------------------------------------- bounded memory

def _closing_over(big):
    return sg.compile(lambda x: -sg.sum(x * -big))  # -big: a constant made by the trace (big itself is read)


def test_a_compiled_function_owns_its_native_code_and_constants(cache):
    big = np.linspace(0.0, 1.0, 100_000) * 7.25  # over 64 KiB: pinned, not compiled in
    f = _closing_over(big)
    assert float(f(np.ones(100_000))) == pytest.approx(float(big.sum()))
    owner = f.lower(np.ones(100_000)).executable.entry.__self__.owner
    assert isinstance(owner, jit.JitModule) and owner.pinned
    code, constant = weakref.ref(owner), weakref.ref(big)
    del owner, f, big
    gc.collect()
    assert constant() is None and code() is not None  # the cache of lowered code holds the code, not the array
    code_cache._cache.clear()
    gc.collect()
    assert code() is None


def test_identical_code_is_shared_while_alive(cache):
    f, g = _function(7.5), _function(7.5)
    f(X), g(X)
    owner = f.lower(X).executable.entry.__self__.owner
    assert g.lower(X).executable.entry.__self__.owner is owner
    code = weakref.ref(owner)
    del f, owner
    code_cache._cache.clear()
    gc.collect()
    assert code() is not None  # g still runs it
    del g
    gc.collect()
    assert code() is None


def test_the_eager_adjoint_cache_frees_the_code_it_evicts(cache, monkeypatch):
    from symgrad.eager import tape, whole_backward
    monkeypatch.setattr(whole_backward, "_cache", Recent(1))  # not the adjoints of other tests; keeps one
    monkeypatch.setattr(code_cache, "_cache", Recent(1))  # nor their code
    tape.start_over()
    rng = np.random.default_rng(0)

    def steps(columns):
        for _ in range(2):  # the second backward of a structure runs its lowered adjoint
            w = sg.tensor(rng.standard_normal((3, columns)), requires_grad=True)
            sg.sum(sg.tanh(sg.tensor(rng.standard_normal((4, 3))) @ w) * 1.125).backward()
        return next(reversed(whole_backward._cache.values()))
    entry = steps(11)
    code = weakref.ref(entry.executable.entry.__self__.owner)
    del entry
    steps(12)
    gc.collect()
    assert code() is None


# ----------------------------------------------------------------------------- the disk cache's size

def _write(key: str, size: int, mtime: float) -> None:
    disk_cache.write(key, bytes(size))
    os.utime(os.path.join(disk_cache.location(), key + ".o"), (mtime, mtime))


def test_the_disk_cache_evicts_least_recently_used_entries_over_its_cap(cache, monkeypatch):
    directory, _ = cache
    monkeypatch.setenv("SYMGRAD_CACHE_MAX_BYTES", str(3 * 1032))  # three entries of 1000 bytes and their hash
    for number, key in enumerate("abc"):
        _write(key * 64, 1000, 1000.0 + number)
    disk_cache.touch("a" * 64)  # used just now: the least recently used is b
    _write("d" * 64, 1000, 2000.0)
    assert sorted(p.stem[0] for p in _entries(directory)) == ["a", "c", "d"]


def test_stale_temporary_files_of_killed_writers_are_removed(cache):
    directory, _ = cache
    _make_private(directory)
    stale, fresh = directory / "dead.0123.tmp", directory / "alive.4567.tmp"
    stale.write_bytes(b"partial")
    fresh.write_bytes(b"partial")
    os.utime(stale, (1.0, 1.0))
    disk_cache.write("e" * 64, b"code")
    assert not stale.exists() and fresh.exists()


@pytest.mark.parametrize("text", ["lots", "-1", "1.5"])
def test_a_bad_cache_size_cap_is_a_clear_error(cache, monkeypatch, text):
    monkeypatch.setenv("SYMGRAD_CACHE_MAX_BYTES", text)
    with pytest.raises(ValueError, match="SYMGRAD_CACHE_MAX_BYTES"):
        _function(8.5)(X)


# ----------------------------------------------------------------------------- fork

_FORK_CHILD = textwrap.dedent("""
    import os, threading, time
    import numpy as np, symgrad as sg
    x = np.linspace(0.0, 1.0, 17)
    stop = False

    def compile_forever():
        tag = 0.0
        while not stop:
            tag += 1.0
            sg.compile(lambda x: sg.sum(sg.exp(x) * tag + sg.sin(x * tag)))(x)

    # symgrad imports its modules on first use: a fork while another thread is inside an import leaves the
    # child waiting on that module's import lock (any lazily importing library does), so import them first
    sg.compile(lambda x: sg.sum(sg.exp(x)))(x)
    worker = threading.Thread(target=compile_forever)
    worker.start()
    time.sleep(0.5)
    failures = 0
    for attempt in range(8):
        pid = os.fork()
        if pid == 0:
            value = float(sg.compile(lambda x: sg.sum(sg.cos(x) * (attempt + 0.5)))(x))
            os._exit(0 if abs(value - np.sum(np.cos(x)) * (attempt + 0.5)) < 1e-9 else 3)
        deadline = time.monotonic() + 60
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                failures += os.waitstatus_to_exitcode(status) != 0
                break
            if time.monotonic() > deadline:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                failures += 1
                break
            time.sleep(0.05)
        time.sleep(0.05)
    stop = True
    worker.join()
    print("failures", failures)
""")


def test_fork_while_another_thread_compiles_does_not_deadlock_the_child(tmp_path):
    env = {**os.environ, "SYMGRAD_CACHE_DIR": str(tmp_path), "SYMGRAD_CACHE": "1"}
    result = subprocess.run([sys.executable, "-c", _FORK_CHILD], capture_output=True, text=True, env=env, cwd=ROOT,
                            timeout=900)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["failures", "0"]


# ----------------------------------------------------------------------------- the signature cache

@pytest.mark.parametrize("backend", ["llvm", "numpy"])
def test_a_compiled_function_keeps_its_most_recently_used_signatures(cache, backend, monkeypatch, caplog):
    monkeypatch.setenv("SYMGRAD_EXPLAIN", "1")
    traces = []

    def f(x):
        traces.append(x.shape)
        return sg.sum(sg.sin(x) * 9.25)
    compiled = sg.compile(f, backend=backend, max_signatures=2)
    for size in (3, 4, 3, 5, 3, 4):  # 3 stays recently used; 4 is evicted by 5, then traced again
        assert float(compiled(np.ones(size))) == pytest.approx(np.sin(1.0) * 9.25 * size)
    assert traces == [(3,), (4,), (5,), (4,)]
    assert compiled.cache_info() == ["f64[3]", "f64[4]"]
    evictions = [r.getMessage() for r in caplog.records if "evicted" in r.getMessage()]
    assert len(evictions) == 2 and "(f64[4])" in evictions[0] and "(f64[5])" in evictions[1]


def test_an_evicted_signature_frees_its_native_code(cache, monkeypatch):
    monkeypatch.setattr(code_cache, "_cache", Recent(1))  # the cache of lowered code evicts it too
    compiled = sg.compile(lambda x: sg.sum(sg.cos(x) * 9.5), max_signatures=1)
    compiled(np.ones(3))
    code = weakref.ref(compiled.lower(np.ones(3)).executable.entry.__self__.owner)
    compiled(np.ones(4))
    gc.collect()
    assert code() is None
    assert compiled.cache_info() == ["f64[4]"]


def test_the_signature_limit_comes_from_the_environment(cache, monkeypatch):
    monkeypatch.setenv("SYMGRAD_MAX_SIGNATURES", "1")
    compiled = sg.compile(lambda x: sg.sum(x * 9.75))
    compiled(np.ones(3)), compiled(np.ones(4))
    assert compiled.cache_info() == ["f64[4]"]


@pytest.mark.parametrize("where,value", [("argument", 0), ("argument", "two"), ("argument", True),
                                         ("argument", 2.5), ("environment", "lots"), ("environment", "-3")])
def test_a_bad_signature_limit_is_a_clear_error(monkeypatch, where, value):
    if where == "environment":
        monkeypatch.setenv("SYMGRAD_MAX_SIGNATURES", value)
        with pytest.raises(ValueError, match="SYMGRAD_MAX_SIGNATURES must be a whole number"):
            sg.compile(lambda x: x)
    else:
        with pytest.raises(ValueError, match="max_signatures must be a whole number"):
            sg.compile(lambda x: x, max_signatures=value)


_FUZZ_CHILD = textwrap.dedent("""
    import struct, sys
    import numpy as np, symgrad as sg
    import llvmlite.binding as llvm
    from symgrad.codegen.llvm import elf, jit
    texts = []
    real = jit.load
    jit.load = lambda text, *rest: texts.append((text, rest)) or real(text, *rest)
    sg.compile(lambda x: sg.sum(sg.tanh(x @ x.T) * 3.0 + x ** 2))(np.ones((5, 5)))
    text, (names, *_) = texts[0]
    key = jit.cache_key(text)
    prefix = jit._prefix(key)
    code = jit.object_code(text.replace(jit.PLACEHOLDER, prefix) + f'\\n@"{prefix}cache_key" = constant [64 x i8] c"{key}"\\n')
    shoff, = struct.unpack_from("<Q", code, 0x28)
    shnum, = struct.unpack_from("<H", code, 0x3C)
    regions = [(0, 64), (shoff, shnum * 64)]  # the header, the section table, the symbol and relocation tables
    for i in range(shnum):
        _, kind, _, _, offset, size, *_ = struct.unpack_from("<IIQQQQIIQQ", code, shoff + 64 * i)
        if kind in (2, 4):
            regions.append((offset, size))
    required = {prefix + name: None for name in names}
    required[prefix + jit.KEY_SYMBOL] = key.encode()
    accepted = 0
    for case in range(int(sys.argv[1])):
        rng = np.random.default_rng([7, case])
        data = bytearray(code)
        for _ in range(rng.integers(1, 4)):
            offset, size = regions[rng.integers(len(regions))]
            at = offset + int(rng.integers(size))
            data[at] = int(rng.integers(256)) if rng.random() < 0.5 else data[at] ^ (1 << int(rng.integers(8)))
        try:
            elf.check(bytes(data), jit._reference_object(), required, lambda name: bool(llvm.address_of_symbol(name)))
        except elf.InvalidObject:
            continue
        accepted += 1
        jit.JitModule(bytes(data), prefix, names, {}).holds_key(prefix, key)  # LLVM links what was accepted
    print(accepted)
""")


def test_damaged_object_metadata_is_refused_or_links_never_crashes(tmp_path):
    """Random byte changes in the header, section table, symbols and relocations of a real object (the
    hash does not protect an entry someone rewrote): what the checks accept, LLVM links without aborting."""
    env = {**os.environ, "SYMGRAD_CACHE_DIR": str(tmp_path), "SYMGRAD_CACHE": "0"}
    result = subprocess.run([sys.executable, "-c", _FUZZ_CHILD, "600"], capture_output=True, text=True, env=env,
                            cwd=ROOT, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    assert 0 < int(result.stdout) < 600  # some changes are harmless (padding, unused fields), most are refused


_LOOP_CHILD = textwrap.dedent("""
    import numpy as np, symgrad as sg
    from symgrad import while_loop
    from symgrad.codegen.llvm import jit
    compiles = []
    real = jit.object_code
    jit.object_code = lambda *a, **k: compiles.append(1) or real(*a, **k)
    step = lambda c: (c[0] * 0.9 + sg.sin(c[0]), c[1] + 1)
    f = sg.compile(sg.grad(lambda x: while_loop(lambda c: c[1] < 4, step, (x, 0))[0].sum()))
    print(repr(float(f(np.linspace(-1.0, 1.0, 4096)).sum())), len(compiles))
""")


def test_entries_calling_libcs_memcpy_are_read_back_in_a_fresh_process(tmp_path):
    """A while loop's gradient copies its tape with llvm.memcpy, which LLVM lowers to libc's memcpy: the entry's
    check found that symbol unresolved in a process without an engine yet, and every process recompiled it (the
    normalizing-flows program logged 'recompiling the damaged disk-cache entry' twice a run)."""
    env = {**os.environ, "SYMGRAD_CACHE_DIR": str(tmp_path / "cache"), "SYMGRAD_CACHE": "1"}
    env.pop("SYMGRAD_CACHE_MAX_BYTES", None)
    runs = []
    for _ in range(2):
        result = subprocess.run([sys.executable, "-c", _LOOP_CHILD], capture_output=True, text=True, env=env,
                                cwd=ROOT, timeout=300)
        assert result.returncode == 0, result.stderr
        value, compiles = result.stdout.split()
        runs.append((float(value), int(compiles)))
    assert any(b"memcpy" in entry.read_bytes() for entry in (tmp_path / "cache" / "llvm").glob("*.o"))
    assert runs[0][1] >= 1 and runs[1] == (runs[0][0], 0)
