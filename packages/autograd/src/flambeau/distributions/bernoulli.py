import flambeau as F
from flambeau.autograd import no_grad

from . import constraints
from .exp_family import ExponentialFamily
from .utils import (
    _bce_with_logits,
    _BinaryProbsLogits,
    _expand_probs_or_logits,
    _set_probs_or_logits,
    broadcast_all,
)

__all__ = ["Bernoulli"]


class Bernoulli(_BinaryProbsLogits, ExponentialFamily):
    """Bernoulli distribution on {0, 1}, parameterized by ``probs`` or ``logits`` (not both).

    >>> from flambeau.distributions import Bernoulli
    >>> d = Bernoulli(probs=flambeau.tensor([0.3, 0.9]))
    >>> d.sample((3,)).shape
    flambeau.Size([3, 2])
    >>> d.log_prob(flambeau.tensor([1.0, 0.0]))
    tensor([-1.2040, -2.3026])
    >>> d.mean
    tensor([0.3000, 0.9000])
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        _set_probs_or_logits(self, probs, logits)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Bernoulli, _instance)
        batch_shape = F.Size(batch_shape)
        _expand_probs_or_logits(self, new, batch_shape)
        super(Bernoulli, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return F.where(self.probs == 0.5, F.full_like(mode, float("nan")), mode)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return F.bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -_bce_with_logits(logits, value)

    def entropy(self):
        return _bce_with_logits(self.logits, self.probs)

    def enumerate_support(self, expand=True):
        values = F.arange(2, dtype=self._param.dtype)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values

    @property
    def _natural_params(self):
        return (F.logit(self.probs),)

    def _log_normalizer(self, x):
        return F.log1p(F.exp(x))
