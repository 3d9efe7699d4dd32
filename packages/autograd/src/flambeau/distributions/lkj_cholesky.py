"""The LKJ distribution of correlation matrices, over their lower Cholesky factors."""

from __future__ import annotations

import math
from numbers import Number

import flambeau as F

from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    r"""The LKJ distribution over the lower Cholesky factor ``L`` of a ``dim x dim``
    correlation matrix ``C = L L^T``, whose density is proportional to
    ``det(C) ** (concentration - 1)`` (``concentration = 1``: uniform over correlation
    matrices; larger: more weight near the identity).

    Samples are drawn by the onion method (Lewandowski, Kurowicka and Joe, 2009): row
    ``i`` of ``L`` is ``[sqrt(y) u, sqrt(1 - y)]`` with ``u`` uniform on the unit sphere
    of dimension ``i`` and ``y ~ Beta(i / 2, concentration + (dim - 1 - i) / 2)``.
    ``log_prob`` is the density of that construction with respect to the Lebesgue measure
    on the entries below the diagonal.

    >>> from flambeau.distributions import LKJCholesky
    >>> d = LKJCholesky(3, concentration=0.5)
    >>> L = d.sample()
    >>> L.shape, bool(flambeau.allclose((L @ L.T).diagonal(), flambeau.ones(3)))
    (flambeau.Size([3, 3]), True)
    >>> LKJCholesky(2, 1.5).log_prob(flambeau.tensor([[1.0, 0.0], [0.6, 0.8]]))
    tensor(-0.6747)
    """

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(
                f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}."
            )
        self.dim = dim
        (self.concentration,) = broadcast_all(
            float(concentration) if isinstance(concentration, Number) else concentration
        )
        batch_shape = self.concentration.shape
        super().__init__(batch_shape, (dim, dim), validate_args=validate_args)
        # Row i (1 <= i < dim) of L has squared off-diagonal norm y ~ Beta(i/2, b_i).
        rows = F.arange(1, dim, dtype=self.concentration.dtype)
        b = self.concentration.unsqueeze(-1) + 0.5 * (dim - 1 - rows)
        self._row_beta = Beta(0.5 * rows.expand(b.shape), b, validate_args=False)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = F.Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._row_beta = self._row_beta.expand(tuple(batch_shape) + (self.dim - 1,))
        super(LKJCholesky, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=()):
        with F.no_grad():
            y = self._row_beta.sample(sample_shape)  # (..., dim - 1)
            shape = tuple(y.shape[:-1]) + (self.dim, self.dim)
            dtype = self.concentration.dtype
            normal = F.randn(shape, dtype=dtype).tril(-1)
            norm = normal.norm(dim=-1, keepdim=True)
            # Row 0 has nothing below the diagonal (its norm is 0).
            direction = normal / F.where(norm > 0, norm, F.ones_like(norm))
            y = F.cat([F.zeros_like(y[..., :1]), y], dim=-1)
            off_diagonal = direction * y.sqrt().unsqueeze(-1)
            diagonal = (1 - y).clamp(min=F.finfo(dtype).tiny).sqrt()
            return off_diagonal + F.diag_embed(diagonal)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        dim = self.dim
        eta = self.concentration.unsqueeze(-1)  # (..., 1)
        rows = F.arange(1, dim, dtype=value.dtype)
        diagonal = value.diagonal(dim1=-2, dim2=-1)[..., 1:]
        # Row i contributes (1 - y_i)^(b_i - 1) Gamma(i/2 + b_i) / (pi^(i/2) Gamma(b_i)),
        # with 1 - y_i = L_ii^2, b_i = eta + (dim - 1 - i) / 2 and i/2 + b_i the same
        # for every row.
        b = eta + 0.5 * (dim - 1 - rows)
        unnormalized = ((2 * (b - 1)) * diagonal.log()).sum(-1)
        normalizer = (
            F.lgamma(self.concentration + 0.5 * (dim - 1)) * (dim - 1)
            - F.lgamma(b).sum(-1)
            - 0.25 * dim * (dim - 1) * math.log(math.pi)
        )
        return unnormalized + normalizer
