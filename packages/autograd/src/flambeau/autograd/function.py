"""Custom differentiable operations written in Python: ``Function``."""

from __future__ import annotations

import functools
import inspect

import flambeau as F

from . import anomaly_mode, forward_ad, saved_tensors
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
        self._saved_for_forward = ()
        self._in_jvp = False  # saved_tensors gives what save_for_forward saved

    def save_for_backward(self, *tensors):
        if not F.is_inference_mode_enabled() and any(
            isinstance(t, F.Tensor) and t.is_inference() for t in tensors
        ):
            raise RuntimeError(
                "Inference tensors cannot be saved for backward. To work around you can make "
                "a clone to get a normal tensor and use it in autograd."
            )
        self.to_save = tensors
        self._saved_versions = tuple(
            t._version if isinstance(t, F.Tensor) else None for t in tensors
        )

    def save_for_forward(self, *tensors):
        """Saves tensors (or None) for ``jvp``, which reads them as ``ctx.saved_tensors``.

        >>> import flambeau.autograd.forward_ad as fwAD
        >>> class Mul(flambeau.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x, y):
        ...         ctx.save_for_forward(x, y)
        ...         return x * y
        ...
        ...     @staticmethod
        ...     def jvp(ctx, x_t, y_t):
        ...         x, y = ctx.saved_tensors
        ...         return x_t * y + x * y_t
        >>> with fwAD.dual_level():
        ...     x = fwAD.make_dual(flambeau.tensor([2.0]), flambeau.tensor([1.0]))
        ...     fwAD.unpack_dual(Mul.apply(x, flambeau.tensor([5.0]))).tangent
        tensor([5.])
        """
        if not all(t is None or isinstance(t, F.Tensor) for t in tensors):
            raise AssertionError(
                "save_for_forward expects all arguments to be tensors; you should save "
                "non-tensors as attributes on ctx."
            )
        self._saved_for_forward = tensors

    @property
    def saved_tensors(self):
        if self._in_jvp:
            return self._saved_for_forward
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
    def __init__(self, cls, ctx, edges, n_outputs, output_metas, input_metas):
        super().__init__(f"{cls.__name__}Backward", edges, n_outputs)
        self._fw_cut = None  # the forward-AD level whose tangents its jvp gave
        self._cls = cls
        self._ctx = ctx
        # (shape, dtype, device) of each output and tensor input; None for the others.
        self._output_metas = output_metas
        self._input_metas = input_metas

    def _backward(self, grads):
        if self._fw_cut is not None and self._fw_cut.in_tangent_pass:
            # Tangents downstream of it start from its jvp's: none flow through it.
            return (None,) * len(self.next_functions)
        grads = materialized(grads, self._output_metas)
        result = user_backward(self._cls)(self._ctx, *grads)
        result = result if isinstance(result, tuple) else (result,)
        n_inputs = len(self.next_functions)
        if len(result) < n_inputs:
            raise RuntimeError(
                f"function {self._name} returned an incorrect number of gradients "
                f"(expected {n_inputs}, got {len(result)})"
            )
        return tuple(
            _as_input_gradient(self._name, i, g, meta)
            for i, (g, meta) in enumerate(zip(result[:n_inputs], self._input_metas))
        )

    def _release(self):
        super()._release()
        self._ctx._released = True


def user_backward(cls):
    """The backward a Function subclass defines: ``backward`` or its other name ``vjp``."""
    backward, vjp = cls.backward, cls.vjp
    if backward is not Function.backward and vjp is not Function.vjp:
        raise RuntimeError(
            "Implementing both 'backward' and 'vjp' for a custom Function is not allowed. "
            "You should only implement one of them."
        )
    return vjp if vjp is not Function.vjp else backward


def _as_input_gradient(name, index, g, meta):
    """A custom Function's gradient for one input, checked and fitted to that input as
    PyTorch's engine does (validate_outputs): a gradient of a broadcast shape is summed down
    to the input's shape, one of another dtype cast to it (a complex gradient of a real
    input is left as it is: PyTorch refuses it), a 0-dim gradient moved to its device."""
    if not isinstance(g, F.Tensor) or meta is None:
        return g
    shape, dtype, device = meta
    if tuple(g.shape) != shape:
        if not _expandable(shape, tuple(g.shape)):
            raise RuntimeError(
                f"Function {name} returned an invalid gradient at index {index} - got "
                f"{list(g.shape)} but expected shape compatible with {list(shape)}"
            )
        g = g.sum_to_size(shape)
    if g.dtype != dtype and not (g.is_complex() and not dtype.is_complex):
        g = g.to(dtype)
    if g.device != device:
        if g.dim() != 0:
            raise RuntimeError(
                f"Function {name} returned an invalid gradient at index {index} - "
                f"expected device {device} but got {g.device}"
            )
        g = g.to(device)
    return g


