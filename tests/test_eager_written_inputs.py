"""An array shared with NumPy (from_numpy) written by NumPy between a layer's forward and the backward: PyTorch's
one op reads its input at backward as NumPy left it, with the statistics it kept from the forward (a norm's mean
and variance), so the weight gradient of a convolution, a norm or an embedding follows the write, op by op (steps
0 and 1) and in a deferred step (from step 2) alike; symgrad computes the values a call made from the array again
(symgrad.eager.graph.DerivedCounter). A recurrent layer's input projection reads it likewise (batch_first: a copy),
its recurrence the forward's states."""
import numpy as np
import pytest

import symgrad as sg
from symgrad.eager import tape
from symgrad.eager.tensor import DeferredTensor

torch = pytest.importorskip("torch")

LAYERS = {
    "conv1d": (lambda T: T.nn.Conv1d(2, 3, 2, padding=1, stride=2, dtype=T.float64), (4, 2, 6)),
    "conv2d": (lambda T: T.nn.Conv2d(2, 4, 2, padding=1, dilation=2, groups=2, dtype=T.float64), (4, 2, 5, 5)),
    "conv_transpose": (lambda T: T.nn.ConvTranspose1d(2, 3, 2, stride=2, dtype=T.float64), (4, 2, 5)),
    "layer_norm": (lambda T: T.nn.LayerNorm(3, dtype=T.float64), (4, 3)),
    "group_norm": (lambda T: T.nn.GroupNorm(2, 4, dtype=T.float64), (4, 4, 3)),
    "batch_norm": (lambda T: T.nn.BatchNorm1d(3, dtype=T.float64), (4, 3)),
    "embedding": (lambda T: T.nn.Embedding(6, 3, dtype=T.float64), (4, 3)),
    "gru_cell": (lambda T: T.nn.GRUCell(3, 2, dtype=T.float64), (4, 3)),
    # the batch read by a product only: the captured step's adjoint reads it as it is now (whole_backward._live_reads)
    "mlp": (lambda T: T.nn.Sequential(T.nn.Linear(3, 4, dtype=T.float64), T.nn.Tanh(),
                                      T.nn.Linear(4, 2, dtype=T.float64)), (4, 3)),
    # ... and through a view of it (Flatten, a slice), which the adjoint reads: compared, the general path if written
    "flatten_linear": (lambda T: T.nn.Sequential(T.nn.Flatten(), T.nn.Linear(6, 2, dtype=T.float64)), (4, 2, 3)),
    "linear_and_slice": (lambda T: _LinearAndSlice(T), (4, 3)),
}


def _LinearAndSlice(T):
    """linear(x) + x[:, :2] * scale: the adjoint reads the batch (the weight's gradient) and a view of it made
    eagerly (the scale's), whose write is still found by comparing."""
    class LinearAndSlice(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = T.nn.Linear(3, 2, dtype=T.float64)
            self.scale = T.nn.Parameter(T.ones(2, dtype=T.float64))

        def forward(self, x):
            return self.linear(x) + x[:, :2] * self.scale
    return LinearAndSlice()
# nn.RNN/GRU/LSTM: (mode, batch_first, num_layers, bidirectional); PyTorch's weight_ih_l0 gradient reads the input
# as written unless batch_first (its projection reads a row-major copy), every other gradient the forward's states
RECURRENT = [("RNN", False, 1, False), ("RNN", True, 2, True), ("GRU", True, 1, False), ("GRU", False, 2, True),
             ("LSTM", False, 1, False), ("LSTM", True, 2, True)]
LAYERS.update({f"{m}-{'batch_first' if b else 'time_first'}-{n}{'-bidirectional' if bi else ''}": (
    lambda T, m=m, b=b, n=n, bi=bi: getattr(T.nn, m)(3, 2, num_layers=n, batch_first=b, bidirectional=bi,
                                                      dtype=T.float64), (4, 5, 3)) for m, b, n, bi in RECURRENT})


def _gradients(T, layer, written_at, steps=5):
    """Each step's parameter gradients (loss: the sum of the squared output) of a layer trained by SGD on a
    from_numpy batch that NumPy writes after the forward of the steps in `written_at`; and the steps deferred."""
    make, shape = LAYERS[layer]
    module = make(T)
    with T.no_grad():
        for i, p in enumerate(module.parameters()):
            p.copy_(T.from_numpy(np.random.default_rng(i).standard_normal(tuple(p.shape))))
    rng = np.random.default_rng(9)
    x_np = rng.integers(0, 6, size=shape) if layer == "embedding" else rng.standard_normal(shape)
    x = T.from_numpy(x_np)
    opt = T.optim.SGD(module.parameters(), lr=0.05)
    gradients, deferred = [], 0
    for step in range(steps):
        out = module(x)
        loss = ((out[0] if isinstance(out, tuple) else out) ** 2).sum()
        deferred += isinstance(loss, DeferredTensor)
        if step in written_at:
            x_np[:2] = x_np[2:4][::-1] if layer == "embedding" else x_np[:2] * -0.5 + 0.25
        loss.backward()
        gradients.append([p.grad.numpy().copy() for p in module.parameters()])
        opt.step()
        opt.zero_grad()
    return gradients, deferred


@pytest.mark.parametrize("written_at", [(), (0,), (3,), (2, 4)])
@pytest.mark.parametrize("layer", list(LAYERS))
def test_a_batch_numpy_writes_before_backward_gives_pytorchs_gradients(layer, written_at):
    tape.start_over()
    ours, deferred = _gradients(sg, layer, written_at)
    theirs, _ = _gradients(torch, layer, written_at)
    for step, (a, b) in enumerate(zip(ours, theirs)):
        for got, want in zip(a, b):
            atol = 1e-11 * max(1.0, np.abs(want).max())  # (a recurrent layer's rounding, five steps on)
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=atol, err_msg=f"step {step}")
    assert deferred >= 2, "later steps are deferred (a write sends only its backward to the general path)"


