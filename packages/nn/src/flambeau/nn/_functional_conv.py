"""F.* convolution, pooling, padding, resampling and fold/unfold functions (pixel_shuffle
and pixel_unshuffle are the core's, re-exported).

Each one checks its arguments, accepts an unbatched input where PyTorch does, and hands the
work to the core kernel of the same aten name (whose autograd formula exists), or composes
core operators (fold/unfold, lp pooling).
"""

from __future__ import annotations

import math
import warnings

import flambeau
from flambeau import pixel_shuffle, pixel_unshuffle  # noqa: F401 - torch's functions, re-exported
from flambeau._arg_checks import check_tensor as _check_tensor
from flambeau.overrides import _dispatch_on

__all__ = [
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
    "max_pool1d_with_indices",
    "max_pool2d_with_indices",
    "max_pool3d_with_indices",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "adaptive_max_pool3d",
    "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d_with_indices",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
    "lp_pool1d",
    "lp_pool2d",
    "lp_pool3d",
    "pad",
    "interpolate",
    "upsample",
    "upsample_nearest",
    "upsample_bilinear",
    "pixel_shuffle",
    "pixel_unshuffle",
    "unfold",
    "fold",
]


def _ntuple(value, n: int, name: str, fn: str) -> list[int]:
    if isinstance(value, int):
        return [value] * n
    value = list(value)
    if len(value) == 1:
        return value * n
    if len(value) != n:
        raise ValueError(f"{fn}(): {name} must be an int or a tuple of {n} ints, got {value}")
    return [int(v) for v in value]


def _shape(t) -> tuple:
    return tuple(t.shape)


def _batchify(input, nd: int, fn: str, allow_unbatched: bool = True):
    """Returns (input with a batch dim, whether one was added); checks the rank."""
    if input.dim() == nd + 2:
        return input, False
    if allow_unbatched and input.dim() == nd + 1:
        return input.unsqueeze(0), True
    want = f"{nd + 1}-D (unbatched) or {nd + 2}-D (batched)" if allow_unbatched else f"{nd + 2}-D"
    raise RuntimeError(f"{fn}(): expected a {want} input, but got input of shape {_shape(input)}")


def _unbatch(out, squeezed: bool):
    if not squeezed:
        return out
    if isinstance(out, tuple):
        return tuple(o.squeeze(0) for o in out)
    return out.squeeze(0)


# ---- convolution ----------------------------------------------------------------------------


def _conv(nd, input, weight, bias, stride, padding, dilation, groups):
    fn = f"conv{nd}d"
    _check_tensor(fn, "input", 1, input)
    _check_tensor(fn, "weight", 2, weight)
    _check_tensor(fn, "bias", 3, bias, optional=True)
    if weight.dim() != nd + 2:
        raise RuntimeError(
            f"{fn}(): weight must be {nd + 2}-D (out_channels, in_channels/groups, *kernel), "
            f"but got weight of shape {_shape(weight)}"
        )
    x, squeezed = _batchify(input, nd, fn)
    if groups < 1 or weight.shape[0] % groups:
        raise RuntimeError(
            f"{fn}(): out_channels ({weight.shape[0]}) must be divisible by groups ({groups})"
        )
    if x.shape[1] != weight.shape[1] * groups:
        raise RuntimeError(
            f"{fn}(): given groups={groups}, weight of shape {_shape(weight)}, expected input "
            f"{_shape(input)} to have {weight.shape[1] * groups} channels, but got {x.shape[1]} "
            f"channels instead"
        )
    if bias is not None and _shape(bias) != (weight.shape[0],):
        raise RuntimeError(
            f"{fn}(): bias must have shape ({weight.shape[0]},), but got {_shape(bias)}"
        )
    stride = _ntuple(stride, nd, "stride", fn)
    dilation = _ntuple(dilation, nd, "dilation", fn)
    if isinstance(padding, str):
        if padding not in ("same", "valid"):
            raise ValueError(f"{fn}(): padding must be 'same', 'valid' or ints, got {padding!r}")
        if padding == "same" and any(s != 1 for s in stride):
            raise ValueError(f"{fn}(): padding='same' is not supported for strided convolutions")
    else:
        padding = _ntuple(padding, nd, "padding", fn)
    for i in range(nd):
        pad_i = 0 if padding == "valid" else (0 if padding == "same" else padding[i])
        span = dilation[i] * (weight.shape[2 + i] - 1) + 1
        if padding != "same" and x.shape[2 + i] + 2 * pad_i < span:
            raise RuntimeError(
                f"{fn}(): input of shape {_shape(input)} (padded size {x.shape[2 + i] + 2 * pad_i} "
                f"in spatial dim {i}) is smaller than the dilated kernel size {span} "
                f"(weight {_shape(weight)})"
            )
    out = getattr(flambeau, fn)(x, weight, bias, stride, padding, dilation, groups)
    return _unbatch(out, squeezed)


