"""Param groups, state_dict() and the printed optimizer read as PyTorch's (the saving tutorial prints
`optimizer.state_dict()` line by line): every hyperparameter and PyTorch's implementation options (foreach,
capturable, differentiable, fused, decoupled_weight_decay) in PyTorch's order; load_state_dict's result."""
import numpy as np
import pytest

import symgrad as sg

NAMES = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop", "LBFGS"]


def _make(lib, name, **options):
    params = [lib.nn.Parameter(lib.zeros(2, dtype=lib.float64))]
    return lib.optim.LBFGS(params) if name == "LBFGS" else getattr(lib.optim, name)(params, lr=0.1, **options)


@pytest.mark.parametrize("name", NAMES)
def test_groups_match_pytorch(name):
    ours = _make(sg, name)
    assert "params" not in ours.defaults and ours.state_dict()["param_groups"][0]["params"] == [0]
    torch = pytest.importorskip("torch")
    theirs = _make(torch, name)
    assert list(ours.state_dict()["param_groups"][0].items()) == list(theirs.state_dict()["param_groups"][0].items())
    assert list(ours.param_groups[0]) == list(theirs.param_groups[0])  # 'params' first, as PyTorch
    assert repr(ours) == repr(theirs)


def test_groups_without_pytorch():
    optimizer = _make(sg, "SGD", momentum=0.9, foreach=False)
    optimizer.add_param_group({"params": sg.nn.Parameter(sg.zeros(1, dtype=sg.float)), "lr": 0.5})
    assert list(optimizer.param_groups[1]) == ["params", "lr", "momentum", "dampening", "weight_decay", "nesterov",
                                               "maximize", "foreach", "differentiable", "fused"]
    assert optimizer.param_groups[0]["foreach"] is False and optimizer.param_groups[1]["lr"] == 0.5
    assert repr(optimizer).splitlines()[:4] == ["SGD (", "Parameter Group 0", "    dampening: 0",
                                                "    differentiable: False"]
    assert _make(sg, "AdamW").defaults["decoupled_weight_decay"] is True
    with pytest.raises(TypeError, match="unexpected keyword argument 'capturable'"):
        _make(sg, "SGD", capturable=True)  # (PyTorch's SGD has no such option either)
    with pytest.raises(NotImplementedError, match="differentiable=True"):
        _make(sg, "Adam", differentiable=True)
    p = sg.nn.Parameter(sg.tensor([1.0, -2.0], dtype=sg.float64))
    adam = sg.optim.Adam([p], lr=0.1, weight_decay=0.5, decoupled_weight_decay=True)  # PyTorch 2's AdamW
    (p * p).sum().backward()
    adam.step()  # p * (1 - 0.1 * 0.5), then Adam's first step: lr * g / (|g| + eps)
    np.testing.assert_allclose(p.detach().numpy(), [0.95 - 0.1 * 2 / (2 + 1e-8), -1.9 + 0.1 * 4 / (4 + 1e-8)],
                               rtol=1e-15)
    assert adam.param_groups[0]["decoupled_weight_decay"] is True



@pytest.mark.parametrize("name", NAMES[:-1])
def test_a_parameter_of_two_groups_is_refused_at_construction(name):
    """As PyTorch's constructor (through add_param_group): accepted, each step moved it once per group."""
    p = sg.nn.Parameter(sg.zeros(2, dtype=sg.float64))
    with pytest.raises(ValueError, match="more than one parameter group"):
        getattr(sg.optim, name)([{"params": [p]}, {"params": [p], "lr": 0.5}], lr=0.1)

def test_load_state_dict_result_prints_as_pytorch():
    model = sg.nn.Linear(2, 1)
    result = model.load_state_dict(model.state_dict())
    assert repr(result) == str(result) == "<All keys matched successfully>"
    assert result.missing_keys == [] and result.unexpected_keys == []
    partial = model.load_state_dict({"weight": model.weight.detach()}, strict=False)
    assert repr(partial) == "_IncompatibleKeys(missing_keys=['bias'], unexpected_keys=[])"
