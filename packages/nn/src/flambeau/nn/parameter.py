"""``Parameter`` and ``Buffer``: tensors that modules register on attribute assignment.

The core's ``Tensor`` is a pybind11 class without a Python constructor, so a
Parameter is made by detaching the data (a new tensor sharing its storage) and
re-classing that object: the subclass adds no slots, so its layout is the core's.
"""

from __future__ import annotations

import flambeau
from flambeau import Tensor
from flambeau.overrides import _disabled_torch_function_impl, _overriding


class _ParameterMeta(type(Tensor)):
    """isinstance(t, Parameter) also holds for a tensor of a subclass that overrides
    __torch_function__ (a sparse tensor, a user's subclass) marked as a parameter:
    ``Parameter(t)`` returns such a tensor itself, as PyTorch does, since re-classing
    it would lose the class its operations depend on."""

    def __instancecheck__(cls, instance):
        if type(instance) is cls:
            return True
        if cls is Parameter and getattr(instance, "_is_param", False) is True:
            return True
        return super().__instancecheck__(instance)


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


class Parameter(Tensor, metaclass=_ParameterMeta):
    """A tensor that is a module parameter: assigning one to a Module attribute registers it.

    >>> import flambeau.nn as nn
    >>> w = nn.Parameter(flambeau.zeros(2, 3))
    >>> w.requires_grad, w.shape
    (True, flambeau.Size([2, 3]))
    >>> m = nn.Module()
    >>> m.w = w
    >>> [name for name, _ in m.named_parameters()]
    ['w']
    """

    __slots__ = ()
    # As in PyTorch: operations on a parameter return plain tensors, at full speed.
    __torch_function__ = _disabled_torch_function_impl

    def __new__(cls, data=None, requires_grad=True):
        if isinstance(data, Tensor) and _overriding(type(data)):
            t = data.detach().requires_grad_(requires_grad)
            t._is_param = True
            return t
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

    >>> import flambeau.nn as nn
    >>> m = nn.Module()
    >>> m.steps = nn.Buffer(flambeau.zeros(1))
    >>> m.tmp = nn.Buffer(flambeau.ones(2), persistent=False)
    >>> [name for name, _ in m.named_buffers()], list(m.state_dict())
    (['steps', 'tmp'], ['steps'])
    """

    __slots__ = ()
    __torch_function__ = _disabled_torch_function_impl

    def __new__(cls, data=None, *, persistent=True):
        t = _reclass(data, cls)
        t.persistent = persistent
        return t

    def __init__(self, *args, **kwargs):
        pass


# ---- uninitialised (lazy) parameters and buffers ----------------------------------------------

# The methods an uninitialised tensor still allows (PyTorch's list, plus detach for saving).
_LAZY_ALLOWED = frozenset(
    ["size", "copy_", "is_complex", "is_floating_point", "half", "float", "double", "char",
     "short", "int", "long", "cuda", "cpu", "to", "get_device", "detach", "materialize",
     "share_memory_"]
)  # fmt: skip
# Operators on tensors, refused like the methods.
_LAZY_OPERATORS = (
    "__add__ __radd__ __iadd__ __sub__ __rsub__ __isub__ __mul__ __rmul__ __imul__ "
    "__matmul__ __rmatmul__ __truediv__ __rtruediv__ __itruediv__ __floordiv__ __rfloordiv__ "
    "__mod__ __rmod__ __pow__ __rpow__ __neg__ __pos__ __abs__ __invert__ __and__ __rand__ "
    "__or__ __ror__ __xor__ __rxor__ __lshift__ __rshift__ __lt__ __le__ __gt__ __ge__ "
    "__getitem__ __setitem__ __len__ __iter__ __bool__ __float__ __int__ __index__ __array__"
).split()


def _uninitialized_error(cls, what: str) -> ValueError:
    return ValueError(
        f"Attempted to use an uninitialized parameter in {what}. This error happens when you "
        "are using a `LazyModule` or explicitly manipulating "
        f"`flambeau.nn.parameter.{cls.__name__}` objects. When using LazyModules Call "
        "`forward` with a dummy batch to initialize the parameters before calling flambeau "
        "functions"
    )


class UninitializedTensorMixin:
    """A tensor whose shape is not known yet: most methods raise until materialize()."""

    __slots__ = ()
    cls_to_become = None

    def materialize(self, shape, device=None, dtype=None):
        """Gives this very tensor `shape` (uninitialised values) and makes it a
        ``cls_to_become``, as PyTorch does: whoever holds it (its module, an optimizer
        made before the first forward) sees the change."""
        device = self.device if device is None else device
        dtype = self.dtype if dtype is None else dtype
        self.data = flambeau.empty(shape, device=device, dtype=dtype)
        self.__class__ = type(self).cls_to_become  # (a class is callable: refused on self)

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error "
            "usually happens in `load_state_dict` when trying to load an uninitialized "
            "parameter into an initialized one. Call `forward` to initialize the parameters "
            "before accessing their attributes."
        )

    def share_memory_(self):
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. Call `forward` to "
            "initialize the parameters before calling `module.share_memory()`."
        )

    def __getattribute__(self, name):
        value = super().__getattribute__(name)
        if name in _LAZY_ALLOWED or name.startswith("_") or not callable(value):
            return value
        raise _uninitialized_error(type(self), f"{name}()")

    def __repr__(self):
        return f"<{type(self).__name__}>"

    __str__ = __repr__
    __hash__ = Tensor.__hash__

    def __reduce_ex__(self, protocol):
        return (type(self), (self.requires_grad,))

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, self.device, self.dtype)
        return memo[id(self)]


def _refuse(name):
    def refused(self, *args, **kwargs):
        raise _uninitialized_error(type(self), name)

    refused.__name__ = name
    return refused


for _name in _LAZY_OPERATORS:
    setattr(UninitializedTensorMixin, _name, _refuse(_name))
del _name


def _empty_like_request(requires_grad, device, dtype, default_grad: bool):
    """(requires_grad, device, dtype) from PyTorch's arguments or from flambeau.load's
    rebuild form cls(data, requires_grad)."""
    if isinstance(requires_grad, Tensor):
        data = requires_grad
        grad = default_grad if device is None else bool(device)
        return grad, data.device, data.dtype
    return requires_grad, device, dtype


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter of a lazy module before its first forward fixes its shape.

    >>> import flambeau.nn as nn
    >>> p = nn.UninitializedParameter()
    >>> p
    <UninitializedParameter>
    >>> p.materialize((2, 3))
    >>> type(p).__name__, p.shape
    ('Parameter', flambeau.Size([2, 3]))
    """

    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        requires_grad, device, dtype = _empty_like_request(requires_grad, device, dtype, True)
        t = _reclass(flambeau.empty(0, device=device, dtype=dtype), cls)
        t.requires_grad = requires_grad
        return t


class UninitializedBuffer(UninitializedTensorMixin, Buffer):
    """A buffer of a lazy module before its first forward fixes its shape.

    >>> import flambeau.nn as nn
    >>> b = nn.UninitializedBuffer()
    >>> b
    <UninitializedBuffer>
    >>> b.materialize((4,))
    >>> type(b).__name__, b.shape
    ('Tensor', flambeau.Size([4]))
    """

    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        requires_grad, device, dtype = _empty_like_request(requires_grad, device, dtype, False)
        t = _reclass(flambeau.empty(0, device=device, dtype=dtype), cls)
        t.requires_grad = requires_grad
        t.persistent = persistent
        return t

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(
                self.requires_grad, self.device, self.dtype, persistent=self.persistent
            )
        return memo[id(self)]


def is_lazy(param) -> bool:
    """Whether `param` is an uninitialised parameter or buffer of a lazy module."""
    return isinstance(param, UninitializedTensorMixin)


__all__ = [
    "Parameter",
    "Buffer",
    "UninitializedTensorMixin",
    "UninitializedParameter",
    "UninitializedBuffer",
    "is_lazy",
]
