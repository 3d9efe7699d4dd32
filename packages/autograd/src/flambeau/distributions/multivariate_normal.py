import math

import flambeau as F

from . import constraints
from .distribution import Distribution
from .utils import _standard_normal, lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mv(bmat, bvec):
    """Matrix-vector product over broadcast batch dims."""
    return F.matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL, bx):
    """x^T (L L^T)^{-1} x for lower-triangular L, by one triangular solve."""
    shape = F.broadcast_shapes(bL.shape[:-1], bx.shape)
    bL = bL.expand(tuple(shape) + (bL.shape[-1],))
    bx = bx.expand(tuple(shape))
    sol = F.linalg.solve_triangular(bL, bx.unsqueeze(-1), upper=False).squeeze(-1)
    return sol.pow(2).sum(-1)


def _precision_to_scale_tril(P):
    """Cholesky factor of P^{-1} without inverting P: flip, Cholesky, triangular inverse."""
    Lf = F.linalg.cholesky(F.flip(P, (-2, -1)))
    L_inv = F.transpose(F.flip(Lf, (-2, -1)), -2, -1)
    Id = F.eye(P.shape[-1], dtype=P.dtype)
    return F.linalg.solve_triangular(L_inv, Id, upper=False)


def _scale_tril_of(scale_tril, covariance_matrix, precision_matrix):
    """The lower Cholesky factor of the covariance from whichever one parameter is given."""
    if scale_tril is not None:
        return scale_tril
    if covariance_matrix is not None:
        return F.linalg.cholesky(covariance_matrix)
    return _precision_to_scale_tril(precision_matrix)


class MultivariateNormal(Distribution):
    """Multivariate normal with ``loc`` and exactly one of ``covariance_matrix``,
    ``precision_matrix`` or ``scale_tril`` (lower Cholesky factor of the covariance).

    >>> from flambeau.distributions import MultivariateNormal
    >>> cov = flambeau.tensor([[2.0, 1.0], [1.0, 2.0]])
    >>> d = MultivariateNormal(flambeau.zeros(2), covariance_matrix=cov)
    >>> d.sample((4,)).shape
    flambeau.Size([4, 2])
    >>> d.log_prob(flambeau.tensor([1.0, 0.0]))
    tensor(-2.7205)
    >>> d.scale_tril
    tensor([[1.4142, 0.0000],
            [0.7071, 1.2247]])
    """

    arg_constraints = {
        "loc": constraints.real_vector,
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(
        self,
        loc,
        covariance_matrix=None,
        precision_matrix=None,
        scale_tril=None,
        validate_args=None,
    ):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + (
            precision_matrix is not None
        ) != 1:
            raise ValueError(
                "Exactly one of covariance_matrix or precision_matrix or scale_tril "
                "may be specified."
            )
        if scale_tril is not None:
            matrix, name = scale_tril, "scale_tril"
        elif covariance_matrix is not None:
            matrix, name = covariance_matrix, "covariance_matrix"
        else:
            matrix, name = precision_matrix, "precision_matrix"
        if matrix.dim() < 2:
            raise ValueError(
                f"{name} matrix must be at least two-dimensional, with optional leading "
                "batch dimensions"
            )
        batch_shape = F.broadcast_shapes(matrix.shape[:-2], loc.shape[:-1])
        mat_shape = tuple(batch_shape) + (-1, -1)
        setattr(self, name, matrix.expand(mat_shape))
        self.loc = loc.expand(tuple(batch_shape) + (-1,))
        event_shape = self.loc.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._unbroadcasted_scale_tril = _scale_tril_of(
            scale_tril, covariance_matrix, precision_matrix
        )

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = F.Size(batch_shape)
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        cov_shape = loc_shape + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        super(MultivariateNormal, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(
            tuple(self._batch_shape) + tuple(self._event_shape) * 2
        )

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return F.matmul(L, L.mT).expand(tuple(self._batch_shape) + tuple(self._event_shape) * 2)

    @lazy_property
    def precision_matrix(self):
        L_inv = F.linalg.solve_triangular(
            self._unbroadcasted_scale_tril,
            F.eye(self._event_shape[0], dtype=self.loc.dtype),
            upper=False,
        )
        return F.matmul(L_inv.mT, L_inv).expand(
            tuple(self._batch_shape) + tuple(self._event_shape) * 2
        )

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return (
            self._unbroadcasted_scale_tril.pow(2)
            .sum(-1)
            .expand(tuple(self._batch_shape) + tuple(self._event_shape))
        )

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - half_log_det

    def entropy(self):
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        if len(self._batch_shape) == 0:
            return H
        return H.expand(tuple(self._batch_shape))
