"""Probes of the recurrent layers against PyTorch's numbers (float64), inside sg.compile as in eager mode."""
import numpy as np
import pytest

import symgrad as sg

RNG = np.random.default_rng(4)


def _eager_value_and_grads(layer, x, h):
    tx, th = sg.tensor(x, requires_grad=True), sg.tensor(h, requires_grad=True)
    out, final = layer(tx, th)
    value = (out * sg.cos(out)).sum() + (final ** 2).sum()
    value.backward()
    return float(value.item()), tx.grad.numpy(), th.grad.numpy()


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_batch_first_and_unbatched_layers_inside_compile(backend):
    """A batch_first layer, and an unbatched input, called on traced arrays: x.transpose(0, 1) took NumPy's
    meaning there (a ShapeError on a 3-d input) and x.unsqueeze(1) did not exist (AttributeError)."""
    gru = sg.nn.GRU(4, 3, num_layers=2, bidirectional=True, batch_first=True)
    x, h = RNG.standard_normal((2, 5, 4)), RNG.standard_normal((4, 2, 3))

    def loss(x, h):
        out, final = gru(x, h)
        return sg.sum(out * sg.cos(out)) + sg.sum(final ** 2)
    value, (gx, gh) = sg.compile(sg.value_and_grad(loss, argnums=(0, 1)), backend=backend)(x, h)
    expected = _eager_value_and_grads(gru, x, h)
    np.testing.assert_allclose(value, expected[0], rtol=1e-12)
    np.testing.assert_allclose(gx, expected[1], rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(gh, expected[2], rtol=1e-10, atol=1e-13)
    lstm, cell = sg.nn.LSTM(4, 3), sg.nn.LSTMCell(4, 3)
    out, (hn, cn) = sg.compile(lambda a: lstm(a), backend=backend)(x[0])
    eager, (eager_h, eager_c) = lstm(sg.tensor(x[0]))
    assert out.shape == (5, 3) and hn.shape == (1, 3)
    np.testing.assert_allclose(out, eager.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(cn, eager_c.detach().numpy(), rtol=1e-12)
    h1, c1 = sg.compile(lambda a: cell(a), backend=backend)(x[0, 0])
    np.testing.assert_allclose(c1, cell(sg.tensor(x[0, 0]))[1].detach().numpy(), rtol=1e-12)
    try:
        import torch
    except ImportError:
        return
    reference = torch.nn.GRU(4, 3, num_layers=2, bidirectional=True, batch_first=True).double()
    reference.load_state_dict({name: torch.tensor(p.detach().numpy()) for name, p in gru.named_parameters()})
    tx, th = torch.tensor(x, requires_grad=True), torch.tensor(h, requires_grad=True)
    out, final = reference(tx, th)
    ((out * torch.cos(out)).sum() + (final ** 2).sum()).backward()
    np.testing.assert_allclose(gx, tx.grad.numpy(), rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(gh, th.grad.numpy(), rtol=1e-10, atol=1e-13)
