"""F.* functions whose training forward samples randomness: rrelu (on the core's rrelu and
rrelu_), feature_alpha_dropout and fractional max pooling.

Each composes core operators, so autograd differentiates it through their formulas: the
random factors are constants of the graph, and fractional pooling gathers the input.
"""

from __future__ import annotations

import math

import flambeau
from flambeau import rrelu_  # noqa: F401 - torch's function, re-exported
from flambeau._arg_checks import require_floating
from flambeau._autocast_policy import autocast_policy
from flambeau.overrides import _dispatch_on

__all__ = [
    "rrelu",
    "rrelu_",
    "feature_alpha_dropout",
    "fractional_max_pool2d",
    "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices",
]

# SELU's negative saturation, -scale * alpha: where alpha dropout sends dropped units.
_SELU_SATURATION = 1.7580993408473766


# ---- randomized leaky ReLU ------------------------------------------------------------------


@_dispatch_on("input")
def rrelu(input, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False):  # fmt: skip
    """Leaky ReLU whose negative slope is drawn from U(lower, upper) per element when training,
    and is (lower + upper) / 2 otherwise (flambeau.rrelu, or flambeau.rrelu_ in place).

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.tensor([-3.0, -1.0, 2.0])
    >>> F.rrelu(x, lower=0.1, upper=0.3)
    tensor([-0.6000, -0.2000,  2.0000])
    >>> _ = flambeau.manual_seed(0)
    >>> F.rrelu(x, lower=0.1, upper=0.3, training=True)
    tensor([-0.5394, -0.2761,  2.0000])
    """
    return (flambeau.rrelu_ if inplace else flambeau.rrelu)(input, lower, upper, training)


# ---- feature alpha dropout ------------------------------------------------------------------


