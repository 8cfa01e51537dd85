"""jax.tree_util's names over symgrad's pytrees (nested tuples, lists and dicts; None is an empty subtree), so JAX
programs that flatten a tree of gradients to clip or noise them run unchanged."""
from .pytree import TreeDef, flatten, unflatten

__all__ = ["tree_flatten", "tree_unflatten", "tree_leaves", "tree_structure", "tree_map"]


def tree_flatten(tree) -> tuple[list, TreeDef]:
    """(leaves, treedef), dicts in sorted-key order, as JAX's."""
    return flatten(tree)


def tree_unflatten(treedef: TreeDef, leaves):
    return unflatten(treedef, leaves)


def tree_leaves(tree) -> list:
    return flatten(tree)[0]


def tree_structure(tree) -> TreeDef:
    return flatten(tree)[1]


def tree_map(f, tree, *rest):
    """f applied leaf by leaf to `tree` and the trees of the same structure in `rest`."""
    leaves, treedef = flatten(tree)
    others = [flatten(other) for other in rest]
    for other_leaves, other_def in others:
        if other_def != treedef:
            raise ValueError(f"tree_map: a tree's structure {other_def} differs from the first's {treedef}")
    return unflatten(treedef, [f(*args) for args in zip(leaves, *(other_leaves for other_leaves, _ in others))])
