"""InstanceNorm1d/2d/3d (defined with batch norm, which they share a base with) and their
lazy forms, under PyTorch's module path."""

from __future__ import annotations

from .batchnorm import (  # noqa: F401  (_NormBase: PyTorch's path for it)
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    _InstanceNorm,
    _LazyNormBase,
    _NormBase,
)

__all__ = [
    "InstanceNorm1d",
    "InstanceNorm2d",
    "InstanceNorm3d",
    "LazyInstanceNorm1d",
    "LazyInstanceNorm2d",
    "LazyInstanceNorm3d",
]


class _LazyInstanceNorm(_LazyNormBase, _InstanceNorm):
    # An instance norm's num_features is the channel dim: 0 unbatched, 1 batched.
    def initialize_parameters(self, input) -> None:
        self._check_input_dim(input)
        if input.dim() == self._no_batch_dim:
            input = input.unsqueeze(0)
        super().initialize_parameters(input)

    def _check_input_dim(self, input) -> None:
        if input.dim() not in (self._no_batch_dim, self._no_batch_dim + 1):
            raise ValueError(f"expected {self._ranks} input (got {input.dim()}D input)")


class LazyInstanceNorm1d(_LazyInstanceNorm):
    """An InstanceNorm1d whose num_features is read from its first input.

    >>> import flambeau.nn as nn
    >>> m = nn.LazyInstanceNorm1d(affine=True)
    >>> out = m(flambeau.randn(4, 3, 5))
    >>> m.num_features, m.weight.shape
    (3, flambeau.Size([3]))
    """

    cls_to_become = InstanceNorm1d
    _no_batch_dim = InstanceNorm1d._no_batch_dim
    _ranks = InstanceNorm1d._ranks


class LazyInstanceNorm2d(_LazyInstanceNorm):
    """An InstanceNorm2d whose num_features is read from its first input.

    >>> import flambeau.nn as nn
    >>> m = nn.LazyInstanceNorm2d(affine=True)
    >>> out = m(flambeau.randn(4, 3, 5, 5))
    >>> m.num_features, m.weight.shape
    (3, flambeau.Size([3]))
    """

    cls_to_become = InstanceNorm2d
    _no_batch_dim = InstanceNorm2d._no_batch_dim
    _ranks = InstanceNorm2d._ranks


class LazyInstanceNorm3d(_LazyInstanceNorm):
    """An InstanceNorm3d whose num_features is read from its first input.

    >>> import flambeau.nn as nn
    >>> m = nn.LazyInstanceNorm3d(affine=True)
    >>> out = m(flambeau.randn(4, 3, 2, 5, 5))
    >>> m.num_features, m.weight.shape
    (3, flambeau.Size([3]))
    """

    cls_to_become = InstanceNorm3d
    _no_batch_dim = InstanceNorm3d._no_batch_dim
    _ranks = InstanceNorm3d._ranks
