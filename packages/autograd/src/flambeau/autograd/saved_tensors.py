"""Saved-tensor hooks: the tensors autograd keeps for backward go through pack and unpack.

Inside ``saved_tensors_hooks(pack_hook, unpack_hook)`` every tensor an operation saves
for its backward (the inputs a derivative formula reads, the outputs it reads, and
``ctx.save_for_backward`` of a custom Function) is stored as ``pack_hook(tensor)``
(computed without recording), and backward reads ``unpack_hook(packed)`` instead. Only
the innermost pair of hooks applies. Which inputs count as saved follows the formula's
``reads=`` declaration where it has one (``a * 3.0`` saves nothing of ``a``; ``x.exp()``
only its result); for formulas without one it is coarser than in PyTorch: every tensor
input of an operation whose formula reads any input. As in
PyTorch, a tensor saved through hooks is not checked for later in-place changes: what
unpack_hook returns is used as it is, with the saved tensor's place in the graph (so a
copy still counts as requiring grad, and create_graph reaches the original's history).
Activation checkpointing's hooks (flambeau.utils.checkpoint) also want the graph to hold
no tensor of its own: under them, the inputs and outputs that a formula does not read are
kept as their metadata (shape, dtype, device, strides) only, and never packed, so that the
tensors packed are exactly those the formulas read, in the same order in the forward and
in its recomputation.

Operations whose recording the core does in C++ are recorded in Python while hooks are
set (on that thread), so that every saved tensor meets the hooks.
"""

from __future__ import annotations

import contextlib
import threading

from flambeau import _C

from . import anomaly_mode
from .grad_mode import no_grad

__all__ = [
    "allow_mutation_on_saved_tensors",
    "disable_saved_tensors_hooks",
    "save_on_cpu",
    "saved_tensors_hooks",
]

_state = threading.local()  # .hooks: stack of (pack, unpack); .disabled: message or None
Tensor = _C.Tensor


def current():
    """The innermost (pack_hook, unpack_hook, packs every tensor) set on this thread, or
    None."""
    stack = getattr(_state, "hooks", None)
    return stack[-1] if stack else None


def refresh_fast_path() -> None:
    """Records in Python (not the core's C++ fast path) while anomaly detection or saved
    tensor hooks need to see every recorded operation."""
    _C._autograd_set_anomaly(anomaly_mode.is_enabled() or current() is not None)


class Packed:
    """A saved tensor as pack_hook made it, the unpack_hook that restores it, and the
    original's place in the graph (None unless it required grad)."""

    __slots__ = ("value", "unpack_hook", "edge")

    def __init__(self, value, unpack_hook, edge):
        self.value = value
        self.unpack_hook = unpack_hook
        self.edge = edge


def _edge(t):
    if not t.requires_grad:
        return None
    from .recorder import grad_edge  # the recorder imports this module

    return grad_edge(t)


def _with_history(t, edge):
    """t, or a detached alias of it, carrying the history ``edge`` of the tensor saved:
    as PyTorch restores a saved tensor's grad_fn, so that what unpack_hook returns (a
    copy, a tensor loaded back) is seen by formulas as requiring grad, and create_graph
    reaches the original's history."""
    if edge is None:
        return t
    node, output_nr = edge
    current = t.grad_fn or t._accumulate
    if t.requires_grad and current is node and t.output_nr == output_nr:
        return t
    from .recorder import attach

    alias = t.detach()
    attach(alias, node, output_nr)
    return alias


def pack(value, hooks):
    """``value`` (a tensor, or a list or tuple of them) packed with ``hooks``."""
    if isinstance(value, Tensor):
        with no_grad():  # as in PyTorch: what pack_hook computes is not recorded
            packed = hooks[0](value)
        return Packed(packed, hooks[1], _edge(value))
    if isinstance(value, (list, tuple)) and any(isinstance(v, Tensor) for v in value):
        return type(value)(pack(v, hooks) for v in value)
    return value


def unpack(value):
    """The inverse of :func:`pack` (values that were not packed pass through)."""
    if type(value) is Packed:
        result = value.unpack_hook(value.value)
        if not isinstance(result, Tensor):
            raise TypeError(
                "Output of saved tensor unpack_hook expected to be a Tensor but got result "
                f"of type {type(result).__name__}"
            )
        return _with_history(result, value.edge)
    if isinstance(value, (list, tuple)) and any(type(v) is Packed for v in value):
        return type(value)(unpack(v) for v in value)
    return value