def materialized(grads, metas):
    """The output gradients a custom Function's backward receives: an unused tensor
    output's is zeros of that output's shape, dtype and device (None for non-tensors)."""
    return tuple(
        g if g is not None or meta is None else F.zeros(meta[0], dtype=meta[1], device=meta[2])
        for g, meta in zip(grads, metas)
    )


def tensor_meta(t):
    return (tuple(t.shape), t.dtype, t.device) if isinstance(t, F.Tensor) else None


def _expandable(shape, target):
    """Whether a tensor of shape broadcasts to target (PyTorch's is_expandable_to)."""
    if len(shape) > len(target):
        return False
    return all(s == t or s == 1 for s, t in zip(reversed(shape), reversed(target)))


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

    def __init_subclass__(cls, **kwargs):
        # As PyTorch's FunctionMeta: each Function subclass gets its own node class,
        # named after it, so type(y.grad_fn).__name__ is "ExpBackward" (what graph
        # printers such as torchviz show) and grad_fn._forward_cls is the Function.
        super().__init_subclass__(**kwargs)
        cls._backward_cls = type(
            f"{cls.__name__}Backward",
            (BackwardCFunction,),
            {"_forward_cls": cls, "__module__": BackwardCFunction.__module__},
        )

    @staticmethod
    def forward(*args, **kwargs):
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Optional: with it, ``forward`` takes no ``ctx`` and this fills ``ctx`` from
        forward's ``inputs`` (a tuple, defaults included) and its ``output``.

        >>> class Scale(flambeau.autograd.Function):
        ...     @staticmethod
        ...     def forward(x, k=2.0):
        ...         return x * k
        ...
        ...     @staticmethod
        ...     def setup_context(ctx, inputs, output):
        ...         ctx.k = inputs[1]
        ...
        ...     @staticmethod
        ...     def backward(ctx, grad):
        ...         return grad * ctx.k, None
        >>> x = flambeau.ones(2, requires_grad=True)
        >>> Scale.apply(x).sum().backward()
        >>> x.grad
        tensor([2., 2.])
        """
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        """The gradients of forward's inputs (one per argument, None for one without)
        given those of its outputs; a subclass defines it, or ``vjp`` (its other name),
        not both.

        >>> class Square(flambeau.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.save_for_backward(x)
        ...         return x * x
        ...
        ...     @staticmethod
        ...     def vjp(ctx, grad):
        ...         (x,) = ctx.saved_tensors
        ...         return 2 * x * grad
        >>> x = flambeau.tensor([3.0], requires_grad=True)
        >>> Square.apply(x).backward()
        >>> x.grad
        tensor([6.])
        """
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        """The forward-mode derivative: the tangents of the outputs (one per output)
        given those of the inputs (one per argument of forward: None for a non-tensor,
        zeros for a tensor without one); tensors saved by ``ctx.save_for_forward`` are
        ``ctx.saved_tensors`` here. Used inside ``flambeau.autograd.forward_ad``'s dual
        levels.

        >>> import flambeau.autograd.forward_ad as fwAD
        >>> class Cube(flambeau.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.save_for_forward(x)
        ...         return x**3
        ...
        ...     @staticmethod
        ...     def jvp(ctx, x_t):
        ...         (x,) = ctx.saved_tensors
        ...         return 3 * x**2 * x_t
        >>> with fwAD.dual_level():
        ...     x = fwAD.make_dual(flambeau.tensor([2.0]), flambeau.tensor([1.0]))
        ...     fwAD.unpack_dual(Cube.apply(x)).tangent
        tensor([12.])
        """
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD."
        )

    @classmethod
    def apply(cls, *args, **kwargs):
        ctx = FunctionCtx()
        separate_setup = cls.setup_context is not Function.setup_context
        if separate_setup:  # forward(*args): its inputs, defaults included, for setup_context
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
        ctx.needs_input_grad = tuple(isinstance(a, F.Tensor) and a.requires_grad for a in args)
        # Inside a forward-AD dual level: the tangents for cls.jvp, when it is used.
        in_tangents = forward_ad.function_input_tangents(cls, args)
        with no_grad():
            if separate_setup:
                result = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, result)
            else:
                result = cls.forward(ctx, *args, **kwargs)
        if not (F.is_grad_enabled() and any(ctx.needs_input_grad)):
            return result
        ctx._pack_saved()
        outputs = result if isinstance(result, tuple) else (result,)
        edges = [grad_edge(a) if isinstance(a, F.Tensor) else (None, 0) for a in args]
        node = cls._backward_cls(
            cls,
            ctx,
            edges,
            len(outputs),
            [tensor_meta(o) for o in outputs],
            [tensor_meta(a) for a in args],
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
        if in_tangents is not None:  # after the outputs joined the graph, as PyTorch does
            ctx._in_jvp = True
            try:
                out_tangents = cls.jvp(ctx, *in_tangents)
            finally:
                ctx._in_jvp = False
            fresh = forward_ad.mark_jvp_outputs(node, fresh, out_tangents, dirty)
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

    wrapper._once_differentiable = True  # forward AD cannot differentiate it again
    return wrapper
