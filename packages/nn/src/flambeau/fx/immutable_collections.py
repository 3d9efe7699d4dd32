"""The list and dict a Node keeps its arguments in: they refuse mutation, so that a
Node's ``users`` bookkeeping cannot be bypassed (assign ``node.args`` instead)."""

from __future__ import annotations

__all__ = ["immutable_list", "immutable_dict"]

_MUTATING_LIST = (
    "__delitem__", "__iadd__", "__imul__", "__setitem__", "append", "clear", "extend",
    "insert", "pop", "remove", "reverse", "sort",
)  # fmt: skip
_MUTATING_DICT = (
    "__delitem__",
    "__ior__",
    "__setitem__",
    "clear",
    "pop",
    "popitem",
    "setdefault",
    "update",
)


def _no_mutation(self, *args, **kwargs):
    raise NotImplementedError(
        f"{type(self).__name__!r} object does not support mutation. Create a new object "
        "(and assign it to node.args / node.kwargs) instead."
    )


class immutable_list(list):
    """A list that cannot be changed in place (the lists in ``Node.args``).

    >>> from flambeau.fx.immutable_collections import immutable_list
    >>> xs = immutable_list([1, 2])
    >>> xs + [3]
    [1, 2, 3]
    >>> xs.append(3)
    Traceback (most recent call last):
    NotImplementedError: 'immutable_list' object does not support mutation. ...
    """

    def __hash__(self):
        return hash(tuple(self))

    def __reduce__(self):
        return (immutable_list, (tuple(self),))


class immutable_dict(dict):
    """A dict that cannot be changed in place (the dicts in ``Node.kwargs``).

    >>> from flambeau.fx.immutable_collections import immutable_dict
    >>> d = immutable_dict(dim=1)
    >>> d["dim"]
    1
    >>> d["dim"] = 2
    Traceback (most recent call last):
    NotImplementedError: 'immutable_dict' object does not support mutation. ...
    """

    def __hash__(self):
        return hash(tuple(self.items()))

    def __reduce__(self):
        return (immutable_dict, (tuple(self.items()),))


for _name in _MUTATING_LIST:
    setattr(immutable_list, _name, _no_mutation)
for _name in _MUTATING_DICT:
    setattr(immutable_dict, _name, _no_mutation)
del _name