@_dispatch_on("input", "weight", "bias")
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D cross-correlation over (N, C_in, L) with weight (C_out, C_in/groups, k).

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.tensor([[[1.0, 2.0, 3.0, 4.0]]])
    >>> F.conv1d(x, flambeau.tensor([[[1.0, 0.0, -1.0]]]))
    tensor([[[-2., -2.]]])
    """
    return _conv(1, input, weight, bias, stride, padding, dilation, groups)


@_dispatch_on("input", "weight", "bias")
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D cross-correlation over (N, C_in, H, W) with weight (C_out, C_in/groups, kH, kW).

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.arange(9.0).reshape(1, 1, 3, 3)
    >>> F.conv2d(x, flambeau.ones(1, 1, 2, 2))
    tensor([[[[ 8., 12.],
              [20., 24.]]]])
    >>> F.conv2d(flambeau.randn(8, 3, 32, 32), flambeau.randn(16, 3, 3, 3), padding=1).shape
    flambeau.Size([8, 16, 32, 32])
    """
    return _conv(2, input, weight, bias, stride, padding, dilation, groups)


@_dispatch_on("input", "weight", "bias")
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D cross-correlation over (N, C_in, D, H, W).

    >>> import flambeau.nn.functional as F
    >>> out = F.conv3d(flambeau.ones(1, 1, 3, 3, 3), flambeau.ones(1, 1, 2, 2, 2))
    >>> out.shape
    flambeau.Size([1, 1, 2, 2, 2])
    >>> out.flatten()
    tensor([8., 8., 8., 8., 8., 8., 8., 8.])
    """
    return _conv(3, input, weight, bias, stride, padding, dilation, groups)


def _conv_transpose(nd, input, weight, bias, stride, padding, output_padding, groups, dilation):
    fn = f"conv_transpose{nd}d"
    _check_tensor(fn, "input", 1, input)
    _check_tensor(fn, "weight", 2, weight)
    _check_tensor(fn, "bias", 3, bias, optional=True)
    if weight.dim() != nd + 2:
        raise RuntimeError(
            f"{fn}(): weight must be {nd + 2}-D (in_channels, out_channels/groups, *kernel), "
            f"but got weight of shape {_shape(weight)}"
        )
    x, squeezed = _batchify(input, nd, fn)
    if groups < 1 or weight.shape[0] % groups:
        raise RuntimeError(
            f"{fn}(): in_channels ({weight.shape[0]}) must be divisible by groups ({groups})"
        )
    if x.shape[1] != weight.shape[0]:
        raise RuntimeError(
            f"{fn}(): given weight of shape {_shape(weight)}, expected input {_shape(input)} to "
            f"have {weight.shape[0]} channels, but got {x.shape[1]} channels instead"
        )
    out_ch = weight.shape[1] * groups
    if bias is not None and _shape(bias) != (out_ch,):
        raise RuntimeError(f"{fn}(): bias must have shape ({out_ch},), but got {_shape(bias)}")
    stride = _ntuple(stride, nd, "stride", fn)
    padding = _ntuple(padding, nd, "padding", fn)
    output_padding = _ntuple(output_padding, nd, "output_padding", fn)
    dilation = _ntuple(dilation, nd, "dilation", fn)
    for i in range(nd):
        if output_padding[i] >= max(stride[i], dilation[i]):
            raise RuntimeError(
                f"{fn}(): output_padding ({output_padding}) must be smaller than either stride "
                f"({stride}) or dilation ({dilation})"
            )
    out = getattr(flambeau, fn)(x, weight, bias, stride, padding, output_padding, groups, dilation)
    return _unbatch(out, squeezed)


@_dispatch_on("input", "weight", "bias")
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):  # fmt: skip
    """The gradient of conv1d with respect to its input, as a layer.

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.tensor([[[1.0, 2.0]]])
    >>> F.conv_transpose1d(x, flambeau.tensor([[[1.0, 1.0, 1.0]]]), stride=2)
    tensor([[[1., 1., 3., 2., 2.]]])
    """
    return _conv_transpose(1, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)  # fmt: skip


@_dispatch_on("input", "weight", "bias")
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):  # fmt: skip
    """The gradient of conv2d with respect to its input, as a layer.

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.tensor([[[[1.0, 2.0], [3.0, 4.0]]]])
    >>> F.conv_transpose2d(x, flambeau.ones(1, 1, 2, 2), stride=2)
    tensor([[[[1., 1., 2., 2.],
              [1., 1., 2., 2.],
              [3., 3., 4., 4.],
              [3., 3., 4., 4.]]]])
    """
    return _conv_transpose(2, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)  # fmt: skip


@_dispatch_on("input", "weight", "bias")
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):  # fmt: skip
    """The gradient of conv3d with respect to its input, as a layer.

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.randn(1, 4, 2, 3, 3)
    >>> F.conv_transpose3d(x, flambeau.randn(4, 2, 3, 3, 3), stride=2).shape
    flambeau.Size([1, 2, 5, 7, 7])
    """
    return _conv_transpose(3, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)  # fmt: skip


# ---- pooling --------------------------------------------------------------------------------


def _pool_args(nd, fn, kernel_size, stride, padding, dilation=1):
    k = _ntuple(kernel_size, nd, "kernel_size", fn)
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) else stride
    s = _ntuple(s, nd, "stride", fn)
    p = _ntuple(padding, nd, "padding", fn)
    d = _ntuple(dilation, nd, "dilation", fn)
    for i in range(nd):
        if k[i] <= 0 or s[i] <= 0 or d[i] <= 0:
            raise RuntimeError(
                f"{fn}(): kernel_size {k}, stride {s} and dilation {d} must be positive"
            )
        if p[i] < 0 or p[i] * 2 > k[i]:
            raise RuntimeError(
                f"{fn}(): pad should be at most half of effective kernel size, but got "
                f"pad={p} and kernel_size={k}"
            )
    return k, s, p, d


def _max_pool(nd, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    fn = f"max_pool{nd}d"
    if not return_indices:
        _check_tensor(fn, "input", 1, input)
    elif nd != 3:  # PyTorch's max_pool3d_with_indices reads input.is_cuda first: AttributeError
        _check_tensor(f"{fn}_with_indices", "input", 1, input)
    x, squeezed = _batchify(input, nd, fn)
    k, s, p, d = _pool_args(nd, fn, kernel_size, stride, padding, dilation)
    out, idx = getattr(flambeau, f"max_pool{nd}d_with_indices")(x, k, s, p, d, ceil_mode)
    if return_indices:
        return _unbatch((out, idx), squeezed)
    return _unbatch(out, squeezed)


@_dispatch_on("input", unless="return_indices")
def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):  # fmt: skip
    """Max over sliding windows of (N, C, L).

    >>> import flambeau.nn.functional as F
    >>> F.max_pool1d(flambeau.tensor([[[1.0, 3.0, 2.0, 5.0, 4.0, 0.0]]]), kernel_size=2)
    tensor([[[3., 5., 4.]]])
    """
    if return_indices:
        return max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return _max_pool(1, input, kernel_size, stride, padding, dilation, ceil_mode, False)


@_dispatch_on("input", unless="return_indices")
def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):  # fmt: skip
    """Max over sliding windows of (N, C, H, W).

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.arange(16.0).reshape(1, 1, 4, 4)
    >>> F.max_pool2d(x, kernel_size=2)
    tensor([[[[ 5.,  7.],
              [13., 15.]]]])
    """
    if return_indices:
        return max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return _max_pool(2, input, kernel_size, stride, padding, dilation, ceil_mode, False)


@_dispatch_on("input", unless="return_indices")
def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):  # fmt: skip
    """Max over sliding windows of (N, C, D, H, W).

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.arange(8.0).reshape(1, 1, 2, 2, 2)
    >>> F.max_pool3d(x, kernel_size=2)
    tensor([[[[[7.]]]]])
    """
    if return_indices:
        return max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return _max_pool(3, input, kernel_size, stride, padding, dilation, ceil_mode, False)


@_dispatch_on("input")
def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):  # fmt: skip
    """:func:`max_pool1d` that also returns the indices: ``(output, indices)``.

    ``indices`` (int64, the shape of ``output``) holds, for each maximum, its position in
    the flattened spatial dimensions of its (L) input plane, as
    :func:`max_unpool1d` takes it. ``return_indices`` is accepted and ignored.

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.tensor([[[1.0, 3.0, 2.0, 5.0, 4.0, 0.0]]])
    >>> F.max_pool1d_with_indices(x, kernel_size=2)
    (tensor([[[3., 5., 4.]]]), tensor([[[1, 3, 4]]]))
    """
    return _max_pool(1, input, kernel_size, stride, padding, dilation, ceil_mode, True)


@_dispatch_on("input")
def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):  # fmt: skip
    """:func:`max_pool2d` that also returns the indices: ``(output, indices)``.

    ``indices`` (int64, the shape of ``output``) holds, for each maximum, its position in
    the flattened spatial dimensions of its (H, W) input plane, as
    :func:`max_unpool2d` takes it. ``return_indices`` is accepted and ignored.

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.tensor([[[[1.0, 4.0], [3.0, 2.0]]]])
    >>> F.max_pool2d_with_indices(x, kernel_size=2)
    (tensor([[[[4.]]]]), tensor([[[[1]]]]))
    """
    return _max_pool(2, input, kernel_size, stride, padding, dilation, ceil_mode, True)


@_dispatch_on("input")
def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):  # fmt: skip
    """:func:`max_pool3d` that also returns the indices: ``(output, indices)``.

    ``indices`` (int64, the shape of ``output``) holds, for each maximum, its position in
    the flattened spatial dimensions of its (D, H, W) input plane, as
    :func:`max_unpool3d` takes it. ``return_indices`` is accepted and ignored.

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.tensor([1.0, 7.0, 3.0, 2.0, 0.0, 5.0, 6.0, 4.0]).reshape(1, 1, 2, 2, 2)
    >>> F.max_pool3d_with_indices(x, kernel_size=2)
    (tensor([[[[[7.]]]]]), tensor([[[[[1]]]]]))
    """
    return _max_pool(3, input, kernel_size, stride, padding, dilation, ceil_mode, True)


@_dispatch_on("input")
def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):  # fmt: skip
    """Mean over sliding windows of (N, C, L).

    >>> import flambeau.nn.functional as F
    >>> F.avg_pool1d(flambeau.tensor([[[1.0, 3.0, 2.0, 6.0]]]), kernel_size=2)
    tensor([[[2., 4.]]])
    """
    _check_tensor("avg_pool1d", "input", 1, input)
    x, squeezed = _batchify(input, 1, "avg_pool1d")
    k, s, p, _ = _pool_args(1, "avg_pool1d", kernel_size, stride, padding)
    out = flambeau.avg_pool1d(x, k, s, p, ceil_mode, count_include_pad)
    return _unbatch(out, squeezed)


@_dispatch_on("input")
def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):  # fmt: skip
    """Mean over sliding windows of (N, C, H, W).

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.arange(16.0).reshape(1, 1, 4, 4)
    >>> F.avg_pool2d(x, kernel_size=2)
    tensor([[[[ 2.5000,  4.5000],
              [10.5000, 12.5000]]]])
    """
    _check_tensor("avg_pool2d", "input", 1, input)
    x, squeezed = _batchify(input, 2, "avg_pool2d")
    k, s, p, _ = _pool_args(2, "avg_pool2d", kernel_size, stride, padding)
    out = flambeau.avg_pool2d(x, k, s, p, ceil_mode, count_include_pad, divisor_override)
    return _unbatch(out, squeezed)


@_dispatch_on("input")
def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):  # fmt: skip
    """Mean over sliding windows of (N, C, D, H, W).

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.arange(8.0).reshape(1, 1, 2, 2, 2)
    >>> F.avg_pool3d(x, kernel_size=2)
    tensor([[[[[3.5000]]]]])
    """
    _check_tensor("avg_pool3d", "input", 1, input)
    x, squeezed = _batchify(input, 3, "avg_pool3d")
    k, s, p, _ = _pool_args(3, "avg_pool3d", kernel_size, stride, padding)
    out = flambeau.avg_pool3d(x, k, s, p, ceil_mode, count_include_pad, divisor_override)
    return _unbatch(out, squeezed)


def _adaptive_size(nd, x, output_size, fn):
    if isinstance(output_size, int):
        output_size = [output_size] * nd
    output_size = list(output_size)
    if len(output_size) != nd:
        raise ValueError(f"{fn}(): output_size must have {nd} elements, got {output_size}")
    sizes = [x.shape[-nd + i] if v is None else int(v) for i, v in enumerate(output_size)]
    if any(v < 0 for v in sizes):
        raise RuntimeError(f"{fn}(): output_size must be non-negative, got {sizes}")
    return sizes


def _adaptive_avg(nd, input, output_size):
    fn = f"adaptive_avg_pool{nd}d"
    x, squeezed = _batchify(input, nd, fn)
    out = getattr(flambeau, fn)(x, _adaptive_size(nd, x, output_size, fn))
    return _unbatch(out, squeezed)


@_dispatch_on("input")
def adaptive_avg_pool1d(input, output_size):
    """Mean pooling of (N, C, L) down to output_size regions.

    >>> import flambeau.nn.functional as F
    >>> F.adaptive_avg_pool1d(flambeau.tensor([[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]]]), 2)
    tensor([[[2., 5.]]])
    """
    _check_tensor("adaptive_avg_pool1d", "input", 1, input)
    return _adaptive_avg(1, input, output_size)


@_dispatch_on("input")
def adaptive_avg_pool2d(input, output_size):
    """Mean pooling of (N, C, H, W) down to output_size regions (None keeps a size).

    >>> import flambeau.nn.functional as F
    >>> F.adaptive_avg_pool2d(flambeau.randn(2, 64, 7, 5), (1, 1)).shape
    flambeau.Size([2, 64, 1, 1])
    >>> F.adaptive_avg_pool2d(flambeau.arange(16.0).reshape(1, 1, 4, 4), 2)
    tensor([[[[ 2.5000,  4.5000],
              [10.5000, 12.5000]]]])
    """
    return _adaptive_avg(2, input, output_size)


@_dispatch_on("input")
def adaptive_avg_pool3d(input, output_size):
    """Mean pooling of (N, C, D, H, W) down to output_size regions (None keeps a size).

    >>> import flambeau.nn.functional as F
    >>> F.adaptive_avg_pool3d(flambeau.randn(1, 3, 8, 9, 10), (2, 3, 4)).shape
    flambeau.Size([1, 3, 2, 3, 4])
    """
    return _adaptive_avg(3, input, output_size)


def _adaptive_max(nd, input, output_size, return_indices):
    fn = f"adaptive_max_pool{nd}d"
    x, squeezed = _batchify(input, nd, fn)
    out, idx = getattr(flambeau, fn)(x, _adaptive_size(nd, x, output_size, fn))
    return _unbatch((out, idx) if return_indices else out, squeezed)


@_dispatch_on("input", unless="return_indices")
def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Max pooling of (N, C, L) down to output_size regions.

    >>> import flambeau.nn.functional as F
    >>> F.adaptive_max_pool1d(flambeau.tensor([[[1.0, 5.0, 3.0, 2.0, 6.0, 4.0]]]), 2)
    tensor([[[5., 6.]]])
    """
    _check_tensor("adaptive_max_pool1d", "input", 1, input)
    if return_indices:
        return adaptive_max_pool1d_with_indices(input, output_size)
    return _adaptive_max(1, input, output_size, False)


