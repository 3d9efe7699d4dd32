import flambeau as F
from flambeau.autograd import no_grad

from . import constraints
from ._samplers import standard_gamma
from .distribution import Distribution
from .utils import (
    _BinaryProbsLogits,
    _expand_probs_or_logits,
    _set_probs_or_logits,
)

__all__ = ["NegativeBinomial"]


class NegativeBinomial(_BinaryProbsLogits, Distribution):
    """Number of successes before ``total_count`` failures of Bernoulli(probs) trials.

    >>> from flambeau.distributions import NegativeBinomial
    >>> d = NegativeBinomial(total_count=3.0, probs=flambeau.tensor(0.5))
    >>> d.sample((3,)).shape
    flambeau.Size([3])
    >>> d.log_prob(flambeau.tensor([0.0, 2.0]))
    tensor([-2.0794, -1.6740])
    >>> d.mean
    tensor(3.)
    """

    arg_constraints = {
        "total_count": constraints.greater_than_eq(0),
        "probs": constraints.half_open_interval(0.0, 1.0),
        "logits": constraints.real,
    }
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        (total_count,) = _set_probs_or_logits(self, probs, logits, total_count)
        self.total_count = total_count.type_as(self._param)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(NegativeBinomial, _instance)
        batch_shape = F.Size(batch_shape)
        new.total_count = self.total_count.expand(batch_shape)
        _expand_probs_or_logits(self, new, batch_shape)
        super(NegativeBinomial, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.total_count * F.exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / F.sigmoid(-self.logits)

    def sample(self, sample_shape=()):
        # Poisson-Gamma mixture: rate ~ Gamma(total_count, scale = p / (1 - p))
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            rate = standard_gamma(self.total_count.expand(shape)) * F.exp(self.logits).expand(shape)
            return F.poisson(rate.contiguous())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized_prob = self.total_count * F.log(F.sigmoid(-self.logits)) + value * F.log(
            F.sigmoid(self.logits)
        )
        log_normalization = (
            -F.lgamma(self.total_count + value) + F.lgamma(1.0 + value) + F.lgamma(self.total_count)
        )
        # the normalization is 0 (not NaN) for total_count + value == 0
        log_normalization = F.where(
            self.total_count + value == 0.0, F.zeros_like(log_normalization), log_normalization
        )
        return log_unnormalized_prob - log_normalization
