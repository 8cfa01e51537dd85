"""Fixtures shared by several test modules."""
import collections

import pytest

from symgrad import backends
from symgrad.eager import adjoint, tape, whole_backward


@pytest.fixture
def lowerings(monkeypatch):
    """The executables eager adjoints are lowered to, in order, from empty caches (no structure seen)."""
    made = []
    monkeypatch.setattr(adjoint, "_cache", collections.OrderedDict())
    monkeypatch.setattr(whole_backward, "_cache", collections.OrderedDict())

    def recording_lower(graph, *args, **kwargs):
        made.append(backends.lower(graph, *args, **kwargs))
        return made[-1]

    monkeypatch.setattr(adjoint, "lower", recording_lower)
    tape.start_over()  # the test's first step starts a tape, as a training loop's first step does
    return made