@_dispatch_on("input")
def feature_alpha_dropout(input, p: float = 0.5, training: bool = False, inplace: bool = False):
    """Alpha dropout of whole channels: every element of a dropped (sample, channel) is set to
    SELU's saturation, and the output is scaled and shifted to keep zero mean, unit variance.

    >>> import flambeau.nn.functional as F
    >>> _ = flambeau.manual_seed(0)
    >>> out = F.feature_alpha_dropout(flambeau.zeros(1, 4, 3), p=0.5, training=True)
    >>> out[0, :, 0]
    tensor([ 0.7792, -0.7792, -0.7792, -0.7792])
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        return input.mul_(0) if inplace else input * 0
    if input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    a = 1.0 / ((_SELU_SATURATION**2 * p + 1) * (1 - p)) ** 0.5
    with flambeau.no_grad():
        shape = (input.shape[0], input.shape[1]) + (1,) * (input.dim() - 2)
        keep = flambeau.empty(shape, dtype=input.dtype, device=input.device).bernoulli_(1 - p)
        shift = (keep - 1) * (_SELU_SATURATION * a) + _SELU_SATURATION * a * p
        scale = keep * a
    if inplace:
        return input.mul_(scale).add_(shift)
    return input * scale + shift


# ---- fractional max pooling -----------------------------------------------------------------

_AXES = {2: ("height", "width"), 3: ("time", "height", "width")}
# Which column of _random_samples drives each spatial axis: (width, height) in 2-D.
_SAMPLE_COLUMN = {2: (1, 0), 3: (0, 1, 2)}


def _sizes(value, nd: int, what: str, fn: str) -> tuple:
    values = (value,) * nd if isinstance(value, (int, float)) else tuple(value)
    if len(values) != nd:
        count = "tuple of Ints" if nd == 2 else "tuple of three Ints"
        raise RuntimeError(f"{fn}: {what} must either be a single Int or {count}")
    return values


def _window_starts(samples, in_size: int, out_size: int, pool: int):
    """PyTorch's pseudo-random window starts for one axis: (planes, out_size) int64.

    The arithmetic runs in the samples' dtype, as the kernel's does, so a given
    _random_samples picks the same windows as PyTorch.
    """
    planes = samples.shape[0]
    starts = flambeau.full((planes, out_size), in_size - pool, dtype=flambeau.int64,
                           device=samples.device)  # fmt: skip
    if out_size > 1:
        dtype = samples.dtype
        alpha = flambeau.tensor(in_size - pool, dtype=dtype) / flambeau.tensor(
            out_size - 1, dtype=dtype
        )
        steps = flambeau.arange(out_size - 1, device=samples.device).to(dtype)
        u = samples.unsqueeze(1)
        first = ((steps + u) * alpha).to(flambeau.int64) - (u * alpha).to(flambeau.int64)
        starts[:, : out_size - 1] = first
    return starts


def _fractional_max_pool(nd: int, input, kernel_size, output_size, output_ratio, samples):
    fn = f"fractional_max_pool{nd}d"
    where = f"{fn}()" if nd == 2 else f"{fn}_out()"
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"{where}: Expected {nd + 1}D or {nd + 2}D tensor, but got: {list(input.shape)}"
        )
    require_floating(fn, input)
    for d in range(input.dim() - nd - 1, input.dim()):
        if input.shape[d] == 0:
            raise RuntimeError(
                f"{where}: Expected input to have non-zero size for non-batch dimensions, but "
                f"got{list(input.shape)} with dimension {d} being empty."
            )
    kernel = _sizes(kernel_size, nd, "kernel_size", fn)
    if output_size is None and output_ratio is None:
        raise ValueError(f"{fn} requires specifying either an output_size or an output_ratio")
    spatial = tuple(input.shape[-nd:])
    if output_size is None:
        ratio = _sizes(output_ratio, nd, "output_ratio", fn)
        output_size = [int(s * r) for s, r in zip(spatial, ratio)]
    out = tuple(int(v) for v in _sizes(output_size, nd, "output_size", fn))
    for axis, o, k, s in zip(_AXES[nd], out, kernel, spatial):
        # The 2-D kernel lets the last window end at the border; the 3-D one does not.
        if (o + k - 1 > s) if nd == 2 else (o + k - 1 >= s):
            raise RuntimeError(f"{where}: pool {axis} {k} too large relative to input {axis} {s}")
    batched = input.dim() == nd + 2
    x = input if batched else input.unsqueeze(0)
    n, c = x.shape[0], x.shape[1]
    if samples is None:
        samples = flambeau.rand((n, c, nd), dtype=input.dtype, device=input.device)
    else:
        _check_samples(samples, input, n, c, nd)
    planes = n * c
    flat_samples = samples[:n].reshape(planes, nd)
    # Offsets of every element of every window into a plane flattened row-major.
    offsets = flambeau.zeros((planes,) + (1,) * (2 * nd), dtype=flambeau.int64,
                             device=input.device)  # fmt: skip
    stride = 1
    for axis in reversed(range(nd)):
        column = flat_samples[:, _SAMPLE_COLUMN[nd][axis]]
        starts = _window_starts(column, spatial[axis], out[axis], kernel[axis])
        index = starts.unsqueeze(2) + flambeau.arange(kernel[axis], device=input.device)
        shape = [planes] + [1] * (2 * nd)
        shape[1 + axis], shape[1 + nd + axis] = out[axis], kernel[axis]
        offsets = offsets + index.reshape(shape) * stride
        stride *= spatial[axis]
    windows = offsets.reshape(planes, -1, math.prod(kernel)) if math.prod(out) else None
    plane_values = x.reshape(planes, -1)
    if windows is None:
        indices = flambeau.zeros((planes, 0), dtype=flambeau.int64, device=input.device)
    else:
        with flambeau.no_grad():
            candidates = plane_values.gather(1, windows.reshape(planes, -1))
            best = candidates.reshape(windows.shape).argmax(2, keepdim=True)
        indices = windows.gather(2, best).squeeze(2)
    values = plane_values.gather(1, indices)
    out_shape = (n, c) + out
    values, indices = values.reshape(out_shape), indices.reshape(out_shape)
    if not batched:
        values, indices = values.squeeze(0), indices.squeeze(0)
    return values, indices


def _check_samples(samples, input, n: int, c: int, nd: int) -> None:
    if not isinstance(samples, flambeau.Tensor):
        raise TypeError(f"_random_samples must be a Tensor, not {type(samples).__name__}")
    if samples.dim() != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.dim()}")
    if samples.dtype != input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.shape[0] < n:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != c:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != nd:
        raise RuntimeError(
            f"Expect _random_samples.size(2) equals to {nd}; got {samples.shape[2]}."
        )


@_dispatch_on("input", "_random_samples")
def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices: bool = False,
                                       _random_samples=None):  # fmt: skip
    """Fractional max pooling over (N, C, H, W) or (C, H, W): (values, indices).

    Window starts are pseudo-random (Graham, 2014), drawn from _random_samples (N, C, 2)
    in [0, 1) (width, height), or from fresh uniform samples when it is None.

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.arange(16.0).reshape(1, 1, 4, 4)
    >>> samples = flambeau.zeros(1, 1, 2)
    >>> F.fractional_max_pool2d_with_indices(x, 2, output_size=2, _random_samples=samples)
    (tensor([[[[ 5.,  7.],
              [13., 15.]]]]), tensor([[[[ 5,  7],
              [13, 15]]]]))
    """
    return _fractional_max_pool(2, input, kernel_size, output_size, output_ratio,
                                _random_samples)  # fmt: skip


@_dispatch_on("input", "_random_samples", unless="return_indices")
@autocast_policy("fp32")
def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples=None):  # fmt: skip
    """Fractional max pooling over (N, C, H, W); (values, indices) when return_indices.

    >>> import flambeau.nn.functional as F
    >>> _ = flambeau.manual_seed(0)
    >>> x = flambeau.randn(1, 3, 10, 10)
    >>> F.fractional_max_pool2d(x, kernel_size=3, output_size=(5, 4)).shape
    flambeau.Size([1, 3, 5, 4])
    """
    values, indices = fractional_max_pool2d_with_indices(
        input, kernel_size, output_size, output_ratio, return_indices, _random_samples
    )
    return (values, indices) if return_indices else values


@_dispatch_on("input", "_random_samples")
def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices: bool = False,
                                       _random_samples=None):  # fmt: skip
    """Fractional max pooling over (N, C, T, H, W) or (C, T, H, W): (values, indices).

    _random_samples is (N, C, 3) in [0, 1): one sample per axis (time, height, width).

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.arange(8.0).reshape(1, 1, 2, 2, 2)
    >>> samples = flambeau.zeros(1, 1, 3)
    >>> F.fractional_max_pool3d_with_indices(x, 1, output_size=1, _random_samples=samples)
    (tensor([[[[[7.]]]]]), tensor([[[[[7]]]]]))
    """
    return _fractional_max_pool(3, input, kernel_size, output_size, output_ratio,
                                _random_samples)  # fmt: skip


@_dispatch_on("input", "_random_samples", unless="return_indices")
@autocast_policy("fp32")
def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples=None):  # fmt: skip
    """Fractional max pooling over (N, C, T, H, W); (values, indices) when return_indices.

    >>> import flambeau.nn.functional as F
    >>> _ = flambeau.manual_seed(0)
    >>> x = flambeau.randn(1, 2, 8, 8, 8)
    >>> F.fractional_max_pool3d(x, kernel_size=2, output_ratio=0.5).shape
    flambeau.Size([1, 2, 4, 4, 4])
    """
    values, indices = fractional_max_pool3d_with_indices(
        input, kernel_size, output_size, output_ratio, return_indices, _random_samples
    )
    return (values, indices) if return_indices else values