@_dispatch_on("input", unless="return_indices")
def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max pooling of (N, C, H, W) down to output_size regions.

    >>> import flambeau.nn.functional as F
    >>> F.adaptive_max_pool2d(flambeau.arange(16.0).reshape(1, 1, 4, 4), 2)
    tensor([[[[ 5.,  7.],
              [13., 15.]]]])
    """
    if return_indices:
        return adaptive_max_pool2d_with_indices(input, output_size)
    return _adaptive_max(2, input, output_size, False)


@_dispatch_on("input", unless="return_indices")
def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Max pooling of (N, C, D, H, W) down to output_size regions.

    >>> import flambeau.nn.functional as F
    >>> F.adaptive_max_pool3d(flambeau.randn(1, 3, 8, 9, 10), (2, 3, 4)).shape
    flambeau.Size([1, 3, 2, 3, 4])
    """
    if return_indices:
        return adaptive_max_pool3d_with_indices(input, output_size)
    return _adaptive_max(3, input, output_size, False)


@_dispatch_on("input")
def adaptive_max_pool1d_with_indices(input, output_size, return_indices=True):
    """:func:`adaptive_max_pool1d` that also returns the indices: ``(output, indices)``,
    where ``indices`` (int64) locates each maximum in the flattened spatial dimensions of
    its input plane. ``return_indices`` is accepted and ignored.

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.tensor([[[1.0, 5.0, 3.0, 2.0, 6.0, 4.0]]])
    >>> F.adaptive_max_pool1d_with_indices(x, 2)
    (tensor([[[5., 6.]]]), tensor([[[1, 4]]]))
    """
    _check_tensor("adaptive_max_pool1d_with_indices", "input", 1, input)
    return _adaptive_max(1, input, output_size, True)


