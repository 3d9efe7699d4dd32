import flambeau as F
from flambeau.autograd import no_grad

from . import constraints
from ._samplers import sample_binomial
from .distribution import Distribution
from .utils import (
    _BinaryProbsLogits,
    _expand_probs_or_logits,
    _set_probs_or_logits,
)

__all__ = ["Binomial"]


class Binomial(_BinaryProbsLogits, Distribution):
    """Number of successes in ``total_count`` Bernoulli(probs) trials.

    >>> from flambeau.distributions import Binomial
    >>> d = Binomial(total_count=10, probs=flambeau.tensor(0.5))
    >>> d.sample((3,)).shape
    flambeau.Size([3])
    >>> d.log_prob(flambeau.tensor([3.0, 5.0]))
    tensor([-2.1440, -1.4020])
    >>> d.mean, d.variance
    (tensor(5.), tensor(2.5000))
    """

    arg_constraints = {
        "total_count": constraints.nonnegative_integer,
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        (total_count,) = _set_probs_or_logits(self, probs, logits, total_count)
        self.total_count = total_count.type_as(self._param)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Binomial, _instance)
        batch_shape = F.Size(batch_shape)
        new.total_count = self.total_count.expand(batch_shape)
        _expand_probs_or_logits(self, new, batch_shape)
        super(Binomial, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            counts = sample_binomial(self.total_count.expand(shape), self.probs.expand(shape))
            return counts.to(self.probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_factorial_n = F.lgamma(self.total_count + 1)
        log_factorial_k = F.lgamma(value + 1)
        log_factorial_nmk = F.lgamma(self.total_count - value + 1)
        # k * logit - n * log1p(exp(logit)), written to stay finite for large |logit|
        normalize_term = (
            self.total_count * self.logits.clamp(min=0)
            + self.total_count * F.log1p(F.exp(-F.abs(self.logits)))
            - log_factorial_n
        )
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def entropy(self):
        total_count = int(self.total_count.max())
        if not bool((self.total_count == total_count).all()):
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(F.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total_count = int(self.total_count.max())
        if not bool((self.total_count == total_count).all()):
            raise NotImplementedError(
                "Inhomogeneous total count not supported by `enumerate_support`."
            )
        values = F.arange(1 + total_count, dtype=self._param.dtype)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
