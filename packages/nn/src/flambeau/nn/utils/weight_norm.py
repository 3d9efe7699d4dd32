"""The hook-based weight normalisation (deprecated in PyTorch for
parametrizations.weight_norm): module.<name> = g * v / ||v||, recomputed before each forward."""

from __future__ import annotations

import warnings

from ..parameter import Parameter, UninitializedParameter
from .parametrizations import _norm_except_dim

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


class WeightNorm:
    """The forward pre-hook that recomputes module.<name> from <name>_g and <name>_v."""

    def __init__(self, name: str, dim: int | None) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim  # -1: one norm over the whole tensor

    def _norm(self, v):
        return _norm_except_dim(v, self.dim if self.dim == -1 else self.dim % v.dim())

    def compute_weight(self, module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return v * (g / self._norm(v))

    @staticmethod
    def apply(module, name: str, dim: int | None) -> WeightNorm:
        warnings.warn(
            "`torch.nn.utils.weight_norm` is deprecated in favor of "
            "`torch.nn.utils.parametrizations.weight_norm`.",
            FutureWarning,
            stacklevel=3,
        )
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two weight_norm hooks on the same parameter {name}"
                )
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if isinstance(weight, UninitializedParameter):
            raise ValueError(
                "The module passed to `WeightNorm` can't have uninitialized parameters. Make sure "
                "to run the dummy forward before applying weight normalization"
            )
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(fn._norm(weight).detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name: str = "weight", dim: int | None = 0):
    """Replaces parameter `name` by <name>_g (magnitude, the norm over every dimension but
    `dim`; over all of them if dim is None) and <name>_v (direction); module.<name> is
    recomputed as g * v / ||v|| before every forward.

    >>> import warnings
    >>> import flambeau.nn as nn
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", FutureWarning)  # parametrizations.weight_norm is newer
    ...     layer = nn.utils.weight_norm(nn.Linear(4, 3))
    >>> layer.weight_g.shape, layer.weight_v.shape
    (flambeau.Size([3, 1]), flambeau.Size([3, 4]))
    """
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name: str = "weight"):
    """Folds the weight normalisation of `name` back into one parameter.

    >>> import warnings
    >>> import flambeau.nn as nn
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", FutureWarning)  # parametrizations.weight_norm is newer
    ...     layer = nn.utils.weight_norm(nn.Linear(4, 3))
    >>> layer = nn.utils.remove_weight_norm(layer)
    >>> sorted(name for name, _ in layer.named_parameters())
    ['bias', 'weight']
    """
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
