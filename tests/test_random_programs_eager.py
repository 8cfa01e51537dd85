"""Random eager training loops (random_programs_eager.py) in symgrad against PyTorch: every step's loss, .grad and
parameter, float64 to 1e-10 and float32 to 2e-3. A few seeds run here (36, 116, 11 and 114: conv nets with batch,
group and instance norms, transposed convs, pooling, Dropout in eval, a validation pass, input-gradient penalties);
`python tests/random_programs_eager.py --count 300 [--float32] [--minimize]` runs many more."""
import pytest

pytest.importorskip("torch")
from random_programs_eager import check  # noqa: E402


@pytest.mark.parametrize("seed, dtype", [(3, "float64"), (13, "float64"), (15, "float64"), (20, "float64"),
                                         (25, "float64"), (26, "float64"), (28, "float64"), (8, "float32"),
                                         (36, "float64"), (116, "float64"), (11, "float64"), (114, "float64")])
def test_random_eager_training_loop_matches_pytorch(seed, dtype):
    assert check(seed, dtype) is not None, "PyTorch refused the program: a generator bug"
