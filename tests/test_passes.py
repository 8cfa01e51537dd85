"""The IR passes (cse, fold, simplify, fuse): structure after each rewrite, and same numbers."""
import numpy as np
import pytest

import symgrad as sg
from symgrad.codegen.numpy_backend import lower
from symgrad import ir
from symgrad.ops.shape import reshape_p, transpose_p
from symgrad.ops.indexing import unslice_p
from symgrad.passes import cse, dce, fold, fuse, optimize, simplify
from symgrad.passes.slabs import merge_slab_sums

RNG = np.random.default_rng(0)


def prims(graph):
    """The op names of a graph's nodes, in order (named `ew` nodes by their name)."""
    return [node.params.get("name", node.prim.name) for node in graph.nodes]


def assert_same_numbers(before, after, *arrays):
    """Both graphs verify and compute the same outputs on `arrays`."""
    ir.verify(after)
    for got, want in zip(lower(after)(*arrays), lower(before)(*arrays), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_cse_merges_repeated_subexpressions_and_equal_constants():
    x = RNG.normal(size=(3, 4))
    graph = sg.trace(lambda x: sg.sin(x) * sg.exp(sg.sin(x)) + sg.sum(x @ x.T) + sg.sum(x @ x.T), x)
    merged = cse(graph)
    assert prims(merged).count("matmul") == 1 and prims(merged).count("transpose") == 1
    assert prims(merged).count("sin") == 1 and len(merged.nodes) == len(graph.nodes) - 5  # and a broadcast_to
    assert_same_numbers(graph, merged, x)

    one = ir.Value((), np.float64)
    nodes = [ir.Node(sg.core.const_p, (), ir.freeze_attrs({"value": ir.Constant(np.float64(2.0))}), v)
             for v in (one, ir.Value((), np.float64))]
    consts = ir.Graph([], nodes, [nodes[1].out, nodes[0].out], "consts")
    merged = cse(consts)
    assert len(merged.nodes) == 1 and merged.outputs == [one, one]


def test_fold_evaluates_constant_subgraphs():
    x = RNG.normal(size=(3,))
    c = np.arange(3.0)
    graph = sg.trace(lambda x: x * sg.exp(sg.sin(c) * 2.0), x)
    folded = dce(fold(graph))
    assert prims(folded) == ["const", "multiply"]
    np.testing.assert_allclose(folded.nodes[0].params["value"].array, np.exp(np.sin(c) * 2.0))
    assert_same_numbers(graph, folded, x)


def test_fold_keeps_broadcasts_of_constants_as_broadcasts():
    x = RNG.normal(size=(100, 100))
    graph = sg.trace(lambda x: x + np.ones(100), x)
    assert prims(fold(graph)) == prims(graph)
    assert "broadcast_to" in prims(graph)
    assert_same_numbers(graph, fold(graph), x)


def test_simplify_removes_identity_ops():
    x = RNG.normal(size=(2, 3))
    graph = sg.trace(lambda x: sg.reshape(sg.transpose(sg.transpose(x)), (2, 3)).astype(np.float64) * 2.0, x)
    simplified = dce(simplify(graph))
    assert prims(simplified) == ["ew"] and simplified.nodes[0].inputs == (graph.inputs[0],)
    assert_same_numbers(graph, simplified, x)


def test_simplify_collapses_reshapes_and_composes_transposes():
    x = RNG.normal(size=(2, 3, 4))

    def f(x):
        reshaped = reshape_p(reshape_p(x, shape=(6, 4)), shape=(4, 6))
        return reshaped, transpose_p(transpose_p(x, perm=(1, 2, 0)), perm=(1, 2, 0))

    graph = sg.trace(f, x)
    simplified = dce(simplify(graph))
    assert prims(simplified) == ["reshape", "transpose"]
    assert simplified.nodes[1].params["perm"] == (2, 0, 1)
    assert all(node.inputs == (graph.inputs[0],) for node in simplified.nodes)
    assert_same_numbers(graph, simplified, x)


def test_simplify_drops_identity_ew_and_substitutes_outputs():
    x = RNG.normal(size=(3,))
    graph = sg.trace(lambda x: (x * 1, sg.broadcast_to(x, (3,))), x)
    simplified = dce(simplify(graph))
    assert simplified.nodes == [] and simplified.outputs == [graph.inputs[0]] * 2
    assert_same_numbers(graph, simplified, x)


def test_fuse_chains_elementwise_nodes_into_one():
    x, y = RNG.normal(size=(4,)), RNG.normal(size=(4,))
    graph = sg.trace(lambda x, y: sg.sum(sg.where(x > y, sg.exp(sg.sin(x) * y), sg.tanh(y) - x)), x, y)
    fused = fuse(graph)
    assert prims(fused) == ["ew", "reduce_sum"]
    params = fused.nodes[0].params
    assert "name" not in params and [s.name for s in params["args"]] == ["x0", "x1"]
    assert fused.nodes[0].inputs == tuple(graph.inputs)
    assert_same_numbers(graph, fused, x, y)


def test_fuse_keeps_shared_values_and_outputs_separate():
    x = RNG.normal(size=(4,))
    graph = sg.trace(lambda x: (sg.sin(x), sg.exp(sg.sin(x) + sg.cos(x)) * sg.cos(x)), x)
    fused = fuse(cse(graph))
    assert prims(fused) == ["sin", "cos", "ew"]  # sin is an output, cos is used twice
    assert_same_numbers(graph, fused, x)


def test_fuse_does_not_cross_dtypes():
    x = RNG.normal(size=(4,)).astype(np.float32)
    graph = sg.trace(lambda x: sg.exp(sg.sin(x).astype(np.float64) * 2.0), x)
    fused = optimize(graph)
    assert prims(fused) == ["sin", "convert", "ew"]
    assert_same_numbers(graph, fused, x)


def test_compiled_elementwise_loss_is_one_fused_node():
    x, y = RNG.normal(size=(5,)), RNG.normal(size=(5,))

    def loss(x, y):
        return sg.sum(sg.log1p(sg.exp(-(x - y) ** 2)) * 0.5 + sg.sigmoid(x))

    compiled = sg.compile(loss, backend="numpy")
    expected = np.sum(np.log1p(np.exp(-(x - y) ** 2)) * 0.5 + 1 / (1 + np.exp(-x)))
    np.testing.assert_allclose(compiled(x, y), expected, rtol=1e-12)
    graph = compiled.lower(x, y).graph
    assert prims(graph) == ["ew", "reduce_sum"]
    assert sum(" = ew[" in line for line in compiled.lower(x, y).as_text().splitlines()) == 1


def test_fold_writes_uniform_constants_into_elementwise_expressions():
    x = RNG.normal(size=(5,))
    graph = sg.trace(sg.value_and_grad(lambda x: sg.sum(sg.sin(x) * 3.0)), x)
    folded = dce(fold(graph))
    assert "broadcast_to" not in prims(folded)  # the seed ct = broadcast(1.0) is written into the ew
    assert prims(folded).count("const") == 0
    assert_same_numbers(graph, folded, x)


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
def test_fusion_composes_without_deciding_what_ieee_arithmetic_decides(backend):
    """Fused into one expression, x != x, x - x or x / x meet the same operand on both sides: SymPy would
    fold them to False, 0 and 1, where NaN and infinities say otherwise."""
    x = np.array([np.nan, 1.0, np.inf, -np.inf, 0.0])
    programs = {
        "x != x": lambda x: sg.where(x != x, 1.0, 2 * x),
        "x == x": lambda x: sg.where((x + 0.0) == (x + 0.0), 0.0, 5.0) * x,
        "x <= x": lambda x: sg.where(sg.sin(x) <= sg.sin(x), 3.0, 4.0),
        "x - x": lambda x: (x * 1.0) - (x * 1.0),
        "x / x": lambda x: sg.exp(x) / sg.exp(x),
    }
    with np.errstate(all="ignore"):
        for name, f in programs.items():
            want = f(x)  # eager, NumPy's arithmetic
            np.testing.assert_array_equal(sg.compile(f, backend=backend)(x), want, err_msg=name)


def _slab_graph(x, reads, extra_use=False):
    """The gradient graph (dce'd) of sum_t t * sin(x[t]) over the rows `reads`; with `extra_use`, the
    gradient also scaled by a sum that reads a partial sum (merged in the middle of a chain)."""
    def f(x):
        total = 0.0
        for t in reads:
            total = total + sg.sum(sg.sin(x[t]) * (t + 1.0))
        return total
    return dce(sg.trace(sg.grad(f), x))


@pytest.mark.parametrize("reads, counts", [
    (range(6), (1, 0, 0)), (range(1, 5), (1, 1, 0)), ([4, 3, 2], (1, 1, 0)), ([0, 2, 4], (0, 3, 2)),
    ([1, 1, 2], (1, 2, 1))], ids=["whole-axis", "inner-rows", "backwards", "gaps", "overlap"])
def test_merge_slab_sums_turns_a_loops_row_cotangents_into_one_concatenate(reads, counts):
    """counts: the concatenates, unslices and adds left. Rows that meet merge (the last read's cotangent
    comes first); rows with gaps between them, or read twice, are added as before."""
    x = RNG.normal(size=(6, 3))
    graph = _slab_graph(x, reads)
    merged = merge_slab_sums(graph)
    names = prims(dce(merged))
    assert (names.count("concatenate"), names.count("unslice"), names.count("add")) == counts
    assert_same_numbers(graph, merged, x)
    expected = np.zeros_like(x)
    for t in reads:
        expected[t] += (t + 1.0) * np.cos(x[t])
    np.testing.assert_allclose(lower(optimize(graph))(x)[0], expected, rtol=1e-12)


def test_merge_slab_sums_emits_a_partial_sum_something_else_reads():
    """unslice(a) + unslice(b) is read by the next add and is an output itself: emitted once, as well."""
    a, b, c = (ir.Value((1, 2), np.float64) for _ in range(3))
    slabs = [ir.Node(unslice_p, (piece,), ir.freeze_attrs({"shape": (5, 2), "starts": (row, 0), "steps": (1, 1)}),
                     ir.Value((5, 2), np.float64)) for piece, row in ((a, 1), (b, 2), (c, 3))]
    add = sg.trace(lambda u, v: u + v, np.zeros((5, 2)), np.zeros((5, 2))).nodes[-1]
    first = ir.Node(add.prim, (slabs[0].out, slabs[1].out), add.attrs, ir.Value((5, 2), np.float64))
    second = ir.Node(add.prim, (first.out, slabs[2].out), add.attrs, ir.Value((5, 2), np.float64))
    graph = ir.Graph([a, b, c], slabs + [first, second], [second.out, first.out], "slabs")
    merged = merge_slab_sums(graph)
    assert prims(dce(merged)).count("add") == 0 and prims(dce(merged)).count("concatenate") == 2
    assert_same_numbers(graph, merged, *(RNG.normal(size=(1, 2)) for _ in range(3)))
