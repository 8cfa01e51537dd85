"""Records are IR nodes, and a tensor's IR value is one version of its array (docs/eager.md, 'One engine')."""
import pickle

import numpy as np
import pytest

import symgrad as sg
from symgrad import ir
from symgrad.eager.adjoint import StageGraph, adjoint_for
from symgrad.eager.tape import start_over
from symgrad.eager.graph import Record, value_of


def test_typed_value_is_a_value_of_that_type():
    for shape, dtype in [((), np.dtype(np.float64)), ((0, 3), np.dtype(np.float32)), ((2,), np.dtype(np.int8))]:
        fast, slow = ir.typed_value(shape, dtype), ir.Value(shape, dtype)
        assert (fast.shape, fast.dtype, fast.hint, fast.type_str()) == (slow.shape, slow.dtype, None, slow.type_str())


def test_nodes_without_notes_share_one_read_only_meta_and_pickle():
    graph = sg.trace(lambda x: sg.sum(sg.tanh(x) * x), np.ones(3))
    assert all(node.meta is ir.NO_META for node in graph.nodes)
    with pytest.raises(TypeError):
        graph.nodes[0].meta["rule"] = "x"
    clone = pickle.loads(pickle.dumps(graph))
    assert clone == graph and str(clone) == str(graph)


def test_a_record_is_a_node_and_its_values_are_its_operands():
    start_over()  # (not deferred against a step another test captured)
    x = sg.tensor(np.array([1.0, 2.0]), requires_grad=True)
    c = sg.tensor(np.array([3.0, 4.0]))
    y = x * c
    z = sg.sin(y)
    record = z.grad_fn
    assert isinstance(record, ir.Node) and record.meta is ir.NO_META
    assert record.valued().inputs[0] is y.grad_fn.output() and value_of(z) is record.out
    leaf, constant = y.grad_fn.valued().inputs  # (made when read: an op whose backward runs captured never reads them)
    assert leaf is value_of(x) and (constant.shape, constant.dtype) == ((2,), np.dtype(np.float64))
    assert record.out_type == ((2,), np.dtype(np.float64)) and record.in_types == (((2,), np.dtype(np.float64)),)
    assert record.extra is None  # no hook, no Function: no side object


def test_a_write_gives_a_new_value_and_a_view_shares_its_base_counter():
    base = sg.tensor(np.arange(4.0))
    before = value_of(base)
    assert value_of(base) is before  # one value per version
    view = base[1:3]
    view.add_(1.0)  # a write through the view renews the base's value
    assert value_of(base) is not before
    after = value_of(base)
    base.data = np.zeros(4)  # another array: another value
    assert value_of(base) is not after
    base.requires_grad_(True)  # a leaf now: another value (its parent changed)
    assert value_of(base) is not value_of(sg.tensor(np.zeros(4)))


def test_a_run_of_records_is_the_graph_with_one_input_per_outside_value():
    x = sg.tensor(np.array([0.5, -1.0, 2.0]), requires_grad=True)
    c = sg.tensor(np.array([1.0, 2.0, 3.0]))
    y = x * c + c * x  # x and c read twice each, at one version
    run = [y.grad_fn.parents[0], y.grad_fn.parents[1], y.grad_fn]
    run.sort(key=lambda r: r.seq)
    stage = StageGraph(run, {id(run[-1])}, lambda parent: True)
    graph = ir.verify(stage.graph())
    assert graph.nodes == run and len(graph.inputs) == 2
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2 * c.numpy())


def test_a_constant_that_starts_requiring_grad_is_another_input():
    """x read as a constant, then made a leaf and read again, in one graph: only the second use has a gradient
    (PyTorch's)."""
    torch = pytest.importorskip("torch")
    grads = []
    for lib in (sg, torch):
        w = lib.tensor(np.array([1.0, -2.0]), requires_grad=True)
        x = lib.tensor(np.array([0.5, 3.0]))
        first = w * x
        x.requires_grad_(True)
        loss = (first * x).sum()
        loss.backward()
        grads.append((w.grad.numpy().copy(), x.grad.numpy().copy()))
    for ours, theirs in zip(*grads):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_gradients_of_repeated_reads_match_finite_differences():
    """A leaf and a constant each read by several ops, at edge values (0, a large number), differentiated op by
    op (first steps) and captured (later steps), against central finite differences in float64."""
    data = np.array([0.0, 1e-3, -2.5, 40.0])
    c = sg.tensor(np.array([1.0, 0.0, -1.0, 0.5]))

    def f(w):
        return (sg.tanh(w * c) * w + c * w * w).sum()

    for _ in range(4):
        w = sg.tensor(data.copy(), requires_grad=True)
        f(w).backward()
        eps = 1e-6
        numeric = [(f(sg.tensor(data + eps * e)).item() - f(sg.tensor(data - eps * e)).item()) / (2 * eps)
                   for e in np.eye(4)]
        np.testing.assert_allclose(w.grad.numpy(), numeric, rtol=1e-7, atol=1e-7)


