"""Pytrees: nested tuples, lists and dicts of array leaves, flattened and rebuilt."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TreeDef:
    """The structure of a pytree: kind ('leaf', 'tuple', 'list', 'dict', 'none'), keys, children."""

    kind: str
    keys: tuple = ()
    children: tuple = ()

    @property
    def num_leaves(self) -> int:
        if self.kind == "leaf":
            return 1
        return sum(child.num_leaves for child in self.children)


LEAF = TreeDef("leaf")


def flatten(tree):
    """(leaves, treedef). Dicts are flattened in sorted-key order, as JAX does."""
    leaves = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree, leaves) -> TreeDef:
    if isinstance(tree, (tuple, list)):
        kind = "tuple" if isinstance(tree, tuple) else "list"
        return TreeDef(kind, (), tuple(_flatten(item, leaves) for item in tree))
    if isinstance(tree, dict):
        keys = tuple(sorted(tree))
        return TreeDef("dict", keys, tuple(_flatten(tree[k], leaves) for k in keys))
    if tree is None:
        return TreeDef("none")
    leaves.append(tree)
    return LEAF


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
    if treedef.kind == "dict":
        return dict(zip(treedef.keys, children))
    return tuple(children) if treedef.kind == "tuple" else children


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
        for key in sorted(tree):
            _names(tree[key], f"{prefix}_{key}", names)
    elif tree is not None:
        names.append(prefix)
