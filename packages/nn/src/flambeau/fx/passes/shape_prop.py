"""``ShapeProp``: runs a graph on example inputs and records each node's result's shape,
dtype, strides and memory format in ``node.meta["tensor_meta"]``
(``torch.fx.passes.shape_prop``)."""

from __future__ import annotations

import traceback
from typing import Any, NamedTuple

import flambeau

from ..interpreter import Interpreter
from ..node import map_aggregate

__all__ = ["TensorMetadata", "ShapeProp"]


class TensorMetadata(NamedTuple):
    """What ShapeProp records of a tensor.

    >>> from flambeau.fx.passes.shape_prop import _extract_tensor_metadata
    >>> meta = _extract_tensor_metadata(flambeau.zeros(2, 3))
    >>> meta.shape, meta.dtype, meta.stride, meta.memory_format
    (flambeau.Size([2, 3]), flambeau.float32, (3, 1), flambeau.contiguous_format)
    """

    shape: Any
    dtype: Any
    requires_grad: bool
    stride: tuple
    memory_format: Any
    is_quantized: bool
    qparams: dict


def _memory_formats() -> tuple:
    return tuple(
        f
        for f in (getattr(flambeau, n, None)
                  for n in ("contiguous_format", "channels_last", "channels_last_3d"))
        if f is not None
    )  # fmt: skip


def _extract_tensor_metadata(result, include_contiguity: bool = True) -> TensorMetadata:
    sparse = result.layout is not flambeau.strided
    stride = tuple(result.stride()) if not sparse else ()
    memory_format = None
    if include_contiguity and not sparse:
        for fmt in _memory_formats():
            try:
                if result.is_contiguous(memory_format=fmt):
                    memory_format = fmt
                    break
            except (RuntimeError, TypeError):  # a format for another number of dims
                continue
    is_quantized = bool(getattr(result, "is_quantized", False))
    qparams: dict = {}
    if is_quantized:
        qscheme = result.qscheme()
        qparams["qscheme"] = qscheme
        if qscheme in (flambeau.per_tensor_affine, flambeau.per_tensor_symmetric):
            qparams["scale"] = result.q_scale()
            qparams["zero_point"] = result.q_zero_point()
        else:
            qparams["scale"] = result.q_per_channel_scales().tolist()
            qparams["zero_point"] = result.q_per_channel_zero_points().tolist()
            qparams["axis"] = result.q_per_channel_axis()
    return TensorMetadata(result.shape, result.dtype, result.requires_grad, stride,
                          memory_format, is_quantized, qparams)  # fmt: skip


class ShapeProp(Interpreter):
    """Runs a GraphModule node by node on example inputs and stores, for each node whose
    result holds tensors, their :class:`TensorMetadata` in ``node.meta["tensor_meta"]``
    (the same structure as the result: a tuple of them for a tuple) and the result's
    type in ``node.meta["type"]``.

    >>> import flambeau.fx as fx
    >>> from flambeau.fx.passes.shape_prop import ShapeProp
    >>> net = flambeau.nn.Sequential(flambeau.nn.Linear(4, 3), flambeau.nn.ReLU())
    >>> gm = fx.symbolic_trace(net)
    >>> _ = ShapeProp(gm).propagate(flambeau.randn(5, 4))
    >>> [(n.name, tuple(n.meta["tensor_meta"].shape)) for n in gm.graph.nodes]
    [('input_1', (5, 4)), ('_0', (5, 3)), ('_1', (5, 3)), ('output', (5, 3))]
    """

    def __init__(self, gm, fake_mode=None):
        super().__init__(gm)
        self.fake_mode = fake_mode

    def run_node(self, n):
        try:
            result = super().run_node(n)
        except Exception as e:
            traceback.print_exc()
            raise RuntimeError(
                f"ShapeProp error for: node={n.format_node()} with meta={n.meta}"
            ) from e
        found_tensor = False

        def extract(obj):
            nonlocal found_tensor
            if isinstance(obj, flambeau.Tensor):
                found_tensor = True
                return _extract_tensor_metadata(obj)
            return obj

        meta = map_aggregate(result, extract)
        if found_tensor:
            n.meta["tensor_meta"] = meta
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args):
        """Runs the module on ``args`` recording the metadata; returns its output."""
        return super().run(*args)
