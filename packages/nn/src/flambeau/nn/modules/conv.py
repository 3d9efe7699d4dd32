"""Convolution layers: Conv1d/2d/3d and ConvTranspose1d/2d/3d."""

from __future__ import annotations

import math

import flambeau

from .. import _functional_conv as FC
from .. import init
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module
from .utils import _pair, _reverse_repeat_tuple, _single, _triple  # noqa: F401

__all__ = [
    "Conv1d",
    "Conv2d",
    "Conv3d",
    "ConvTranspose1d",
    "ConvTranspose2d",
    "ConvTranspose3d",
    "LazyConv1d",
    "LazyConv2d",
    "LazyConv3d",
    "LazyConvTranspose1d",
    "LazyConvTranspose2d",
    "LazyConvTranspose3d",
]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _tuple(value, n: int, name: str, cls: str) -> tuple:
    if isinstance(value, int):
        return (value,) * n
    value = tuple(int(v) for v in value)
    if len(value) != n:
        raise ValueError(f"{cls}: {name} must be an int or a tuple of {n} ints, got {value}")
    return value


class _ConvNd(Module):
    _nd = 0
    _transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 output_padding, groups, bias, padding_mode, device, dtype):  # fmt: skip
        super().__init__()
        cls, nd = type(self).__name__, self._nd
        if groups <= 0:
            raise ValueError(f"{cls}: groups must be a positive integer, got {groups}")
        if in_channels % groups:
            raise ValueError(f"{cls}: in_channels ({in_channels}) must be divisible by groups")
        if out_channels % groups:
            raise ValueError(f"{cls}: out_channels ({out_channels}) must be divisible by groups")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(
                f"{cls}: padding_mode must be one of {_PADDING_MODES}, got {padding_mode!r}"
            )
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _tuple(kernel_size, nd, "kernel_size", cls)
        self.stride = _tuple(stride, nd, "stride", cls)
        self.dilation = _tuple(dilation, nd, "dilation", cls)
        self.output_padding = _tuple(output_padding, nd, "output_padding", cls)
        self.transposed = self._transposed
        self.groups = groups
        self.padding_mode = padding_mode
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"{cls}: padding must be 'same', 'valid' or ints, got {padding!r}")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError(f"{cls}: padding='same' is not supported for strided convolutions")
            self.padding = padding
        else:
            self.padding = _tuple(padding, nd, "padding", cls)
        # F.pad amounts (last dim first) for the non-zero padding modes.
        if padding == "valid":
            self._reversed_padding_repeated_twice = [0] * (2 * nd)
        elif padding == "same":
            rev = []
            for d, k in zip(reversed(self.dilation), reversed(self.kernel_size)):
                total = d * (k - 1)
                rev += [total // 2, total - total // 2]
            self._reversed_padding_repeated_twice = rev
        else:
            self._reversed_padding_repeated_twice = [p for p in reversed(self.padding)
                                                     for _ in range(2)]  # fmt: skip
        if self._transposed:
            shape = (in_channels, out_channels // groups, *self.kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *self.kernel_size)
        self.weight = Parameter(flambeau.empty(shape, dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(flambeau.empty(out_channels, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def _check_input(self, input):
        nd = self._nd
        if input.dim() not in (nd + 1, nd + 2):
            raise RuntimeError(
                f"{type(self).__name__}: expected a {nd + 1}-D (unbatched) or {nd + 2}-D (batched) "
                f"input, but got input of shape {tuple(input.shape)}"
            )
        channels = input.shape[-nd - 1]
        if channels != self.in_channels:
            raise RuntimeError(
                f"{type(self).__name__}: expected input with {self.in_channels} channels (dim "
                f"{-nd - 1}), but got input of shape {tuple(input.shape)}"
            )

    def extra_repr(self) -> str:
        s = (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}"
        )
        if self.padding != (0,) * self._nd:
            s += f", padding={self.padding!r}" if isinstance(self.padding, str) else (
                f", padding={self.padding}")  # fmt: skip
        if self.dilation != (1,) * self._nd:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * self._nd:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class _Conv(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):  # fmt: skip
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, 0,
                         groups, bias, padding_mode, device, dtype)  # fmt: skip

    def _conv_forward(self, input, weight, bias):
        conv = (FC.conv1d, FC.conv2d, FC.conv3d)[self._nd - 1]
        if self.padding_mode != "zeros":
            padded = FC.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return conv(padded, weight, bias, self.stride, 0, self.dilation, self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        self._check_input(input)
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-D convolution over (N, C_in, L) (or unbatched (C_in, L)).

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> m = nn.Conv1d(16, 33, kernel_size=3, stride=2)
    >>> m(flambeau.randn(20, 16, 50)).shape
    flambeau.Size([20, 33, 24])
    """

    _nd = 1


class Conv2d(_Conv):
    """2-D convolution over (N, C_in, H, W) (or unbatched (C_in, H, W)).

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> m = nn.Conv2d(3, 8, kernel_size=3, padding=1)
    >>> m(flambeau.randn(2, 3, 16, 16)).shape
    flambeau.Size([2, 8, 16, 16])
    >>> nn.Conv2d(3, 8, kernel_size=3, stride=2)(flambeau.randn(2, 3, 16, 16)).shape
    flambeau.Size([2, 8, 7, 7])
    """

    _nd = 2


class Conv3d(_Conv):
    """3-D convolution over (N, C_in, D, H, W) (or unbatched (C_in, D, H, W)).

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> m = nn.Conv3d(2, 4, kernel_size=(3, 3, 3), stride=(1, 2, 2))
    >>> m(flambeau.randn(1, 2, 5, 8, 8)).shape
    flambeau.Size([1, 4, 3, 3, 3])
    """

    _nd = 3


class _ConvTranspose(_ConvNd):
    _transposed = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):  # fmt: skip
        if padding_mode != "zeros":
            raise ValueError(
                f'Only "zeros" padding mode is supported for {type(self).__name__}, got '
                f"{padding_mode!r}"
            )
        if isinstance(padding, str):
            raise ValueError(f"{type(self).__name__}: padding must be ints, got {padding!r}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         output_padding, groups, bias, padding_mode, device, dtype)  # fmt: skip

    def _output_padding(self, input, output_size) -> list[int]:
        if output_size is None:
            return list(self.output_padding)
        nd = self._nd
        size = [int(v) for v in output_size]
        if len(size) > nd:
            size = size[-nd:]
        if len(size) != nd:
            raise ValueError(
                f"{type(self).__name__}: output_size must have {nd} or {nd + 2} elements, got "
                f"{list(output_size)}"
            )
        result = []
        for i in range(nd):
            in_size = input.shape[input.dim() - nd + i]
            lo = ((in_size - 1) * self.stride[i] - 2 * self.padding[i]
                  + self.dilation[i] * (self.kernel_size[i] - 1) + 1)  # fmt: skip
            hi = lo + self.stride[i] - 1
            if not lo <= size[i] <= hi:
                raise ValueError(
                    f"{type(self).__name__}: requested an output size of {size}, but valid sizes "
                    f"for input of shape {tuple(input.shape)} range from "
                    f"{[lo]} to {[hi]} in dim {i}"
                )
            result.append(size[i] - lo)
        return result

    def forward(self, input, output_size=None):
        self._check_input(input)
        out_pad = self._output_padding(input, output_size)
        conv = (FC.conv_transpose1d, FC.conv_transpose2d, FC.conv_transpose3d)[self._nd - 1]
        return conv(input, self.weight, self.bias, self.stride, self.padding, out_pad,
                    self.groups, self.dilation)  # fmt: skip


_ConvTransposeNd = _ConvTranspose  # PyTorch's name for the base


class ConvTranspose1d(_ConvTranspose):
    """Transposed 1-D convolution ("deconvolution") over (N, C_in, L).

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> m = nn.ConvTranspose1d(8, 4, kernel_size=3, stride=2)
    >>> m(flambeau.randn(2, 8, 10)).shape
    flambeau.Size([2, 4, 21])
    """

    _nd = 1


class ConvTranspose2d(_ConvTranspose):
    """Transposed 2-D convolution over (N, C_in, H, W).

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> down = nn.Conv2d(4, 8, kernel_size=3, stride=2, padding=1)
    >>> up = nn.ConvTranspose2d(8, 4, kernel_size=3, stride=2, padding=1)
    >>> x = flambeau.randn(1, 4, 12, 12)
    >>> h = down(x)
    >>> h.shape, up(h, output_size=x.shape).shape
    (flambeau.Size([1, 8, 6, 6]), flambeau.Size([1, 4, 12, 12]))
    """

    _nd = 2


class ConvTranspose3d(_ConvTranspose):
    """Transposed 3-D convolution over (N, C_in, D, H, W).

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> m = nn.ConvTranspose3d(4, 2, kernel_size=3, stride=2)
    >>> m(flambeau.randn(1, 4, 3, 4, 4)).shape
    flambeau.Size([1, 2, 7, 9, 9])
    """

    _nd = 3


# ---- lazy convolutions: in_channels from the first input ------------------------------------


class _LazyConvXdMixin(LazyModuleMixin):
    def _make_uninitialized(self, out_channels, bias, device, dtype) -> None:
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs) -> None:
        if not self.has_uninitialized_params():
            return
        self.in_channels = self._get_in_channels(input)
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if self.transposed:
            shape = (self.in_channels, self.out_channels // self.groups, *self.kernel_size)
        else:
            shape = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
        self.weight.materialize(shape)
        if self.bias is not None:
            self.bias.materialize((self.out_channels,))
        self.reset_parameters()

    def _get_in_channels(self, input) -> int:
        unbatched = self._nd + 1
        if input.dim() not in (unbatched, unbatched + 1):
            raise RuntimeError(
                f"Expected {unbatched}D (unbatched) or {unbatched + 1}D (batched) input to "
                f"{type(self).__name__}, but got input of size: {input.shape}"
            )
        return input.shape[1] if input.dim() == unbatched + 1 else input.shape[0]


class _LazyConv(_LazyConvXdMixin, _Conv):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):  # fmt: skip
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                         padding_mode, device, dtype)  # fmt: skip
        self._make_uninitialized(out_channels, bias, device, dtype)


class LazyConv1d(_LazyConv, Conv1d):
    """A Conv1d whose in_channels is read from its first input.

    >>> import flambeau.nn as nn
    >>> m = nn.LazyConv1d(6, kernel_size=3)
    >>> out = m(flambeau.ones(2, 3, 10))
    >>> m.in_channels, m.weight.shape
    (3, flambeau.Size([6, 3, 3]))
    """

    cls_to_become = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    """A Conv2d whose in_channels is read from its first input.

    >>> import flambeau.nn as nn
    >>> m = nn.LazyConv2d(6, kernel_size=3)
    >>> out = m(flambeau.ones(2, 3, 8, 8))
    >>> m.in_channels, m.weight.shape
    (3, flambeau.Size([6, 3, 3, 3]))
    """

    cls_to_become = Conv2d


class LazyConv3d(_LazyConv, Conv3d):
    """A Conv3d whose in_channels is read from its first input.

    >>> import flambeau.nn as nn
    >>> m = nn.LazyConv3d(6, kernel_size=3)
    >>> out = m(flambeau.ones(2, 3, 4, 8, 8))
    >>> m.in_channels, m.weight.shape
    (3, flambeau.Size([6, 3, 3, 3, 3]))
    """

    cls_to_become = Conv3d


class _LazyConvTranspose(_LazyConvXdMixin, _ConvTranspose):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                 groups=1, bias=True, dilation=1, padding_mode="zeros", device=None,
                 dtype=None):  # fmt: skip
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False,
                         dilation, padding_mode, device, dtype)  # fmt: skip
        self._make_uninitialized(out_channels, bias, device, dtype)


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    """A ConvTranspose1d whose in_channels is read from its first input.

    >>> import flambeau.nn as nn
    >>> m = nn.LazyConvTranspose1d(6, kernel_size=3)
    >>> out = m(flambeau.ones(2, 3, 10))
    >>> m.in_channels, out.shape
    (3, flambeau.Size([2, 6, 12]))
    """

    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    """A ConvTranspose2d whose in_channels is read from its first input.

    >>> import flambeau.nn as nn
    >>> m = nn.LazyConvTranspose2d(6, kernel_size=3)
    >>> out = m(flambeau.ones(2, 3, 8, 8))
    >>> m.in_channels, out.shape
    (3, flambeau.Size([2, 6, 10, 10]))
    """

    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    """A ConvTranspose3d whose in_channels is read from its first input.

    >>> import flambeau.nn as nn
    >>> m = nn.LazyConvTranspose3d(6, kernel_size=3)
    >>> out = m(flambeau.ones(2, 3, 4, 8, 8))
    >>> m.in_channels, out.shape
    (3, flambeau.Size([2, 6, 6, 10, 10]))
    """

    cls_to_become = ConvTranspose3d
