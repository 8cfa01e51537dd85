"""examples/cnn_training.py trains (its accuracy rises well above chance) and, with dropout off, prints what the
same program prints under PyTorch (when installed): the same data, batches and initial weights, from NumPy."""
import contextlib
import io
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCE = (ROOT / "examples" / "cnn_training.py").read_text()
NUMBER = re.compile(r"-?\d+\.?\d*(?:e[-+]?\d+)?")


def _run(source: str) -> list:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(source, str(ROOT / "examples" / "cnn_training.py"), "exec"), {"__name__": "__main__"})
    return out.getvalue().splitlines()


def _without_dropout(source: str) -> str:
    assert "DROPOUT = 4, 16, 6, 64, 0.25" in source
    return source.replace("DROPOUT = 4, 16, 6, 64, 0.25", "DROPOUT = 4, 16, 6, 64, 0.0")


def test_the_example_trains_a_cnn_with_dropout():
    lines = _run(SOURCE)
    assert [line.split(":")[0] for line in lines] == [f"epoch {e}" for e in range(1, 7)]
    losses = [float(NUMBER.findall(line)[1]) for line in lines]
    assert losses[-1] < 0.7 * losses[0]
    assert float(re.search(r"test accuracy (\S+),", lines[-1]).group(1)) > 0.5  # four classes


def test_without_dropout_it_prints_what_pytorch_prints():
    source = _without_dropout(SOURCE)
    ours = _run(source)
    pytest.importorskip("torch", reason="PyTorch is not installed: the example ran, without comparison")
    theirs = _run(source.replace("import symgrad as sg", "import torch as sg"))
    assert len(ours) == len(theirs) == 6
    for mine, other in zip(ours, theirs):
        assert NUMBER.sub("#", mine) == NUMBER.sub("#", other)
        for a, b in zip(NUMBER.findall(mine), NUMBER.findall(other)):
            assert float(a) == pytest.approx(float(b), rel=2e-3, abs=2e-3), f"\n{mine}\n{other}"
