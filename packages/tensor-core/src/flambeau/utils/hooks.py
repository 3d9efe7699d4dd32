"""flambeau.utils.hooks: the handle every hook registration returns (modules, tensors,
autograd nodes, optimizers), and the helpers around tensors' backward hooks.

A tensor's backward hooks (``Tensor.register_hook``) are kept by the graph node that
computes its gradient; pickling a tensor (``pickle``, ``flambeau.save``) drops them with a
warning, which ``unserializable_hook`` silences for one hook. ``BackwardHook`` is the
machinery behind ``Module.register_full_backward_hook``.
"""

from __future__ import annotations

import warnings
import weakref
from collections import OrderedDict

from flambeau.utils._backward_hook import BackwardHook

__all__ = ["RemovableHandle", "unserializable_hook", "warn_if_has_hooks", "BackwardHook"]


class RemovableHandle:
    """What a hook registration returns: ``remove()`` takes the hook out of the table it
    was registered in (``hooks_dict``, keyed by the handle's ``id``) and out of each
    table of ``extra_dict`` (a dict or a list of them). The handle holds the tables
    weakly; used as a context manager it removes the hook on exit.

    >>> x = flambeau.tensor([1.0, 2.0], requires_grad=True)
    >>> with x.register_hook(lambda grad: grad * 10):
    ...     (x * 1).sum().backward()
    >>> x.grad
    tensor([10., 10.])
    >>> from collections import OrderedDict
    >>> from flambeau.utils.hooks import RemovableHandle
    >>> hooks = OrderedDict()
    >>> handle = RemovableHandle(hooks)
    >>> hooks[handle.id] = print
    >>> handle.remove()
    >>> len(hooks)
    0
    """

    id: int
    next_id: int = 0  # the id of the next handle made, shared by all handles

    def __init__(self, hooks_dict, *, extra_dict=None) -> None:
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        self.extra_dict_ref = tuple(weakref.ref(d) for d in _tables(extra_dict))

    def remove(self) -> None:
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            table = ref()
            if table is not None and self.id in table:
                del table[self.id]

    def __getstate__(self):
        # The tables travel with the handle (pickle keeps them the objects their owner has).
        return (self.hooks_dict_ref(), self.id, tuple(ref() for ref in self.extra_dict_ref))

    def __setstate__(self, state) -> None:
        hooks = state[0]
        # A table that no longer existed leaves a dead reference: remove() does nothing.
        self.hooks_dict_ref = weakref.ref(OrderedDict() if hooks is None else hooks)
        self.id = state[1]
        RemovableHandle.next_id = max(RemovableHandle.next_id, self.id + 1)
        extra = state[2] if len(state) > 2 and state[2] is not None else ()
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extra if d is not None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def _tables(extra_dict) -> list:
    if isinstance(extra_dict, dict):
        return [extra_dict]
    if isinstance(extra_dict, list):
        return extra_dict
    return []


def unserializable_hook(f):
    """Marks ``f`` as a backward hook that is not meant to be saved: pickling a tensor
    that has it registered then gives no warning. Returns ``f``.

    >>> import pickle, warnings
    >>> from flambeau.utils.hooks import unserializable_hook
    >>> @unserializable_hook
    ... def scale(grad):
    ...     return grad * 2
    >>> x = flambeau.ones(2, requires_grad=True)
    >>> _ = x.register_hook(scale)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error")
    ...     pickle.loads(pickle.dumps(x))
    tensor([1., 1.], requires_grad=True)
    """
    f.__torch_unserializable__ = True
    return f


def warn_if_has_hooks(tensor) -> None:
    """Warns, once per hook, that each backward hook registered on ``tensor`` will not be
    serialized, unless the hook is marked with :func:`unserializable_hook`. Pickling a
    tensor calls it.

    >>> import warnings
    >>> from flambeau.utils.hooks import warn_if_has_hooks
    >>> x = flambeau.ones(2, requires_grad=True)
    >>> _ = x.register_hook(lambda grad: grad)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_if_has_hooks(x)
    >>> "will not be serialized" in str(caught[0].message)
    True
    """
    for hook in _backward_hooks(tensor).values():
        if not hasattr(hook, "__torch_unserializable__"):
            warnings.warn(
                f"backward hook {hook!r} on tensor will not be serialized.  If this is "
                "expected, you can decorate the function with "
                "@flambeau.utils.hooks.unserializable_hook to suppress this warning",
                stacklevel=2,
            )


def _backward_hooks(tensor):
    """The hooks ``tensor.register_hook`` added ({handle id: hook}): kept by the node that
    computes the tensor's gradient, its grad_fn or, for a leaf, its AccumulateGrad node
    (which exists once something registered on it)."""
    node, output_nr = tensor.grad_fn, tensor.output_nr
    if node is None:
        node, output_nr = tensor._accumulate, 0
    if node is None:
        return {}
    return node._tensor_hooks.get(output_nr, {})
