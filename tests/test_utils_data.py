"""sg.utils.data: datasets, samplers, DataLoader and collation give PyTorch's batches (issue 14 item 2)."""
import collections

import numpy as np
import pytest

import symgrad as sg
from symgrad.utils.data import (BatchSampler, ConcatDataset, DataLoader, Dataset, IterableDataset, RandomSampler,
                                SequentialSampler, Subset, SubsetRandomSampler, TensorDataset, default_collate,
                                random_split)

RNG = np.random.default_rng(14)
Point = collections.namedtuple("Point", "x y")


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"x": np.full(2, float(i)), "label": i, "weight": 0.5 * i, "name": f"s{i}", "pair": (i, float(i))}


class Stream(IterableDataset):
    def __iter__(self):
        return iter(range(7))


def _plain(value):
    """A batch as nested Python lists/dicts of arrays, from symgrad's or PyTorch's tensors."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return [type(value).__name__] + [_plain(v) for v in value]
    if hasattr(value, "_fields"):
        return [type(value).__name__] + [_plain(v) for v in value]
    if hasattr(value, "numpy"):
        array = value.detach().numpy() if hasattr(value, "detach") else value.numpy()
        return (str(array.dtype), array.tolist())
    return value


def _torch_dataset(torch, dataset):
    if isinstance(dataset, TensorDataset):
        return torch.utils.data.TensorDataset(*(torch.tensor(t.numpy()) for t in dataset.tensors))
    if isinstance(dataset, IterableDataset):
        return type("TorchStream", (torch.utils.data.IterableDataset,), {"__iter__": lambda self: iter(dataset)})()
    return dataset


@pytest.mark.parametrize("make, options", [
    (lambda: TensorDataset(sg.tensor(RNG.standard_normal((10, 3))), sg.tensor(RNG.integers(0, 3, 10))),
     dict(batch_size=4)),
    (lambda: TensorDataset(sg.tensor(RNG.standard_normal((10, 3))), sg.tensor(RNG.integers(0, 3, 10))),
     dict(batch_size=4, drop_last=True, sampler=[9, 2, 5, 0, 1, 8, 3, 4, 7, 6])),
    (lambda: TensorDataset(sg.tensor(RNG.standard_normal((5, 2)))), dict(batch_size=None)),
    (lambda: Squares(5), dict(batch_size=2)),
    (lambda: Squares(5), dict(batch_size=3, sampler=[4, 0, 2, 1, 3])),
    (lambda: Squares(3), dict(batch_size=None)),
    (lambda: Stream(), dict(batch_size=3)),
    (lambda: Stream(), dict(batch_size=3, drop_last=True)),
    (lambda: [Point(1, 2.0), Point(3, 4.0), Point(5, 6.0)], dict(batch_size=2)),
    (lambda: [np.float32(1.5), np.float32(2.5)], dict(batch_size=2)),
    (lambda: [[1, 2], [3, 4], [5, 6]], dict(batch_size=3)),
    (lambda: ConcatDataset([Squares(2), Squares(3)]), dict(batch_size=2)),
    (lambda: Subset(Squares(6), [5, 1, 3]), dict(batch_size=2)),
])
def test_batches_match_pytorch(make, options):
    dataset = make()
    ours = [_plain(b) for b in DataLoader(dataset, **options)]
    assert ours and (isinstance(dataset, IterableDataset) or len(ours) == len(DataLoader(dataset, **options)))
    torch = pytest.importorskip("torch")
    theirs = [_plain(b) for b in torch.utils.data.DataLoader(_torch_dataset(torch, dataset), **options)]
    assert ours == theirs


def test_default_collate_by_hand():
    batch = default_collate([(sg.tensor([1.0, 2.0]), 3, True), (sg.tensor([3.0, 4.0]), 5, False)])
    assert isinstance(batch, list) and batch[0].tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert batch[1].dtype == np.int64 and batch[1].tolist() == [3, 5] and batch[2].dtype == np.bool_
    assert default_collate([1.0, 2.0]).dtype == np.float64 and default_collate(["a", "b"]) == ["a", "b"]
    grad_rows = [sg.tensor([1.0], requires_grad=True), sg.tensor([2.0], requires_grad=True)]
    stacked = default_collate(grad_rows)
    (stacked * sg.tensor([[3.0], [4.0]])).sum().backward()
    assert grad_rows[1].grad.tolist() == [4.0]
    with pytest.raises(RuntimeError, match="equal size"):
        default_collate([[1, 2], [3]])
    with pytest.raises(RuntimeError, match="equal size"):
        default_collate([sg.tensor([1.0]), sg.tensor([1.0, 2.0])])
    with pytest.raises(TypeError, match="default_collate"):
        default_collate([object(), object()])


def test_shuffle_with_a_generator_is_a_permutation_per_epoch_and_reproducible():
    x = sg.arange(10, device="cpu")
    loader = DataLoader(TensorDataset(x), batch_size=3, shuffle=True, generator=sg.Generator().manual_seed(5))
    epochs = [np.concatenate([b[0].numpy() for b in loader]) for _ in range(2)]
    assert sorted(epochs[0]) == list(range(10)) and sorted(epochs[1]) == list(range(10))
    assert epochs[0].tolist() != epochs[1].tolist() and [len(b[0]) for b in loader] == [3, 3, 3, 1]
    again = DataLoader(TensorDataset(x), batch_size=3, shuffle=True, generator=sg.Generator().manual_seed(5))
    assert np.concatenate([b[0].numpy() for b in again]).tolist() == epochs[0].tolist()
    sg.manual_seed(1)
    first = [b[0].tolist() for b in DataLoader(TensorDataset(x), batch_size=4, shuffle=True)]
    sg.manual_seed(1)
    assert [b[0].tolist() for b in DataLoader(TensorDataset(x), batch_size=4, shuffle=True)] == first


def test_random_split_lengths_and_fractions():
    data = list(range(10))
    parts = random_split(data, [3, 7], generator=sg.Generator().manual_seed(0))
    assert [len(p) for p in parts] == [3, 7] and sorted(list(parts[0]) + list(parts[1])) == data
    again = random_split(data, [3, 7], generator=sg.Generator().manual_seed(0))
    assert list(again[0]) == list(parts[0])
    assert [len(p) for p in random_split(data, [0.25, 0.25, 0.5])] == [3, 2, 5]  # floors 2, 2, 5; the rest to the first
    with pytest.warns(UserWarning, match="index 1 is 0"):
        assert [len(p) for p in random_split(range(3), [1.0, 0.0])] == [3, 0]
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(data, [3, 3])
    with pytest.raises(ValueError, match="not between 0 and 1"):
        random_split(data, [1.5, -0.5])


def test_random_split_fractions_match_pytorch_lengths():
    torch = pytest.importorskip("torch")
    for n, fractions in ((10, [0.25, 0.25, 0.5]), (7, [0.3, 0.7]), (101, [0.1] * 10), (0, [0.5, 0.5])):
        ours = [len(p) for p in random_split(range(n), fractions)]
        assert ours == [len(p) for p in torch.utils.data.random_split(range(n), fractions)]


def test_samplers_and_errors():
    assert list(SequentialSampler(range(3))) == [0, 1, 2]
    g = sg.Generator().manual_seed(2)
    drawn = list(RandomSampler(range(4), replacement=True, num_samples=9, generator=g))
    assert len(drawn) == 9 and set(drawn) <= {0, 1, 2, 3}
    many = list(RandomSampler(range(3), num_samples=7, generator=g))
    assert len(many) == 7 and sorted(many[:3]) == [0, 1, 2]
    assert sorted(SubsetRandomSampler([5, 7, 9], generator=g)) == [5, 7, 9]
    assert list(BatchSampler(range(5), 2, drop_last=False)) == [[0, 1], [2, 3], [4]]
    assert len(BatchSampler(range(5), 2, drop_last=True)) == 2
    custom = DataLoader(list(range(6)), batch_sampler=[[0, 5], [1, 2, 3]])
    assert [b.tolist() for b in custom] == [[0, 5], [1, 2, 3]]
    assert [b for b in DataLoader(["a", "b", "c"], batch_size=2, collate_fn=lambda s: "".join(s))] == ["ab", "c"]
    assert len(DataLoader(TensorDataset(sg.zeros(0, 2)), batch_size=4)) == 0
    assert list(DataLoader(TensorDataset(sg.zeros(0, 2)), batch_size=4)) == []
    with pytest.raises(ValueError, match="Size mismatch"):
        TensorDataset(sg.zeros(3, 1), sg.zeros(4, device="cpu"))
    with pytest.raises(TypeError, match="not a Tensor"):
        TensorDataset(np.zeros(3))
    with pytest.raises(ValueError, match="mutually exclusive"):
        DataLoader(range(4), sampler=[0, 1], shuffle=True)
    with pytest.raises(ValueError, match="shuffle"):
        DataLoader(Stream(), shuffle=True)
    with pytest.raises(ValueError, match="batch_size"):
        DataLoader(range(4), batch_size=0)
    with pytest.raises(TypeError):
        len(DataLoader(Stream(), batch_size=2))
    assert len(Squares(2) + Squares(3)) == 5 and (Squares(2) + Squares(3))[-1]["label"] == 2


def test_worker_and_memory_options_are_accepted_and_give_the_same_batches():
    """num_workers, pin_memory, persistent_workers, prefetch_factor and timeout only change speed in PyTorch;
    here everything runs in the calling process, so the batches are those of num_workers=0."""
    data = sg.utils.data.TensorDataset(sg.tensor(np.arange(20.0).reshape(10, 2)), sg.tensor(np.arange(10)))
    plain = [[b.numpy() for b in batch] for batch in sg.utils.data.DataLoader(data, batch_size=3)]
    loader = sg.utils.data.DataLoader(data, batch_size=3, num_workers=4, pin_memory=True, persistent_workers=True,
                                      prefetch_factor=2, timeout=5, worker_init_fn=lambda worker: None)
    for _ in range(2):  # persistent workers: a second epoch too
        batches = [[b.numpy() for b in batch] for batch in loader]
        assert len(batches) == len(plain) == 4
        for got, want in zip(batches, plain):
            for a, b in zip(got, want):
                np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="num_workers option should be non-negative"):
        sg.utils.data.DataLoader(data, num_workers=-1)
