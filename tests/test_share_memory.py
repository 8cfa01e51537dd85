"""Tensor.share_memory_()/is_shared() and Module.share_memory(): memory shared with forked processes, as
PyTorch's hogwild training (pytorch/examples' mnist_hogwild) needs; pickling one to another process is an error."""
import multiprocessing
import pickle

import numpy as np
import pytest

import symgrad as sg


def _train_one_step(model, queue):
    optimizer = sg.optim.SGD(model.parameters(), lr=0.1)
    loss = model(sg.tensor(np.linspace(-1, 1, 12).reshape(4, 3))).pow(2).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    queue.put([p.detach().numpy().copy() for p in model.parameters()])


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="needs the fork start method")
def test_a_forked_workers_optimizer_step_reaches_the_parents_parameters():
    sg.manual_seed(0)
    model = sg.nn.Sequential(sg.nn.Linear(3, 2), sg.nn.BatchNorm1d(2))
    assert not model[0].weight.is_shared()
    assert model.share_memory() is model
    assert all(t.is_shared() for t in (*model.parameters(), *model.buffers()))
    assert type(model[0].weight).__name__ == "Parameter" and model[0].weight.requires_grad
    before = [p.detach().numpy().copy() for p in model.parameters()]
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    worker = context.Process(target=_train_one_step, args=(model, queue))
    worker.start()
    stepped = queue.get(timeout=60)
    worker.join(timeout=60)
    assert worker.exitcode == 0
    for ours, theirs, old in zip(model.parameters(), stepped, before):
        np.testing.assert_array_equal(ours.detach().numpy(), theirs)
        assert not np.array_equal(theirs, old)


def test_share_memory_keeps_values_and_history_and_in_place_ops_write_the_shared_memory():
    x = sg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    assert y.share_memory_() is y and y.is_shared() and type(y.grad_fn).__name__ == "MulBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
    t = sg.zeros(4, dtype=sg.double).share_memory_()
    t.add_(1)
    t[1:3].mul_(5)
    assert t.is_shared() and t[1:3].is_shared() and t.tolist() == [1.0, 5.0, 5.0, 1.0]
    assert not (t * 2).is_shared()  # a result has memory of its own, as PyTorch's
    assert pickle.loads(pickle.dumps(t)).tolist() == t.tolist()  # saving (not another process) still pickles


def test_sending_a_shared_tensor_to_another_process_is_an_error():
    t = sg.ones(3, dtype=sg.double).share_memory_()
    from multiprocessing.reduction import ForkingPickler
    with pytest.raises(RuntimeError, match="forked processes only"):
        ForkingPickler.dumps(t)
    assert len(ForkingPickler.dumps(sg.ones(3, dtype=sg.double))) > 0  # a private tensor is copied, as before


def test_a_view_of_private_memory_refuses_to_move_alone():
    base = sg.zeros(4, dtype=sg.double)
    with pytest.raises(RuntimeError, match="call it on the base"):
        base[1:3].share_memory_()
