"""Rprop, ASGD and LBFGS (closure API, fixed step or strong-Wolfe line search): parameters and losses against
PyTorch in float64 (skipped when absent), and what holds without it (LBFGS reaches a quadratic's minimum;
Rprop's steps grow and shrink with the gradient's sign)."""
import numpy as np
import pytest

import symgrad as sg

rng = np.random.default_rng(0)
W0, B0 = rng.standard_normal((3, 4)), rng.standard_normal(3)
X, Y = rng.standard_normal((8, 4)), rng.standard_normal((8, 3))


def _train(lib, make, steps):
    W = lib.tensor(W0.copy(), requires_grad=True)
    b = lib.tensor(B0.copy(), requires_grad=True)
    optimizer, x, y = make(lib, [W, b]), lib.tensor(X), lib.tensor(Y)

    def closure():
        optimizer.zero_grad()
        loss = (((x @ W.T + b).tanh() - y) ** 2).mean()
        loss.backward()
        return loss
    losses = [float(optimizer.step(closure).detach()) for _ in range(steps)]
    return np.concatenate([W.detach().numpy().ravel(), b.detach().numpy().ravel(), losses])


CASES = {
    "rprop": (lambda lib, p: lib.optim.Rprop(p, lr=0.05), 8),
    "rprop-options": (lambda lib, p: lib.optim.Rprop(p, lr=0.01, etas=(0.3, 1.5), step_sizes=(1e-3, 0.02),
                                                     maximize=True), 8),
    "asgd": (lambda lib, p: lib.optim.ASGD(p, lr=0.1, t0=2, lambd=1e-2, weight_decay=0.01), 8),
    "asgd-default": (lambda lib, p: lib.optim.ASGD(p), 4),
    "lbfgs": (lambda lib, p: lib.optim.LBFGS(p, lr=0.5, max_iter=5), 2),
    "lbfgs-default": (lambda lib, p: lib.optim.LBFGS(p, max_iter=10), 1),
    "lbfgs-wolfe": (lambda lib, p: lib.optim.LBFGS(p, line_search_fn="strong_wolfe", max_iter=5, history_size=3), 2),
}


