"""Margin, embedding and likelihood losses (nn.functional and their modules): values and gradients against
PyTorch (float64, skipped when absent) and finite differences on both backends; reductions and errors."""
import numpy as np
import pytest

import symgrad as sg
from gradcheck import numeric_grad

RNG = np.random.default_rng(0)
X1, X2, X3 = RNG.standard_normal((6, 4)), RNG.standard_normal((6, 4)), RNG.standard_normal((6, 4))
SIGNS = np.where(RNG.random(6) > 0.5, 1.0, -1.0)
SIGNS_2D = np.where(RNG.random((6, 4)) > 0.5, 1.0, -1.0)
LABELS = (RNG.random((6, 4)) > 0.5).astype(float)
COUNTS = RNG.poisson(3.0, (6, 4)).astype(float)
VARIANCE = RNG.uniform(0.5, 2.0, (6, 4))
VARIANCE[0, 0] = 1e-9  # below eps: clamped, its gradient passed through

CASES = [  # (name, functional name, inputs (the first differentiated), keyword arguments)
    ("margin_ranking", "margin_ranking_loss", (X1[:, 0], X2[:, 0], SIGNS), {"margin": 0.3}),
    ("hinge_embedding", "hinge_embedding_loss", (X1, SIGNS_2D), {"margin": 0.5}),
    ("soft_margin", "soft_margin_loss", (X1, SIGNS_2D), {}),
    ("multilabel_soft_margin", "multilabel_soft_margin_loss", (X1, LABELS), {}),
    ("multilabel_soft_margin-weight", "multilabel_soft_margin_loss", (X1, LABELS),
     {"weight": np.array([1.0, 2.0, 0.5, 0.0])}),
    ("cosine_embedding", "cosine_embedding_loss", (X1, X2, SIGNS), {"margin": 0.1}),
    ("triplet_margin", "triplet_margin_loss", (X1, X2, X3), {"margin": 2.0}),
    ("triplet_margin-swap-p1", "triplet_margin_loss", (X1, X2, X3), {"p": 1.0, "swap": True}),
    ("poisson_nll", "poisson_nll_loss", (X1, COUNTS), {}),
    ("poisson_nll-full", "poisson_nll_loss", (np.abs(X1) + 0.1, COUNTS), {"log_input": False, "full": True}),
    ("gaussian_nll", "gaussian_nll_loss", (X1, X2, VARIANCE), {}),
    ("gaussian_nll-full-sum", "gaussian_nll_loss", (X1, X2, VARIANCE[:, :1]), {"full": True, "reduction": "sum"}),
]


def _as(lib, value):
    return lib.tensor(value) if isinstance(value, np.ndarray) else value


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("label, name, inputs, kwargs", CASES, ids=[c[0] for c in CASES])
def test_matches_pytorch(label, name, inputs, kwargs, reduction):
    torch = pytest.importorskip("torch")
    kwargs = dict(kwargs, reduction=kwargs.get("reduction", reduction))
    results = []
    fixed = (SIGNS, SIGNS_2D, LABELS, COUNTS)  # targets: no gradient
    for lib in (sg, torch):
        args = [lib.tensor(x, requires_grad=not any(x is f for f in fixed)) for x in inputs]
        differentiated = [a for a in args if a.requires_grad]
        options = {k: _as(lib, v) for k, v in kwargs.items()}
        out = getattr(lib.nn.functional, name)(*args, **options)
        (out * lib.tensor(np.linspace(-1, 2, out.numel()).reshape(tuple(out.shape)))).sum().backward()
        results.append((out.detach().numpy(), [d.grad.numpy() for d in differentiated]))
    (ours, our_grads), (theirs, their_grads) = results
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-13)
    for a, b in zip(our_grads, their_grads):
        np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
@pytest.mark.parametrize("label, name, inputs, kwargs", CASES[::2], ids=[c[0] for c in CASES[::2]])
def test_gradients_match_finite_differences_on_both_backends(label, name, inputs, kwargs, backend):
    first = inputs[0]
    rest = [np.maximum(x, 0.5) if x is VARIANCE else x for x in inputs[1:]]  # a 1e-9 variance: no usable FD

    def loss(x):
        return getattr(sg.nn.functional, name)(x, *rest, **kwargs)
    grad = sg.compile(sg.grad(loss), backend=backend)(first)
    np.testing.assert_allclose(grad, numeric_grad(loss, [first], 0), rtol=1e-6, atol=1e-8)


def test_modules_take_their_options_and_reduction():
    torch = pytest.importorskip("torch")
    pairs = [("TripletMarginLoss", (1.5,), {"swap": True}, (X1, X2, X3)),
             ("CosineEmbeddingLoss", (0.2,), {"reduction": "sum"}, (X1, X2, SIGNS)),
             ("MarginRankingLoss", (), {"margin": 0.1}, (X1[:, 0], X2[:, 0], SIGNS)),
             ("PoissonNLLLoss", (), {"log_input": True}, (X1, COUNTS)),
             ("GaussianNLLLoss", (), {"eps": 1e-3}, (X1, X2, VARIANCE)),
             ("HingeEmbeddingLoss", (0.7,), {}, (X1, SIGNS_2D)), ("SoftMarginLoss", (), {}, (X1, SIGNS_2D)),
             ("MultiLabelSoftMarginLoss", (), {"reduction": "none"}, (X1, LABELS))]
    for name, args, kwargs, inputs in pairs:
        ours = getattr(sg.nn, name)(*args, **kwargs)(*[sg.tensor(x) for x in inputs])
        theirs = getattr(torch.nn, name)(*args, **kwargs)(*[torch.tensor(x) for x in inputs])
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, err_msg=name)
    with pytest.raises(TypeError, match="takes"):
        sg.nn.TripletMarginLoss(1.0, 2.0, 1e-6, False, 5)


