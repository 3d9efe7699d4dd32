"""In-place operations on views.

A view records where it sits in its root's storage (``ViewInfo``). When an
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


def _buffer(like, info: ViewInfo):
    root = info.root
    # A view of another dtype (real/imag/view_as_real of complex storage, or
    # view_as_complex of floats) reinterprets a buffer of the root's dtype.
    n = root._storage_nbytes() // root.element_size()
    if info.dtype == root.dtype:
        return F.zeros(n, dtype=like.dtype)
    if not root.dtype.is_complex:
        n += n % 2  # whole complex elements
    return F.zeros(n, dtype=root.dtype)


def _root_of(buffer, info: ViewInfo):
    r = info.root
    return buffer.as_strided(tuple(r.shape), tuple(r.stride()), r.storage_offset())


def _view_of(buffer, info: ViewInfo):
    if info.dtype != info.root.dtype:
        buffer = buffer.view(info.dtype)
    return buffer.as_strided(info.size, info.stride, info.offset)


class _GatherView(Function):
    """root-shaped h -> the view's elements of h (the view taken from a fresh copy)."""

    @staticmethod
    def forward(ctx, h, info):
        ctx.info = info
        buf = _buffer(h, info)
        _root_of(buf, info).copy_(h)
        return _view_of(buf, info).clone()

    @staticmethod
    def backward(ctx, g):
        return _ScatterView.apply(g, ctx.info), None


class _ScatterView(Function):
    """view-shaped g -> root-shaped zeros with g added at the view's place (the adjoint)."""

    @staticmethod
    def forward(ctx, g, info):
        ctx.info = info
        buf = _buffer(g, info)
        region = _view_of(buf, info)
        # Broadcast (stride-0) dimensions read one element many times: their gradients sum.
        dims = tuple(
            d for d, (n, st) in enumerate(zip(info.size, info.stride)) if st == 0 and n > 1
        )
        if dims:
            g = g.sum(dim=dims, keepdim=True)
            region = region[
                tuple(slice(0, 1) if d in dims else slice(None) for d in range(g.dim()))
            ]
        region.add_(g)
        return _root_of(buf, info).clone()

    @staticmethod
    def backward(ctx, h):
        return _GatherView.apply(h, ctx.info), None


class ViewNode(Node):
    """Backward of a view regenerated from its root: scatters into the root's shape."""

    def __init__(self, root_edge, info: ViewInfo):
        super().__init__("AsStridedBackward0", (root_edge,), 1)
        self._info = info

    def _backward(self, grads):
        return (_ScatterView.apply(grads[0], self._info),)


class CopySlices(Node):
    """The root's history after an in-place op wrote through one of its views."""

    def __init__(self, root_edge, info: ViewInfo, op_node: Node):
        super().__init__("CopySlices", (root_edge, *op_node.next_functions[1:]), 1)
        self._info = info
        self._op = op_node

    def _backward(self, grads):
        (g,) = grads
        in_view = _GatherView.apply(g, self._info)
        grads_of_op = self._op._backward((in_view,))
        # The old root gets g outside the view, and the op's gradient inside it.
        old = g - _ScatterView.apply(in_view, self._info)
        if grads_of_op[0] is not None:
            old = old + _ScatterView.apply(grads_of_op[0], self._info)
        return (old, *grads_of_op[1:])

    def _release(self):
        super()._release()
        self._op._release()
