"""The examples run as scripts (fresh interpreter, from the repository root) and say what they should."""
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


def run_example(name):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / name)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{name} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def test_quickstart():
    out = run_example("quickstart.py")
    assert "== forward IR ==" in out and "def loss(" in out
    assert "== value-and-gradient IR ==" in out and "# backward" in out
    assert "== generated NumPy source ==" in out and "import numpy as np" in out
    match = re.search(r"max \|grad - finite difference\|: dw (\S+), db (\S+)", out)
    assert match and max(float(match[1]), float(match[2])) < 1e-8


def test_scipy_minimize():
    out = run_example("scipy_minimize.py")
    if "SciPy is not installed" in out:
        pytest.skip("SciPy is not installed")
    assert "success: True" in out
    assert re.search(r"iterations: \d+", out)
    assert float(re.search(r"max \|x\* - 1\| = (\S+)", out)[1]) < 1e-4


def test_ode_fit_with_fori_loop():
    out = run_example("ode_fit.py")
    if "SciPy is not installed" in out:
        pytest.skip("SciPy is not installed")
    assert "agrees with central differences" in out and "success: True" in out
    assert float(re.search(r"max \|p\* - p_true\| = (\S+)", out)[1]) < 0.1


def test_rnn_with_scan():
    out = run_example("rnn_scan.py")
    assert "agrees with central differences" in out
    first, last = map(float, re.search(r"loss: (\S+) -> (\S+)", out).groups())
    assert last < first / 5


def test_newton_solve_with_while_loop_in_reverse_mode():
    out = run_example("newton_while.py")
    assert float(re.search(r"max difference: (\S+)", out)[1]) < 1e-12


def test_gaussian_process_with_linalg():
    out = run_example("gaussian_process.py")
    assert float(re.search(r"central differences: max \|difference\| = (\S+)", out)[1]) < 1e-6
    assert 0.05 < float(re.search(r"noise std (\S+)", out)[1]) < 0.2
    assert float(re.search(r"max \|error\| = (\S+)", out)[1]) < 0.3
