"""Pytrees for flambeau.func: the core's ``flambeau.utils._pytree`` (one registry, one
TreeSpec, PyTorch's semantics), plus the two matchings the transforms need.

A type registered with ``flambeau.utils._pytree.register_pytree_node`` is therefore a
container for ``vmap``, ``grad``, ``jacrev``... as in PyTorch. Matching two trees
(``flatten_up_to``, ``broadcast_prefix``) goes by key for dicts, so that
``{"a": 0, "b": 1}`` lines up with ``{"b": x, "a": y}``.
"""

from __future__ import annotations

from flambeau.utils._pytree import (
    LeafSpec,
    TreeSpec,
    _node_children_like,
    tree_flatten,
    tree_is_leaf,
    tree_leaves,
    tree_map,
    tree_unflatten,
    treespec_leaf,
    treespec_pprint,
)

__all__ = [
    "LEAF",
    "LeafSpec",
    "TreeSpec",
    "broadcast_prefix",
    "flatten_up_to",
    "tree_flatten",
    "tree_leaves",
    "tree_map",
    "tree_unflatten",
    "treespec_pprint",
]

LEAF = treespec_leaf()


def flatten_up_to(spec: TreeSpec, tree):
    """The subtrees of `tree` at the leaves of `spec`, in spec's order, when tree has
    spec's structure down to them (dicts matched by key); None otherwise."""
    try:
        return spec.flatten_up_to(tree)
    except ValueError:
        return None


def broadcast_prefix(prefix, spec: TreeSpec):
    """`prefix`, a tree whose leaves stand for whole subtrees of the tree `spec`
    describes, spread to one value per leaf of that tree, in spec's leaf order; None
    when prefix is not a prefix of it."""
    out: list = []

    def walk(p, s) -> bool:
        if tree_is_leaf(p):
            out.extend([p] * s.num_leaves)
            return True
        if s.is_leaf():
            return False
        try:
            children = _node_children_like(s, p)
        except ValueError:
            return False
        return all(walk(c, cs) for c, cs in zip(children, s.children()))

    return out if walk(prefix, spec) else None
