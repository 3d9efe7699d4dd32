"""Ready-made parametrizations: weight_norm, spectral_norm."""

from __future__ import annotations

import flambeau
from flambeau.autograd import no_grad

from .. import functional as F
from ..modules.module import Module
from . import parametrize


def _norm_except_dim(v, dim: int):
    """The 2-norm of v over every dimension but `dim` (keepdim); over all of v if dim == -1."""
    if dim == -1:
        return v.norm(2)
    others = [d for d in range(v.dim()) if d != dim]
    if not others:
        return v.abs()
    return v.norm(2, others, keepdim=True)


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return weight_v * (weight_g / _norm_except_dim(weight_v, self._dim(weight_v)))

    def _dim(self, t) -> int:
        return self.dim if self.dim == -1 else self.dim % t.dim()

    def right_inverse(self, weight):
        return _norm_except_dim(weight, self._dim(weight)), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Reparametrizes module.<name> as g * v / ||v|| (norm over all dims but `dim`).

    The magnitude and direction are stored as parametrizations.<name>.original0 (g)
    and original1 (v).
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12):
        super().__init__()
        ndim = weight.dim()
        if dim >= ndim or dim < -ndim:
            raise IndexError(
                "Dimension out of range (expected to be in range of "
                f"[-{ndim}, {ndim - 1}] but got {dim})"
            )
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but got "
                f"n_power_iterations={n_power_iterations}"
            )
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            mat = self._as_matrix(weight)
            h, w = mat.shape
            u = flambeau.empty(h, dtype=weight.dtype).normal_(0, 1)
            v = flambeau.empty(w, dtype=weight.dtype).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=eps))
            # Start from well-converged singular vectors.
            self._power_method(mat, 15)

    def _as_matrix(self, weight):
        if self.dim != 0:
            rest = [d for d in range(weight.dim()) if d != self.dim]
            weight = weight.permute(self.dim, *rest)
        return weight.reshape(weight.shape[0], -1)

    def _power_method(self, mat, iterations: int) -> None:
        with no_grad():
            mat = mat.detach()
            for _ in range(iterations):
                self._u = F.normalize(flambeau.mv(mat, self._v), dim=0, eps=self.eps)
                self._v = F.normalize(flambeau.mv(mat.t(), self._u), dim=0, eps=self.eps)

    def forward(self, weight):
        if weight.dim() == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        mat = self._as_matrix(weight)
        if self.training:
            self._power_method(mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = flambeau.dot(u, flambeau.mv(mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:  # fmt: skip
    """Divides module.<name> by its largest singular value, estimated by power iteration.

    dim defaults to 0 (1 for transposed convolutions, whose output channels are dim 1).
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, flambeau.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if type(module).__name__.startswith("ConvTranspose") else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps)
    )
    return module


__all__ = ["weight_norm", "spectral_norm"]