@_dispatch_on("input")
def adaptive_max_pool2d_with_indices(input, output_size, return_indices=True):
    """:func:`adaptive_max_pool2d` that also returns the indices: ``(output, indices)``,
    where ``indices`` (int64) locates each maximum in the flattened spatial dimensions of
    its input plane. ``return_indices`` is accepted and ignored.

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.tensor([[[[1.0, 4.0], [3.0, 2.0]]]])
    >>> F.adaptive_max_pool2d_with_indices(x, 1)
    (tensor([[[[4.]]]]), tensor([[[[1]]]]))
    """
    return _adaptive_max(2, input, output_size, True)


@_dispatch_on("input")
def adaptive_max_pool3d_with_indices(input, output_size, return_indices=True):
    """:func:`adaptive_max_pool3d` that also returns the indices: ``(output, indices)``,
    where ``indices`` (int64) locates each maximum in the flattened spatial dimensions of
    its input plane. ``return_indices`` is accepted and ignored.

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.tensor([1.0, 7.0, 3.0, 2.0, 0.0, 5.0, 6.0, 4.0]).reshape(1, 1, 2, 2, 2)
    >>> F.adaptive_max_pool3d_with_indices(x, 1)
    (tensor([[[[[7.]]]]]), tensor([[[[[1]]]]]))
    """
    return _adaptive_max(3, input, output_size, True)


