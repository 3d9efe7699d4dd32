"""Custom differentiable operations written in Python: ``Function``."""

from __future__ import annotations

import functools

import flambeau as F

from . import anomaly_mode, saved_tensors
from .grad_mode import no_grad
from .graph import Node
from .recorder import attach, grad_edge, is_differentiable


class FunctionCtx:
    """The ``ctx`` of forward/backward: saved tensors and flags.

    >>> class Scale(flambeau.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x, k):
    ...         ctx.k = k  # any attribute; tensors go through ctx.save_for_backward
    ...         return x * k
    ...
    ...     @staticmethod
    ...     def backward(ctx, grad):
    ...         print(isinstance(ctx, flambeau.autograd.FunctionCtx), ctx.needs_input_grad)
    ...         return grad * ctx.k, None
    >>> x = flambeau.ones(2, requires_grad=True)
    >>> Scale.apply(x, 3.0).sum().backward()
    True (True, False)
    >>> x.grad
    tensor([3., 3.])
    """

    def __init__(self):
        self.to_save = ()
        self._saved_versions = ()
        self.needs_input_grad = ()
        self.dirty = ()
        self.non_differentiable = ()
        self._released = False

    def save_for_backward(self, *tensors):
        self.to_save = tensors
        self._saved_versions = tuple(
            t._version if isinstance(t, F.Tensor) else None for t in tensors
        )

    @property
    def saved_tensors(self):
        if self._released:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access saved "
                "tensors after they have already been freed). Specify retain_graph=True."
            )
        if any(type(t) is saved_tensors.Packed for t in self.to_save):
            return tuple(saved_tensors.unpack(t) for t in self.to_save)
        for t, v in zip(self.to_save, self._saved_versions):
            if v is not None and t._version != v:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by "
                    f"an inplace operation: a tensor of shape {tuple(t.shape)} is at version "
                    f"{t._version}; expected version {v} instead."
                )
        return self.to_save

    def _pack_saved(self) -> None:
        """Passes the saved tensors through the saved tensor hooks, if any are set (they
        are then not checked for in-place changes, as in PyTorch)."""
        hooks = saved_tensors.current()
        if hooks is not None and self.to_save:
            self.to_save = tuple(saved_tensors.pack(t, hooks) for t in self.to_save)
            self._saved_versions = (None,) * len(self.to_save)

    def mark_dirty(self, *tensors):
        self.dirty = tensors

    def mark_non_differentiable(self, *tensors):
        self.non_differentiable = tensors

    def set_materialize_grads(self, value: bool):
        self.materialize_grads = value


class BackwardCFunction(Node):
    def __init__(self, cls, ctx, edges, n_outputs, output_shapes, input_dtypes):
        super().__init__(f"{cls.__name__}Backward", edges, n_outputs)
        self._cls = cls
        self._ctx = ctx
        self._output_shapes = output_shapes
        self._input_dtypes = input_dtypes  # None for arguments that are not tensors

    def _backward(self, grads):
        grads = tuple(
            g if g is not None else F.zeros(shape) for g, shape in zip(grads, self._output_shapes)
        )
        result = self._cls.backward(self._ctx, *grads)
        result = result if isinstance(result, tuple) else (result,)
        n_inputs = len(self.next_functions)
        if len(result) < n_inputs:
            raise RuntimeError(
                f"function {self._name} returned an incorrect number of gradients "
                f"(expected {n_inputs}, got {len(result)})"
            )
        return tuple(map(_of_dtype, result[:n_inputs], self._input_dtypes))

    def _release(self):
        super()._release()
        self._ctx._released = True


def _of_dtype(g, dtype):
    """g cast to its input's dtype, as PyTorch's engine does (a complex gradient of a real
    input is left as it is: PyTorch refuses it)."""
    if not isinstance(g, F.Tensor) or g.dtype == dtype or (g.is_complex() and not dtype.is_complex):
        return g
    return g.to(dtype)


class Function:
    """Subclass with static ``forward(ctx, *args)`` and ``backward(ctx, *grads)``;
    call with ``MyFunction.apply(*args)``.

    >>> class Exp(flambeau.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         y = x.exp()
    ...         ctx.save_for_backward(y)
    ...         return y
    ...
    ...     @staticmethod
    ...     def backward(ctx, grad):
    ...         (y,) = ctx.saved_tensors
    ...         return grad * y
    >>> x = flambeau.tensor([0.0, 1.0], requires_grad=True)
    >>> Exp.apply(x).sum().backward()
    >>> x.grad
    tensor([1.0000, 2.7183])
    """

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("subclasses of Function must implement forward")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("subclasses of Function must implement backward")

    @classmethod
    def apply(cls, *args, **kwargs):
        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(isinstance(a, F.Tensor) and a.requires_grad for a in args)
        with no_grad():
            result = cls.forward(ctx, *args, **kwargs)
        if not (F.is_grad_enabled() and any(ctx.needs_input_grad)):
            return result
        ctx._pack_saved()
        outputs = result if isinstance(result, tuple) else (result,)
        edges = [grad_edge(a) if isinstance(a, F.Tensor) else (None, 0) for a in args]
        node = BackwardCFunction(
            cls,
            ctx,
            edges,
            len(outputs),
            [tuple(o.shape) if isinstance(o, F.Tensor) else () for o in outputs],
            [a.dtype if isinstance(a, F.Tensor) else None for a in args],
        )
        if anomaly_mode.is_enabled():
            node._record_trace()
        non_diff = {id(t) for t in ctx.non_differentiable}
        dirty = {id(t) for t in ctx.dirty}
        inputs = {id(a) for a in args if isinstance(a, F.Tensor)}
        fresh = []
        for i, o in enumerate(outputs):
            if not isinstance(o, F.Tensor) or id(o) in non_diff or not is_differentiable(o):
                fresh.append(o)
                continue
            if id(o) in inputs and id(o) not in dirty:
                o = o.detach()  # an input returned as is becomes a new graph output
            attach(o, node, i)
            fresh.append(o)
        return tuple(fresh) if isinstance(result, tuple) else fresh[0]


def once_differentiable(fn):
    """Marks a backward as not differentiable: it runs without recording.

    >>> class Double(flambeau.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         return x * 2
    ...
    ...     @staticmethod
    ...     @flambeau.autograd.once_differentiable
    ...     def backward(ctx, grad):
    ...         return grad * 2
    >>> x = flambeau.ones(2, requires_grad=True)
    >>> (g,) = flambeau.autograd.grad(Double.apply(x).sum(), x, create_graph=True)
    >>> g, g.requires_grad
    (tensor([2., 2.]), False)
    """

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            return fn(ctx, *args)

    return wrapper
