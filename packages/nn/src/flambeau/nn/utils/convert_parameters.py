"""Between a module's parameters and one flat vector."""

from __future__ import annotations

import flambeau
from flambeau import no_grad


def _check_same_device(param, device):
    if device is not None and param.device != device:
        raise TypeError(
            "Found two parameters on different devices, this is currently not supported."
        )
    return param.device


def parameters_to_vector(parameters):
    """All parameters flattened and concatenated into one 1-D tensor.

    >>> import flambeau.nn as nn
    >>> layer = nn.Linear(2, 1)
    >>> with flambeau.no_grad():
    ...     _ = layer.weight.copy_(flambeau.tensor([[1.0, 2.0]]))
    ...     _ = layer.bias.fill_(3.0)
    >>> nn.utils.parameters_to_vector(layer.parameters())
    tensor([1., 2., 3.], grad_fn=<CatBackward0>)
    """
    device, pieces = None, []
    for p in parameters:
        device = _check_same_device(p, device)
        pieces.append(p.reshape(-1))
    return flambeau.cat(pieces)


def vector_to_parameters(vec, parameters) -> None:
    """Copies consecutive slices of `vec` into the parameters, in order.

    >>> import flambeau.nn as nn
    >>> layer = nn.Linear(2, 1)
    >>> nn.utils.vector_to_parameters(flambeau.tensor([1.0, 2.0, 3.0]), layer.parameters())
    >>> layer.weight.tolist(), layer.bias.tolist()
    ([[1.0, 2.0]], [3.0])
    """
    if not isinstance(vec, flambeau.Tensor):
        raise TypeError(f"expected flambeau.Tensor, but got: {type(vec).__name__}")
    device, offset = None, 0
    with no_grad():
        for p in parameters:
            device = _check_same_device(p, device)
            n = p.numel()
            p.copy_(vec[offset : offset + n].view_as(p))
            offset += n
