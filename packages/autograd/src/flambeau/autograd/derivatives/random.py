"""Factories and random sampling.

Creating a tensor from sizes and numbers has no derivative. Sampled values do not
depend differentiably on the tensors that parametrize them (no reparametrization):
as in PyTorch, those tensors get zero gradients.
"""

from __future__ import annotations

from .registry import formula, nondifferentiable

nondifferentiable(
    "empty",
    "empty_strided",
    "zeros",
    "ones",
    "full",
    "eye",
    "arange",
    "linspace",
    "logspace",
    "rand",
    "randn",
    "randint",
    "randperm",
    "normal.float_float",
    "multinomial",
)


@formula("normal", "bernoulli", "poisson", needs_input=False)
def _sampled(g, a):
    return {name: g * 0 for name in ("mean", "std", "input") if name in a}


@formula(
    "uniform_",
    "normal_",
    "random_",
    "bernoulli_",
    "exponential_",
    "geometric_",
    "cauchy_",
    "log_normal_",
    needs_input=False,
)
def _resampled(g, a):
    return {"self": g * 0, "p": g * 0}