def test_a_deferred_record_makes_its_values_when_read():
    w = sg.tensor(np.array([0.5, -1.0]), requires_grad=True)
    x = sg.tensor(np.array([2.0, 3.0]))
    for _ in range(4):  # the third step on defers its ops against the captured step
        w.grad = None
        y = sg.sin(w * x)
        loss = (y * w).sum()
        deferred = [t for t in (y, loss) if t.grad_fn.inputs is None]
        loss.backward()
    assert deferred, "the steady step's records were deferred"
    record = y.grad_fn
    assert record.valued().inputs[0] is record.parents[0].output()
    assert Record.in_types.fget(record) == (((2,), np.dtype(np.float64)),)


def test_a_record_read_as_grad_fn_stays_a_record_of_the_tape():
    """Reading grad_fn gives the record its named class (MulBackward0); an op recorded on its result after that
    took it for a leaf (the tape's exact class test), and the captured step's backward raised AttributeError."""
    w = sg.tensor(np.array([0.5, -1.0]), requires_grad=True)
    x = np.array([2.0, 3.0])
    for _ in range(4):
        w.grad = None
        y = w * sg.tensor(x)
        assert type(y.grad_fn).__name__ == "MulBackward0"
        loss = sg.sin(y).sum()
        loss.backward()
        np.testing.assert_allclose(w.grad.numpy(), np.cos(w.detach().numpy() * x) * x, rtol=1e-14)


def _prefix_run(shared: bool) -> tuple:
    """(w, the constants, the records) of ((w * c) * c or d).sum() recorded on a tape of its own, every record's
    gradient wanted."""
    start_over()
    w = sg.tensor(np.array([0.5, -1.0, 2.0]), requires_grad=True)
    c, d = sg.tensor(np.array([1.0, 2.0, 3.0])), sg.tensor(np.array([-4.0, 0.0, 5.0]))
    loss = ((w * c) * (c if shared else d)).sum()
    run = [loss.grad_fn.parents[0].parents[0], loss.grad_fn.parents[0], loss.grad_fn]
    return w, c, d, loss, run


def test_a_whole_tape_prefix_is_keyed_by_the_tape_digest_and_where_its_operands_come_from():
    """The digest names the entries, not which constant operands are one value: (w * c) * c and (w * c) * d have
    one digest and two adjoints, each with the gradient of its own step, in either order."""
    keys = set()
    for shared in (True, False, True, False):
        w, c, d, loss, run = _prefix_run(shared)
        stage = StageGraph(run, {id(run[-1])}, lambda parent: True)
        assert stage.digested and stage.structure[0] == run[-1].tape.digests[-1]
        keys.add(stage.key())
        grad, = sg.autograd.grad(loss, [w])
        np.testing.assert_array_equal(grad.numpy(), c.numpy() * (c if shared else d).numpy())
    assert len(keys) == 2
    assert not StageGraph(run[1:], {id(run[-1])}, lambda parent: True).digested  # a part of the tape: tuples


def test_an_adjoint_keyed_by_a_digest_is_checked_against_the_entries_it_was_traced_for():
    """Two structures whose digests are equal (hashes collide: hash(-1) == hash(-2)) get adjoints of their own."""
    _, _, _, _, run = _prefix_run(True)
    first = adjoint_for(StageGraph(run, {id(run[-1])}, lambda parent: True))
    start_over()
    w = sg.tensor(np.array([0.5, -1.0, 2.0]), requires_grad=True)
    loss = ((w * 2.0) + sg.tensor(np.ones(3))).sum()  # another structure of three records: (w * c) + e
    other = [loss.grad_fn.parents[0].parents[0], loss.grad_fn.parents[0], loss.grad_fn]
    stage = StageGraph(other, {id(other[-1])}, lambda parent: True)
    stage.structure = first_structure = StageGraph(run, {id(run[-1])}, lambda parent: True).structure
    assert stage.key() == (first_structure, (2,), (0,))
    assert adjoint_for(stage) is not first


@pytest.mark.parametrize("shape", [(), (0,), (2, 0)])
def test_a_whole_tape_prefix_of_0d_or_empty_values_keeps_its_gradient(shape):
    """Keyed by the digest, traced at first sight and lowered after, a prefix of 0-d or empty values differentiates
    as any other (zeros of the leaf's shape for an empty one), inf included."""
    values = np.full(shape, 1.5)
    for _ in range(3):
        start_over()
        w = sg.tensor(values, requires_grad=True)
        c = sg.tensor(np.full(shape, np.inf))
        loss = (sg.exp(-w * w) * c).sum()
        run = [loss.grad_fn]
        while isinstance(run[0].parents[0], Record):
            run.insert(0, run[0].parents[0])
        assert StageGraph(run, {id(run[-1])}, lambda parent: True).digested
        grad, = sg.autograd.grad(loss, [w])
        assert grad.shape == shape
        np.testing.assert_array_equal(grad.numpy(), -2 * values * np.exp(-values * values) * np.inf)
