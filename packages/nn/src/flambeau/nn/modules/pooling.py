"""Pooling layers: max, average, adaptive and max-unpooling in 1, 2 and 3 dims."""

from __future__ import annotations

from .. import _functional_conv as FC
from .. import _functional_stochastic as FS
from .module import Module
from .utils import _pair, _single, _triple  # noqa: F401  (PyTorch's names here)

__all__ = [
    "MaxPool1d",
    "MaxPool2d",
    "MaxPool3d",
    "AvgPool1d",
    "AvgPool2d",
    "AvgPool3d",
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "AdaptiveMaxPool3d",
    "MaxUnpool1d",
    "MaxUnpool2d",
    "MaxUnpool3d",
    "LPPool1d",
    "LPPool2d",
    "LPPool3d",
    "FractionalMaxPool2d",
    "FractionalMaxPool3d",
]


class _MaxPoolNd(Module):
    _fn = None

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1,
                 return_indices: bool = False, ceil_mode: bool = False):  # fmt: skip
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return type(self)._fn(input, self.kernel_size, self.stride, self.padding, self.dilation,
                              self.ceil_mode, self.return_indices)  # fmt: skip

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
            f"dilation={self.dilation}, ceil_mode={self.ceil_mode}"
        )


class MaxPool1d(_MaxPoolNd):
    """Max over sliding windows of (N, C, L)."""

    _fn = staticmethod(FC.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """Max over sliding windows of (N, C, H, W)."""

    _fn = staticmethod(FC.max_pool2d)


class MaxPool3d(_MaxPoolNd):
    """Max over sliding windows of (N, C, D, H, W)."""

    _fn = staticmethod(FC.max_pool3d)


class _AvgPoolNd(Module):
    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    """Mean over sliding windows of (N, C, L)."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True):  # fmt: skip
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return FC.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                             self.count_include_pad)  # fmt: skip


class _AvgPool(_AvgPoolNd):
    _fn = None

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override=None):  # fmt: skip
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return type(self)._fn(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                              self.count_include_pad, self.divisor_override)  # fmt: skip


class AvgPool2d(_AvgPool):
    """Mean over sliding windows of (N, C, H, W)."""

    _fn = staticmethod(FC.avg_pool2d)


class AvgPool3d(_AvgPool):
    """Mean over sliding windows of (N, C, D, H, W)."""

    _fn = staticmethod(FC.avg_pool3d)


class _AdaptiveAvg(Module):
    _fn = None

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return type(self)._fn(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvg):
    """Mean pooling of (N, C, L) to output_size regions."""

    _fn = staticmethod(FC.adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptiveAvg):
    """Mean pooling of (N, C, H, W) to output_size regions."""

    _fn = staticmethod(FC.adaptive_avg_pool2d)


class AdaptiveAvgPool3d(_AdaptiveAvg):
    """Mean pooling of (N, C, D, H, W) to output_size regions."""

    _fn = staticmethod(FC.adaptive_avg_pool3d)


class _AdaptiveMax(Module):
    _fn = None

    def __init__(self, output_size, return_indices: bool = False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, input):
        return type(self)._fn(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMax):
    """Max pooling of (N, C, L) to output_size regions."""

    _fn = staticmethod(FC.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMax):
    """Max pooling of (N, C, H, W) to output_size regions."""

    _fn = staticmethod(FC.adaptive_max_pool2d)


class AdaptiveMaxPool3d(_AdaptiveMax):
    """Max pooling of (N, C, D, H, W) to output_size regions."""

    _fn = staticmethod(FC.adaptive_max_pool3d)


class _MaxUnpool(Module):
    _fn = None

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding

    def forward(self, input, indices, output_size=None):
        return type(self)._fn(input, indices, self.kernel_size, self.stride, self.padding,
                              output_size)  # fmt: skip

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpool):
    """Partial inverse of MaxPool1d: maxima back in place, zeros elsewhere."""

    _fn = staticmethod(FC.max_unpool1d)


class MaxUnpool2d(_MaxUnpool):
    """Partial inverse of MaxPool2d: maxima back in place, zeros elsewhere."""

    _fn = staticmethod(FC.max_unpool2d)


class MaxUnpool3d(_MaxUnpool):
    """Partial inverse of MaxPool3d: maxima back in place, zeros elsewhere."""

    _fn = staticmethod(FC.max_unpool3d)


class _LPPool(Module):
    _fn = None

    def __init__(self, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return type(self)._fn(input, self.norm_type, self.kernel_size, self.stride,
                              self.ceil_mode)  # fmt: skip

    def extra_repr(self) -> str:
        return (
            f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
            f"ceil_mode={self.ceil_mode}"
        )


class LPPool1d(_LPPool):
    """(sum of x^p over each window)^(1/p) over (N, C, L)."""

    _fn = staticmethod(FC.lp_pool1d)


class LPPool2d(_LPPool):
    """(sum of x^p over each window)^(1/p) over (N, C, H, W)."""

    _fn = staticmethod(FC.lp_pool2d)


class LPPool3d(_LPPool):
    """(sum of x^p over each window)^(1/p) over (N, C, D, H, W)."""

    _fn = staticmethod(FC.lp_pool3d)


class _FractionalMaxPoolNd(Module):
    _nd = 0
    _fn = None

    def __init__(self, kernel_size, output_size=None, output_ratio=None,
                 return_indices: bool = False, _random_samples=None):  # fmt: skip
        super().__init__()
        nd, name = self._nd, type(self).__name__
        expand = _pair if nd == 2 else _triple
        if nd == 3 and (
            (isinstance(kernel_size, int) and kernel_size <= 0)
            or (isinstance(kernel_size, (tuple, list)) and not all(k > 0 for k in kernel_size))
        ):
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
        self.kernel_size = expand(kernel_size)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = expand(output_size) if output_size is not None else None
        self.output_ratio = expand(output_ratio) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(
                f"{name} requires specifying either an output size, or a pooling ratio"
            )
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        return type(self)._fn(
            input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
            _random_samples=self._random_samples,
        )  # fmt: skip


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Max pooling over pseudo-random windows of (N, C, H, W) to output_size (or
    output_ratio times the input size); Graham, Fractional Max-Pooling (2014)."""

    _nd = 2
    _fn = staticmethod(FS.fractional_max_pool2d)


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Max pooling over pseudo-random windows of (N, C, T, H, W)."""

    _nd = 3
    _fn = staticmethod(FS.fractional_max_pool3d)


# PyTorch's names for the bases of its pooling layers.
_AdaptiveAvgPoolNd = _AdaptiveAvg
_AdaptiveMaxPoolNd = _AdaptiveMax
_MaxUnpoolNd = _MaxUnpool
_LPPoolNd = _LPPool
