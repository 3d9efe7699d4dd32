import math
from numbers import Number

import flambeau as F

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """Generalized Pareto distribution with ``loc``, ``scale`` and shape ``concentration`` (xi);
    xi = 0 is the exponential, xi < 0 has bounded support [loc, loc - scale / xi].

    >>> from flambeau.distributions import GeneralizedPareto
    >>> d = GeneralizedPareto(loc=0.0, scale=1.0, concentration=0.5)
    >>> d.sample((3,)).shape
    flambeau.Size([3])
    >>> d.log_prob(flambeau.tensor([0.5, 1.0]))
    tensor([-0.6694, -1.2164])
    >>> d.mean
    tensor(2.)
    """

    arg_constraints = {
        "loc": constraints.real,
        "scale": constraints.positive,
        "concentration": constraints.real,
    }
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        if all(isinstance(v, Number) for v in (loc, scale, concentration)):
            batch_shape = F.Size()
        else:
            batch_shape = self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(GeneralizedPareto, _instance)
        batch_shape = F.Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        super(GeneralizedPareto, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _safe_concentration(self):
        """(xi is ~0, xi with those entries replaced by 1 so the xi != 0 formulas stay finite)."""
        eq_zero = self.concentration.abs() <= 1e-8
        return eq_zero, F.where(eq_zero, F.ones_like(self.concentration), self.concentration)

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        u = F.rand(shape, dtype=self.loc.dtype)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        eq_zero, safe_conc = self._safe_concentration()
        y = 1 / safe_conc + F.ones_like(z)
        where_nonzero = F.where(y == 0, y, y * F.log1p(safe_conc * z))
        return -self.scale.log() - F.where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        eq_zero, safe_conc = self._safe_concentration()
        return F.where(eq_zero, -z, -F.log1p(safe_conc * z) / safe_conc)

    def log_cdf(self, value):
        return F.log1p(-F.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return F.exp(self.log_cdf(value))

    def icdf(self, value):
        eq_zero, safe_conc = self._safe_concentration()
        logu = F.log1p(-value)
        where_nonzero = self.loc + self.scale / safe_conc * F.expm1(-safe_conc * logu)
        return F.where(eq_zero, self.loc - self.scale * logu, where_nonzero)

    @property
    def mean(self):
        valid = self.concentration < 1
        safe_conc = F.where(valid, self.concentration, F.full_like(self.concentration, 0.5))
        result = self.loc + self.scale / (1 - safe_conc)
        return F.where(valid, result, F.full_like(result, math.nan))

    @property
    def variance(self):
        valid = self.concentration < 0.5
        safe_conc = F.where(valid, self.concentration, F.full_like(self.concentration, 0.25))
        result = self.scale**2 / ((1 - safe_conc) ** 2 * (1 - 2 * safe_conc))
        return F.where(valid, result, F.full_like(result, math.nan))

    def entropy(self):
        ans = F.log(self.scale) + self.concentration + 1
        return ans.expand(tuple(self._batch_shape))

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = F.where(
            self.concentration < 0,
            lower - self.scale / self.concentration,
            F.full_like(lower, math.inf),
        )
        return constraints.interval(lower, upper)