def _unpool_size(nd, fn, x, k, s, p, output_size):
    default = [(x.shape[2 + i] - 1) * s[i] - 2 * p[i] + k[i] for i in range(nd)]
    if output_size is None:
        return default
    size = [int(v) for v in output_size]
    if len(size) == nd + 2:
        size = size[2:]
    elif len(size) == nd + 1:
        size = size[1:]
    if len(size) != nd:
        raise ValueError(
            f"{fn}(): output_size should be a sequence of {nd} or {nd + 2} ints, got "
            f"{list(output_size)}"
        )
    for i in range(nd):
        lo, hi = default[i] - s[i], default[i] + s[i]
        if not lo < size[i] < hi:
            raise ValueError(
                f"{fn}(): invalid output_size {list(output_size)} for input of shape "
                f"{_shape(x)} (dim {i} must be between {lo + 1} and {hi - 1})"
            )
    return size


def _max_unpool(nd, input, indices, kernel_size, stride, padding, output_size):
    fn = f"max_unpool{nd}d"
    if nd != 1:  # PyTorch's max_unpool1d reads indices.unsqueeze first: AttributeError
        _check_tensor(fn, "indices", 2, indices)
    x, squeezed = _batchify(input, nd, fn)
    if _shape(indices) != _shape(input):
        raise RuntimeError(
            f"{fn}(): indices of shape {_shape(indices)} must match input of shape {_shape(input)}"
        )
    idx = indices.unsqueeze(0) if squeezed else indices
    k, s, p, _ = _pool_args(nd, fn, kernel_size, stride, padding)
    size = _unpool_size(nd, fn, x, k, s, p, output_size)
    out = getattr(flambeau, fn)(x, idx, size)
    return _unbatch(out, squeezed)


