"""Fold and Unfold: sliding local blocks to and from columns (col2im / im2col)."""

from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["Fold", "Unfold"]


class Fold(Module):
    """Sums columns (N, C * prod(kernel_size), L) back into (N, C, *output_size) blocks.

    >>> import flambeau.nn as nn
    >>> fold = nn.Fold(output_size=(4, 5), kernel_size=(2, 2))
    >>> fold(flambeau.ones(1, 3 * 2 * 2, 12)).shape
    flambeau.Size([1, 3, 4, 5])
    >>> fold(flambeau.ones(1, 4, 12))[0, 0]
    tensor([[1., 2., 2., 2., 1.],
            [2., 4., 4., 4., 2.],
            [2., 4., 4., 4., 2.],
            [1., 2., 2., 2., 1.]])
    """

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)  # fmt: skip

    def extra_repr(self) -> str:
        return (
            f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
            f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}"
        )


class Unfold(Module):
    """Extracts sliding blocks of (N, C, *) into columns (N, C * prod(kernel_size), L).

    >>> import flambeau.nn as nn
    >>> unfold = nn.Unfold(kernel_size=(2, 3))
    >>> unfold(flambeau.zeros(2, 5, 3, 4)).shape
    flambeau.Size([2, 30, 4])
    """

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding},"
            f" stride={self.stride}"
        )
