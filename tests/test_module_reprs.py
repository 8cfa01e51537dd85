"""Printed modules read as PyTorch's (tutorials print their models: `print(model)` is compared line by line):
each layer's extra_repr, a module's extra_repr beside its children, and ModuleList's runs of equal modules."""
import pytest

import symgrad as sg

# Constructions as tutorials write them, each evaluated with `nn` bound to sg.nn and to torch.nn.
LAYERS = [
    "nn.Flatten()", "nn.Flatten(0, 1)", "nn.GELU()", "nn.GELU(approximate='tanh')", "nn.Hardshrink()",
    "nn.Softshrink(0.3)", "nn.Hardsigmoid(inplace=True)", "nn.Hardswish()", "nn.SiLU(inplace=True)",
    "nn.BatchNorm1d(4)", "nn.BatchNorm2d(6, affine=False)", "nn.BatchNorm2d(6, bias=False)", "nn.InstanceNorm2d(3)",
    "nn.InstanceNorm1d(3, affine=True)", "nn.GroupNorm(2, 4)", "nn.GroupNorm(2, 4, affine=False)", "nn.LayerNorm(8)",
    "nn.LayerNorm([2, 3], bias=False)", "nn.LayerNorm(4, elementwise_affine=False)", "nn.RMSNorm(4)",
    "nn.AvgPool1d(3)", "nn.AvgPool1d(3, 2, 1)", "nn.AvgPool2d(2)", "nn.AvgPool2d((2, 3), stride=1)",
    "nn.MaxPool2d(2, 2)",
    "nn.MaxUnpool1d(2)", "nn.MaxUnpool2d(2, stride=2)", "nn.MaxUnpool3d((1, 2, 2))", "nn.ConstantPad1d(2, 3.5)",
    "nn.ConstantPad2d((1, 2, 0, 1), 0.0)", "nn.ZeroPad2d(2)", "nn.ReflectionPad1d((1, 2))", "nn.Embedding(10, 3)",
    "nn.Embedding(10, 3, padding_idx=0)", "nn.Embedding(10, 3, max_norm=1.0)", "nn.EmbeddingBag(10, 3, mode='sum')",
    "nn.EmbeddingBag(10, 3, padding_idx=2)", "nn.LazyLinear(5)", "nn.Linear(3, 2, bias=False)", "nn.ReLU()",
    "nn.Dropout(0.25)", "nn.Conv2d(3, 6, 5)", "nn.Conv2d(1, 8, 3, padding=1, bias=False)", "nn.Softmax(dim=1)",
    "nn.LSTM(4, 8, 2, batch_first=True)", "nn.MultiheadAttention(8, 2)",
    "nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 2)])", "nn.ModuleList()",
    "nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2))",
    "nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 2, enable_nested_tensor=False)",
]


@pytest.mark.parametrize("text", LAYERS)
def test_layer_repr_matches_pytorch(text):
    ours = repr(eval(text, {"nn": sg.nn}))
    torch = pytest.importorskip("torch")
    assert ours == repr(eval(text, {"nn": torch.nn}))


def test_reprs_without_pytorch():
    nn = sg.nn
    assert repr(nn.Flatten()) == "Flatten(start_dim=1, end_dim=-1)"
    assert repr(nn.GELU()) == "GELU(approximate='none')"
    assert repr(nn.Hardshrink()) == "Hardshrink(0.5)" and repr(nn.Hardswish(inplace=True)) == "Hardswish()"
    assert repr(nn.BatchNorm2d(6)) == "BatchNorm2d(6, eps=1e-05, momentum=0.1, affine=True, bias=True, " \
                                      "track_running_stats=True)"
    assert repr(nn.LayerNorm(8)) == "LayerNorm((8,), eps=1e-05, elementwise_affine=True, bias=True)"
    assert repr(nn.AvgPool1d(3)) == "AvgPool1d(kernel_size=(3,), stride=(3,), padding=(0,))"
    assert repr(nn.ConstantPad1d(2, 3.5)) == "ConstantPad1d(padding=(2, 2), value=3.5)"
    listed = nn.ModuleList([nn.ReLU(), nn.ReLU(), nn.Tanh()])
    assert repr(listed) == "ModuleList(\n  (0-1): 2 x ReLU()\n  (2): Tanh()\n)"


def test_extra_repr_beside_children():
    """A module's own extra_repr comes first, then its children, as PyTorch prints it."""
    class Block(sg.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale, self.body = 2.0, sg.nn.Linear(2, 2)

        def extra_repr(self):
            return f"scale={self.scale}"

    assert repr(Block()) == "Block(\n  scale=2.0\n  (body): Linear(in_features=2, out_features=2, bias=True)\n)"


@pytest.mark.parametrize("cls", ["BatchNorm1d", "GroupNorm"])
def test_norm_without_bias(cls):
    """bias=False (PyTorch 2.13's keyword): a weight and no bias; the output is the affine-less one times it."""
    nn = sg.nn
    layer = nn.BatchNorm1d(4, bias=False) if cls == "BatchNorm1d" else nn.GroupNorm(2, 4, bias=False)
    assert layer.bias is None and [name for name, _ in layer.named_parameters()] == ["weight"]
    x = sg.tensor([[1.0, 2.0, 4.0, 0.5], [3.0, -1.0, 0.0, 2.0]])
    with sg.no_grad():
        layer.weight.fill_(3.0)
    plain = nn.BatchNorm1d(4, affine=False) if cls == "BatchNorm1d" else nn.GroupNorm(2, 4, affine=False)
    out = layer(x)
    assert sg.allclose(out, 3.0 * plain(x))
    out.sum().backward()
    assert layer.weight.grad is not None
