"""ChannelShuffle: interleaves groups of channels (ShuffleNet)."""

from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    """Splits the C channels of (N, C, *) into `groups` groups and interleaves them.

    >>> import flambeau.nn as nn
    >>> m = nn.ChannelShuffle(2)
    >>> x = flambeau.arange(4.0).reshape(1, 4, 1, 1)
    >>> m(x).flatten()
    tensor([0., 2., 1., 3.])
    """

    def __init__(self, groups: int):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
