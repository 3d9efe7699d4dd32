import math
from numbers import Number

import flambeau as F

from . import constraints
from ._samplers import standard_gamma
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    """Fisher–Snedecor (F) distribution with ``df1`` and ``df2`` degrees of freedom.

    >>> from flambeau.distributions import FisherSnedecor
    >>> d = FisherSnedecor(df1=3.0, df2=5.0)
    >>> d.sample((3,)).shape
    flambeau.Size([3])
    >>> d.log_prob(flambeau.tensor([1.0, 2.0]))
    tensor([-1.0184, -1.9456])
    >>> d.mean
    tensor(1.6667)
    """

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        if isinstance(df1, Number) and isinstance(df2, Number):
            batch_shape = F.Size()
        else:
            batch_shape = self.df1.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(FisherSnedecor, _instance)
        batch_shape = F.Size(batch_shape)
        new.df1 = self.df1.expand(batch_shape)
        new.df2 = self.df2.expand(batch_shape)
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        super(FisherSnedecor, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        df2 = self.df2.clone()
        return F.where(df2 <= 2, F.full_like(df2, math.nan), df2 / (df2 - 2))

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return F.where(self.df1 <= 2, F.full_like(mode, math.nan), mode)

    @property
    def variance(self):
        df2 = self.df2
        var = 2 * df2.pow(2) * (self.df1 + df2 - 2) / (self.df1 * (df2 - 2).pow(2) * (df2 - 4))
        return F.where(df2 <= 4, F.full_like(var, math.nan), var)

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        # X1 ~ Gamma(df1/2, df1/2) (= Chi2(df1)/df1), X2 likewise; Y = X1 / X2
        x1 = standard_gamma(self._gamma1.concentration.expand(shape)) / (0.5 * self.df1)
        x2 = standard_gamma(self._gamma2.concentration.expand(shape)) / (0.5 * self.df2)
        tiny = F.finfo(x2.dtype).tiny
        return (x1 / x2).clamp(min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        ct1 = self.df1 * 0.5
        ct2 = self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = (ct1 + ct2).lgamma() - ct1.lgamma() - ct2.lgamma()
        t2 = ct1 * ct3.log() + (ct1 - 1) * F.log(value)
        t3 = (ct1 + ct2) * F.log1p(ct3 * value)
        return t1 + t2 - t3
