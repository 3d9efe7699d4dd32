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
    """Max over sliding windows of (N, C, L).

    >>> import flambeau.nn as nn
    >>> m = nn.MaxPool1d(kernel_size=2)
    >>> m(flambeau.tensor([[[1.0, 3.0, 2.0, 5.0, 4.0, 0.0]]]))
    tensor([[[3., 5., 4.]]])
    """

    _fn = staticmethod(FC.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """Max over sliding windows of (N, C, H, W).

    >>> import flambeau.nn as nn
    >>> m = nn.MaxPool2d(kernel_size=2)
    >>> x = flambeau.arange(16.0).reshape(1, 1, 4, 4)
    >>> m(x)
    tensor([[[[ 5.,  7.],
              [13., 15.]]]])
    """

    _fn = staticmethod(FC.max_pool2d)


class MaxPool3d(_MaxPoolNd):
    """Max over sliding windows of (N, C, D, H, W).

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> m = nn.MaxPool3d(kernel_size=3, stride=2)
    >>> m(flambeau.randn(2, 4, 9, 9, 9)).shape
    flambeau.Size([2, 4, 4, 4, 4])
    """

    _fn = staticmethod(FC.max_pool3d)


class _AvgPoolNd(Module):
    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    """Mean over sliding windows of (N, C, L).

    >>> import flambeau.nn as nn
    >>> m = nn.AvgPool1d(kernel_size=2)
    >>> m(flambeau.tensor([[[1.0, 3.0, 2.0, 5.0, 4.0, 0.0]]]))
    tensor([[[2.0000, 3.5000, 2.0000]]])
    """

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
    """Mean over sliding windows of (N, C, H, W).

    >>> import flambeau.nn as nn
    >>> m = nn.AvgPool2d(kernel_size=2)
    >>> x = flambeau.arange(16.0).reshape(1, 1, 4, 4)
    >>> m(x)
    tensor([[[[ 2.5000,  4.5000],
              [10.5000, 12.5000]]]])
    """

    _fn = staticmethod(FC.avg_pool2d)


class AvgPool3d(_AvgPool):
    """Mean over sliding windows of (N, C, D, H, W).

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> m = nn.AvgPool3d(kernel_size=3, stride=2)
    >>> m(flambeau.randn(2, 4, 9, 9, 9)).shape
    flambeau.Size([2, 4, 4, 4, 4])
    """

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
    """Mean pooling of (N, C, L) to output_size regions.

    >>> import flambeau.nn as nn
    >>> m = nn.AdaptiveAvgPool1d(2)
    >>> m(flambeau.tensor([[[1.0, 3.0, 2.0, 5.0, 4.0, 0.0]]]))
    tensor([[[2., 3.]]])
    """

    _fn = staticmethod(FC.adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptiveAvg):
    """Mean pooling of (N, C, H, W) to output_size regions.

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> m = nn.AdaptiveAvgPool2d((5, 7))
    >>> m(flambeau.randn(1, 64, 8, 9)).shape
    flambeau.Size([1, 64, 5, 7])
    >>> nn.AdaptiveAvgPool2d(1)(flambeau.randn(1, 64, 8, 9)).shape
    flambeau.Size([1, 64, 1, 1])
    """

    _fn = staticmethod(FC.adaptive_avg_pool2d)


class AdaptiveAvgPool3d(_AdaptiveAvg):
    """Mean pooling of (N, C, D, H, W) to output_size regions.

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> m = nn.AdaptiveAvgPool3d((2, 3, 4))
    >>> m(flambeau.randn(1, 4, 5, 6, 7)).shape
    flambeau.Size([1, 4, 2, 3, 4])
    """

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
    """Max pooling of (N, C, L) to output_size regions.

    >>> import flambeau.nn as nn
    >>> m = nn.AdaptiveMaxPool1d(2)
    >>> m(flambeau.tensor([[[1.0, 3.0, 2.0, 5.0, 4.0, 0.0]]]))
    tensor([[[3., 5.]]])
    """

    _fn = staticmethod(FC.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMax):
    """Max pooling of (N, C, H, W) to output_size regions.

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> m = nn.AdaptiveMaxPool2d((5, 7))
    >>> m(flambeau.randn(1, 64, 8, 9)).shape
    flambeau.Size([1, 64, 5, 7])
    """

    _fn = staticmethod(FC.adaptive_max_pool2d)


class AdaptiveMaxPool3d(_AdaptiveMax):
    """Max pooling of (N, C, D, H, W) to output_size regions.

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> m = nn.AdaptiveMaxPool3d((2, 3, 4))
    >>> m(flambeau.randn(1, 4, 5, 6, 7)).shape
    flambeau.Size([1, 4, 2, 3, 4])
    """

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
    """Partial inverse of MaxPool1d: maxima back in place, zeros elsewhere.

    >>> import flambeau.nn as nn
    >>> pool = nn.MaxPool1d(2, return_indices=True)
    >>> unpool = nn.MaxUnpool1d(2)
    >>> out, indices = pool(flambeau.tensor([[[1.0, 3.0, 2.0, 5.0, 4.0, 0.0]]]))
    >>> unpool(out, indices)
    tensor([[[0., 3., 0., 5., 4., 0.]]])
    """

    _fn = staticmethod(FC.max_unpool1d)


class MaxUnpool2d(_MaxUnpool):
    """Partial inverse of MaxPool2d: maxima back in place, zeros elsewhere.

    >>> import flambeau.nn as nn
    >>> pool = nn.MaxPool2d(2, return_indices=True)
    >>> unpool = nn.MaxUnpool2d(2)
    >>> out, indices = pool(flambeau.arange(16.0).reshape(1, 1, 4, 4))
    >>> unpool(out, indices)
    tensor([[[[ 0.,  0.,  0.,  0.],
              [ 0.,  5.,  0.,  7.],
              [ 0.,  0.,  0.,  0.],
              [ 0., 13.,  0., 15.]]]])
    """

    _fn = staticmethod(FC.max_unpool2d)


class MaxUnpool3d(_MaxUnpool):
    """Partial inverse of MaxPool3d: maxima back in place, zeros elsewhere.

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> pool = nn.MaxPool3d(2, return_indices=True)
    >>> unpool = nn.MaxUnpool3d(2)
    >>> out, indices = pool(flambeau.randn(1, 2, 4, 4, 4))
    >>> unpool(out, indices).shape
    flambeau.Size([1, 2, 4, 4, 4])
    """

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
    """(sum of x^p over each window)^(1/p) over (N, C, L).

    >>> import flambeau.nn as nn
    >>> m = nn.LPPool1d(2, kernel_size=2)
    >>> m(flambeau.tensor([[[3.0, 4.0, 1.0, 0.0]]]))
    tensor([[[5., 1.]]])
    """

    _fn = staticmethod(FC.lp_pool1d)


class LPPool2d(_LPPool):
    """(sum of x^p over each window)^(1/p) over (N, C, H, W).

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> m = nn.LPPool2d(2, kernel_size=3, stride=2)
    >>> m(flambeau.randn(2, 4, 9, 9)).shape
    flambeau.Size([2, 4, 4, 4])
    """

    _fn = staticmethod(FC.lp_pool2d)


class LPPool3d(_LPPool):
    """(sum of x^p over each window)^(1/p) over (N, C, D, H, W).

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> m = nn.LPPool3d(2, kernel_size=2)
    >>> m(flambeau.randn(1, 2, 4, 6, 6)).shape
    flambeau.Size([1, 2, 2, 3, 3])
    """

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
    output_ratio times the input size); Graham, Fractional Max-Pooling (2014).

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> m = nn.FractionalMaxPool2d(3, output_ratio=(0.5, 0.5))
    >>> m(flambeau.randn(2, 4, 10, 12)).shape
    flambeau.Size([2, 4, 5, 6])
    """

    _nd = 2
    _fn = staticmethod(FS.fractional_max_pool2d)


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Max pooling over pseudo-random windows of (N, C, T, H, W).

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> m = nn.FractionalMaxPool3d(2, output_size=(3, 4, 4))
    >>> m(flambeau.randn(1, 2, 6, 8, 8)).shape
    flambeau.Size([1, 2, 3, 4, 4])
    """

    _nd = 3
    _fn = staticmethod(FS.fractional_max_pool3d)


# PyTorch's names for the bases of its pooling layers.
_AdaptiveAvgPoolNd = _AdaptiveAvg
_AdaptiveMaxPoolNd = _AdaptiveMax
_MaxUnpoolNd = _MaxUnpool
_LPPoolNd = _LPPool
