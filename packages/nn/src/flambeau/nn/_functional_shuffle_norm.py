"""F.rms_norm, composed of core operators; F.channel_shuffle is the core's function, as in
PyTorch, re-exported."""

from __future__ import annotations

import flambeau
from flambeau import channel_shuffle  # noqa: F401 - torch's function, re-exported
from flambeau._arg_checks import require_floating
from flambeau.overrides import _dispatch_on

__all__ = ["channel_shuffle", "rms_norm"]


@_dispatch_on("input", "weight")
def rms_norm(input, normalized_shape, weight=None, eps=None):
    """x / sqrt(mean(x^2) + eps) over the trailing normalized_shape dims, times weight.

    eps=None uses the machine epsilon of input's dtype; half-precision input is
    normalised in float32 and the result cast back.

    >>> import flambeau.nn.functional as F
    >>> F.rms_norm(flambeau.tensor([[1.0, 1.0, 1.0, 1.0], [3.0, 4.0, 3.0, 4.0]]), (4,))
    tensor([[1.0000, 1.0000, 1.0000, 1.0000],
            [0.8485, 1.1314, 0.8485, 1.1314]])
    """
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    shape = tuple(int(s) for s in normalized_shape)
    if not shape:
        raise RuntimeError(
            "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least "
            "one element, but got normalized_shape = []"
        )
    if weight is not None and tuple(weight.shape) != shape:
        raise RuntimeError(
            "Expected weight to be of same shape as normalized_shape, but got weight of shape "
            f"{list(weight.shape)} and normalized_shape = {list(shape)}"
        )
    k = len(shape)
    if input.dim() < k or tuple(input.shape[input.dim() - k :]) != shape:
        raise RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape [*"
            f"{', '.join(str(s) for s in shape)}], but got input of size{list(input.shape)}"
        )
    require_floating("rms_norm", input)
    if eps is None:
        eps = flambeau.finfo(input.dtype).eps
    low_precision = input.dtype in (flambeau.float16, flambeau.bfloat16)
    x = input.to(flambeau.float32) if low_precision else input
    dims = tuple(range(input.dim() - k, input.dim()))
    out = x * flambeau.rsqrt((x * x).mean(dims, keepdim=True) + eps)
    if weight is not None:
        out = out * weight
    return out.to(input.dtype)
