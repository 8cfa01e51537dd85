"""Programs other people wrote (tests/programs/), replayed on symgrad and compared line by line with what the same
program prints on the library it was written for, as tests/test_tutorials.py does for PyTorch's tutorials.

- `autograd_*.py`: HIPS/autograd's examples, ported by importing `symgrad.numpy as np` and `symgrad as sg` for
  `autograd.numpy` and autograd's transforms. Oracle: the same source on JAX in float64 (`jax.numpy`, `jax`), whose
  output is recorded next to the program (`.jax.txt`): JAX compiles each op of an un-jitted program for each new
  shape, 2 to 13 s of CPU a program. `SYMGRAD_ORACLES=1` runs JAX again and checks the recording;
  `python tests/test_programs.py` records them anew.
- `jax_*.py`: google/jax's examples, ported by importing `symgrad.numpy as jnp` and `sg.compile` for `jax.jit`.
  Oracle: the same source on JAX in float64, recorded as for autograd's.
- `numpy_*.py`: plain NumPy programs that differentiate by hand, kept on NumPy, with the same loss written on
  `symgrad.numpy` and differentiated by `sg.grad` to check theirs. Oracle: JAX, recorded as for autograd's.
- `pytorch_*.py`: pytorch/examples' programs (and others' PyTorch programs) with synthetic data of the same shapes,
  `import torch` renamed (to `sg`, or kept as the name of `symgrad` where that changes fewer lines).
  Oracle: PyTorch, in float64 where the program says so.
Each program's header names its original and what was changed; every changed line is marked `# changed`.
"""
import contextlib
import io
import os
import pathlib
import re
import sys

import pytest

from test_eager_examples import NUMBER
from test_tutorials import pytorch_line, pytorch_source, without_addresses, words

PROGRAMS = pathlib.Path(__file__).resolve().parent / "programs"
AUTOGRAD = sorted(path.name for path in [*PROGRAMS.glob("autograd_*.py"), *PROGRAMS.glob("jax_*.py"),
                                          *PROGRAMS.glob("numpy_*.py")])
PYTORCH = sorted(path.name for path in PROGRAMS.glob("pytorch_*.py"))


def run(source: str, name: str) -> str:
    """A program's stdout, run in this process under its own file name, with the programs' folder importable (its
    stand-ins for gymnasium's environments)."""
    out = io.StringIO()
    sys.path.insert(0, str(PROGRAMS))
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(source, str(PROGRAMS / name), "exec"), {"__name__": "__main__"})
    finally:
        sys.path.remove(str(PROGRAMS))
    return out.getvalue()


def jax_source(source: str) -> str:
    """The JAX program a port stands for: `symgrad.numpy`/`symgrad.scipy` are `jax.numpy`/`jax.scipy`, `sg` is
    `jax` (grad, value_and_grad, hessian, vjp, jvp, vmap and custom_vjp have JAX's names), `sg.compile` is
    `jax.jit`, `sg.check_grads` is `jax.test_util.check_grads`, `symgrad.numpy.random` (autograd's, NumPy's)
    is `numpy.random`, and the control flow and stop_gradient imported from symgrad (`while_loop`, `fori_loop`,
    `scan`, `cond`, `switch`) are `jax.lax`'s."""
    source = re.sub(r"^import symgrad\.numpy\.random\b", "import numpy.random", source, flags=re.MULTILINE)
    source = re.sub(r"^from symgrad import (?=(while_loop|fori_loop|scan|cond|switch|stop_gradient)\b)",
                    "from jax.lax import ", source, flags=re.MULTILINE)
    source = re.sub(r"^(import|from) symgrad\b", r"\1 jax", source, flags=re.MULTILINE)
    source = re.sub(r"\bsg\.compile\b", "jax.jit", re.sub(r"\bcompile as jit\b", "jit", source))
    return "import jax.test_util\n" + source.replace("sg.check_grads(", "jax.test_util.check_grads(")


def compare(ours: str, theirs: str, rel: float, absolute: float):
    """The same lines, their words equal and their numbers equal to a tolerance."""
    our_lines, their_lines = ours.splitlines(), theirs.splitlines()
    assert len(our_lines) == len(their_lines), f"\n{ours}\n---\n{theirs}"
    for mine, other in zip(our_lines, their_lines):
        assert words(mine) == words(other), f"\n{mine}\n{other}"
        for a, b in zip(NUMBER.findall(mine), NUMBER.findall(other)):
            assert float(a) == pytest.approx(float(b), rel=rel, abs=absolute), f"\n{mine}\n{other}"


def jax_output(name: str) -> str:
    """What the JAX program of an autograd port prints, in float64."""
    import jax
    with jax.enable_x64(True):
        return run(jax_source((PROGRAMS / name).read_text()), name)


def recorded(name: str) -> pathlib.Path:
    return PROGRAMS / name.replace(".py", ".jax.txt")


@pytest.mark.parametrize("name", AUTOGRAD)
def test_autograd_program_matches_jax(name):
    source = (PROGRAMS / name).read_text()
    assert re.search(r"^import symgrad\.numpy as (j?np$|snp\b)", source, flags=re.MULTILINE)
    ours = run(source, name)
    compare(ours, recorded(name).read_text(), rel=1e-6, absolute=1e-9)


@pytest.mark.skipif(not os.environ.get("SYMGRAD_ORACLES"), reason="JAX's runs take minutes: SYMGRAD_ORACLES=1")
@pytest.mark.parametrize("name", AUTOGRAD)
def test_recorded_output_is_jaxs(name):
    pytest.importorskip("jax")
    compare(recorded(name).read_text(), jax_output(name), rel=1e-9, absolute=1e-12)


@pytest.mark.parametrize("name", PYTORCH)
def test_pytorch_program_matches_pytorch(name):
    source = (PROGRAMS / name).read_text()
    assert re.search(r"^import symgrad as (sg|torch)", source, flags=re.MULTILINE)
    ours = run(source, name)
    assert len(ours.splitlines()) > 2
    torch = pytest.importorskip("torch", reason="PyTorch is not installed: the program ran, without comparison")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        theirs = run(pytorch_source(source), name)
    finally:
        torch.set_num_threads(threads)
    compare("\n".join(without_addresses(line) for line in ours.splitlines()),
            "\n".join(without_addresses(pytorch_line(line)) for line in theirs.splitlines()), rel=1e-6, absolute=1e-9)


if __name__ == "__main__":  # record what JAX prints for the autograd ports (all, or those named)
    for name in sys.argv[1:] or AUTOGRAD:
        recorded(name).write_text(jax_output(name))
        print("recorded", recorded(name).name)
