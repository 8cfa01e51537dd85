"""Fixtures shared by several test modules; the suite's own compile cache."""
import atexit
import os
import shutil
import tempfile

import pytest

from symgrad import backends, code_cache
from symgrad.caches import Recent
from symgrad.eager import adjoint, tape, whole_backward

# The suite's compiled code goes to a cache directory of its own, removed at exit, never into the user's
# ~/.cache/symgrad; a SYMGRAD_CACHE_DIR the caller set (CI's fresh directory) is kept.
if "SYMGRAD_CACHE_DIR" not in os.environ:
    os.environ["SYMGRAD_CACHE_DIR"] = tempfile.mkdtemp(prefix="symgrad-tests-")
    atexit.register(shutil.rmtree, os.environ["SYMGRAD_CACHE_DIR"], True)


@pytest.fixture
def lowerings(monkeypatch):
    """The executables graphs are lowered to, in order, from empty caches (no structure seen, no code cached)."""
    made = []
    for module, name in ((adjoint, "_cache"), (whole_backward, "_cache"), (whole_backward, "_steady"),
                         (code_cache, "_cache")):
        monkeypatch.setattr(module, name, Recent(getattr(module, name).limit))

    def recording_lower(graph, *args, **kwargs):
        made.append(backends.lower(graph, *args, **kwargs))
        return made[-1]

    monkeypatch.setattr(code_cache, "lower", recording_lower)
    tape.start_over()  # the test's first step starts a tape, as a training loop's first step does
    return made


@pytest.fixture
def computed_now(monkeypatch):
    """The plan steps the eager recorder computes at once (not deferred), in order; the test clears it per step."""
    from symgrad.eager.tensor import DeferredTensor, EagerRecorder
    computed, evaluate = [], EagerRecorder.evaluate

    def counted(recorder, step, operands, tape=None):
        out = evaluate(recorder, step, operands, tape)
        if not isinstance(out, DeferredTensor):
            computed.append(step)
        return out

    monkeypatch.setattr(EagerRecorder, "evaluate", counted)
    return computed


@pytest.fixture
def forced_now(monkeypatch):
    """Per time a tape computed its deferred ops op by op before the captured call (Tape.force with ops pending), how
    many were pending; the test clears it per step."""
    forced, force = [], tape.Tape.force

    def counted(recorded):
        if recorded.pending:
            forced.append(len(recorded.pending))
        force(recorded)

    monkeypatch.setattr(tape.Tape, "force", counted)
    return forced