@_dispatch_on("input")
def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Scatters pooled maxima back to the positions in indices; the rest is zero.

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.tensor([[[1.0, 3.0, 2.0, 5.0]]])
    >>> out, idx = F.max_pool1d(x, 2, return_indices=True)
    >>> F.max_unpool1d(out, idx, 2)
    tensor([[[0., 3., 0., 5.]]])
    """
    return _max_unpool(1, input, indices, kernel_size, stride, padding, output_size)


@_dispatch_on("input")
def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Scatters pooled maxima back to the positions in indices; the rest is zero.

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.tensor([[[[1.0, 4.0], [3.0, 2.0]]]])
    >>> out, idx = F.max_pool2d(x, 2, return_indices=True)
    >>> F.max_unpool2d(out, idx, 2)
    tensor([[[[0., 4.],
              [0., 0.]]]])
    """
    return _max_unpool(2, input, indices, kernel_size, stride, padding, output_size)


@_dispatch_on("input")
def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Scatters pooled maxima back to the positions in indices; the rest is zero.

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.tensor([1.0, 7.0, 3.0, 2.0, 0.0, 5.0, 6.0, 4.0]).reshape(1, 1, 2, 2, 2)
    >>> out, idx = F.max_pool3d(x, 2, return_indices=True)
    >>> F.max_unpool3d(out, idx, 2).flatten()
    tensor([0., 7., 0., 0., 0., 0., 0., 0.])
    """
    return _max_unpool(3, input, indices, kernel_size, stride, padding, output_size)


def _lp_pool(nd, input, norm_type, kernel_size, stride, ceil_mode):
    fn = f"lp_pool{nd}d"
    k = _ntuple(kernel_size, nd, "kernel_size", fn)
    avg = (avg_pool1d, avg_pool2d, avg_pool3d)[nd - 1]
    out = avg(input.pow(norm_type), k, stride, 0, ceil_mode)
    out = out.sign() * flambeau.relu(out.abs())
    return (out * math.prod(k)).pow(1.0 / norm_type)


@_dispatch_on("input")
def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum over each window of x^p)^(1/p).

    >>> import flambeau.nn.functional as F
    >>> F.lp_pool1d(flambeau.tensor([[[3.0, 4.0, 1.0, 0.0]]]), norm_type=2, kernel_size=2)
    tensor([[[5., 1.]]])
    """
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


@_dispatch_on("input")
def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum over each window of x^p)^(1/p).

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.tensor([[[[1.0, 1.0], [1.0, 1.0]]]])
    >>> F.lp_pool2d(x, norm_type=2, kernel_size=2)
    tensor([[[[2.]]]])
    """
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


@_dispatch_on("input")
def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum over each window of x^p)^(1/p).

    >>> import flambeau.nn.functional as F
    >>> F.lp_pool3d(flambeau.ones(1, 1, 2, 2, 2), norm_type=1, kernel_size=2)
    tensor([[[[[8.]]]]])
    """
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)


# ---- padding --------------------------------------------------------------------------------


@_dispatch_on("input")
def pad(input, pad, mode: str = "constant", value=None):
    """Pads the last len(pad)//2 dims; pad lists (left, right) pairs starting from the last dim.

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> F.pad(x, (1, 2))
    tensor([[0., 1., 2., 0., 0.],
            [0., 3., 4., 0., 0.]])
    >>> F.pad(x.reshape(1, 2, 2), (1, 1), mode="reflect")
    tensor([[[2., 1., 2., 1.],
             [4., 3., 4., 3.]]])
    """
    _check_tensor("pad", "input", 1, input)
    pad = [int(v) for v in pad]
    if len(pad) % 2:
        raise ValueError(f"pad(): padding length must be divisible by 2, got {pad}")
    if len(pad) // 2 > input.dim():
        raise ValueError(
            f"pad(): padding length {len(pad)} is too large for input of shape {_shape(input)}"
        )
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(
            f"pad(): mode must be 'constant', 'reflect', 'replicate' or 'circular', got {mode!r}"
        )
    if mode == "constant":
        return flambeau.constant_pad_nd(input, pad, 0.0 if value is None else value)
    if value is not None and value != 0:
        raise ValueError(f"pad(): padding mode {mode!r} doesn't take in a value argument")
    nd = len(pad) // 2
    if nd not in (1, 2, 3) or input.dim() not in (nd + 1, nd + 2):
        raise NotImplementedError(
            f"pad(): {mode} padding of {nd} dims needs a {nd + 1}-D or {nd + 2}-D input, got "
            f"input of shape {_shape(input)} and pad {pad}"
        )
    for i in range(nd):
        size = input.shape[input.dim() - 1 - i]
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if mode == "reflect" and (lo >= size or hi >= size):
            raise RuntimeError(
                f"pad(): padding size should be less than the corresponding input dimension, "
                f"but got padding ({lo}, {hi}) at dimension {input.dim() - 1 - i} of input "
                f"{_shape(input)}"
            )
        if mode == "circular" and (lo > size or hi > size):
            raise RuntimeError(
                f"pad(): padding value causes wrapping around more than once: padding "
                f"({lo}, {hi}) for input of shape {_shape(input)}"
            )
        if mode == "replicate" and size == 0:
            raise RuntimeError(f"pad(): cannot replicate-pad an empty dim of {_shape(input)}")
    return flambeau.pad(input, pad, mode, None)


