"""Tensor methods of PyTorch about subclasses, memory and layout that need no kernel:
``as_subclass``, ``module_load``, ``pin_memory``, ``record_stream`` and the answers a dense
(strided) tensor gives to the sparse-layout queries ``dense_dim``, ``sparse_dim``,
``to_dense`` and ``is_coalesced``.

Subclasses: the core's Tensor is a pybind11 class, and a Python subclass can take over an
existing tensor object (``obj.__class__ = cls``, as ``nn.Parameter`` does) only when it
adds nothing to the instance layout, i.e. declares ``__slots__ = ()``. A subclass without
it gets an instance dict slot of its own (pybind11 declares the core's dict in a way
CPython's ``__class__`` assignment does not recognize as the same), and ``as_subclass``
raises TypeError saying so.
"""

from __future__ import annotations

import warnings

from flambeau import _C
from flambeau.overrides import DisableTorchFunctionSubclass

_NOT_SUBCLASS = (
    "Creating a Tensor subclass from a class that does not inherit from Tensor is not "
    "possible. Make sure your class inherits from Tensor."
)


def _as_subclass(self, cls):
    """A tensor of class cls viewing self's memory; it stays attached to self's autograd
    graph (an alias of self), so gradients flow back through it."""
    if not isinstance(cls, type):
        raise TypeError(f"cls must be a type (got {type(cls).__name__})")
    if not issubclass(cls, _C.Tensor):
        raise TypeError(_NOT_SUBCLASS)
    with DisableTorchFunctionSubclass():  # the alias itself, not the subclass's view_as
        out = self.view_as(self)
    if cls is _C.Tensor:
        return out
    try:
        out.__class__ = cls
    except TypeError:
        raise TypeError(
            f"as_subclass({cls.__name__}): flambeau can re-class a tensor only as a subclass "
            f"that adds no instance layout; declare `__slots__ = ()` in {cls.__name__} (its "
            "instances still take attributes: the core's tensors have a __dict__)"
        ) from None
    return out


def _module_load(self, other, assign=False):
    """How nn.Module.load_state_dict turns ``other`` (the state dict's value) into the new
    value of the parameter or buffer ``self``: ``other.detach()`` when assigning, else
    self with other copied in, detached."""
    if assign:
        return other.detach()
    return self.copy_(other).detach()


def _pin_memory(self, device=None):
    """A copy of self in page-locked host memory, for asynchronous copies to the
    accelerator; pinned memory is the accelerator plugin's (its module's ``pin_memory``),
    and without an accelerator, as in PyTorch, there is none (RuntimeError)."""
    from flambeau import accelerator, backends

    if device is not None:
        warnings.warn(
            "The argument 'device' of Tensor.pin_memory() is deprecated. Please do not pass "
            "this argument.",
            DeprecationWarning,
            stacklevel=2,
        )
        dev = device if isinstance(device, _C.device) else _C.device(device)
        if dev.type == "cpu":
            raise RuntimeError("CPU device type not an accelerator.")
    if self.device.type != "cpu":
        raise RuntimeError(
            f"cannot pin a tensor on {self.device}: only dense CPU tensors can be pinned"
        )
    found = accelerator.current_accelerator()
    if found is None:
        raise RuntimeError("Cannot access accelerator device when none is available.")
    pin = getattr(backends.module(found.type), "pin_memory", None)
    if pin is None:
        raise RuntimeError(
            f"the {found.type!r} backend plugin provides no pinned host memory (pin_memory)"
        )
    return pin(self)


def _is_pinned(self, device=None):
    """Whether self lives in page-locked host memory, which only a loaded accelerator
    plugin hands out (its module's ``is_pinned(tensor)``); False without one.

    >>> flambeau.ones(2).is_pinned()
    False
    """
    from flambeau import backends

    del device  # deprecated in PyTorch: the accelerator is the one that pinned it
    if self.device.type != "cpu":
        return False
    for module in list(backends._modules.values()):
        check = getattr(module, "is_pinned", None)
        if check is not None and check(self):
            return True
    return False


def _record_stream(self, stream):
    """Marks self's memory as in use by ``stream`` so that the allocator does not reuse it
    before the stream's queued work is done. Device memory is the backend plugin's: its
    module's ``record_stream(tensor, stream)`` when it has one (a backend without one orders
    frees itself). CPU tensors are not allocated on streams (NotImplementedError, as in
    PyTorch)."""
    from flambeau import backends
    from flambeau._streams import Stream

    if not (isinstance(stream, Stream) or hasattr(stream, "device_type")):
        raise RuntimeError(f"record_stream(): expected a Stream, got {type(stream).__name__}")
    if self.device.type == "cpu":
        raise NotImplementedError(
            "record_stream(): CPU tensors are not allocated on streams; only tensors on an "
            "accelerator can be recorded"
        )
    record = getattr(backends.module(self.device.type), "record_stream", None)
    if record is not None:
        record(self, stream)


def _dense_dim(self) -> int:
    """The number of dense dims: all of a dense tensor's."""
    return self.dim()


def _sparse_dim(self) -> int:
    """The number of sparse dims: 0 for a dense tensor."""
    return 0


def _to_dense(self, dtype=None, *, masked_grad=None):
    """self (already dense), converted to dtype when given."""
    del masked_grad  # a sparse input's gradient layout; a dense tensor has no choice to make
    return self if dtype is None or dtype == self.dtype else self.to(dtype)


def _is_coalesced(self):
    """Whether a sparse COO tensor's indices are unique and sorted; a dense tensor has none."""
    raise RuntimeError("is_coalesced expected sparse coordinate tensor layout but got Strided")


def _rdiv(self, other):
    """other / self: PyTorch's older name of __rtruediv__, and what __torch_function__ is
    handed for 1 / x."""
    return _C.Tensor.__rtruediv__(self, other)


_rdiv.__name__ = _rdiv.__qualname__ = "__rdiv__"


def install() -> None:
    T = _C.Tensor
    T.as_subclass = _as_subclass
    T.module_load = _module_load
    T.pin_memory = _pin_memory
    T.is_pinned = _is_pinned
    T.record_stream = _record_stream
    T.dense_dim = _dense_dim
    T.sparse_dim = _sparse_dim
    T.to_dense = _to_dense
    T.is_coalesced = _is_coalesced
    T.__rdiv__ = _rdiv
