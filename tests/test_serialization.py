"""sg.save / sg.load of state dicts: an .npz read without unpickling, told apart from AOT artifacts by content
(issue 14 item 5)."""
import collections
import io
import math

import numpy as np
import pytest

import symgrad as sg
from symgrad.serialization import STATE_ENTRY, is_saved_state

RNG = np.random.default_rng(5)


def _same(a, b):
    assert type(a) is type(b), (a, b)
    if isinstance(a, sg.Tensor):
        assert a.dtype == b.dtype and a.requires_grad == b.requires_grad
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    elif isinstance(a, (np.ndarray, np.generic)):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for key in a:
            _same(a[key], b[key])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b)
    else:
        assert a == b and (not isinstance(a, float) or math.copysign(1, a) == math.copysign(1, b))


def test_round_trip_of_nested_values(tmp_path):
    obj = collections.OrderedDict([
        ("weights", sg.tensor(RNG.standard_normal((3, 2)), dtype=sg.float)),
        ("leaf", sg.tensor([1.0, 2.0], requires_grad=True)),
        ("param", sg.nn.Parameter(sg.tensor([0.5]))),
        ("ints", sg.tensor([[1, 2]], dtype=sg.long)), ("flags", sg.tensor([True, False])),
        ("empty", sg.zeros(0, 3, device="cpu")), ("scalar", sg.tensor(2.5)),
        ("array", np.arange(6, dtype=np.int32).reshape(2, 3)), ("zero_d", np.array(3.0)), ("np_number", np.float32(1.5)),
        ("numbers", [1, -2 ** 70, 0.1, -0.0, math.inf, math.nan, True, None, "text"]),
        ("tuple", (1, (2.0, "x"), [])), ("int_keys", {0: {"step": 3}, 7: {"betas": (0.9, 0.999)}}), ("empty_dict", {}),
    ])
    path = tmp_path / "state.pt"
    sg.save(obj, path)
    assert path.exists() and not (tmp_path / "state.pt.npz").exists()  # written as named, as torch.save
    loaded = sg.load(path)
    _same(obj, loaded)
    assert isinstance(loaded["param"], sg.nn.Parameter) and loaded["leaf"].is_leaf
    assert loaded["weights"]._data is not obj["weights"]._data
    with np.load(path, allow_pickle=False) as archive:  # an ordinary .npz, no pickles in it
        assert STATE_ENTRY in archive.files
    buffer = io.BytesIO()
    sg.save([sg.tensor(1.0), {"a": 2}], buffer)
    buffer.seek(0)
    _same(sg.load(buffer, map_location="cpu", weights_only=True), [sg.tensor(1.0), {"a": 2}])


@pytest.mark.parametrize("obj, message", [
    (sg.nn.Linear(2, 2), "save model.state_dict"), (lambda: 1, "function"),
    (np.array([object()]), "Python objects"), ({(1, 2): 3}, "keys must be strings"),
])
def test_what_cannot_be_saved_is_refused(tmp_path, obj, message):
    with pytest.raises(TypeError, match=message):
        sg.save(obj, tmp_path / "x")
    with pytest.raises(TypeError, match="pickles nothing"):
        sg.save({}, tmp_path / "x", pickle_protocol=2)


def test_loading_never_unpickles_and_damage_is_a_clear_error(tmp_path):
    class Boom:
        def __reduce__(self):
            return (print, ("code ran",))

    hostile = tmp_path / "hostile.npz"
    with open(hostile, "wb") as f:  # a valid description, and an entry that is a pickle
        np.savez(f, **{STATE_ENTRY: np.frombuffer(b'{"format": "symgrad-state", "version": 1, "root": {"array": 0}}',
                                                  np.uint8), "a0": np.array([Boom()], dtype=object)})
    with pytest.raises(ValueError, match="not a state sg.save wrote"):
        sg.load(hostile)
    damaged = tmp_path / "damaged.npz"
    with open(damaged, "wb") as f:
        np.savez(f, **{STATE_ENTRY: np.frombuffer(b'{"format": "symgrad-state", "root": ', np.uint8)})
    with pytest.raises(ValueError, match="damaged"):
        sg.load(damaged)
    with pytest.raises(ValueError, match="does not hold a state"):
        sg.load(io.BytesIO(b"not a zip"))
    with pytest.raises(RuntimeError, match="only device is 'cpu'"):
        sg.save({}, tmp_path / "s") or sg.load(tmp_path / "s", map_location="cuda")


