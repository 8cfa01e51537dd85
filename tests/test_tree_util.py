"""symgrad.tree_util has jax.tree_util's flatten, unflatten and map, with JAX's leaf order (checked against JAX)."""
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
