"""The Wishart distribution of positive definite matrices."""

from __future__ import annotations

import math
import warnings
from numbers import Number

import flambeau as F

from . import constraints
from ._samplers import standard_gamma
from .exp_family import ExponentialFamily
from .multivariate_normal import _scale_tril_of
from .utils import lazy_property

__all__ = ["Wishart"]


def _multi_digamma(a, p: int):
    """The multivariate digamma: sum over i < p of digamma(a - i / 2)."""
    offsets = F.arange(p, dtype=a.dtype) * 0.5
    return F.digamma(a.unsqueeze(-1) - offsets).sum(-1)


class Wishart(ExponentialFamily):
    r"""The Wishart distribution of ``p x p`` positive definite matrices with ``df``
    degrees of freedom (``df > p - 1``) and scale matrix ``Sigma``, given as exactly one of
    ``covariance_matrix``, ``precision_matrix`` (its inverse) or ``scale_tril`` (its lower
    Cholesky factor). With ``df`` an integer it is the law of ``X^T X`` for ``df`` rows
    ``X_k ~ N(0, Sigma)``.

    Samples come from the Bartlett decomposition (``Sigma``'s factor times a lower
    triangular matrix of chi and normal variates) and are reparameterized (``rsample``),
    ``df`` included. ``rsample(max_try_correction=n)`` draws again, up to ``n`` times, the
    samples that come out singular in floating point (3 times by default, when argument
    validation is on).

    >>> from flambeau.distributions import Wishart
    >>> d = Wishart(flambeau.tensor([2.0]), covariance_matrix=flambeau.eye(2))
    >>> d.batch_shape, d.event_shape, d.sample().shape
    (flambeau.Size([1]), flambeau.Size([2, 2]), flambeau.Size([1, 2, 2]))
    >>> d = Wishart(4.0, covariance_matrix=flambeau.tensor([[2.0, 0.5], [0.5, 1.0]]))
    >>> d.mean
    tensor([[8., 2.],
            [2., 4.]])
    >>> d.log_prob(flambeau.tensor([[3.0, 1.0], [1.0, 2.0]]))
    tensor(-5.2530)
    """

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(
        self,
        df,
        covariance_matrix=None,
        precision_matrix=None,
        scale_tril=None,
        validate_args=None,
    ):
        given = [
            (name, m)
            for name, m in (
                ("covariance_matrix", covariance_matrix),
                ("precision_matrix", precision_matrix),
                ("scale_tril", scale_tril),
            )
            if m is not None
        ]
        if len(given) != 1:
            raise AssertionError(
                "Exactly one of covariance_matrix or precision_matrix or scale_tril may be "
                "specified."
            )
        name, matrix = given[0]
        if matrix.dim() < 2:
            raise ValueError(
                f"{name} must be at least two-dimensional, with optional leading batch dimensions"
            )
        if isinstance(df, Number):
            df = F.tensor(float(df), dtype=matrix.dtype)
        batch_shape = F.broadcast_shapes(matrix.shape[:-2], df.shape)
        event_shape = matrix.shape[-2:]
        p = event_shape[-1]
        self.df = df.expand(batch_shape)
        setattr(self, name, matrix.expand(tuple(batch_shape) + (-1, -1)))
        if bool((self.df <= p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._unbroadcasted_scale_tril = _scale_tril_of(
            scale_tril, covariance_matrix, precision_matrix
        )

    @property
    def arg_constraints(self):
        return {
            "covariance_matrix": constraints.positive_definite,
            "precision_matrix": constraints.positive_definite,
            "scale_tril": constraints.lower_cholesky,
            "df": constraints.greater_than(self.event_shape[-1] - 1),
        }

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = F.Size(batch_shape)
        matrix_shape = tuple(batch_shape) + tuple(self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        new.df = self.df.expand(batch_shape)
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(matrix_shape))
        super(Wishart, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _expanded(self, matrix):
        return matrix.expand(tuple(self._batch_shape) + tuple(self._event_shape))

    @lazy_property
    def scale_tril(self):
        return self._expanded(self._unbroadcasted_scale_tril)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return self._expanded(L @ L.mT)

    @lazy_property
    def precision_matrix(self):
        return self._expanded(F.cholesky_inverse(self._unbroadcasted_scale_tril))

    @property
    def mean(self):
        return self.df[..., None, None] * self.covariance_matrix

    @property
    def mode(self):
        p = self._event_shape[-1]
        factor = (self.df - p - 1)[..., None, None]
        mode = factor * self.covariance_matrix
        return F.where(factor > 0, mode, F.full_like(mode, math.nan))

    @property
    def variance(self):
        cov = self.covariance_matrix
        diag = cov.diagonal(dim1=-2, dim2=-1)
        return self.df[..., None, None] * (cov.pow(2) + diag[..., :, None] * diag[..., None, :])

    def _bartlett(self, shape):
        """L A for Bartlett's lower triangular A: A_ii^2 ~ chi2(df - i), A_ij ~ N(0, 1)."""
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        df = self.df.expand(shape)
        half_df = 0.5 * (df.unsqueeze(-1) - F.arange(p, dtype=df.dtype))
        chi = (2 * standard_gamma(half_df)).sqrt()
        normal = F.randn(tuple(shape) + (p, p), dtype=L.dtype).tril(-1)
        return L @ (normal + F.diag_embed(chi))

    def rsample(self, sample_shape=(), max_try_correction=None):
        shape = tuple(self._extended_shape(sample_shape))[:-2]
        factor = self._bartlett(shape)
        sample = factor @ factor.mT
        tries = max_try_correction
        if tries is None:
            tries = 3 if self._validate_args else 0
        for _ in range(tries):
            singular = F.linalg.cholesky_ex(sample.detach()).info != 0
            if not bool(singular.any()):
                return sample
            again = self._bartlett(shape)
            sample = F.where(singular[..., None, None], again @ again.mT, sample)
        if tries and bool((F.linalg.cholesky_ex(sample.detach()).info != 0).any()):
            warnings.warn(
                f"Singular samples remain after {tries} draws: try a larger df or a better "
                "conditioned scale matrix.",
                stacklevel=2,
            )
        return sample

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        p = self._event_shape[-1]
        nu = self.df
        chol_value = F.linalg.cholesky(value)
        L = self._unbroadcasted_scale_tril
        shape = F.broadcast_shapes(L.shape, chol_value.shape)
        # tr(Sigma^-1 W) = |L^-1 chol(W)|_F^2
        whitened = F.linalg.solve_triangular(L.expand(shape), chol_value.expand(shape), upper=False)
        trace = whitened.pow(2).sum((-2, -1))
        log_det_value = 2 * chol_value.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        log_det_scale = 2 * L.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return (
            0.5 * (nu - p - 1) * log_det_value
            - 0.5 * trace
            - 0.5 * nu * (p * math.log(2) + log_det_scale)
            - F.mvlgamma(0.5 * nu, p)
        )

    def entropy(self):
        p = self._event_shape[-1]
        nu = self.df
        log_det_scale = 2 * self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return (
            0.5 * (p + 1) * log_det_scale
            + 0.5 * p * (p + 1) * math.log(2)
            + F.mvlgamma(0.5 * nu, p)
            - 0.5 * (nu - p - 1) * _multi_digamma(0.5 * nu, p)
            + 0.5 * nu * p
        ).expand(self._batch_shape)

    @property
    def _natural_params(self):
        p = self._event_shape[-1]
        return -0.5 * self.precision_matrix, 0.5 * (self.df - p - 1)

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        half_nu = y + 0.5 * (p + 1)
        log_det = F.linalg.slogdet(-2 * x)[1]
        return half_nu * (p * math.log(2) - log_det) + F.mvlgamma(half_nu, p)
