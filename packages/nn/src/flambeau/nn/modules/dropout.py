"""Dropout modules: active in training mode, the identity in eval mode."""

from __future__ import annotations

from .. import functional as F
from .module import Module


class _DropoutNd(Module):
    _fn = None

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input):
        return type(self)._fn(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zero each element with probability p, scaling the rest by 1 / (1 - p).

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> m = nn.Dropout(p=0.5)
    >>> out = m(flambeau.ones(4, 4))
    >>> sorted(out.unique().tolist())
    [0.0, 2.0]
    >>> m.eval()(flambeau.ones(2))
    tensor([1., 1.])
    """

    _fn = staticmethod(F.dropout)


class Dropout1d(_DropoutNd):
    """Zero whole channels of (N, C, L) or (C, L) input with probability p.

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> m = nn.Dropout1d(p=0.5)
    >>> out = m(flambeau.ones(2, 8, 5))
    >>> out.shape
    flambeau.Size([2, 8, 5])
    >>> bool(((out == 0).all(-1) | (out == 2).all(-1)).all())
    True
    """

    _fn = staticmethod(F.dropout1d)


class Dropout2d(_DropoutNd):
    """Zero whole channels of (N, C, H, W) or (C, H, W) input with probability p.

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> m = nn.Dropout2d(p=0.5)
    >>> out = m(flambeau.ones(2, 8, 3, 3))
    >>> out.shape
    flambeau.Size([2, 8, 3, 3])
    >>> bool(((out == 0).flatten(2).all(-1) | (out == 2).flatten(2).all(-1)).all())
    True
    """

    _fn = staticmethod(F.dropout2d)


class Dropout3d(_DropoutNd):
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) input with probability p.

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> m = nn.Dropout3d(p=0.5)
    >>> m(flambeau.randn(2, 4, 3, 3, 3)).shape
    flambeau.Size([2, 4, 3, 3, 3])
    """

    _fn = staticmethod(F.dropout3d)


class AlphaDropout(_DropoutNd):
    """Dropout that keeps SELU's self-normalising mean and variance.

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> m = nn.AlphaDropout(p=0.2)
    >>> m(flambeau.randn(4, 16)).shape
    flambeau.Size([4, 16])
    """

    _fn = staticmethod(F.alpha_dropout)


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout of whole channels: a dropped channel is set to SELU's saturation value.

    As in PyTorch, ``inplace`` is kept (and shown) but the forward never works in place.

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> m = nn.FeatureAlphaDropout(p=0.2)
    >>> m(flambeau.randn(2, 8, 4, 4)).shape
    flambeau.Size([2, 8, 4, 4])
    """

    def forward(self, input):
        return F.feature_alpha_dropout(input, self.p, self.training)
