"""Helpers shared by the distributions: broadcasting parameters, probs/logits, lazy properties."""

from __future__ import annotations

import functools
from numbers import Number

import flambeau as F
from flambeau.autograd import enable_grad

euler_constant = 0.57721566490153286060  # Euler–Mascheroni constant

__all__ = [
    "broadcast_all",
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
    return F.broadcast_tensors(*values)


def _set_probs_or_logits(dist, probs, logits, *others):
    """Stores on dist whichever of probs and logits is given (exactly one must be), broadcast
    with others (and as dist._param, the parameter the distribution was built from); returns
    the broadcast others."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    name, value = ("probs", probs) if probs is not None else ("logits", logits)
    *others, param = broadcast_all(*others, value)
    setattr(dist, name, param)  # the instance's value shadows the lazy property
    dist._param = param
    return others


def _expand_probs_or_logits(dist, new, shape) -> None:
    """Gives new the probs and the logits dist holds (given or already computed), expanded to
    shape; new._param is the last of them, as dist's expand has it in PyTorch."""
    for name in ("probs", "logits"):
        if name in dist.__dict__:
            setattr(new, name, getattr(dist, name).expand(shape))
            new._param = getattr(new, name)


def _standard_normal(shape, dtype, device=None):
    return F.randn(tuple(shape), dtype=dtype)


def _sum_rightmost(value, dim: int):
    """Sums out the ``dim`` rightmost dimensions."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[: value.dim() - dim]) + (-1,)).sum(-1)


def _bce_with_logits(logits, target):
    """-(target log sigmoid(logits) + (1 - target) log sigmoid(-logits)), element by element
    (the core's kernel; reduction 0 is none)."""
    return F.binary_cross_entropy_with_logits(logits, target, reduction=0)


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


def _tril_flat_indices(n: int, diag: int):
    """Positions in a row-major flattened n x n matrix of its lower triangle (below diag)."""
    rows, cols = F.tril_indices(n, n, diag)
    return rows * n + cols


def tril_matrix_to_vec(mat, diag: int = 0):
    """The lower triangle (below ``diag``) of the last two dims, row by row, as a vector."""
    n = mat.shape[-1]
    if not (-n <= diag < n):
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    flat = _tril_flat_indices(n, diag)
    return mat.reshape(tuple(mat.shape[:-2]) + (n * n,))[..., flat]


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
    flat = _tril_flat_indices(n, diag)
    batch = tuple(vec.shape[:-1])
    mat = F.zeros(batch + (n * n,), dtype=vec.dtype)
    mat = _scatter_last(mat, flat, vec)
    return mat.reshape(batch + (n, n))


def _scatter_last(target, index, src):
    """``target`` with ``src`` written at positions ``index`` of its last dim (differentiable)."""
    idx = index.expand(tuple(src.shape))
    return target.scatter(-1, idx, src)


class _BinaryProbsLogits:
    """probs and logits of a distribution over a success probability, set up by
    _set_probs_or_logits from one of them; the other is computed on first use."""

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()