# ---- resampling -----------------------------------------------------------------------------

_LINEAR = {"linear": 1, "bilinear": 2, "trilinear": 3, "bicubic": 2}


@_dispatch_on("input")
def interpolate(input, size=None, scale_factor=None, mode: str = "nearest", align_corners=None,
                recompute_scale_factor=None, antialias: bool = False):  # fmt: skip
    """Resamples (N, C, *spatial) to size or spatial * scale_factor.

    Unless recompute_scale_factor is True, a given scale_factor also sets the output-to-input
    index mapping (as in PyTorch), not only the output size.

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.tensor([[[1.0, 2.0, 4.0]]])
    >>> F.interpolate(x, scale_factor=2, mode="nearest")
    tensor([[[1., 1., 2., 2., 4., 4.]]])
    >>> F.interpolate(x, size=5, mode="linear", align_corners=True)
    tensor([[[1.0000, 1.5000, 2.0000, 3.0000, 4.0000]]])
    """
    nd = input.dim() - 2
    if nd not in (1, 2, 3):
        raise NotImplementedError(
            f"interpolate(): expected a 3-D, 4-D or 5-D (N, C, *spatial) input, got input of "
            f"shape {_shape(input)}"
        )
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "interpolate(): align_corners option can only be set with the interpolating "
                "modes: linear | bilinear | bicubic | trilinear"
            )
    elif mode in _LINEAR:
        if _LINEAR[mode] != nd:
            raise NotImplementedError(
                f"interpolate(): mode {mode!r} needs a {_LINEAR[mode] + 2}-D input, got input of "
                f"shape {_shape(input)}"
            )
        align_corners = bool(align_corners)
    else:
        raise NotImplementedError(
            f"interpolate(): mode {mode!r} is not supported (nearest, linear, bilinear, "
            f"bicubic, trilinear, area, nearest-exact)"
        )
    if (size is None) == (scale_factor is None):
        raise ValueError("interpolate(): exactly one of size or scale_factor must be given")
    if recompute_scale_factor and size is not None:
        raise ValueError(
            "interpolate(): recompute_scale_factor is not meaningful with an explicit size."
        )
    if antialias and not (mode in ("bilinear", "bicubic") and nd == 2):
        raise ValueError(
            "interpolate(): anti-alias option is restricted to bilinear and bicubic modes and "
            f"requires a 4-D tensor as input, got mode {mode!r} and input of shape "
            f"{_shape(input)}"
        )
    spatial = [input.shape[2 + i] for i in range(nd)]
    scales = [None] * nd
    if size is not None:
        out_size = [int(size)] * nd if isinstance(size, int) else [int(v) for v in size]
        if len(out_size) != nd:
            raise ValueError(
                f"interpolate(): input of shape {_shape(input)} has {nd} spatial dims, but size "
                f"is {list(size)}"
            )
    else:
        if isinstance(scale_factor, (int, float)):
            factors = [float(scale_factor)] * nd
        else:
            factors = [float(v) for v in scale_factor]
        if len(factors) != nd:
            raise ValueError(
                f"interpolate(): input of shape {_shape(input)} has {nd} spatial dims, but "
                f"scale_factor is {list(scale_factor)}"
            )
        out_size = [int(math.floor(spatial[i] * factors[i])) for i in range(nd)]
        if not recompute_scale_factor:
            scales = factors
    if any(v <= 0 for v in out_size):
        raise ValueError(f"interpolate(): output size {out_size} must be positive")
    if mode == "area":
        return _adaptive_avg(nd, input, out_size)
    if mode == "nearest-exact":
        return getattr(flambeau, f"_upsample_nearest_exact{nd}d")(input, out_size, *scales)
    if mode == "nearest":
        return getattr(flambeau, f"upsample_nearest{nd}d")(input, out_size, *scales)
    if mode == "bicubic":
        kernel = "_upsample_bicubic2d_aa" if antialias else "upsample_bicubic2d"
    elif antialias:
        kernel = "_upsample_bilinear2d_aa"
    else:
        kernel = ("upsample_linear1d", "upsample_bilinear2d", "upsample_trilinear3d")[nd - 1]
    return getattr(flambeau, kernel)(input, out_size, align_corners, *scales)


