"""NestedIOFunction: PyTorch's legacy Function whose inputs and outputs may be nested.

It predates the static ``Function.apply`` style and is kept for old programs: a
subclass defines ``forward_extended(self, *inputs)`` and ``backward_extended(self,
*grad_outputs)`` on nested tuples and lists of tensors, and an *instance* is called::

    class Pair(NestedIOFunction):
        def forward_extended(self, x, pair):
            self.save_for_backward(x)
            return x * 2, (pair[0] * 3,)

        def backward_extended(self, grad_x, grad_pair):
            return grad_x * 2, (grad_pair[0] * 3, None)

    out, (other,) = Pair()(x, (y, z))

(PyTorch 2.13's own NestedIOFunction no longer runs; this one does what it describes.)
"""

from __future__ import annotations

import flambeau as F

from . import saved_tensors
from .function import Function, materialized, tensor_meta
from .grad_mode import no_grad
from .graph import Node
from .recorder import attach, grad_edge, is_differentiable

__all__ = ["NestedIOFunction"]


def _flatten(obj, allow_none: bool = False):
    """The tensors of a nested structure, in order (None kept where allowed)."""
    if isinstance(obj, F.Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            yield from _flatten(item, allow_none)
    elif obj is None and allow_none:
        yield None
    elif obj is not None:
        raise ValueError(
            f"NestedIOFunction doesn't know how to iterate an input object of type "
            f"{type(obj).__name__}"
        )


def _unflatten(flat, proto):
    """``proto``'s structure with its tensors replaced, in order, by ``flat``'s items."""
    if isinstance(proto, F.Tensor):
        return next(flat)
    if isinstance(proto, (list, tuple)):
        return type(proto)(_unflatten(flat, item) for item in proto)
    return proto


class _NestedIOBackward(Node):
    def __init__(self, fn, edges, output_metas):
        super().__init__(f"{type(fn).__name__}Backward", edges, len(output_metas))
        self._fn = fn
        self._output_metas = output_metas

    def _backward(self, grads):
        fn = self._fn
        if fn._released:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access "
                "saved tensors after they have already been freed). Specify retain_graph=True."
            )
        nested = _unflatten(iter(materialized(grads, self._output_metas)), fn._nested_output)
        result = fn.backward_extended(*nested)
        flat = tuple(_flatten(result, allow_none=True))
        if len(flat) != len(self.next_functions):
            raise RuntimeError(
                f"function {self._name} returned an incorrect number of gradients "
                f"(expected {len(self.next_functions)}, got {len(flat)})"
            )
        return flat

    def _release(self):
        super()._release()
        self._fn._released = True


class NestedIOFunction(Function):
    """Legacy: call an instance with nested inputs; see the module's documentation.

    >>> class Pair(flambeau.autograd.NestedIOFunction):
    ...     def forward_extended(self, x, pair):
    ...         return x * 2, (pair[0] * 3,)
    ...
    ...     def backward_extended(self, grad_x, grad_pair):
    ...         return grad_x * 2, (grad_pair[0] * 3, None)
    >>> x, y = flambeau.ones(2, requires_grad=True), flambeau.ones(2, requires_grad=True)
    >>> out, (other,) = Pair()(x, (y, flambeau.ones(2)))
    >>> (out.sum() + other.sum()).backward()
    >>> x.grad, y.grad
    (tensor([2., 2.]), tensor([3., 3.]))
    """

    def __call__(self, *inputs):
        flat_inputs = tuple(_flatten(inputs))
        self.needs_input_grad = tuple(t.requires_grad for t in flat_inputs)
        self.to_save, self._to_save_nested = (), ()
        self.dirty_tensors, self.non_differentiable = (), ()
        self._released = False
        detached = _unflatten(iter(t.detach() for t in flat_inputs), inputs)
        with no_grad():
            nested_output = self.forward_extended(*detached)
        self._nested_output = nested_output
        flat_outputs = tuple(_flatten(nested_output))
        if not (F.is_grad_enabled() and any(self.needs_input_grad)):
            return nested_output
        hooks = saved_tensors.current()
        if hooks is not None:
            self.to_save = tuple(saved_tensors.pack(t, hooks) for t in self.to_save)
        node = _NestedIOBackward(
            self, [grad_edge(t) for t in flat_inputs], [tensor_meta(o) for o in flat_outputs]
        )
        skip = {id(t) for t in self.non_differentiable}
        dirty = {id(t) for t in self.dirty_tensors}
        given = {id(t) for t in _flatten(detached)}
        fresh = []
        for i, o in enumerate(flat_outputs):
            if id(o) not in skip and is_differentiable(o):
                if id(o) in given and id(o) not in dirty:
                    o = o.detach()  # an input handed back becomes a new graph output
                attach(o, node, i)
            fresh.append(o)
        return _unflatten(iter(fresh), nested_output)

    def save_for_backward(self, *args) -> None:
        """Saves nested tensors; ``saved_tensors`` gives them back in the same structure."""
        self.to_save = tuple(_flatten(args))
        self._to_save_nested = args

    @property
    def saved_tensors(self):
        if self._released:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access "
                "saved tensors after they have already been freed). Specify retain_graph=True."
            )
        flat = (saved_tensors.unpack(t) for t in self.to_save)
        return _unflatten(flat, self._to_save_nested)

    def mark_dirty(self, *args, **kwargs) -> None:
        self.dirty_tensors = tuple(_flatten((args, tuple(kwargs.values()))))

    def mark_non_differentiable(self, *args, **kwargs) -> None:
        self.non_differentiable = tuple(_flatten((args, tuple(kwargs.values()))))

    def forward_extended(self, *inputs):
        """Computes the nested outputs from the nested inputs (define in a subclass)."""
        raise NotImplementedError(f"{type(self).__name__} must define forward_extended")

    def backward_extended(self, *grad_outputs):
        """Computes the nested input gradients (define in a subclass)."""
        raise NotImplementedError(f"{type(self).__name__} must define backward_extended")
