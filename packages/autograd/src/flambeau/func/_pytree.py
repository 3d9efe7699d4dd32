"""Nested containers ("pytrees") for flambeau.func: flatten, rebuild, match a prefix.

A pytree is a tuple, list, dict (OrderedDict and defaultdict too) or namedtuple of
pytrees; anything else, None included, is a leaf. A dict's children come in its own
key order; matching two trees (``flatten_up_to``, ``broadcast_prefix``) goes by key,
so that ``{"a": 0, "b": 1}`` lines up with ``{"b": x, "a": y}``.
"""

from __future__ import annotations

from collections import OrderedDict, defaultdict


def _is_namedtuple(obj) -> bool:
    return isinstance(obj, tuple) and hasattr(type(obj), "_fields")


def _kind(obj):
    """The node kind of obj: 'namedtuple', tuple, list, dict, OrderedDict, defaultdict; None
    for a leaf."""
    t = type(obj)
    if t is tuple or t is list or t is dict or t is OrderedDict or t is defaultdict:
        return t
    if _is_namedtuple(obj):
        return "namedtuple"
    return None


class TreeSpec:
    """The structure of a flattened pytree: a node's type, its context (a dict's keys, a
    namedtuple's class, a defaultdict's (factory, keys)) and its children's specs."""

    __slots__ = ("type", "context", "children", "num_leaves")

    def __init__(self, type_=None, context=None, children=()):
        self.type = type_
        self.context = context
        self.children = list(children)
        self.num_leaves = 1 if type_ is None else sum(c.num_leaves for c in self.children)

    def is_leaf(self) -> bool:
        return self.type is None

    def keys(self):
        if self.type in (dict, OrderedDict):
            return list(self.context)
        if self.type is defaultdict:
            return list(self.context[1])
        return None

    def __eq__(self, other):
        if not isinstance(other, TreeSpec) or self.type != other.type:
            return False
        if self.context != other.context:
            return False
        return self.children == other.children

    def __hash__(self):
        return id(self)

    def _name(self) -> str:
        if self.type == "namedtuple":
            return "namedtuple"
        return self.type.__name__

    def _repr(self, indent: int) -> str:
        if self.is_leaf():
            return "*"
        context = self.context
        pad = "\n" + "  " * (indent + 1)
        inner = ("," + pad).join(c._repr(indent + 1) for c in self.children)
        return f"TreeSpec({self._name()}, {context!r}, [{inner}])"

    def __repr__(self) -> str:
        return self._repr(0)

    def pprint(self) -> str:
        """The short form PyTorch prints in messages: ``(*, [*, *])``, ``{'a': *}``."""
        if self.is_leaf():
            return "*"
        parts = [c.pprint() for c in self.children]
        keys = self.keys()
        if keys is not None:
            return "{" + ", ".join(f"{k!r}: {p}" for k, p in zip(keys, parts)) + "}"
        if self.type is list:
            return "[" + ", ".join(parts) + "]"
        if self.type == "namedtuple":
            fields = self.context._fields
            inner = ", ".join(f"{f}={p}" for f, p in zip(fields, parts))
            return f"{self.context.__name__}({inner})"
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


LEAF = TreeSpec()


def _children(obj, kind):
    """(children, context) of a container."""
    if kind in (dict, OrderedDict):
        keys = list(obj)
        return [obj[k] for k in keys], keys
    if kind is defaultdict:
        keys = list(obj)
        return [obj[k] for k in keys], (obj.default_factory, keys)
    if kind == "namedtuple":
        return list(obj), type(obj)
    return list(obj), None


def _build(kind, context, children):
    if kind is tuple:
        return tuple(children)
    if kind is list:
        return list(children)
    if kind in (dict, OrderedDict):
        return kind(zip(context, children))
    if kind is defaultdict:
        factory, keys = context
        return defaultdict(factory, zip(keys, children))
    return context(*children)  # namedtuple


def tree_flatten(tree):
    """(leaves, spec): the leaves of `tree` in order and its structure."""
    leaves: list = []

    def walk(node):
        kind = _kind(node)
        if kind is None:
            leaves.append(node)
            return LEAF
        children, context = _children(node, kind)
        return TreeSpec(kind, context, [walk(c) for c in children])

    spec = walk(tree)
    return leaves, spec


def tree_unflatten(leaves, spec: TreeSpec):
    """The pytree of structure `spec` holding `leaves` in order."""
    it = iter(leaves)

    def build(s):
        if s.is_leaf():
            return next(it)
        return _build(s.type, s.context, [build(c) for c in s.children])

    return build(spec)


def tree_map(fn, tree):
    """`tree` with fn applied to each leaf."""
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


def tree_leaves(tree) -> list:
    return tree_flatten(tree)[0]


def _same_node(spec: TreeSpec, obj, kind) -> tuple[list, bool]:
    """The children of obj in the order of spec's children, and whether obj's node
    matches spec's (same kind, same keys or length)."""
    if kind != spec.type:
        return [], False
    children, context = _children(obj, kind)
    keys = spec.keys()
    if keys is not None:
        mine = list(obj)
        if len(mine) != len(keys) or set(mine) != set(keys):
            return [], False
        return [obj[k] for k in keys], True
    if kind == "namedtuple" and context is not spec.context:
        return [], False
    if len(children) != len(spec.children):
        return [], False
    return children, True


def flatten_up_to(spec: TreeSpec, tree):
    """The leaves of `tree` in the order of `spec`, when tree has spec's structure
    (dicts matched by key); None otherwise."""
    out: list = []

    def walk(s, node):
        if s.is_leaf():
            out.append(node)
            return True
        children, ok = _same_node(s, node, _kind(node))
        return ok and all(walk(cs, c) for cs, c in zip(s.children, children))

    return out if walk(spec, tree) else None


def broadcast_prefix(prefix, spec: TreeSpec):
    """`prefix`, a tree whose leaves stand for whole subtrees of the tree `spec`
    describes, spread to one value per leaf of that tree; None when prefix is not a
    prefix of it."""
    out: list = []

    def walk(p, s):
        kind = _kind(p)
        if kind is None:
            out.extend([p] * s.num_leaves)
            return True
        if s.is_leaf():
            return False
        children, ok = _same_node(s, p, kind)
        return ok and all(walk(c, cs) for c, cs in zip(children, s.children))

    return out if walk(prefix, spec) else None
