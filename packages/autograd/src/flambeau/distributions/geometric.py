import flambeau as F
from flambeau.autograd import no_grad

from . import constraints
from .distribution import Distribution
from .utils import (
    _bce_with_logits,
    _BinaryProbsLogits,
    _expand_probs_or_logits,
    _set_probs_or_logits,
    broadcast_all,
)

__all__ = ["Geometric"]


class Geometric(_BinaryProbsLogits, Distribution):
    """Number of failures before the first success of Bernoulli(probs) trials: {0, 1, ...}.

    >>> from flambeau.distributions import Geometric
    >>> d = Geometric(probs=flambeau.tensor(0.25))
    >>> d.sample((3,)).shape
    flambeau.Size([3])
    >>> d.log_prob(flambeau.tensor([0.0, 2.0]))
    tensor([-1.3863, -1.9617])
    >>> d.mean
    tensor(3.)
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        _set_probs_or_logits(self, probs, logits)
        super().__init__(self._param.size(), validate_args=validate_args)
        if self._validate_args and probs is not None:
            # probs == 0 would mean never succeeding
            value = self.probs
            valid = value > 0
            if not valid.all():
                invalid_value = value.data[~valid]
                raise ValueError(
                    "Expected parameter probs "
                    f"({type(value).__name__} of shape {tuple(value.shape)}) "
                    f"of distribution {repr(self)} "
                    f"to be positive but found invalid values:\n{invalid_value}"
                )

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Geometric, _instance)
        batch_shape = F.Size(batch_shape)
        _expand_probs_or_logits(self, new, batch_shape)
        super(Geometric, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return F.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        tiny = F.finfo(self.probs.dtype).tiny
        with no_grad():
            u = F.rand(shape, dtype=self.probs.dtype).clamp(min=tiny)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = probs.clone()
        # value * log(1 - p) with 0 * log(0) = 0 at p == 1
        probs = F.where((probs == 1) & (value == 0), F.zeros_like(probs), probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return _bce_with_logits(self.logits, self.probs) / self.probs
