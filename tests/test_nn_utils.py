"""sg.nn.utils: clip_grad_norm_/clip_grad_value_, parameters_to_vector/vector_to_parameters and
rnn.pad_sequence, against PyTorch (skipped when absent) and by hand."""
import numpy as np
import pytest

import symgrad as sg

utils = sg.nn.utils


def _with_gradients(lib, grads):
    params = [lib.nn.Parameter(lib.tensor(np.zeros_like(g))) for g in grads]
    for p, g in zip(params, grads):
        p.grad = lib.tensor(g.copy())
    return params


@pytest.mark.parametrize("kwargs", [dict(max_norm=0.5), dict(max_norm=0.5, norm_type=1),
                                    dict(max_norm=0.3, norm_type=float("inf")), dict(max_norm=100.0)])
def test_clip_grad_norm_matches_pytorch(kwargs):
    rng = np.random.default_rng(0)
    grads = [rng.standard_normal((3, 4)), rng.standard_normal(5)]
    ours = _with_gradients(sg, grads)
    total = utils.clip_grad_norm_(ours, **kwargs)
    flat = np.concatenate([g.ravel() for g in grads])
    order = kwargs.get("norm_type", 2)
    assert total.item() == pytest.approx(np.linalg.norm(flat, order), rel=1e-13)
    scale = min(kwargs["max_norm"] / (total.item() + 1e-6), 1.0)
    for p, g in zip(ours, grads):
        np.testing.assert_allclose(p.grad.numpy(), g * scale, rtol=1e-14)
    torch = pytest.importorskip("torch")
    theirs = _with_gradients(torch, grads)
    assert total.item() == pytest.approx(torch.nn.utils.clip_grad_norm_(theirs, **kwargs).item(), rel=1e-14)
    for p, q in zip(ours, theirs):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-14)


@pytest.mark.parametrize("dtypes", [(np.float32,) * 3, (np.float64,) * 3, (np.float32, np.float64, np.float32)])
def test_clip_grad_norm_is_numpys_norm_of_norms_bit_for_bit(dtypes):
    """The 2-norm computed as np.linalg.norm computes it (the norm of the gradients' norms), in each gradient's dtype:
    the total and the scaled gradients carry the same bits."""
    rng = np.random.default_rng(3)
    grads = [rng.standard_normal(shape).astype(dtype) for shape, dtype in zip([(7, 5), (300,), (2, 3, 4)], dtypes)]
    params = _with_gradients(sg, grads)
    total = utils.clip_grad_norm_(params, 0.25)
    expected = float(np.linalg.norm([np.linalg.norm(g.reshape(-1), 2.0) for g in grads], 2.0))
    assert total.item() == np.asarray(expected, dtypes[0]).item()
    scale = min(0.25 / (expected + 1e-6), 1.0)
    for p, g in zip(params, grads):
        np.testing.assert_array_equal(p.grad.numpy(), g * g.dtype.type(scale))


def test_clip_edge_cases_and_clip_grad_value():
    assert utils.clip_grad_norm_([sg.nn.Parameter(sg.tensor([1.0]))], 1.0).item() == 0.0  # no gradients
    params = _with_gradients(sg, [np.array([np.inf, 1.0])])
    with pytest.raises(RuntimeError, match="non-finite"):
        utils.clip_grad_norm_(params, 1.0, error_if_nonfinite=True)
    params = _with_gradients(sg, [np.array([-3.0, 0.5, 2.0])])
    utils.clip_grad_value_(params, 1.0)
    assert params[0].grad.tolist() == [-1.0, 0.5, 1.0]
    single = _with_gradients(sg, [np.array([3.0, 4.0])])[0]
    assert utils.clip_grad_norm_(single, 1.0).item() == pytest.approx(5.0)  # one tensor, not a list


def test_parameters_to_vector_and_back():
    model = sg.nn.Linear(3, 2)
    vector = utils.parameters_to_vector(model.parameters())
    assert vector.shape == (8,) and vector.requires_grad
    (vector * sg.tensor(np.arange(8.0))).sum().backward()
    assert model.weight.grad.numpy().ravel().tolist() == list(range(6)) and model.bias.grad.tolist() == [6.0, 7.0]
    utils.vector_to_parameters(sg.tensor(np.arange(8.0)), model.parameters())
    assert model.bias.tolist() == [6.0, 7.0] and model.weight.requires_grad
    with pytest.raises(ValueError, match="8 elements"):
        utils.vector_to_parameters(sg.tensor(np.arange(9.0)), model.parameters())


@pytest.mark.parametrize("kwargs", [{}, dict(batch_first=True, padding_value=-1.0), dict(padding_side="left")])
def test_pad_sequence_matches_pytorch_and_passes_gradients(kwargs):
    rng = np.random.default_rng(1)
    sequences = [rng.standard_normal((n, 3)) for n in (4, 2, 3)]
    tensors = [sg.tensor(s, requires_grad=True) for s in sequences]
    padded = utils.rnn.pad_sequence(tensors, **kwargs)
    padded.sum().backward()
    assert all(t.grad.numpy().tolist() == np.ones_like(s).tolist() for t, s in zip(tensors, sequences))
    torch = pytest.importorskip("torch")
    expected = torch.nn.utils.rnn.pad_sequence([torch.tensor(s) for s in sequences], **kwargs)
    np.testing.assert_array_equal(padded.detach().numpy(), expected.numpy())
    with pytest.raises(RuntimeError, match="empty list"):
        utils.rnn.pad_sequence([])
