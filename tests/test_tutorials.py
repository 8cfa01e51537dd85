"""PyTorch beginner tutorial programs ported by renaming `torch` to `sg` (tests/tutorials/) run, and print what
the same programs print under PyTorch when it is installed (the comparison of tests/test_eager_examples.py)."""
import pathlib

import pytest

from test_eager_examples import NUMBER, _normalize, _run

PROGRAMS = pathlib.Path(__file__).resolve().parent / "tutorials"


@pytest.mark.parametrize("name", ["polynomial_optim.py", "nn_tutorial.py"])
def test_tutorial_matches_pytorch(name):
    source = (PROGRAMS / name).read_text()
    assert "import symgrad as sg" in source
    ours = _run(source, name)
    assert len(ours.splitlines()) > 4
    pytest.importorskip("torch", reason="PyTorch is not installed: the tutorial ran, without comparison")
    theirs = _run(source.replace("import symgrad as sg", "import torch as sg"), name)
    our_lines, their_lines = ours.splitlines(), [_normalize(line).replace("torch.Size", "sg.Size")
                                               for line in theirs.splitlines()]
    assert len(our_lines) == len(their_lines), f"\n{ours}\n---\n{theirs}"
    for mine, other in zip(our_lines, their_lines):
        assert NUMBER.sub("#", mine) == NUMBER.sub("#", other), f"\n{mine}\n{other}"
        for a, b in zip(NUMBER.findall(mine), NUMBER.findall(other)):
            assert float(a) == pytest.approx(float(b), rel=2e-3, abs=2e-3), f"\n{mine}\n{other}"

