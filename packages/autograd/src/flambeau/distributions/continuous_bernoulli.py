import math

import flambeau as F

from . import constraints
from .exp_family import ExponentialFamily
from .utils import (
    _bce_with_logits,
    _BinaryProbsLogits,
    _expand_probs_or_logits,
    _set_probs_or_logits,
    broadcast_all,
    clamp_probs,
    lazy_property,
    logits_to_probs,
)

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(_BinaryProbsLogits, ExponentialFamily):
    """Continuous Bernoulli on [0, 1] (Loaiza-Ganem & Cunningham 2019): density proportional to
    p^x (1-p)^(1-x). Near p = 1/2 the normalizer and moments use Taylor expansions (``lims``).

    >>> from flambeau.distributions import ContinuousBernoulli
    >>> d = ContinuousBernoulli(probs=flambeau.tensor(0.3))
    >>> d.sample((3,)).shape
    flambeau.Size([3])
    >>> d.log_prob(flambeau.tensor([0.2, 0.5]))
    tensor([ 0.2245, -0.0297])
    >>> d.mean
    tensor(0.4302)
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        _set_probs_or_logits(self, probs, logits)
        if probs is not None:
            if (
                validate_args is not None
                and not self.arg_constraints["probs"].check(self.probs).all()
            ):
                raise ValueError("The parameter probs has invalid values")
            self.probs = self._param = clamp_probs(self.probs)
        self._lims = lims
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ContinuousBernoulli, _instance)
        new._lims = self._lims
        batch_shape = F.Size(batch_shape)
        _expand_probs_or_logits(self, new, batch_shape)
        super(ContinuousBernoulli, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs >= self._lims[1])

    def _cut_probs(self):
        return F.where(
            self._outside_unstable_region(), self.probs, self._lims[0] * F.ones_like(self.probs)
        )

    def _cont_bern_log_norm(self):
        """log of the normalizing constant C(p) = 2 atanh(1 - 2p) / (1 - 2p)."""
        cut_probs = self._cut_probs()
        cut_below = F.where(cut_probs <= 0.5, cut_probs, F.zeros_like(cut_probs))
        cut_above = F.where(cut_probs >= 0.5, cut_probs, F.ones_like(cut_probs))
        log_norm = F.log(F.abs(F.log1p(-cut_probs) - F.log(cut_probs))) - F.where(
            cut_probs <= 0.5, F.log1p(-2.0 * cut_below), F.log(2.0 * cut_above - 1.0)
        )
        x = F.pow(self.probs - 0.5, 2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return F.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut_probs = self._cut_probs()
        mus = cut_probs / (2.0 * cut_probs - 1.0) + 1.0 / (F.log1p(-cut_probs) - F.log(cut_probs))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * F.pow(x, 2)) * x
        return F.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return F.sqrt(self.variance)

    @property
    def variance(self):
        cut_probs = self._cut_probs()
        vars_ = cut_probs * (cut_probs - 1.0) / F.pow(1.0 - 2.0 * cut_probs, 2) + 1.0 / F.pow(
            F.log1p(-cut_probs) - F.log(cut_probs), 2
        )
        x = F.pow(self.probs - 0.5, 2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return F.where(self._outside_unstable_region(), vars_, taylor)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        u = F.rand(shape, dtype=self.probs.dtype)
        return self.icdf(u)

    def sample(self, sample_shape=()):
        from flambeau.autograd import no_grad

        with no_grad():
            return self.rsample(sample_shape)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -_bce_with_logits(logits, value) + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut_probs = self._cut_probs()
        cdfs = (F.pow(cut_probs, value) * F.pow(1.0 - cut_probs, 1.0 - value) + cut_probs - 1.0) / (
            2.0 * cut_probs - 1.0
        )
        unbounded_cdfs = F.where(self._outside_unstable_region(), cdfs, value)
        return F.where(
            value <= 0.0,
            F.zeros_like(value),
            F.where(value >= 1.0, F.ones_like(value), unbounded_cdfs),
        )

    def icdf(self, value):
        cut_probs = self._cut_probs()
        return F.where(
            self._outside_unstable_region(),
            (F.log1p(-cut_probs + value * (2.0 * cut_probs - 1.0)) - F.log1p(-cut_probs))
            / (F.log(cut_probs) - F.log1p(-cut_probs)),
            value,
        )

    def entropy(self):
        log_probs0 = F.log1p(-self.probs)
        log_probs1 = F.log(self.probs)
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        """log normalizer as a function of the natural parameter (the logit)."""
        out_unst_reg = F.maximum(F.le(x, self._lims[0] - 0.5), F.gt(x, self._lims[1] - 0.5))
        cut_nat_params = F.where(out_unst_reg, x, (self._lims[0] - 0.5) * F.ones_like(x))
        log_norm = F.log(F.abs(F.exp(cut_nat_params) - 1.0)) - F.log(F.abs(cut_nat_params))
        taylor = 0.5 * x + F.pow(x, 2) / 24.0 - F.pow(x, 4) / 2880.0
        return F.where(out_unst_reg, log_norm, taylor)
