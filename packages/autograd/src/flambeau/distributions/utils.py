"""Helpers shared by the distributions: broadcasting parameters, probs/logits, lazy properties."""

from __future__ import annotations

import functools
from numbers import Number

import flambeau as F
from flambeau.autograd import enable_grad

euler_constant = 0.57721566490153286060  # Euler–Mascheroni constant

__all__ = [
    "broadcast_all",
    "broadcast_shape",
    "clamp_probs",
    "euler_constant",
    "is_tensor_like",
    "lazy_property",
    "logits_to_probs",
    "probs_to_logits",
    "tril_matrix_to_vec",
    "vec_to_tril_matrix",
]


def is_tensor_like(x) -> bool:
    return isinstance(x, F.Tensor)


def broadcast_shape(*shapes) -> F.Size:
    """NumPy broadcasting of several shapes; RuntimeError when they do not broadcast."""
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for shape in shapes:
        for i, size in enumerate(shape, start=ndim - len(shape)):
            if size == 1 or size == out[i]:
                continue
            if out[i] != 1:
                raise RuntimeError(
                    "shape mismatch: objects cannot be broadcast to a single shape: "
                    f"{[tuple(s) for s in shapes]}"
                )
            out[i] = size
    return F.Size(out)


def broadcast_tensors(*tensors):
    """Views of ``tensors`` expanded to their common broadcast shape."""
    shape = broadcast_shape(*(t.shape for t in tensors))
    return tuple(t.expand(shape) for t in tensors)


def broadcast_all(*values):
    """Broadcasts tensors and numbers to one shape; numbers take the tensors' dtype."""
    if not all(isinstance(v, (F.Tensor, Number)) for v in values):
        raise ValueError(
            "Input arguments must all be instances of numbers.Number, flambeau.Tensor or objects "
            "implementing __torch_function__."
        )
    tensors = [v for v in values if isinstance(v, F.Tensor)]
    if not tensors:
        dtype = F.get_default_dtype()
        return tuple(F.tensor(float(v), dtype=dtype) for v in values)
    dtype = tensors[0].dtype
    if not dtype.is_floating_point:
        dtype = F.get_default_dtype()
    values = [v if isinstance(v, F.Tensor) else F.tensor(float(v), dtype=dtype) for v in values]
    return broadcast_tensors(*values)


def _standard_normal(shape, dtype, device=None):
    return F.randn(tuple(shape), dtype=dtype)


def _sum_rightmost(value, dim: int):
    """Sums out the ``dim`` rightmost dimensions."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[: value.dim() - dim]) + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary: bool = False):
    if is_binary:
        return F.sigmoid(logits)
    return F.softmax(logits, dim=-1)


def clamp_probs(probs):
    """Keeps probabilities in the open interval (0, 1), a float epsilon away from the ends."""
    eps = F.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary: bool = False):
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return F.log(ps_clamped) - F.log1p(-ps_clamped)
    return F.log(ps_clamped)


class lazy_property:
    """A property computed once per instance (with gradients on) and then cached in __dict__."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        functools.update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """What a lazy_property is on the class: also a property, so documentation tools see it."""

    def __init__(self, wrapped):
        property.__init__(self, wrapped)
        lazy_property.__init__(self, wrapped)


def _tril_indices(n: int, diag: int):
    rows, cols = [], []
    for r in range(n):
        for c in range(min(r + diag + 1, n)):
            rows.append(r)
            cols.append(c)
    return rows, cols


def tril_matrix_to_vec(mat, diag: int = 0):
    """The lower triangle (below ``diag``) of the last two dims, row by row, as a vector."""
    n = mat.shape[-1]
    if not (-n <= diag < n):
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    rows, cols = _tril_indices(n, diag)
    flat = [r * n + c for r, c in zip(rows, cols)]
    return mat.reshape(tuple(mat.shape[:-2]) + (n * n,))[..., F.tensor(flat)]


def vec_to_tril_matrix(vec, diag: int = 0):
    """Inverse of tril_matrix_to_vec: fills a square lower-triangular matrix from a vector."""
    # n*(n+1)/2 + diag*n entries for an n x n matrix: solve the quadratic for n.
    n = (
        -(1 + 2 * diag)
        + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5
    ) / 2
    eps = F.finfo(vec.dtype).eps
    if not round(n) - eps <= n <= round(n) + eps:
        raise ValueError(
            f"The size of last dimension is {vec.shape[-1]} which cannot be "
            "expressed as the lower triangular part of a square D x D matrix."
        )
    n = round(n)
    rows, cols = _tril_indices(n, diag)
    flat = F.tensor([r * n + c for r, c in zip(rows, cols)])
    batch = tuple(vec.shape[:-1])
    mat = F.zeros(batch + (n * n,), dtype=vec.dtype)
    mat = _scatter_last(mat, flat, vec)
    return mat.reshape(batch + (n, n))


def _scatter_last(target, index, src):
    """``target`` with ``src`` written at positions ``index`` of its last dim (differentiable)."""
    idx = index.expand(tuple(src.shape))
    return target.scatter(-1, idx, src)
