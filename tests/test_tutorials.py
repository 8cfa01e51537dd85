"""PyTorch tutorial programs ported by renaming `torch` to `sg` (tests/tutorials/) run, and print what the same
programs print under PyTorch when it is installed (the comparison of tests/test_eager_examples.py): every line, its
words equal and its numbers equal to a tolerance. Each program's header names the tutorial and what was changed."""
import pathlib
import re

import pytest

from test_eager_examples import NUMBER, _normalize, _run

PROGRAMS = pathlib.Path(__file__).resolve().parent / "tutorials"
NAMES = sorted(path.name for path in PROGRAMS.glob("*.py"))


def pytorch_source(source: str) -> str:
    """The PyTorch program a port was made from: its symgrad imports renamed back."""
    return re.sub(r"^(import|from) symgrad\b", r"\1 torch", source, flags=re.MULTILINE)


def pytorch_line(line: str) -> str:
    """A line PyTorch printed, in the spelling of the documented differences (docs/eager.md, "Different from
    PyTorch"): `torch.Size` is `sg.Size`, a dtype prints without `torch.`, and the addresses in `<AddBackward0
    object at 0x...>` are an object's own."""
    line = _normalize(line).replace("torch.Size", "sg.Size")
    return re.sub(r"\btorch\.(?=(float|int|uint|bool|complex)\d*\b)", "", line)


def words(line: str) -> str:
    """A line with its numbers as `#` and its runs of spaces as one: a number's padding depends on its sign (a
    float32 difference of one ulp in a cancellation prints -3.5763e-07 for 5.9605e-08)."""
    return re.sub(r" +", " ", NUMBER.sub("#", line))


def without_addresses(line: str) -> str:
    return re.sub(r" at 0x[0-9a-f]+>", " at 0x>", line)


@pytest.mark.parametrize("name", NAMES)
def test_tutorial_matches_pytorch(name):
    source = (PROGRAMS / name).read_text()
    assert "import symgrad as sg" in source
    ours = _run(source, name)
    assert len(ours.splitlines()) > 4
    torch = pytest.importorskip("torch", reason="PyTorch is not installed: the tutorial ran, without comparison")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # (the CIFAR10 tutorial's small convolutions took 15x the CPU time on 2 busy cores)
    try:
        theirs = _run(pytorch_source(source), name)
    finally:
        torch.set_num_threads(threads)
    our_lines = [without_addresses(line) for line in ours.splitlines()]
    their_lines = [without_addresses(pytorch_line(line)) for line in theirs.splitlines()]
    assert len(our_lines) == len(their_lines), f"\n{ours}\n---\n{theirs}"
    for mine, other in zip(our_lines, their_lines):
        assert words(mine) == words(other), f"\n{mine}\n{other}"
        for a, b in zip(NUMBER.findall(mine), NUMBER.findall(other)):
            assert float(a) == pytest.approx(float(b), rel=2e-3, abs=2e-3), f"\n{mine}\n{other}"
