"""The eager examples run, and print what the same program prints under PyTorch (when installed).

Each example imports `symgrad as sg` and uses only names PyTorch shares, so replacing the
import by `import torch as sg` gives the matching PyTorch program. Outputs are compared
line by line: the same words, and numbers equal to a tolerance (PyTorch computes scalars
made from Python floats in float32, symgrad in float64).
"""
import contextlib
import io
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXAMPLES = sorted(p.name for p in (ROOT / "examples").glob("eager_*.py"))
NUMBER = re.compile(r"-?\d+\.?\d*(?:e[-+]?\d+)?")


def _run(source: str, name: str) -> str:
    """Run an example's source in this process (imports are shared, so it is fast); its stdout."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(source, str(ROOT / "examples" / name), "exec"), {"__name__": "__main__"})
    return out.getvalue()


def _normalize(line: str) -> str:
    """PyTorch's spelling of the same thing: dtype suffixes, Function grad_fn names, object addresses."""
    line = re.sub(r", dtype=torch\.float(64|32)", "", line)
    return line.replace("torch.return_types.", "sg.return_types.")


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_matches_pytorch(name):
    source = (ROOT / "examples" / name).read_text()
    assert "import symgrad as sg" in source
    ours = _run(source, name)
    assert ours.strip()
    pytest.importorskip("torch", reason="PyTorch is not installed: the example ran, without comparison")
    theirs = _run(source.replace("import symgrad as sg", "import torch as sg"), name)
    our_lines, their_lines = ours.splitlines(), [_normalize(line) for line in theirs.splitlines()]
    assert len(our_lines) == len(their_lines), f"\n{ours}\n---\n{theirs}"
    for mine, other in zip(our_lines, their_lines):
        assert NUMBER.sub("#", mine) == NUMBER.sub("#", other), f"\n{mine}\n{other}"
        for a, b in zip(NUMBER.findall(mine), NUMBER.findall(other)):
            assert float(a) == pytest.approx(float(b), rel=2e-3, abs=2e-3), f"\n{mine}\n{other}"
