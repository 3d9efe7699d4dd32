"""Upsample, UpsamplingNearest2d and UpsamplingBilinear2d."""

from __future__ import annotations

from .. import _functional_conv as FC
from .module import Module

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]


class Upsample(Module):
    """Resamples (N, C, *spatial) to size or spatial * scale_factor (see F.interpolate).

    >>> import flambeau.nn as nn
    >>> x = flambeau.tensor([[[[1.0, 2.0], [3.0, 4.0]]]])
    >>> nn.Upsample(scale_factor=2, mode="nearest")(x)
    tensor([[[[1., 1., 2., 2.],
              [1., 1., 2., 2.],
              [3., 3., 4., 4.],
              [3., 3., 4., 4.]]]])
    >>> nn.Upsample(size=(3, 3), mode="bilinear", align_corners=True)(x)
    tensor([[[[1.0000, 1.5000, 2.0000],
              [2.0000, 2.5000, 3.0000],
              [3.0000, 3.5000, 4.0000]]]])
    """

    def __init__(self, size=None, scale_factor=None, mode: str = "nearest", align_corners=None,
                 recompute_scale_factor=None):  # fmt: skip
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        self.scale_factor = float(scale_factor) if isinstance(scale_factor, int) else scale_factor
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return FC.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                              recompute_scale_factor=self.recompute_scale_factor)  # fmt: skip

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            info = f"scale_factor={self.scale_factor!r}"
        else:
            info = f"size={self.size!r}"
        return f"{info}, mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """Nearest-neighbour 2-D upsampling.

    >>> import flambeau.nn as nn
    >>> m = nn.UpsamplingNearest2d(scale_factor=2)
    >>> m(flambeau.tensor([[[[1.0, 2.0], [3.0, 4.0]]]]))
    tensor([[[[1., 1., 2., 2.],
              [1., 1., 2., 2.],
              [3., 3., 4., 4.],
              [3., 3., 4., 4.]]]])
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear 2-D upsampling with align_corners=True.

    >>> import flambeau.nn as nn
    >>> m = nn.UpsamplingBilinear2d(scale_factor=2)
    >>> m(flambeau.tensor([[[[1.0, 2.0], [3.0, 4.0]]]]))
    tensor([[[[1.0000, 1.3333, 1.6667, 2.0000],
              [1.6667, 2.0000, 2.3333, 2.6667],
              [2.3333, 2.6667, 3.0000, 3.3333],
              [3.0000, 3.3333, 3.6667, 4.0000]]]])
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
