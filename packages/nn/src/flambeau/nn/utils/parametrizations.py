"""Ready-made parametrizations: weight_norm, spectral_norm, orthogonal."""

from __future__ import annotations

import math

import flambeau
from flambeau import no_grad

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

    >>> import flambeau.nn as nn
    >>> from flambeau.nn.utils.parametrizations import weight_norm
    >>> layer = weight_norm(nn.Linear(4, 3))
    >>> g = layer.parametrizations.weight.original0
    >>> v = layer.parametrizations.weight.original1
    >>> g.shape, v.shape
    (flambeau.Size([3, 1]), flambeau.Size([3, 4]))
    >>> flambeau.allclose(layer.weight, g * v / v.norm(dim=1, keepdim=True))
    True
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

    >>> import flambeau.nn as nn
    >>> from flambeau.nn.utils.parametrizations import spectral_norm
    >>> _ = flambeau.manual_seed(0)
    >>> layer = spectral_norm(nn.Linear(4, 3))
    >>> for _ in range(20):
    ...     _ = layer(flambeau.randn(1, 4))
    >>> round(flambeau.linalg.matrix_norm(layer.weight, ord=2).item(), 2)
    1.0
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


def _matrix_exp(a):
    """exp(a) of (a batch of) square matrices by scaling and squaring a Taylor series.

    Built from matmul, so autograd differentiates it (and through it, the parametrization).
    """
    n = a.shape[-1]
    with no_grad():
        norm = float(a.detach().abs().sum(-1).max()) if a.numel() else 0.0
    squarings = max(0, math.ceil(math.log2(norm)) + 1) if norm > 0.5 else 0
    a = a / (2.0**squarings)
    eye = flambeau.eye(n, dtype=a.dtype)
    result, term = eye + a, a
    for k in range(2, 14):  # ||a|| <= 0.5: the remainder is below 1e-17
        term = flambeau.matmul(term, a) / k
        result = result + term
    for _ in range(squarings):
        result = flambeau.matmul(result, result)
    return result


def _householder_product(a, tau):
    """The first k columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^T, v_i = e_i + a[i+1:, i]."""
    n, k = a.shape[-2], a.shape[-1]
    eye = flambeau.eye(n, dtype=a.dtype)
    q = eye.expand(*a.shape[:-2], n, n)
    for i in range(k):
        v = (a[..., :, i] + eye[:, i]).unsqueeze(-1)  # a is zero on and above the diagonal
        h = eye - tau[..., i].unsqueeze(-1).unsqueeze(-1) * flambeau.matmul(v, v.transpose(-2, -1))
        q = flambeau.matmul(q, h)
    return q[..., :k]


def _make_orthogonal(a):
    """The Q of a = QR with R's diagonal made positive (unique), through NumPy."""
    import numpy as np  # here: importing NumPy would triple the time of `import flambeau.nn`

    arr = a.detach().numpy()
    q, r = np.linalg.qr(arr)
    signs = np.sign(np.diagonal(r, axis1=-2, axis2=-1))
    signs[signs == 0] = 1
    return flambeau.from_numpy(np.ascontiguousarray(q * signs[..., None, :])).to(a.dtype)


def _is_orthogonal(q) -> bool:
    n, k = q.shape[-2], q.shape[-1]
    eps = 10 * n * flambeau.finfo(q.dtype).eps
    return bool(
        flambeau.allclose(
            flambeau.matmul(q.transpose(-2, -1), q), flambeau.eye(k, dtype=q.dtype), atol=eps
        )
    )


class _Orthogonal(Module):
    # Trivialization: the weight is base @ map(X), with base set (orthogonal) on assignment
    # and X starting where the map gives the identity.
    def __init__(self, weight, orthogonal_map: str):
        super().__init__()
        self.shape = tuple(weight.shape)
        self.orthogonal_map = orthogonal_map
        self.register_buffer("base", None)

    def forward(self, x):
        n, k = x.shape[-2], x.shape[-1]
        transposed = n < k
        if transposed:
            x = x.transpose(-2, -1)
            n, k = k, n
        if self.orthogonal_map in ("matrix_exp", "cayley"):
            x = x.tril()
            if n != k:
                pad = flambeau.zeros((*x.shape[:-2], n, n - k), dtype=x.dtype)
                x = flambeau.cat([x, pad], dim=-1)
            skew = x - x.transpose(-2, -1)
            if self.orthogonal_map == "matrix_exp":
                q = _matrix_exp(skew)[..., :k]
            else:  # the Cayley map (I - A/2)^{-1} (I + A/2), orthogonal for skew A
                eye = flambeau.eye(n, dtype=x.dtype)
                q = flambeau.linalg.solve(eye - 0.5 * skew, eye + 0.5 * skew)[..., :k]
        else:
            a = x.tril(-1)
            tau = 2.0 / (1.0 + (a * a).sum(-2))
            q = _householder_product(a, tau)
            # Flips the columns whose diagonal entry of x is negative (see right_inverse).
            q = q * x.diagonal(0, -2, -1).sign().unsqueeze(-2)
        if self.base is not None:
            q = flambeau.matmul(self.base, q)
        return q.transpose(-2, -1) if transposed else q

    def right_inverse(self, q):
        if tuple(q.shape) != self.shape:
            raise ValueError(
                f"Expected a matrix or batch of matrices of shape {self.shape}. Got a tensor of "
                f"shape {tuple(q.shape)}."
            )
        with no_grad():
            q_init = q
            n, k = q.shape[-2], q.shape[-1]
            transposed = n < k
            if transposed:
                q = q.transpose(-2, -1)
                n, k = k, n
            if n == k:
                q = q.clone() if _is_orthogonal(q) else _make_orthogonal(q)
            else:
                extra = flambeau.randn(*q.shape[:-2], n, n - k, dtype=q.dtype)
                q = _make_orthogonal(flambeau.cat([q, extra], dim=-1))
            self.base = q
            # -I: every map sends it to the identity, so the weight becomes base[..., :k].
            neg_id = flambeau.zeros_like(q_init)
            neg_id.diagonal(0, -2, -1).fill_(-1.0)
            return neg_id


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:  # fmt: skip
    """Constrains module.<name> to (a batch of) orthogonal or semi-orthogonal matrices.

    orthogonal_map: "matrix_exp" (default for square matrices), "cayley" or "householder"
    (default otherwise). The weight keeps its current value, orthogonalised by QR.

    >>> import flambeau.nn as nn
    >>> from flambeau.nn.utils.parametrizations import orthogonal
    >>> layer = orthogonal(nn.Linear(3, 3))
    >>> flambeau.allclose(layer.weight @ layer.weight.T, flambeau.eye(3), atol=1e-5)
    True
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, flambeau.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.dim() < 2:
        raise ValueError(
            f"Expected a matrix or batch of matrices. Got a tensor of {weight.dim()} dimensions."
        )
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] else "householder"
    if orthogonal_map not in ("matrix_exp", "cayley", "householder"):
        raise ValueError(
            'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
            f"Got: {orthogonal_map}"
        )
    if not use_trivialization:
        raise ValueError(
            "orthogonal: use_trivialization=False is not supported by flambeau (it needs a QR "
            "with Householder reflectors, geqrf)"
        )
    orth = _Orthogonal(weight, orthogonal_map)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


__all__ = ["weight_norm", "spectral_norm", "orthogonal"]
