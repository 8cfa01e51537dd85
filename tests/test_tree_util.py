"""symgrad.tree_util has jax.tree_util's flatten, unflatten and map, with JAX's leaf order (checked against JAX)."""
import collections

import numpy as np
import pytest

import symgrad as sg
from symgrad.tree_util import tree_flatten, tree_leaves, tree_map, tree_structure, tree_unflatten

TREE = [(np.ones(2), 3.0), {"b": np.zeros((0, 3)), "a": (np.float64(2.0), None)}, []]


def test_flatten_and_unflatten_round_trip_in_jaxs_order():
    leaves, treedef = tree_flatten(TREE)
    assert [np.shape(leaf) for leaf in leaves] == [(2,), (), (), (0, 3)]
    rebuilt = tree_unflatten(treedef, leaves)
    assert type(rebuilt[0]) is tuple and rebuilt[1]["a"][1] is None and rebuilt[2] == []
    assert tree_structure(rebuilt) == treedef and len(tree_leaves(TREE)) == treedef.num_leaves == 4
    jax = pytest.importorskip("jax")
    their_leaves, their_def = jax.tree_util.tree_flatten(TREE)
    assert [np.shape(leaf) for leaf in their_leaves] == [np.shape(leaf) for leaf in leaves]
    assert their_def.num_leaves == treedef.num_leaves


def test_tree_map_over_several_trees_and_under_grad():
    doubled = tree_map(lambda x, y: x + y, TREE, TREE)
    assert doubled[0][1] == 6.0 and doubled[1]["b"].shape == (0, 3)
    with pytest.raises(ValueError, match="structure"):
        tree_map(lambda x, y: x, TREE, [1.0])

    def norm(params):  # DP-SGD's clipping norm: a jnp.array of the flattened leaves' norms
        return sg.linalg.norm(sg.stack([sg.linalg.norm(g.ravel()) for g in tree_leaves(params)]))

    params = {"w": np.array([[3.0, 0.0]]), "b": np.array([4.0])}
    grads = sg.grad(norm)(params)
    np.testing.assert_allclose(grads["w"], [[0.6, 0.0]])
    np.testing.assert_allclose(grads["b"], [0.8])


Pair = collections.namedtuple("Pair", "b a")
TYPED = {"z": Pair(np.ones(2), 2.0), "a": collections.OrderedDict([("y", 3.0), ("x", None), ("w", [4.0])]),
         "d": collections.defaultdict(list, {"q": 5.0, "c": 6.0}), "e": {}}


def test_namedtuples_ordered_and_default_dicts_keep_their_type_and_order():
    """A namedtuple came back a plain tuple and an OrderedDict was sorted; JAX keeps both (and a defaultdict)."""
    jax = pytest.importorskip("jax")
    leaves, treedef = tree_flatten(TYPED)
    their_leaves, their_def = jax.tree_util.tree_flatten(TYPED)
    assert [np.shape(leaf) for leaf in leaves] == [np.shape(leaf) for leaf in their_leaves]
    assert [float(np.ravel(leaf)[0]) for leaf in leaves] == [float(np.ravel(leaf)[0]) for leaf in their_leaves]
    ours, theirs = tree_unflatten(treedef, leaves), jax.tree_util.tree_unflatten(their_def, their_leaves)
    for key in TYPED:
        assert type(ours[key]) is type(theirs[key]) and list(ours[key]) == list(theirs[key])
    assert ours["z"]._fields == ("b", "a") and ours["d"].default_factory is list
    assert tree_structure(Pair(1.0, 2.0)) != tree_structure((1.0, 2.0))
    assert tree_structure(collections.OrderedDict(a=1.0)) != tree_structure({"a": 1.0})
    grads = sg.grad(lambda p: p.b * p.a["u"] + p.a["t"])(
        Pair(np.float64(2.0), collections.OrderedDict([("u", np.float64(3.0)), ("t", np.float64(1.0))])))
    assert type(grads) is Pair and list(grads.a) == ["u", "t"]
    assert (grads.b, grads.a["u"], grads.a["t"]) == (3.0, 2.0, 1.0)


@pytest.mark.parametrize("case", range(5))
def test_tree_map_is_leaf_and_prefix_trees_as_jaxs(case):
    jax = pytest.importorskip("jax")
    f, trees, is_leaf = [
        (lambda x: x, ([None, 1.0],), lambda x: x is None),
        (lambda x: 0.0, ([[1.0, 2.0], 3.0],), lambda x: isinstance(x, list) and len(x) == 2),
        (lambda x, y: (x, y), ([1.0, 2.0], [(3.0, 4.0), 5.0]), None),
        (lambda x: x * 2, (TYPED,), lambda x: isinstance(x, Pair)),
        (lambda x, y: x + y, (Pair(1.0, {"k": 2.0}), Pair(3.0, {"k": 4.0})), None),
    ][case]
    ours = tree_map(f, *trees, is_leaf=is_leaf)
    theirs = jax.tree_util.tree_map(f, *trees, is_leaf=is_leaf)
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("first, other", [([1.0, 2.0], [3.0]), (Pair(1.0, 2.0), (3.0, 4.0)),
                                          ({"a": 1.0}, collections.OrderedDict(a=2.0)), ([1.0, None], [2.0, 3.0]),
                                          ({"a": 1.0}, {"b": 1.0}), ((1.0,), 2.0)])
def test_tree_map_refuses_another_structure_as_jax(first, other):
    jax = pytest.importorskip("jax")
    with pytest.raises(ValueError):
        jax.tree_util.tree_map(lambda x, y: x, first, other)
    with pytest.raises(ValueError, match="structure"):
        tree_map(lambda x, y: x, first, other)