def packs_every_tensor(hooks) -> bool:
    """Whether ``hooks`` (as :func:`current` returns them) want the graph to hold no tensor
    of its own (activation checkpointing's hooks do): a recorded operation then packs the
    tensors its formula reads and keeps only the metadata of the others."""
    return hooks[2]


class saved_tensors_hooks:  # noqa: N801 - PyTorch's name
    """Context manager: tensors saved for backward inside it are packed with
    ``pack_hook(tensor) -> object`` and restored with ``unpack_hook(object) -> tensor``.

    >>> def pack(t):
    ...     print("packing", tuple(t.shape))
    ...     return t
    >>> x = flambeau.ones(2, requires_grad=True)
    >>> with flambeau.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
    ...     y = (x * x).sum()
    packing (2,)
    packing (2,)
    >>> y.backward()
    >>> x.grad
    tensor([2., 2.])
    """

    _packs_every_tensor = False  # see packs_every_tensor

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        message = getattr(_state, "disabled", None)
        if message is not None:
            raise RuntimeError(message)
        hooks = (self.pack_hook, self.unpack_hook, self._packs_every_tensor)
        _state.__dict__.setdefault("hooks", []).append(hooks)
        refresh_fast_path()
        return self

    def __exit__(self, *exc) -> None:
        _state.hooks.pop()
        refresh_fast_path()


class save_on_cpu(saved_tensors_hooks):  # noqa: N801 - PyTorch's name
    """Saved tensors are kept in CPU memory and moved back to their device for backward.

    flambeau has no pinned host memory: ``pin_memory=True`` saves to ordinary CPU memory
    (the copy back is then synchronous). ``device_type`` is accepted for PyTorch's
    signature; each tensor returns to the device it came from.

    >>> x = flambeau.ones(2, requires_grad=True)
    >>> with flambeau.autograd.graph.save_on_cpu():
    ...     y = (x * x).sum()
    >>> y.backward()
    >>> x.grad
    tensor([2., 2.])
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda"):
        del pin_memory, device_type  # see the docstring

        def pack_to_cpu(tensor):
            return tensor.device, tensor.cpu()

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message: str):
    """Inside it, setting saved tensor hooks raises RuntimeError(error_message); entering
    it while hooks are set raises the same.

    >>> from flambeau.autograd.graph import disable_saved_tensors_hooks, saved_tensors_hooks
    >>> with disable_saved_tensors_hooks("no saved tensor hooks here"):
    ...     with saved_tensors_hooks(lambda t: t, lambda t: t):
    ...         pass
    Traceback (most recent call last):
      ...
    RuntimeError: no saved tensor hooks here
    """
    if current() is not None:
        raise RuntimeError(error_message)
    previous = getattr(_state, "disabled", None)
    _state.disabled = error_message
    try:
        yield
    finally:
        _state.disabled = previous


class _AllowMutationOnSavedContext:
    """The state of one :func:`allow_mutation_on_saved_tensors` context: whether it is
    still open (its graphs can be differentiated only while it is)."""

    def __init__(self):
        self.open = True

    def clear(self) -> None:
        self.open = False


_mutation_context: _AllowMutationOnSavedContext | None = None


@contextlib.contextmanager
def allow_mutation_on_saved_tensors():
    """Context manager under which tensors saved for backward may be modified in place:
    backward uses their values from when they were saved. Run the forward and the
    backward inside the same context (a backward after it raises); contexts do not nest.

    flambeau keeps a copy of each tensor saved inside the context, when it is saved
    (PyTorch copies a saved tensor when it is first modified): the results are the same,
    the memory held until backward is larger. It yields the context's state object.

    >>> with flambeau.autograd.graph.allow_mutation_on_saved_tensors():
    ...     a = flambeau.ones(2, 3, requires_grad=True)
    ...     b = a.clone()
    ...     out = (b**2).sum()
    ...     _ = b.sin_()  # b was saved for the backward of b**2
    ...     out.backward()
    >>> a.grad
    tensor([[2., 2., 2.],
            [2., 2., 2.]])
    """
    global _mutation_context
    if _mutation_context is not None:
        raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
    state = _AllowMutationOnSavedContext()

    def pack(t):
        return state, t.clone()

    def unpack(packed):
        owner, copy = packed
        if not owner.open:
            raise AssertionError(
                "Trying to backward outside of the 'allow_mutation_on_saved_tensors' context "
                "in which the graph was originally recorded."
            )
        return copy

    _mutation_context = state
    try:
        with saved_tensors_hooks(pack, unpack):
            yield state
    finally:
        state.clear()
        _mutation_context = None
