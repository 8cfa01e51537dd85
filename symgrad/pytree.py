"""Pytrees: nested tuples, lists and dicts of array leaves, flattened and rebuilt."""
from __future__ import annotations

from collections import OrderedDict, defaultdict
from dataclasses import dataclass


@dataclass(frozen=True)
class TreeDef:
    """The structure of a pytree: kind ('leaf', 'tuple', 'list', 'dict', 'none'), keys, children, and the node's
    own type where it is not the kind's (a namedtuple's class, OrderedDict, (defaultdict, its default_factory)),
    which unflatten rebuilds as JAX's does."""

    kind: str
    keys: tuple = ()
    children: tuple = ()
    node_type: object = None

    @property
    def num_leaves(self) -> int:
        if self.kind == "leaf":
            return 1
        return sum(child.num_leaves for child in self.children)


LEAF = TreeDef("leaf")


def flatten(tree, is_leaf=None):
    """(leaves, treedef). Dicts are flattened in sorted-key order, an OrderedDict in its own, as JAX does;
    `is_leaf(subtree)` true makes that subtree a leaf (jax.tree_util's is_leaf)."""
    leaves = []
    return leaves, _flatten(tree, leaves, is_leaf)


def _flatten(tree, leaves, is_leaf) -> TreeDef:
    if is_leaf is not None and is_leaf(tree):
        leaves.append(tree)
        return LEAF
    if isinstance(tree, (tuple, list)):
        kind = "tuple" if isinstance(tree, tuple) else "list"
        node_type = type(tree) if kind == "tuple" and hasattr(tree, "_fields") else None  # a namedtuple
        return TreeDef(kind, (), tuple(_flatten(item, leaves, is_leaf) for item in tree), node_type)
    if isinstance(tree, dict):
        keys = dict_keys(tree)
        return TreeDef("dict", keys, tuple(_flatten(tree[k], leaves, is_leaf) for k in keys), _dict_type(tree))
    if tree is None:
        return TreeDef("none")
    leaves.append(tree)
    return LEAF


def dict_keys(tree: dict) -> tuple:
    """A dict node's keys in leaf order: an OrderedDict's own order, else sorted (JAX's)."""
    return tuple(tree) if isinstance(tree, OrderedDict) else tuple(sorted(tree))


def _dict_type(tree: dict):
    """TreeDef.node_type of a dict node."""
    if isinstance(tree, defaultdict):
        return defaultdict, tree.default_factory
    return OrderedDict if isinstance(tree, OrderedDict) else None


def unflatten(treedef: TreeDef, leaves):
    iterator = iter(leaves)
    result = _unflatten(treedef, iterator)
    return result


def _unflatten(treedef, iterator):
    if treedef.kind == "leaf":
        return next(iterator)
    if treedef.kind == "none":
        return None
    children = [_unflatten(child, iterator) for child in treedef.children]
    node_type = treedef.node_type
    if treedef.kind == "dict":
        items = zip(treedef.keys, children)
        if isinstance(node_type, tuple):
            return defaultdict(node_type[1], items)
        return dict(items) if node_type is None else node_type(items)
    if treedef.kind == "list":
        return children
    return tuple(children) if node_type is None else node_type(*children)


def flatten_up_to(treedef: TreeDef, tree) -> list:
    """The subtrees of `tree` at the leaves of `treedef`, which must be a prefix of its structure (JAX's rule for
    the other trees of tree_map); ValueError where they differ."""
    if treedef.kind == "leaf":
        return [tree]
    found = _flatten(tree, [], lambda subtree: subtree is not tree)  # the node itself, its children as leaves
    if (found.kind, found.keys, found.node_type, len(found.children)) != (
            treedef.kind, treedef.keys, treedef.node_type, len(treedef.children)):
        raise ValueError(f"pytree structure error: a subtree {found} differs from the first tree's {treedef}")
    children = (tree[k] for k in treedef.keys) if treedef.kind == "dict" else iter(tree or ())
    return [leaf for child, child_def in zip(children, treedef.children) for leaf in flatten_up_to(child_def, child)]


def leaf_names(tree, top_names) -> list[str]:
    """Readable names for the leaves of a list of arguments: x, params_w, xs_0, ..."""
    names = []
    for item, name in zip(tree, top_names):
        _names(item, name, names)
    return names


def _names(tree, prefix, names):
    if isinstance(tree, (tuple, list)):
        for i, item in enumerate(tree):
            _names(item, f"{prefix}_{i}", names)
    elif isinstance(tree, dict):
        for key in dict_keys(tree):
            _names(tree[key], f"{prefix}_{key}", names)
    elif tree is not None:
        names.append(prefix)
