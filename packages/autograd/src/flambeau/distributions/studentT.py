import math

import flambeau as F

from . import constraints
from ._samplers import standard_gamma
from .chi2 import Chi2
from .distribution import Distribution
from .utils import _standard_normal, broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Student's t distribution with ``df`` degrees of freedom, ``loc`` and ``scale``.

    >>> from flambeau.distributions import StudentT
    >>> d = StudentT(df=3.0)
    >>> d.sample((3,)).shape
    flambeau.Size([3])
    >>> d.log_prob(flambeau.tensor([0.0, 1.0]))
    tensor([-1.0009, -1.5763])
    >>> d.variance
    tensor(3.)
    """

    arg_constraints = {
        "df": constraints.positive,
        "loc": constraints.real,
        "scale": constraints.positive,
    }
    support = constraints.real
    has_rsample = True

    @property
    def mean(self):
        m = self.loc.clone()
        return F.where(self.df <= 1, F.full_like(m, math.nan), m)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        m = self.scale.pow(2) * self.df / (self.df - 2)
        m = F.where(self.df <= 2, F.full_like(m, math.inf), m)
        return F.where(self.df <= 1, F.full_like(m, math.nan), m)

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        batch_shape = self.df.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(StudentT, _instance)
        batch_shape = F.Size(batch_shape)
        new.df = self.df.expand(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new._chi2 = self._chi2.expand(batch_shape)
        super(StudentT, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()):
        # X ~ Normal(0, 1), Z ~ Chi2(df): Y = X / sqrt(Z / df)
        shape = tuple(self._extended_shape(sample_shape))
        x = _standard_normal(shape, dtype=self.df.dtype)
        z = 2.0 * standard_gamma(0.5 * self.df.expand(shape))
        y = x * F.rsqrt(z / self.df)
        return self.loc + self.scale * y

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        z = (
            self.scale.log()
            + 0.5 * self.df.log()
            + 0.5 * math.log(math.pi)
            + F.lgamma(0.5 * self.df)
            - F.lgamma(0.5 * (self.df + 1.0))
        )
        return -0.5 * (self.df + 1.0) * F.log1p(y**2.0 / self.df) - z

    def entropy(self):
        lbeta = F.lgamma(0.5 * self.df) + math.lgamma(0.5) - F.lgamma(0.5 * (self.df + 1))
        return (
            self.scale.log()
            + 0.5 * (self.df + 1) * (F.digamma(0.5 * (self.df + 1)) - F.digamma(0.5 * self.df))
            + 0.5 * self.df.log()
            + lbeta
        )
