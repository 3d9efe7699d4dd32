"""ExponentialFamily: distributions p(x) = h(x) exp(<t(x), θ> - F(θ)), with entropy via Bregman."""

from __future__ import annotations

from flambeau.autograd import grad

from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Subclasses give ``_natural_params``, ``_log_normalizer`` and ``_mean_carrier_measure``;
    the entropy then follows from the Bregman divergence of the log normalizer.

    >>> from flambeau.distributions import Exponential, ExponentialFamily
    >>> d = Exponential(rate=2.0)
    >>> isinstance(d, ExponentialFamily)
    True
    >>> ExponentialFamily.entropy(d).detach(), d.entropy()  # Bregman; closed form
    (tensor(0.3069), tensor(0.3069))
    """

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        # H = F(θ) - <θ, ∇F(θ)> - E[log h(x)]
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*nparams)
        gradients = grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for np_, g in zip(nparams, gradients):
            result = result - (np_ * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
