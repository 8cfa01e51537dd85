"""Random stacks of transforms over random programs (random_programs_transforms.py), symgrad uncompiled and compiled
on both backends against the same stack in JAX, float64, to 1e-10. A few seeds run here;
`python tests/random_programs_transforms.py --count 300 [--special] [--minimize]` runs many more."""
import pytest

pytest.importorskip("jax")
from random_programs_transforms import Case, check, libraries  # noqa: E402

LIBS = []


def _libs():
    if not LIBS:
        LIBS.append(libraries())
    return LIBS[0]


@pytest.mark.parametrize("seed, special", [(8, None), (17, None), (22, None), (24, None), (27, None), (29, None),
                                           (28, None), (35, None), (37, None), (51, None), (55, None), (439, None),
                                           (2, "zeros"), (5, "zeros"), (2309, "zeros"), (6, "nonfinite")])
def test_random_transform_stack_matches_jax(seed, special):
    report = check(Case(seed, _libs()), special=special)
    assert all(outcome == "ok" or outcome.startswith(("both refused", "JAX refused")) for outcome in report.values()), \
        report
