"""flambeau.utils.swap_tensors: two tensors exchange their contents, each keeping its
identity (PyTorch's torch.utils.swap_tensors). What nn.Module conversions use when
``flambeau.__future__.set_swap_module_params_on_conversion(True)`` is in force, so that
references to a parameter (an optimizer's, say) see the converted tensor."""

from __future__ import annotations

import copyreg
import weakref

from flambeau import _C

_POISONED = (
    "Trying to execute AccumulateGrad node that was poisoned by swap_tensors this can happen "
    "when you try to run backward on a tensor that was swapped. For a module m with "
    "`torch.__future__.set_swap_module_params_on_conversion(True)` you should not change the "
    "device or dtype of the module (e.g. `m.cpu()` or `m.half()`) between running forward "
    "and backward. To resolve this, please only change the device/dtype before running "
    "forward (or after both forward and backward)."
)


def _poison(grad_outputs):
    raise RuntimeError(_POISONED)


def _check_use_count(t, name: str) -> None:
    """Only t's Python object may hold its TensorImpl (a view of t holds it too)."""
    count = t._use_count()
    if count > 1:
        raise RuntimeError(
            f"Expected use_count of {name} to be 1 or 2 with an AccumulateGrad node but got "
            f"{count} make sure you are not holding references to the tensor in other places."
        )
    # A leaf's AccumulateGrad node stays with the data, which moves to the other object:
    # running it would accumulate into the wrong tensor, so it raises instead (PyTorch's).
    node = t._accumulate
    if node is not None:
        node.register_prehook(_poison)


def swap_tensors(t1, t2) -> None:
    """Swaps the contents of two tensors: t1 gets t2's data, dtype, shape, autograd
    state, class, ``__dict__`` and slots, and t2 gets t1's, while ``t1`` and ``t2`` stay
    the same Python objects. Neither may have weak references, nor be held elsewhere by
    the core (a view of it, for one); their classes must have the same slots.

    >>> a, b = flambeau.ones(2), flambeau.zeros(3, dtype=flambeau.int64)
    >>> ident = id(a)
    >>> flambeau.utils.swap_tensors(a, b)
    >>> a, b, id(a) == ident
    (tensor([0, 0, 0]), tensor([1., 1.]), True)
    """
    if not isinstance(t1, _C.Tensor) or not isinstance(t2, _C.Tensor):
        raise TypeError(
            f"swap_tensors(): expected two tensors, got {type(t1).__name__} and {type(t2).__name__}"
        )
    if weakref.getweakrefs(t1):
        raise RuntimeError("Cannot swap t1 because it has weakref associated with it")
    if weakref.getweakrefs(t2):
        raise RuntimeError("Cannot swap t2 because it has weakref associated with it")
    t1_slots = set(copyreg._slotnames(t1.__class__))
    t2_slots = set(copyreg._slotnames(t2.__class__))
    if t1_slots != t2_slots:
        raise RuntimeError("Cannot swap t1 and t2 if they have different slots")
    if t1 is t2:
        return
    _check_use_count(t1, "t1")
    _check_use_count(t2, "t2")

    def swap_attr(name):
        tmp = getattr(t1, name)
        setattr(t1, name, getattr(t2, name))
        setattr(t2, name, tmp)

    swap_attr("__class__")
    swap_attr("__dict__")
    for slot in t1_slots:
        if hasattr(t1, slot) and hasattr(t2, slot):
            swap_attr(slot)
        elif hasattr(t1, slot):
            setattr(t2, slot, getattr(t1, slot))
            delattr(t1, slot)
        elif hasattr(t2, slot):
            setattr(t1, slot, getattr(t2, slot))
            delattr(t2, slot)
    _C._swap_tensor_impl(t1, t2)
