"""PixelShuffle and PixelUnshuffle."""

from __future__ import annotations

from .. import _functional_conv as FC
from .module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle"]


class PixelShuffle(Module):
    """(*, C*r*r, H, W) -> (*, C, H*r, W*r).

    >>> import flambeau.nn as nn
    >>> m = nn.PixelShuffle(2)
    >>> m(flambeau.zeros(1, 8, 3, 3)).shape
    flambeau.Size([1, 2, 6, 6])
    >>> m(flambeau.arange(4.0).reshape(1, 4, 1, 1))
    tensor([[[[0., 1.],
              [2., 3.]]]])
    """

    def __init__(self, upscale_factor: int):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return FC.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H*r, W*r) -> (*, C*r*r, H, W).

    >>> import flambeau.nn as nn
    >>> m = nn.PixelUnshuffle(2)
    >>> m(flambeau.zeros(1, 2, 6, 6)).shape
    flambeau.Size([1, 8, 3, 3])
    >>> m(flambeau.arange(4.0).reshape(1, 1, 2, 2)).flatten()
    tensor([0., 1., 2., 3.])
    """

    def __init__(self, downscale_factor: int):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return FC.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"
