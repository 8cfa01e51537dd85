"""A module's parameters, submodules and buffers read as attributes (nn.modules._Entry) keep Python's lookup order."""
import numpy as np
import pytest

import symgrad as sg
from symgrad import nn


def test_parameters_buffers_and_submodules_read_after_replacement_and_deletion():
    layer = nn.Linear(3, 2)
    first = layer.weight
    assert layer.weight is first and layer.weight is layer._parameters["weight"]
    replacement = nn.Parameter(np.zeros((2, 3), np.float32))
    layer.weight = replacement
    assert layer.weight is replacement
    layer.bias = None
    assert layer.bias is None and layer._parameters["bias"] is None
    del layer.bias
    with pytest.raises(AttributeError, match="has no attribute 'bias'"):
        layer.bias
    assert not hasattr(layer, "bias")
    loss = nn.CrossEntropyLoss()
    assert loss.weight is None
    weight = sg.tensor([1.0, 2.0])
    loss.weight = weight
    assert loss.weight is weight
    model = nn.Sequential(nn.Linear(2, 2))
    assert model._modules["0"] is getattr(model, "0")


def test_a_parameter_or_module_assigned_over_a_plain_attribute_replaces_it():
    class GraphConv(nn.Module):  # pytorch/examples' gcn: `self.bias = None`, then a Parameter when use_bias
        def __init__(self):
            super().__init__()
            self.bias = None
            self.bias = nn.Parameter(sg.ones(2, dtype=sg.float64))
            self.head = None
            self.head = nn.Linear(2, 1)

        def forward(self, x):
            return self.head(x + self.bias) if self.bias is not None else self.head(x)

    layer = GraphConv()  # the None in __dict__ hid both: the forward silently ran without the bias
    assert layer.bias is layer._parameters["bias"] and isinstance(layer.head, nn.Linear)
    assert "bias" not in layer.__dict__ and [name for name, _ in layer.named_parameters()][0] == "bias"
    layer.bias = None
    assert layer.bias is None and layer._parameters["bias"] is None



def test_an_array_assigned_over_a_buffer_stays_the_buffer():
    """sg.zeros(n) is NumPy's array where torch.zeros(n) is a tensor: assigned over a buffer (or registered) it
    becomes the buffer, sharing its memory; before, it was a plain attribute and the buffer left state_dict()."""
    bn = nn.BatchNorm1d(2)
    reset = sg.zeros(2)
    bn.running_mean = reset
    assert isinstance(bn.running_mean, sg.Tensor) and bn.running_mean is bn._buffers["running_mean"]
    assert list(bn.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    reset[0] = 3.0
    assert bn.state_dict()["running_mean"].tolist() == [3.0, 0.0]
    bn.register_buffer("mask", np.ones(2))
    assert bn.mask.tolist() == [1.0, 1.0] and "mask" in bn.state_dict()
    with pytest.raises(TypeError, match="cannot assign 'int' as buffer 'running_var'"):
        bn.running_var = 0
    torch = pytest.importorskip("torch")
    with pytest.raises(TypeError, match="cannot assign 'int' as buffer 'running_var'"):
        torch.nn.BatchNorm1d(2).running_var = 0

def test_an_instance_attribute_set_later_comes_first_and_can_be_deleted():
    class Holder(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(np.ones(1))

    holder = Holder()
    assert isinstance(holder.scale, nn.Parameter)
    other = Holder()
    object.__setattr__(other, "scale", 5.0)  # an attribute of the instance, besides the table's entry
    assert other.scale == 5.0 and holder.scale is holder._parameters["scale"]
    object.__delattr__(other, "scale")
    assert other.scale is other._parameters["scale"]
    with pytest.raises(AttributeError):
        object.__delattr__(other, "scale")


def test_the_class_itself_has_no_such_attribute():
    layer = nn.Linear(2, 2)
    layer.weight
    with pytest.raises(AttributeError):
        nn.Linear.weight
    assert not hasattr(nn.Linear, "weight")


def test_a_property_or_a_getattr_of_a_subclass_still_decides():
    class Doubled(nn.Linear):
        @property
        def weight(self):
            return self._parameters["weight"] * 2

    layer = Doubled(2, 2)
    assert np.allclose(layer.weight.detach().numpy(), 2 * layer._parameters["weight"].detach().numpy())

    class Counting(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(np.ones(2))
            object.__setattr__(self, "reads", 0)

        def __getattr__(self, name):
            object.__setattr__(self, "reads", self.__dict__["reads"] + 1)
            return super().__getattr__(name)

    counting = Counting()
    counting.w
    counting.w
    assert counting.reads == 2


def test_a_subclass_with_its_own_getattr_is_asked_for_a_name_its_base_knows():
    class Base(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(np.ones(2))

    class Renaming(Base):
        def __getattr__(self, name):
            return "renamed" if name == "w" else super().__getattr__(name)

    Base().w  # the descriptor goes on Base
    assert Renaming().w == "renamed"


def test_a_subclass_getattr_is_asked_once_for_a_missing_name_its_base_knows():
    """The descriptor's AttributeError makes Python call the subclass's __getattr__: calling it too asked twice."""
    class Base(nn.Module):
        def __init__(self, register):
            super().__init__()
            if register:
                self.w = nn.Parameter(np.ones(2))

    asked = []

    class Logging(Base):
        def __getattr__(self, name):
            asked.append(name)
            return super().__getattr__(name)

    Base(True).w  # the descriptor goes on Base
    with pytest.raises(AttributeError, match="'Logging' object has no attribute 'w'"):
        Logging(False).w
    assert asked == ["w"]
    assert Logging(True).w.shape == (2,) and asked == ["w", "w"]