def test_modules_take_their_inputs_by_pytorchs_keyword_names():
    """`cosine_loss(a, b, target=ones)` (the knowledge-distillation tutorial): forward's parameters have PyTorch's
    names, and a keyword call gives the positional call's value."""
    calls = [("CosineEmbeddingLoss", {"input1": X1, "input2": X2, "target": SIGNS}),
             ("MarginRankingLoss", {"input1": X1[:, 0], "input2": X2[:, 0], "target": SIGNS}),
             ("TripletMarginLoss", {"anchor": X1, "positive": X2, "negative": X3}),
             ("PoissonNLLLoss", {"log_input": X1, "target": COUNTS}),
             ("GaussianNLLLoss", {"input": X1, "target": X2, "var": VARIANCE}),
             ("HingeEmbeddingLoss", {"input": X1, "target": SIGNS_2D})]
    for name, inputs in calls:
        module, tensors = getattr(sg.nn, name)(), {key: sg.tensor(x) for key, x in inputs.items()}
        first, *rest = tensors
        by_keyword = module(tensors[first], **{key: tensors[key] for key in rest})
        np.testing.assert_array_equal(by_keyword.numpy(), module(*tensors.values()).numpy(), err_msg=name)
    with pytest.raises(TypeError, match=r"CosineEmbeddingLoss.forward takes \('input1', 'input2', 'target'\)"):
        sg.nn.CosineEmbeddingLoss()(sg.tensor(X1), sg.tensor(X2), y=sg.tensor(SIGNS))
    torch = pytest.importorskip("torch")
    import inspect
    for name, inputs in calls:
        assert tuple(inspect.signature(getattr(torch.nn, name).forward).parameters)[1:] == tuple(inputs), name


def test_errors():
    with pytest.raises(ValueError, match="var is of incorrect size"):
        sg.nn.functional.gaussian_nll_loss(sg.tensor(X1), sg.tensor(X2), sg.tensor(np.ones(3)))
    with pytest.raises(ValueError, match="negative"):
        sg.nn.functional.gaussian_nll_loss(sg.tensor(X1), sg.tensor(X2), sg.tensor(-VARIANCE))
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        sg.nn.functional.soft_margin_loss(sg.tensor(X1), sg.tensor(SIGNS_2D), reduction="avg")


LEGACY = [  # (functional name, module name, inputs: the first differentiated)
    ("nll_loss", "NLLLoss", (np.log(np.abs(X1) + 0.1), np.array([0, 3, 1, 2, 2, 0]))),
    ("cross_entropy", "CrossEntropyLoss", (X1, np.array([0, 3, 1, 2, 2, 0]))),
    ("mse_loss", "MSELoss", (X1, X2)),
    ("l1_loss", "L1Loss", (X1, X2)),
    ("smooth_l1_loss", "SmoothL1Loss", (X1, X2)),
    ("kl_div", "KLDivLoss", (X1, np.abs(X2))),
    ("binary_cross_entropy", "BCELoss", (1 / (1 + np.exp(-X1)), LABELS)),
    ("binary_cross_entropy_with_logits", "BCEWithLogitsLoss", (X1, LABELS)),
    ("soft_margin_loss", "SoftMarginLoss", (X1, SIGNS_2D)),
    ("hinge_embedding_loss", "HingeEmbeddingLoss", (np.where(np.isfinite(X1), X1, 0.0), SIGNS_2D)),
]
FLAGS = [(False, None), (None, False), (True, True), (False, True), (True, False), (0, None)]


@pytest.mark.parametrize("name, module, inputs", LEGACY, ids=[case[0] for case in LEGACY])
def test_deprecated_size_average_and_reduce_are_pytorchs_reductions(name, module, inputs):
    """The spatial transformer tutorial's `F.nll_loss(output, target, size_average=False)` was refused, and
    `nn.SmoothL1Loss(size_average=False)`, `nn.KLDivLoss(reduce=False)` and the margin losses' modules ignored the
    flags (a mean where PyTorch sums): values and gradients of every combination, as PyTorch's, with its warning."""
    torch = pytest.importorskip("torch")
    for size_average, reduce in FLAGS:
        flags = {"size_average": size_average, "reduce": reduce}
        results = []
        for lib in (sg, torch):
            tensors = [lib.tensor(value) for value in inputs]
            tensors[0].requires_grad_(True)
            with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
                functional = getattr(lib.nn.functional, name)(*tensors, **flags)
                layer = getattr(lib.nn, module)(**flags)
            by_module = layer(*tensors)
            (functional.sum() + by_module.sum()).backward()
            results.append((functional.detach().numpy(), by_module.detach().numpy(), tensors[0].grad.numpy()))
        for ours, theirs in zip(*results):
            np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-15, err_msg=f"{name} {flags}")


def test_class_losses_take_ignore_index_in_pytorchs_positional_place():
    """nn.CrossEntropyLoss(weight, size_average, ignore_index, reduce, ...): a positional ignore_index was taken
    as `reduce` (NLLLoss(None, None, 0) returned the unreduced losses, ignoring nothing)."""
    torch = pytest.importorskip("torch")
    logits, targets = X1[:, :3], np.array([0, 1, 2, 1, 1, 0])
    for module, args in [("CrossEntropyLoss", (None, None, 1)), ("NLLLoss", (None, None, 0)),
                         ("CrossEntropyLoss", (None, None, 2, None, "sum", 0.1))]:
        ours, theirs = (getattr(lib.nn, module)(*args)(lib.tensor(logits), lib.tensor(targets)) for lib in (sg, torch))
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, err_msg=f"{module}{args}")
