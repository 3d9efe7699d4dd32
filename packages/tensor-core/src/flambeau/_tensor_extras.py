"""Tensor methods of PyTorch about subclasses, memory and layout that need no kernel:
``as_subclass``, ``module_load``, ``pin_memory``, ``record_stream`` and the answers a dense
(strided) tensor gives to the sparse-layout queries ``dense_dim``, ``sparse_dim``,
``to_dense`` and ``is_coalesced``.

Subclasses: the core's Tensor is a pybind11 class, and ``as_subclass`` re-classes a fresh
alias (``obj.__class__ = cls``, as ``nn.Parameter`` does). CPython allows that when the
subclass adds nothing to the instance layout, which holds for ``class MyTensor(Tensor):
pass`` (the core gives its __dict__ the place CPython's own classes use, so a subclass
adds none; autograd_meta.cpp) as for one with ``__slots__ = ()``; a subclass with slots
of its own gets a TypeError saying so.
"""

from __future__ import annotations

import warnings

from flambeau import _C
from flambeau.overrides import DisableTorchFunctionSubclass, _dispatch_on

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
            f"that adds no instance layout (no __slots__ of its own) to {cls.__name__} (its "
            "instances still take attributes: the core's tensors have a __dict__)"
        ) from None
    return out


def _make_subclass(cls, data, require_grad=False, **kwargs):
    """``Tensor._make_subclass(cls, data, require_grad)``: a leaf of class cls sharing
    data's memory, outside data's autograd graph, requiring grad as asked (how Tensor
    subclasses, nn.Parameter among them, build their instances in ``__new__``). PyTorch's
    dispatch-policy keywords are accepted and have no effect here."""
    del kwargs  # dispatch_sizes_strides_policy, dispatch_device, ...: no dispatcher policies
    if not isinstance(data, _C.Tensor):
        raise TypeError(
            f"_make_subclass(): argument 'data' (position 2) must be Tensor, not "
            f"{type(data).__name__}"
        )
    if not (isinstance(cls, type) and issubclass(cls, _C.Tensor)):
        raise TypeError(_NOT_SUBCLASS)
    with DisableTorchFunctionSubclass():  # building it is not an operation on it
        return _as_subclass(data.detach(), cls).requires_grad_(bool(require_grad))


@_dispatch_on("self", "other", method="module_load")
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
    T._make_subclass = staticmethod(_make_subclass)
    T.module_load = _module_load
    T.pin_memory = _pin_memory
    T.is_pinned = _is_pinned
    T.record_stream = _record_stream
    T.dense_dim = _dense_dim
    T.sparse_dim = _sparse_dim
    T.to_dense = _to_dense
    T.is_coalesced = _is_coalesced
    T.__rdiv__ = _rdiv
