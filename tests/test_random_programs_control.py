"""Random programs of loops, branches and composed transforms (random_programs_control.py) through symgrad's paths,
against JAX in float64. A few seeds run here; `python tests/random_programs_control.py --count 500 [--special]`
runs many more."""
import pytest

pytest.importorskip("jax")
from random_programs_control import KNOWN_REFUSALS, check  # noqa: E402


@pytest.mark.parametrize("seed, special", [(2001, False), (2003, False), (1010, True), (7162, True)])
def test_random_control_flow_program_on_every_path(seed, special):
    report = check(seed, special=special)
    refused = {path: outcome for path, outcome in report.items() if outcome != "ok"}
    assert all(any(known in outcome for known in KNOWN_REFUSALS) for outcome in refused.values()), refused
