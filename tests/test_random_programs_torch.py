"""Random straight-line programs over PyTorch's tensor surface (random_programs_torch.py) in symgrad against
PyTorch: each statement's values, dtypes and shapes, the final values after in-place writes through views, and
every leaf's gradient. A few seeds run here; `python tests/random_programs_torch.py --count 300 [--float32]
[--minimize]` runs many more."""
import pytest

pytest.importorskip("torch")
from random_programs_torch import check  # noqa: E402

SEEDS = []


@pytest.mark.parametrize("seed, dtype", SEEDS)
def test_random_torch_program_matches_pytorch(seed, dtype):
    check(seed, dtype)
