import math

import flambeau as F
from flambeau.autograd import no_grad

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property

__all__ = ["VonMises"]


def _log_i0(x):
    """log I0(x) for x >= 0, finite for large x: I0(x) = i0e(x) e^x."""
    return F.log(F.special.i0e(x)) + x


def _rejection_sample(loc, concentration, proposal_r, shape):
    """Best & Fisher (1979) rejection sampler in float64, looping over the rejected entries."""
    kappa = concentration.expand(shape).reshape(-1)
    r = proposal_r.expand(shape).reshape(-1)
    out = F.empty(kappa.shape, dtype=F.float64)
    todo = F.arange(kappa.numel())
    while todo.numel():
        k, rr = kappa[todo], r[todo]
        n = todo.numel()
        u1, u2, u3 = (F.rand((n,), dtype=F.float64) for _ in range(3))
        z = F.cos(math.pi * u1)
        f = (1 + rr * z) / (rr + z)
        c = k * (rr - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        x = (u3 - 0.5).sign() * F.acos(f.clamp(-1.0, 1.0))
        out[todo[accept]] = x[accept]
        todo = todo[~accept]
    x = out.reshape(shape) + loc.expand(shape).to(F.float64)
    return (x + math.pi).remainder(2 * math.pi) - math.pi


class VonMises(Distribution):
    """Circular von Mises distribution with mean angle ``loc`` and ``concentration``.

    >>> from flambeau.distributions import VonMises
    >>> d = VonMises(loc=0.0, concentration=1.0)
    >>> d.sample((3,)).shape
    flambeau.Size([3])
    >>> d.log_prob(flambeau.tensor([0.0, 0.5]))
    tensor([-1.0738, -1.1962])
    """

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        batch_shape = self.loc.shape
        super().__init__(batch_shape, F.Size(), validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * F.cos(value - self.loc)
        log_i0 = _log_i0(self.concentration.to(F.float64)).to(self.concentration.dtype)
        return log_prob - math.log(2 * math.pi) - log_i0

    @lazy_property
    def _proposal_r(self):
        kappa = self.concentration.to(F.float64)
        tau = 1 + (1 + 4 * kappa**2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        small = kappa < 1e-5
        # for tiny kappa use the series rho ~ kappa / 2 + kappa^3 / 16 ... (r ~ 1 / kappa)
        rho_small = kappa / 2 + kappa**3 / 16
        rho = F.where(small, rho_small, rho)
        return (1 + rho**2) / (2 * rho)

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            x = _rejection_sample(
                self.loc, self.concentration.to(F.float64), self._proposal_r, shape
            )
            return x.to(self.loc.dtype)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(VonMises, _instance)
        batch_shape = F.Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        super(VonMises, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        """Circular variance 1 - I1(kappa) / I0(kappa)."""
        kappa = self.concentration.to(F.float64)
        ratio = F.special.i1e(kappa) / F.special.i0e(kappa)  # I1/I0; the e^kappa cancels
        return (1 - ratio).to(self.loc.dtype)
