"""Converting convolution weights to a memory format (channels_last and friends)."""

from __future__ import annotations

from flambeau import no_grad

from ..modules.conv import Conv2d, Conv3d, ConvTranspose2d, ConvTranspose3d
from ..parameter import Parameter

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert_weights(module, kinds, memory_format):
    for sub in module.modules():
        if isinstance(sub, kinds):
            old = sub.weight
            with no_grad():
                data = old.detach().clone(memory_format=memory_format)
            # The core cannot swap a tensor's storage in place, so the weight becomes a new
            # Parameter (as Module.to does); its gradient, if any, is converted alongside.
            sub.weight = Parameter(data, old.requires_grad)
            if old.grad is not None:
                sub.weight.grad = old.grad.clone(memory_format=memory_format)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """Re-lays the weight of every Conv2d / ConvTranspose2d in `module` (itself included) in
    `memory_format`, e.g. flambeau.channels_last; returns module.

    >>> import flambeau.nn as nn
    >>> model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU())
    >>> model = nn.utils.convert_conv2d_weight_memory_format(model, flambeau.channels_last)
    >>> model[0].weight.is_contiguous(memory_format=flambeau.channels_last)
    True
    """
    return _convert_weights(module, (Conv2d, ConvTranspose2d), memory_format)


def convert_conv3d_weight_memory_format(module, memory_format):
    """As convert_conv2d_weight_memory_format, for Conv3d / ConvTranspose3d
    (e.g. flambeau.channels_last_3d).

    >>> import flambeau.nn as nn
    >>> model = nn.Sequential(nn.Conv3d(3, 8, 3), nn.ReLU())
    >>> model = nn.utils.convert_conv3d_weight_memory_format(model, flambeau.channels_last_3d)
    >>> model[0].weight.is_contiguous(memory_format=flambeau.channels_last_3d)
    True
    """
    return _convert_weights(module, (Conv3d, ConvTranspose3d), memory_format)
