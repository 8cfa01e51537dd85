"""jax.tree_util's names over symgrad's pytrees (nested tuples, namedtuples, lists and dicts, OrderedDicts and
defaultdicts kept as such; None is an empty subtree), so JAX programs that flatten a tree of gradients to clip or
noise them run unchanged."""
from .pytree import TreeDef, flatten, flatten_up_to, unflatten

__all__ = ["tree_flatten", "tree_unflatten", "tree_leaves", "tree_structure", "tree_map"]


def tree_flatten(tree, is_leaf=None) -> tuple[list, TreeDef]:
    """(leaves, treedef), dicts in sorted-key order (an OrderedDict in its own), as JAX's; `is_leaf(subtree)` true
    makes a subtree one leaf."""
    return flatten(tree, is_leaf)


def tree_unflatten(treedef: TreeDef, leaves):
    return unflatten(treedef, leaves)


def tree_leaves(tree, is_leaf=None) -> list:
    return flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None) -> TreeDef:
    return flatten(tree, is_leaf)[1]


def tree_map(f, tree, *rest, is_leaf=None):
    """f applied leaf by leaf to `tree` and the trees in `rest`, whose structure `tree`'s must be a prefix of (a
    leaf of `tree` takes the whole subtree there), as JAX's."""
    leaves, treedef = flatten(tree, is_leaf)
    others = [flatten_up_to(treedef, other) for other in rest]
    return unflatten(treedef, [f(*args) for args in zip(leaves, *others)])
