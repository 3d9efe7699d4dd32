"""``flambeau.nn.init``: in-place initialisers with PyTorch's fans, gains and distributions.

Every function fills its tensor without recording gradients and returns it. The names
without the trailing underscore are PyTorch's deprecated aliases.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import math
import warnings

import flambeau
from flambeau import no_grad

__all__ = [
    "calculate_gain",
    "uniform_",
    "normal_",
    "trunc_normal_",
    "constant_",
    "ones_",
    "zeros_",
    "eye_",
    "dirac_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "orthogonal_",
    "sparse_",
    "uniform",
    "normal",
    "constant",
    "eye",
    "dirac",
    "xavier_uniform",
    "xavier_normal",
    "kaiming_uniform",
    "kaiming_normal",
    "orthogonal",
    "sparse",
]

# nn.utils.skip_init builds a module with its initialisers turned into no-ops (flambeau has no
# meta device to build on); the flag is per thread and per async context.
_skipping = contextvars.ContextVar("flambeau_nn_init_skipping", default=False)


@contextlib.contextmanager
def _skip_initialization():
    token = _skipping.set(True)
    try:
        yield
    finally:
        _skipping.reset(token)


def _initializer(fill):
    """Marks an in-place initialiser: under _skip_initialization it returns its tensor as is."""

    @functools.wraps(fill)
    def initialize(tensor, *args, **kwargs):
        return tensor if _skipping.get() else fill(tensor, *args, **kwargs)

    return initialize


_LINEAR_GAIN_ONE = {
    "linear",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "sigmoid",
}


def calculate_gain(nonlinearity: str, param=None) -> float:
    """The recommended gain for a nonlinearity (param: leaky_relu's negative slope)."""
    if nonlinearity in _LINEAR_GAIN_ONE:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.dim() < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    receptive = math.prod(tensor.shape[2:])
    return tensor.size(1) * receptive, tensor.size(0) * receptive


def _calculate_correct_fan(tensor, mode: str) -> int:
    mode = mode.lower()
    valid = ["fan_in", "fan_out"]
    if mode not in valid:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


@_initializer
def uniform_(tensor, a: float = 0.0, b: float = 1.0, generator=None):
    """Fills with U(a, b)."""
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


@_initializer
def normal_(tensor, mean: float = 0.0, std: float = 1.0, generator=None):
    """Fills with N(mean, std^2)."""
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


@_initializer
def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fills with N(mean, std^2) truncated to [a, b], by inverting the normal CDF."""

    def cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of "
            "values may be incorrect.",
            stacklevel=3,  # past the _initializer wrapper
        )
    with no_grad():
        lo, hi = cdf((a - mean) / std), cdf((b - mean) / std)
        tensor.uniform_(2 * lo - 1, 2 * hi - 1, generator=generator)
        tensor.copy_(flambeau.erfinv(tensor))
        tensor.mul_(std * math.sqrt(2.0))
        tensor.add_(mean)
        tensor.clamp_(min=a, max=b)
        return tensor


@_initializer
def constant_(tensor, val: float):
    """Fills with val."""
    with no_grad():
        return tensor.fill_(val)


@_initializer
def ones_(tensor):
    """Fills ``tensor`` with 1, in place and without recording autograd history. Returns
    ``tensor``."""
    return constant_(tensor, 1.0)


@_initializer
def zeros_(tensor):
    """Fills ``tensor`` with 0, in place and without recording autograd history. Returns
    ``tensor``."""
    with no_grad():
        return tensor.zero_()


@_initializer
def eye_(tensor):
    """Fills a 2-D tensor with the identity matrix."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        return tensor.copy_(flambeau.eye(tensor.size(0), tensor.size(1), dtype=tensor.dtype))


@_initializer
def dirac_(tensor, groups: int = 1):
    """Fills a 3/4/5-D convolution weight with the identity (per group)."""
    dims = tensor.dim()
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    per_group = sizes[0] // groups
    with no_grad():
        tensor.zero_()
        centre = tuple(s // 2 for s in sizes[2:])
        for g in range(groups):
            for d in range(min(per_group, sizes[1])):
                tensor[(g * per_group + d, d, *centre)] = 1
    return tensor


@_initializer
def xavier_uniform_(tensor, gain: float = 1.0, generator=None):
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio, 2010)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


@_initializer
def xavier_normal_(tensor, gain: float = 1.0, generator=None):
    """N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor, a, mode, nonlinearity) -> float | None:
    if 0 in tuple(tensor.shape):
        # stacklevel: past _kaiming_std, the initialiser and its _initializer wrapper
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=4)
        return None
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


@_initializer
def kaiming_uniform_(tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator=None):  # fmt: skip
    """U(-bound, bound) with bound = gain * sqrt(3 / fan) (He et al., 2015)."""
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


@_initializer
def kaiming_normal_(tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator=None):  # fmt: skip
    """N(0, std^2) with std = gain / sqrt(fan)."""
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    return normal_(tensor, 0.0, std, generator)


@_initializer
def orthogonal_(tensor, gain: float = 1, generator=None):
    """A (semi-)orthogonal matrix from the QR decomposition of a normal sample, times gain.

    Dimensions after the first are flattened.
    """
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    import numpy as np  # here: importing NumPy would triple the time of `import flambeau.nn`

    rows = tensor.size(0)
    cols = tensor.numel() // rows
    sample = flambeau.empty((rows, cols), dtype=flambeau.float64).normal_(0, 1, generator=generator)
    a = sample.numpy()
    if rows < cols:
        a = a.T
    q, r = np.linalg.qr(a)
    q = q * np.sign(np.diag(r))  # makes the decomposition unique (uniform over O(n))
    if rows < cols:
        q = q.T
    with no_grad():
        tensor.view(rows, cols).copy_(flambeau.from_numpy(np.ascontiguousarray(q)) * gain)
    return tensor


@_initializer
def sparse_(tensor, sparsity: float, std: float = 0.01, generator=None):
    """N(0, std^2) with a fraction `sparsity` of each column set to zero."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        for col in range(cols):
            zero_rows = flambeau.randperm(rows, generator=generator)[:num_zeros]
            for row in zero_rows.tolist():
                tensor[row, col] = 0
    return tensor


def _deprecated_alias(initializer):
    new_name = initializer.__name__
    old_name = new_name[:-1]

    def deprecated(*args, **kwargs):
        warnings.warn(
            f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new_name}`.",
            FutureWarning,
            stacklevel=2,
        )
        return initializer(*args, **kwargs)

    deprecated.__name__ = deprecated.__qualname__ = old_name
    deprecated.__doc__ = f"Deprecated alias of :func:`{new_name}` (warns FutureWarning)."
    return deprecated


uniform = _deprecated_alias(uniform_)
normal = _deprecated_alias(normal_)
constant = _deprecated_alias(constant_)
eye = _deprecated_alias(eye_)
dirac = _deprecated_alias(dirac_)
xavier_uniform = _deprecated_alias(xavier_uniform_)
xavier_normal = _deprecated_alias(xavier_normal_)
kaiming_uniform = _deprecated_alias(kaiming_uniform_)
kaiming_normal = _deprecated_alias(kaiming_normal_)
orthogonal = _deprecated_alias(orthogonal_)
sparse = _deprecated_alias(sparse_)