@pytest.mark.parametrize("name", list(CASES))
def test_matches_pytorch(name):
    torch = pytest.importorskip("torch")
    make, steps = CASES[name]
    expected = _train(torch, make, steps)  # (ASGD's step size in PyTorch's default dtype, float32, as ours)
    # L-BFGS amplifies last-bit differences of dot products over its iterations: 1e-10 holds for ~10
    np.testing.assert_allclose(_train(sg, make, steps), expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_reaches_a_quadratics_minimum(line_search_fn):
    A = rng.standard_normal((5, 5))
    A = A @ A.T + 5 * np.eye(5)
    c = rng.standard_normal(5)
    x = sg.tensor(np.zeros(5), requires_grad=True)
    optimizer = sg.optim.LBFGS([x], max_iter=50, line_search_fn=line_search_fn, tolerance_grad=1e-12,
                               tolerance_change=1e-14)

    def closure():
        optimizer.zero_grad()
        loss = 0.5 * (x @ (sg.tensor(A) @ x)) - sg.tensor(c) @ x
        loss.backward()
        return loss
    for _ in range(3):
        optimizer.step(closure)
    np.testing.assert_allclose(x.detach().numpy(), np.linalg.solve(A, c), rtol=1e-6)  # stops on the loss change
    assert optimizer.state[id(x)]["func_evals"] > 1


def test_lbfgs_refusals():
    x = sg.tensor(np.zeros(2), requires_grad=True)
    with pytest.raises(RuntimeError, match="strong_wolfe"):
        sg.optim.LBFGS([x], line_search_fn="backtracking")
    with pytest.raises(RuntimeError, match="needs a closure"):
        sg.optim.LBFGS([x]).step()
    with pytest.raises(ValueError, match="parameter groups"):
        sg.optim.LBFGS([{"params": [x]}, {"params": [sg.tensor(np.zeros(1), requires_grad=True)]}])


def test_rprop_step_sizes_follow_the_gradient_sign():
    x = sg.tensor(np.array([1.0, -1.0]), requires_grad=True)
    optimizer = sg.optim.Rprop([x], lr=0.1)
    targets = [np.array([3.0, -3.0]), np.array([3.0, -3.0]), np.array([-3.0, 3.0])]
    for target in targets:  # the gradient of (x - target)^2 keeps its sign, then flips
        optimizer.zero_grad()
        ((x - sg.tensor(target)) ** 2).sum().backward()
        optimizer.step()
    state = optimizer.state[id(x)]
    np.testing.assert_allclose(state["step_size"], [0.1 * 1.2 * 0.5, 0.1 * 1.2 * 0.5])
    np.testing.assert_allclose(x.detach().numpy(), [1.0 + 0.1 + 0.12, -1.0 - 0.1 - 0.12])  # no move on the flip


def test_asgd_average_starts_at_t0():
    x = sg.tensor(np.array([4.0]), requires_grad=True)
    optimizer = sg.optim.ASGD([x], lr=0.1, t0=1)
    seen = []
    for _ in range(4):
        optimizer.zero_grad()
        (x ** 2).sum().backward()
        optimizer.step()
        seen.append(float(x.detach()[0]))
    # step k averages with the mu set by step k - 1, 1 / max(1, k - 1 - t0): 1 up to step 3 (ax copies x), 1/2 at 4
    np.testing.assert_allclose(optimizer.state[id(x)]["ax"], [seen[2] + (seen[3] - seen[2]) / 2])


@pytest.mark.parametrize("name", ["SGD", "Adam", "LBFGS"])
def test_state_is_read_with_the_parameter_as_key(name):
    """optimizer.state[p], PyTorch's way to read a parameter's state, was an error: the state is keyed by id(p) and
    a tensor hashes as its id, so the dict compared p with the int key elementwise ("Boolean value of Tensor with
    2 values is ambiguous"). It now gives the state, as state[id(p)] does; `p in state` and state.get(p) too."""
    w = sg.tensor([1.0, 2.0], requires_grad=True)
    options = {"SGD": dict(lr=0.1, momentum=0.9), "Adam": dict(lr=0.1), "LBFGS": dict(lr=0.1)}[name]
    optimizer = getattr(sg.optim, name)([w], **options)

    def closure():
        optimizer.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss
    optimizer.step(closure)
    assert w in optimizer.state and optimizer.state[w] is optimizer.state[id(w)] is optimizer.state.get(w)
    assert sg.tensor([3.0], requires_grad=True) not in optimizer.state
    key = {"SGD": "momentum_buffer", "Adam": "exp_avg", "LBFGS": "func_evals"}[name]
    assert key in optimizer.state[w]


def test_state_written_with_the_parameter_as_key_is_the_one_step_reads():
    """state[p] = {...} (a warm start) was stored under p, beside the id(p) entry step reads, and state[p] of a
    parameter without state was a KeyError: PyTorch's defaultdict(dict) gives {}. As PyTorch: q = 3 - 0.1 * 10."""
    p, q = sg.tensor([1.0], requires_grad=True), sg.tensor([3.0], requires_grad=True)
    optimizer = sg.optim.SGD([p, q], lr=0.1, momentum=0.9)
    assert optimizer.state[p] == {}
    optimizer.state[q] = {"momentum_buffer": sg.tensor([10.0])}
    q.sum().backward()  # (q's gradient 1: the buffer becomes 0.9 * 10 + 1)
    optimizer.step()
    assert q.tolist() == [2.0] and optimizer.state[q]["momentum_buffer"].tolist() == [10.0]


@pytest.mark.parametrize("name", ["SGD", "Adam", "Adadelta", "RMSprop", "Adagrad", "Adamax", "NAdam", "RAdam", "ASGD",
                                  "Rprop"])
def test_state_dict_tensors_follow_the_steps_as_pytorch(name):
    """Steps kept new state arrays, so a state_dict() taken before them held the old values (Adam's exp_avg 0.36
    two steps on, PyTorch's 0.576): the state's tensors now take each step's values and state[p] holds tensors (to
    1e-6: PyTorch keeps ASGD's eta in float32)."""
    torch = pytest.importorskip("torch")
    options = dict(lr=0.1, **({"momentum": 0.9} if name == "SGD" else {}))
    p = sg.tensor([1.0, -2.0], requires_grad=True)
    q = torch.tensor([1.0, -2.0], dtype=torch.float64, requires_grad=True)
    ours, theirs = getattr(sg.optim, name)([p], **options), getattr(torch.optim, name)([q], **options)
    saved = []
    for step in range(3):
        for optimizer, x in ((ours, p), (theirs, q)):
            optimizer.zero_grad()
            (x * x * 3).sum().backward()
            optimizer.step()
        if step == 0:
            saved = ours.state_dict()["state"][0], theirs.state_dict()["state"][0]
    for key, value in saved[0].items():
        if isinstance(value, sg.Tensor) and value.ndim:
            assert ours.state[p][key] is value
            np.testing.assert_allclose(value.detach().numpy(), saved[1][key].detach().numpy(), rtol=1e-6)


def test_adagrad_makes_its_state_at_construction_as_pytorch():
    torch = pytest.importorskip("torch")
    p = sg.tensor([1.0, -2.0], requires_grad=True)
    ours = sg.optim.Adagrad([p], initial_accumulator_value=0.5).state_dict()["state"]
    theirs = torch.optim.Adagrad([torch.tensor([1.0, -2.0], requires_grad=True)],
                                 initial_accumulator_value=0.5).state_dict()["state"]
    assert ours.keys() == theirs.keys() == {0} and ours[0].keys() == theirs[0].keys()
    assert ours[0]["sum"].tolist() == theirs[0]["sum"].tolist() == [0.5, 0.5]
