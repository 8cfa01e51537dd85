"""Random programs over sg.linalg, sg.scipy.linalg and sg.scipy.special/stats (random_programs_linalg.py) through
symgrad's paths, against JAX in float64. A few seeds run here; `python tests/random_programs_linalg.py --count 500
[--inputs singular]` runs many more."""
import pytest

pytest.importorskip("jax")
from random_programs_linalg import check  # noqa: E402


@pytest.mark.parametrize("seed, inputs", [(10, "smooth"), (29, "smooth"), (10, "singular")])
def test_random_linalg_program_on_every_path(seed, inputs):
    report = check(seed, inputs)
    assert all(outcome == "ok" for outcome in report.values()), report
