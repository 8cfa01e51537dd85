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
def test_a_library_rewritten_at_a_loaded_path_is_refused_in_the_same_process(tmp_path):
    """dlopen hands back the library already loaded from a path: the loader says so."""
    base = build(tmp_path)
    assert sg.load(base)(np.arange(3.0)) == 5.0
    build(tmp_path, fn=lambda x: sg.sum(x * x * x))
    with pytest.raises(ArtifactError, match="older library loaded from this path"):
        sg.load(base)