def _warn_deprecated_upsample(name: str) -> None:
    warnings.warn(
        f"`nn.functional.{name}` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=3,
    )


def upsample(input, size=None, scale_factor=None, mode: str = "nearest", align_corners=None):
    """Deprecated alias of interpolate.

    >>> import warnings
    >>> import flambeau.nn.functional as F
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     F.upsample(flambeau.tensor([[[1.0, 2.0]]]), scale_factor=2)
    tensor([[[1., 1., 2., 2.]]])
    """
    _warn_deprecated_upsample("upsample")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(input, size, scale_factor, mode="nearest")``, which it
    calls after a deprecation warning. Give ``size`` or ``scale_factor``, not both.

    >>> import warnings
    >>> import flambeau.nn.functional as F
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     F.upsample_nearest(flambeau.tensor([[[[1.0, 2.0]]]]), scale_factor=2)
    tensor([[[[1., 1., 2., 2.],
              [1., 1., 2., 2.]]]])
    """
    _warn_deprecated_upsample("upsample_nearest")
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(input, size, scale_factor, mode="bilinear",
    align_corners=True)`` on a 4-D (N, C, H, W) input, which it calls after a deprecation
    warning. Note ``align_corners=True``, unlike ``interpolate``'s default.

    >>> import warnings
    >>> import flambeau.nn.functional as F
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     F.upsample_bilinear(flambeau.tensor([[[[0.0, 2.0]]]]), size=(1, 3))
    tensor([[[[0., 1., 2.]]]])
    """
    _warn_deprecated_upsample("upsample_bilinear")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ---- pixel shuffle --------------------------------------------------------------------------


# ---- fold / unfold (im2col via a one-hot grouped convolution) --------------------------------


def _patch_weight(channels, k, like):
    kk = k[0] * k[1]
    eye = flambeau.eye(kk, dtype=like.dtype, device=like.device).reshape(kk, 1, k[0], k[1])
    return eye.repeat(channels, 1, 1, 1)


@_dispatch_on("input")
def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """(N, C, H, W) -> (N, C*kH*kW, L): every sliding block as a column.

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.arange(9.0).reshape(1, 1, 3, 3)
    >>> F.unfold(x, kernel_size=2)
    tensor([[[0., 1., 3., 4.],
             [1., 2., 4., 5.],
             [3., 4., 6., 7.],
             [4., 5., 7., 8.]]])
    """
    _check_tensor("unfold", "input", 1, input)
    x, squeezed = _batchify(input, 2, "unfold")
    k = _ntuple(kernel_size, 2, "kernel_size", "unfold")
    d = _ntuple(dilation, 2, "dilation", "unfold")
    p = _ntuple(padding, 2, "padding", "unfold")
    s = _ntuple(stride, 2, "stride", "unfold")
    c = x.shape[1]
    cols = conv2d(x, _patch_weight(c, k, x), None, s, p, d, c)
    out = cols.reshape(x.shape[0], cols.shape[1], -1)
    return out.squeeze(0) if squeezed else out


@_dispatch_on("input")
def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """(N, C*kH*kW, L) -> (N, C, H, W): sums the columns back into an image.

    >>> import flambeau.nn.functional as F
    >>> cols = flambeau.ones(1, 4, 4)
    >>> F.fold(cols, output_size=(3, 3), kernel_size=2)
    tensor([[[[1., 2., 1.],
              [2., 4., 2.],
              [1., 2., 1.]]]])
    """
    _check_tensor("fold", "input", 1, input)
    squeezed = input.dim() == 2
    x = input.unsqueeze(0) if squeezed else input
    if x.dim() != 3:
        raise RuntimeError(
            f"fold(): expected a 2-D or 3-D input, got input of shape {_shape(input)}"
        )
    out_hw = _ntuple(output_size, 2, "output_size", "fold")
    k = _ntuple(kernel_size, 2, "kernel_size", "fold")
    d = _ntuple(dilation, 2, "dilation", "fold")
    p = _ntuple(padding, 2, "padding", "fold")
    s = _ntuple(stride, 2, "stride", "fold")
    blocks = [(out_hw[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(2)]
    kk = k[0] * k[1]
    if x.shape[1] % kk or blocks[0] * blocks[1] != x.shape[2] or min(blocks) <= 0:
        raise RuntimeError(
            f"fold(): input of shape {_shape(input)} does not match kernel_size {k} and "
            f"output_size {out_hw}: expected (N, C*{kk}, {blocks[0] * blocks[1]})"
        )
    c = x.shape[1] // kk
    cols = x.reshape(x.shape[0], c * kk, blocks[0], blocks[1])
    base = [(blocks[i] - 1) * s[i] - 2 * p[i] + d[i] * (k[i] - 1) + 1 for i in range(2)]
    out_pad = [out_hw[i] - base[i] for i in range(2)]
    out = conv_transpose2d(cols, _patch_weight(c, k, x), None, s, p, out_pad, c, d)
    return out.squeeze(0) if squeezed else out