def test_load_tells_states_from_aot_artifacts(tmp_path):
    sg.save({"w": sg.tensor([1.0])}, tmp_path / "state.npz")
    assert is_saved_state(tmp_path / "state.npz") and not is_saved_state(tmp_path / "missing")
    with pytest.raises(FileNotFoundError, match="no symgrad artifact"):
        sg.load(tmp_path / "missing")  # not a saved state: the AOT loader's answer
    out = tmp_path / "double"
    sg.aot.compile(lambda x: sg.sum(x * 2.0), (np.ones(3),), out=str(out), backend="numpy")
    artifact = sg.load(str(out))
    assert artifact(np.ones(3)) == 6.0 and not is_saved_state(str(out) + ".py")


def test_checkpoint_resumes_training_to_the_same_numbers(tmp_path):
    x, y = sg.tensor(RNG.standard_normal((32, 4))), sg.tensor(RNG.integers(0, 3, 32))

    def make():
        return sg.nn.Sequential(sg.nn.Linear(4, 8), sg.nn.ReLU(), sg.nn.Linear(8, 3))

    def tools(model):
        opt = sg.optim.AdamW(model.parameters(), lr=0.05)
        return opt, sg.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)

    def train(model, opt, scheduler, epochs):
        losses = []
        for _ in range(epochs):
            opt.zero_grad()
            loss = sg.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            scheduler.step()
            losses.append(loss.item())
        return losses

    model = make()
    initial = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
    opt, scheduler = tools(model)
    straight = train(model, opt, scheduler, 7)

    first = make()
    first.load_state_dict(initial)
    opt, scheduler = tools(first)
    before = train(first, opt, scheduler, 3)
    sg.save({"model": first.state_dict(), "optimizer": opt.state_dict(), "scheduler": scheduler.state_dict(),
             "epoch": 3}, tmp_path / "checkpoint.pt")
    checkpoint = sg.load(tmp_path / "checkpoint.pt")
    resumed = make()
    resumed.load_state_dict(checkpoint["model"])
    opt, scheduler = tools(resumed)
    opt.load_state_dict(checkpoint["optimizer"])
    scheduler.load_state_dict(checkpoint["scheduler"])
    after = train(resumed, opt, scheduler, 4)
    # to rounding: a step runs op by op the first time its structure is seen, then compiled (deferred
    # forward and backward in one native function), whose last bits may differ from NumPy's
    assert checkpoint["epoch"] == 3
    np.testing.assert_allclose(before + after, straight, rtol=1e-12)
    for a, b in zip(model.parameters(), resumed.parameters()):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop", "LBFGS"])
def test_a_pickled_or_copied_optimizer_keeps_each_parameters_state(how, name):
    import copy
    import pickle
    x = sg.tensor(RNG.standard_normal((8, 3)))
    model = sg.nn.Sequential(sg.nn.Linear(3, 4), sg.nn.Tanh(), sg.nn.Linear(4, 2))
    options = {"momentum": 0.9} if name == "SGD" else {}
    opt = getattr(sg.optim, name)(model.parameters(), lr=0.05, **options)
    scheduler = sg.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)

    def train(model, opt, scheduler):
        for _ in range(3):  # the third step of a stateful formula runs its compiled update
            def closure():
                opt.zero_grad()
                loss = model(x).pow(2).mean()
                loss.backward()
                return loss
            opt.step(closure)
            scheduler.step()

    train(model, opt, scheduler)
    both = (model, opt, scheduler)
    again = pickle.loads(pickle.dumps(both)) if how == "pickle" else copy.deepcopy(both)
    assert again[2].optimizer is again[1] and again[1].param_groups[0]["params"][0] is again[0][0].weight
    assert len(again[1].state) == len(opt.state) and set(again[1].state) <= {id(p) for p in again[0].parameters()}
    train(*both)
    train(*again)
    for a, b in zip(model.parameters(), again[0].parameters()):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
