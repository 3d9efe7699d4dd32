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
    """All parameters flattened and concatenated into one 1-D tensor."""
    device, pieces = None, []
    for p in parameters:
        device = _check_same_device(p, device)
        pieces.append(p.reshape(-1))
    return flambeau.cat(pieces)


def vector_to_parameters(vec, parameters) -> None:
    """Copies consecutive slices of `vec` into the parameters, in order."""
    if not isinstance(vec, flambeau.Tensor):
        raise TypeError(f"expected flambeau.Tensor, but got: {type(vec).__name__}")
    device, offset = None, 0
    with no_grad():
        for p in parameters:
            device = _check_same_device(p, device)
            n = p.numel()
            p.copy_(vec[offset : offset + n].view_as(p))
            offset += n