@pytest.mark.parametrize("layer", ["conv1d", "layer_norm"])
@pytest.mark.parametrize("no_grad", [False, True])
def test_an_in_place_write_to_the_batch_before_backward_is_pytorchs_error(layer, no_grad):
    """x.add_ (not NumPy) between forward and backward: PyTorch's saved input is modified, an error at every step
    (symgrad computed the values again from the written array and gave a gradient)."""
    tape.start_over()
    for T in (sg, torch):
        make, shape = LAYERS[layer]
        module = make(T)
        x = T.from_numpy(np.random.default_rng(9).standard_normal(shape))
        for _ in range(3):
            loss = (module(x) ** 2).sum()
            with T.no_grad() if no_grad else T.enable_grad():
                x.add_(1.0)
            with pytest.raises(RuntimeError, match="modified by an inplace operation"):
                loss.backward()


def test_a_batch_only_products_read_is_not_compared_at_backward(monkeypatch):
    """A deferred step whose products read a from_numpy batch: the call takes the batch as the forward read it (a
    copy) and as it is now (for the adjoint), so its backward compares no bits, written or not, and its gradients
    are PyTorch's."""
    from symgrad.eager import whole_backward
    compared = []
    monkeypatch.setattr(whole_backward, "written", lambda exposed: compared.append(len(exposed)) or False)
    tape.start_over()
    ours, deferred = _gradients(sg, "mlp", (2, 4))
    theirs, _ = _gradients(torch, "mlp", (2, 4))
    for a, b in zip(ours, theirs):
        for got, want in zip(a, b):
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    assert deferred >= 2 and not compared



@pytest.mark.parametrize("layer", ["layer_norm", "conv2d", "group_norm"])
def test_a_layer_on_the_batch_defers_in_one_call(layer, computed_now):
    """A steady step's layer on a from_numpy batch: the call's steps on the batch (a norm's statistics, a
    convolution's patches), which the capture reads as constants, are computed at once and its other steps deferred
    as one plan (Plan.split), not op by op; NumPy's writes (between steps and before a backward) are read."""
    evaluated, deferred = computed_now, []
    tape.start_over()
    ours, _ = _gradients(sg, layer, (3,))
    theirs, _ = _gradients(torch, layer, (3,))
    for a, b in zip(ours, theirs):
        for got, want in zip(a, b):
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    make, shape = LAYERS[layer]
    module = make(sg)
    x_np = np.random.default_rng(3).standard_normal(shape)
    x = sg.from_numpy(x_np)
    for _ in range(4):
        evaluated.clear()
        out = module(x)
        deferred.append((isinstance(out, DeferredTensor), len(evaluated)))
        (out ** 2).sum().backward()
        x_np *= -0.5
    assert deferred[2:] == [(True, 0), (True, 0)]
