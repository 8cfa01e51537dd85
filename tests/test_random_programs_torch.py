"""Random straight-line programs over PyTorch's tensor surface (random_programs_torch.py) in symgrad against
PyTorch: each statement's values, dtypes and shapes, the final values after in-place writes through views, and
every leaf's gradient. A few seeds run here; `python tests/random_programs_torch.py --count 300 [--float32]
[--minimize]` runs many more."""
import pytest

pytest.importorskip("torch")
from random_programs_torch import check  # noqa: E402

SEEDS = [(seed, "float64") for seed in (0, 1, 2, 5, 6, 8, 9, 10, 11, 12, 15, 17, 20, 21, 25, 37)] + \
    [(seed, "float32") for seed in (1000, 1004, 1005, 1007)] + \
    [(seed, "float64") for seed in (9134, 9137, 20029, 20035)]  # (fuzz36's: bool sign, empty norms, interpolate, clamp)


@pytest.mark.parametrize("seed, dtype", SEEDS)
def test_random_torch_program_matches_pytorch(seed, dtype):
    assert check(seed, dtype) is not None, "PyTorch cannot differentiate the program: a generator bug"
