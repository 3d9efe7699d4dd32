"""``Parameter`` and ``Buffer``: tensors that modules register on attribute assignment.

The core's ``Tensor`` is a pybind11 class without a Python constructor, so a
Parameter is made by detaching the data (a new tensor sharing its storage) and
re-classing that object: the subclass adds no slots, so its layout is the core's.
"""

from __future__ import annotations

import flambeau
from flambeau import Tensor


def _reclass(data, cls):
    if data is None:
        data = flambeau.empty(0)
    if not isinstance(data, Tensor):
        raise TypeError(
            f"{cls.__name__}: expected a flambeau.Tensor as data, but got {type(data).__name__}"
        )
    t = data.detach()
    t.__class__ = cls
    return t


class Parameter(Tensor):
    """A tensor that is a module parameter: assigning one to a Module attribute registers it."""

    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        t = _reclass(data, cls)
        t.requires_grad = requires_grad
        return t

    def __init__(self, *args, **kwargs):
        # The object was fully built by __new__; the core's Tensor has no constructor to run.
        pass

    def __repr__(self):
        return "Parameter containing:\n" + Tensor.__repr__(self)

    __str__ = __repr__

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.detach().clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol):
        # The data pickles as a plain tensor (the core's reducer).
        return (type(self), (self.detach(), self.requires_grad))


class Buffer(Tensor):
    """A tensor that, assigned to a Module attribute, registers as a buffer.

    ``Buffer(data, persistent=True)`` returns a Buffer; ``persistent`` says whether it
    is part of the module's state_dict.
    """

    __slots__ = ()

    def __new__(cls, data=None, *, persistent=True):
        t = _reclass(data, cls)
        t.persistent = persistent
        return t

    def __init__(self, *args, **kwargs):
        pass


def is_lazy(param) -> bool:
    """flambeau has no uninitialised (lazy) parameters: always False."""
    return False


__all__ = ["Parameter", "Buffer", "is_lazy"]
