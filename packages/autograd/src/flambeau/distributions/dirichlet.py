import flambeau as F
from flambeau._nn_ops import one_hot

from . import constraints
from ._samplers import standard_gamma
from .exp_family import ExponentialFamily

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    """Dirichlet distribution on the simplex with parameter ``concentration`` (last dim = K).

    >>> from flambeau.distributions import Dirichlet
    >>> d = Dirichlet(concentration=flambeau.tensor([1.0, 2.0, 3.0]))
    >>> d.sample((2,)).shape
    flambeau.Size([2, 3])
    >>> d.log_prob(flambeau.tensor([0.2, 0.3, 0.5]))
    tensor(1.5041)
    >>> d.mean
    tensor([0.1667, 0.3333, 0.5000])
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = F.Size(batch_shape)
        new.concentration = self.concentration.expand(tuple(batch_shape) + tuple(self.event_shape))
        super(Dirichlet, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()):
        # normalized independent gammas; gradients flow through each gamma's implicit
        # reparameterization and the normalization
        shape = tuple(self._extended_shape(sample_shape))
        gammas = standard_gamma(self.concentration.expand(shape))
        value = gammas / gammas.sum(-1, keepdim=True)
        finfo = F.finfo(value.dtype)
        return value.clamp(min=finfo.tiny, max=1 - finfo.eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (
            F.xlogy(self.concentration - 1.0, value).sum(-1)
            + F.lgamma(self.concentration.sum(-1))
            - F.lgamma(self.concentration).sum(-1)
        )

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        concentrationm1 = (self.concentration - 1).clamp(min=0.0)
        mode = concentrationm1 / concentrationm1.sum(-1, True)
        # with every concentration below one the density peaks at the vertex of the largest
        all_below_one = (self.concentration < 1).all(dim=-1, keepdim=True)
        largest = self.concentration.argmax(-1)
        vertex = one_hot(largest, self.concentration.shape[-1]).to(mode.dtype)
        return F.where(all_below_one, vertex, mode)

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self):
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (
            F.lgamma(self.concentration).sum(-1)
            - F.lgamma(a0)
            - (k - a0) * F.digamma(a0)
            - ((self.concentration - 1.0) * F.digamma(self.concentration)).sum(-1)
        )

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - F.lgamma(x.sum(-1))
