"""In-place operations on views.

A view records its root (``ViewInfo``); the nodes below read where the view sits
in the root's storage, and the root's geometry, when they are made (``Frame``):
in-place view ops (``t_``, ``squeeze_``) may change both later. When an
in-place op writes through a view, the root's history is rebased onto a
``CopySlices`` node: the gradient of the root flows to the root's old history
everywhere except in the view's region, where it first goes through the
in-place op's own backward. The view, and later any other view of the same
root, then read from the new root through a ``ViewNode`` (as PyTorch
regenerates a view's grad_fn after its base changed).
"""

from __future__ import annotations

import flambeau as F

from .function import Function
from .graph import Node, ViewInfo


class Frame:
    """A view's place in its root's storage and the root's own geometry, as they are when
    a node is made: an in-place view op (t_, squeeze_) may change either afterwards."""

    __slots__ = ("root_size", "root_stride", "root_offset", "root_dtype", "n")
    __slots__ += ("size", "stride", "offset", "dtype")

    def __init__(self, info: ViewInfo, view):
        root = info.root
        if not view._is_view_of(root):
            raise RuntimeError(
                "a view whose storage was replaced in place (set_ or .data = without "
                "autograd seeing it) is being used as a view of its base by autograd; "
                "use a fresh view of the base, or a clone"
            )
        self.root_size, self.root_stride = tuple(root.shape), tuple(root.stride())
        self.root_offset, self.root_dtype = root.storage_offset(), root.dtype
        self.n = root._storage_nbytes() // root.element_size()
        self.size, self.stride = tuple(view.shape), tuple(view.stride())
        self.offset, self.dtype = view.storage_offset(), view.dtype


def _buffer(like, frame: Frame):
    # A view of another dtype (real/imag/view_as_real of complex storage, or
    # view_as_complex of floats) reinterprets a buffer of the root's dtype.
    n = frame.n
    if frame.dtype == frame.root_dtype:
        return F.zeros(n, dtype=like.dtype)
    if not frame.root_dtype.is_complex:
        n += n % 2  # whole complex elements
    return F.zeros(n, dtype=frame.root_dtype)


def _root_of(buffer, frame: Frame):
    return buffer.as_strided(frame.root_size, frame.root_stride, frame.root_offset)


def _view_of(buffer, frame: Frame):
    if frame.dtype != frame.root_dtype:
        buffer = buffer.view(frame.dtype)
    return buffer.as_strided(frame.size, frame.stride, frame.offset)


class _GatherView(Function):
    """root-shaped h -> the view's elements of h (the view taken from a fresh copy)."""

    @staticmethod
    def forward(ctx, h, frame):
        ctx.frame = frame
        buf = _buffer(h, frame)
        _root_of(buf, frame).copy_(h)
        return _view_of(buf, frame).clone()

    @staticmethod
    def backward(ctx, g):
        return _ScatterView.apply(g, ctx.frame), None


class _ScatterView(Function):
    """view-shaped g -> root-shaped zeros with g added at the view's place (the adjoint)."""

    @staticmethod
    def forward(ctx, g, frame):
        ctx.frame = frame
        buf = _buffer(g, frame)
        region = _view_of(buf, frame)
        # Broadcast (stride-0) dimensions read one element many times: their gradients sum.
        dims = tuple(
            d for d, (n, st) in enumerate(zip(frame.size, frame.stride)) if st == 0 and n > 1
        )
        if dims:
            g = g.sum(dim=dims, keepdim=True)
            region = region[
                tuple(slice(0, 1) if d in dims else slice(None) for d in range(g.dim()))
            ]
        region.add_(g)
        return _root_of(buf, frame).clone()

    @staticmethod
    def backward(ctx, h):
        return _GatherView.apply(h, ctx.frame), None


class ViewNode(Node):
    """Backward of a view regenerated from its root: scatters into the root's shape."""

    def __init__(self, root_edge, info: ViewInfo, view):
        super().__init__("AsStridedBackward0", (root_edge,), 1)
        self._frame = Frame(info, view)

    def _backward(self, grads):
        return (_ScatterView.apply(grads[0], self._frame),)


class CopySlices(Node):
    """The root's history after an in-place op wrote through one of its views."""

    def __init__(self, root_edge, info: ViewInfo, view, op_node: Node):
        super().__init__("CopySlices", (root_edge, *op_node.next_functions[1:]), 1)
        self._frame = Frame(info, view)
        self._op = op_node

    def _backward(self, grads):
        (g,) = grads
        in_view = _GatherView.apply(g, self._frame)
        grads_of_op = self._op._backward((in_view,))
        # The old root gets g outside the view, and the op's gradient inside it.
        old = g - _ScatterView.apply(in_view, self._frame)
        if grads_of_op[0] is not None:
            old = old + _ScatterView.apply(grads_of_op[0], self._frame)
        return (old, *grads_of_op[1:])

    def _release(self):
        super()._release()
        self._op._release()
