"""scatter and gather: splitting inputs across devices and joining the outputs."""

from __future__ import annotations

import warnings

import flambeau

from ._devices import as_device

__all__ = ["scatter", "scatter_kwargs", "gather"]


def _is_namedtuple(obj) -> bool:
    return isinstance(obj, tuple) and hasattr(obj, "_asdict") and hasattr(obj, "_fields")


def scatter(inputs, target_gpus, dim: int = 0):
    """Splits every tensor in `inputs` into len(target_gpus) chunks along dim, one per
    device (fewer when dim is shorter); tuples, lists, dicts and namedtuples are split
    element by element and any other object is repeated for each device.

    >>> from flambeau.nn.parallel import scatter
    >>> scatter(flambeau.arange(6), ["cpu", "cpu"])
    [tensor([0, 1, 2]), tensor([3, 4, 5])]
    >>> scatter({"x": flambeau.arange(4), "scale": 2.0}, ["cpu", "cpu"])
    [{'x': tensor([0, 1]), 'scale': 2.0}, {'x': tensor([2, 3]), 'scale': 2.0}]
    """
    devices = [as_device(d) for d in target_gpus]

    def scatter_map(obj):
        if isinstance(obj, flambeau.Tensor):
            chunks = obj.chunk(len(devices), dim)
            return [chunk.to(device) for chunk, device in zip(chunks, devices)]
        if _is_namedtuple(obj):
            return [type(obj)(*parts) for parts in zip(*map(scatter_map, obj))]
        if isinstance(obj, tuple) and obj:
            return list(zip(*map(scatter_map, obj)))
        if isinstance(obj, list) and obj:
            return [list(parts) for parts in zip(*map(scatter_map, obj))]
        if isinstance(obj, dict) and obj:
            return [type(obj)(parts) for parts in zip(*map(scatter_map, obj.items()))]
        return [obj for _ in devices]

    return scatter_map(inputs)


def scatter_kwargs(inputs, kwargs, target_gpus, dim: int = 0):
    """scatter of positional and keyword arguments, padded to the same number of devices:
    (tuple of argument tuples, tuple of keyword dicts)."""
    scattered_inputs = scatter(inputs, target_gpus, dim) if inputs else []
    scattered_kwargs = scatter(kwargs, target_gpus, dim) if kwargs else []
    if len(scattered_inputs) < len(scattered_kwargs):
        scattered_inputs.extend(() for _ in range(len(scattered_kwargs) - len(scattered_inputs)))
    elif len(scattered_kwargs) < len(scattered_inputs):
        scattered_kwargs.extend({} for _ in range(len(scattered_inputs) - len(scattered_kwargs)))
    return tuple(scattered_inputs), tuple(scattered_kwargs)


def gather(outputs, target_device, dim: int = 0):
    """Joins per-device outputs on target_device (-1 or "cpu": the CPU): tensors are
    concatenated along dim (scalars stacked into a vector), containers element by element.

    >>> from flambeau.nn.parallel import gather
    >>> gather([flambeau.tensor([[1, 2]]), flambeau.tensor([[3, 4]])], "cpu")
    tensor([[1, 2],
            [3, 4]])
    >>> gather([{"loss": flambeau.tensor([1.0])}, {"loss": flambeau.tensor([3.0])}], "cpu")
    {'loss': tensor([1., 3.])}
    """
    device = as_device(target_device)

    def gather_map(outs):
        out = outs[0]
        if isinstance(out, flambeau.Tensor):
            if all(t.dim() == 0 for t in outs):
                warnings.warn(
                    "Was asked to gather along dimension 0, but all input tensors were "
                    "scalars; will instead unsqueeze and return a vector.",
                    stacklevel=4,
                )
                outs = [t.unsqueeze(0) for t in outs]
            return flambeau.cat([t.to(device) for t in outs], dim)
        if out is None:
            return None
        if isinstance(out, dict):
            if not all(len(out) == len(d) for d in outs):
                raise ValueError("All dicts must have the same number of keys")
            return type(out)((k, gather_map([d[k] for d in outs])) for k in out)
        if _is_namedtuple(out):
            return type(out)._make(map(gather_map, zip(*outs)))
        return type(out)(map(gather_map, zip(*outs)))

    return gather_map(outputs)
