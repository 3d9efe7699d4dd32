"""COO operations: queries, conversions and element-wise arithmetic."""

from __future__ import annotations

import numbers

import flambeau
from flambeau.sparse._base import SparseData, register
from flambeau.sparse._coo import (
    OPS,
    SparseCooTensor,
    coalesce,
    linear_index,
    make_coo,
    sparse_dim,
    to_dense,
)

register(OPS, "coalesce")(coalesce)
register(OPS, "to_dense")(to_dense)


@register(OPS, "is_coalesced")
def is_coalesced(s) -> bool:
    return s._sp_coalesced


@register(OPS, "sparse_dim")
def _sparse_dim(s) -> int:
    return sparse_dim(s)


@register(OPS, "dense_dim")
def dense_dim(s) -> int:
    return s._sp_values.dim() - 1


@register(OPS, "_indices")
def raw_indices(s):
    return s._sp_indices


def _require_coalesced(s, what: str) -> None:
    if not s._sp_coalesced:
        raise RuntimeError(
            f"Cannot get {what} on an uncoalesced tensor, please call .coalesce() first"
        )


@register(OPS, "indices")
def indices(s):
    _require_coalesced(s, "indices")
    return s._sp_indices


@register(OPS, "values")
def values(s):
    _require_coalesced(s, "values")
    return s._sp_values


@register(OPS, "indices_copy")
def indices_copy(s):
    return indices(s).clone()


@register(OPS, "_coalesced_")
def set_coalesced_(s, coalesced: bool):
    s._sp_coalesced = bool(coalesced)
    return s


@register(OPS, "to_sparse", "to_sparse_coo")
def to_sparse(s, sparse_dim_=None, *, layout=None, blocksize=None, dense_dim=None):
    """COO stays COO (with the same sparse_dim); other layouts go through the compressed
    conversions."""
    if layout is not None and layout is not flambeau.sparse_coo:
        from flambeau.sparse._compressed_convert import to_compressed

        return to_compressed(s, layout, blocksize, dense_dim)
    if sparse_dim_ is not None and sparse_dim_ != sparse_dim(s):
        raise RuntimeError(
            "to_sparse: conversion from Sparse to Sparse with sparse_dim argument "
            "!=self.sparse_dim() is not supported"
        )
    return s


@register(OPS, "zero_")
def zero_(s):
    s._sp_indices = s._sp_indices[:, :0]
    s._sp_values = s._sp_values[:0].detach()
    s._sp_coalesced = True
    return s


def _is_scalar(x) -> bool:
    return isinstance(x, numbers.Number) or (
        isinstance(x, flambeau.Tensor) and not isinstance(x, SparseData) and x.dim() == 0
    )


def _with_values(s, values, coalesced=None):
    coalesced = s._sp_coalesced if coalesced is None else coalesced
    return make_coo(s._sp_indices, values, s.shape, coalesced)


def _in_place(s, result):
    """Makes s hold result's data (in-place ops; same shape)."""
    if result.dtype != s.dtype:
        raise RuntimeError(
            f"result type {result.dtype} can't be cast to the desired output type {s.dtype}"
        )
    s.__dict__.update(result.__dict__)
    return s


# Element-wise functions f with f(0) == 0: f of a sparse tensor is f of its values.
# Linear ones may act on uncoalesced values; the others need each element summed first.
_LINEAR = ("neg", "negative", "conj_physical", "conj", "resolve_conj")
_ZERO_PRESERVING = (
    "abs", "absolute", "sqrt", "sin", "sinh", "tan", "tanh", "asin", "arcsin", "asinh",
    "arcsinh", "atan", "arctan", "atanh", "arctanh", "expm1", "log1p", "sign", "sgn", "trunc",
    "fix", "floor", "ceil", "round", "frac", "erf", "erfinv", "square", "deg2rad", "rad2deg",
    "relu", "isnan", "isinf", "isposinf", "isneginf", "signbit", "nan_to_num", "angle",
)  # fmt: skip


def _unary(name: str, linear: bool):
    def op(s, *args, **kwargs):
        s2 = s if linear else coalesce(s)
        return _with_values(s2, getattr(flambeau, name)(s2._sp_values, *args, **kwargs))

    def op_(s, *args, **kwargs):
        return _in_place(s, op(s, *args, **kwargs))

    op.__name__, op_.__name__ = name, name + "_"
    op.__doc__ = f"``{name}`` of the specified elements (``{name}(0) == 0``)."
    return op, op_


for _name in (*_LINEAR, *_ZERO_PRESERVING):
    _op, _op_ = _unary(_name, _name in _LINEAR)
    register(OPS, _name)(_op)
    if hasattr(flambeau.Tensor, _name + "_"):
        register(OPS, _name + "_")(_op_)
register(OPS, "__neg__")(OPS["neg"])
register(OPS, "__abs__")(OPS["abs"])


@register(OPS, "pow", "__pow__")
def pow_(s, exponent):
    if not isinstance(s, SparseCooTensor) or not _is_scalar(exponent):
        raise _unsupported_combination("pow", s, exponent)
    if exponent == 0:
        raise RuntimeError(
            "pow: cannot raise to zeroth power on sparse tensor; it would make the result "
            "tensor dense"
        )
    s = coalesce(s)
    return _with_values(s, s._sp_values.pow(exponent))


@register(OPS, "pow_")
def pow_inplace(s, exponent):
    return _in_place(s, pow_(s, exponent))


def _unsupported_combination(op, a, b):
    kinds = ", ".join("sparse" if isinstance(x, SparseData) else "dense" for x in (a, b))
    return RuntimeError(f"{op}({kinds}) is not supported for sparse COO tensors")


def _check_same_size(op, a, b) -> None:
    if tuple(a.shape) != tuple(b.shape):
        raise RuntimeError(
            f"{op}: expected 'self' and 'other' to have same size, but self has size "
            f"{list(a.shape)} while other has size {list(b.shape)} (FYI: {op} for sparse "
            "tensors does not support broadcasting)"
        )


@register(OPS, "mul", "multiply", "__mul__", "__rmul__")
def mul(a, b):
    """Scalar or element-wise product; a sparse operand keeps the result sparse."""
    if not isinstance(a, SparseCooTensor):
        a, b = b, a
    if _is_scalar(b):
        return _with_values(a, a._sp_values * b)
    a = coalesce(a)
    if isinstance(b, SparseCooTensor):
        _check_same_size("mul", a, b)
        return _intersect_mul(a, coalesce(b))
    if isinstance(b, SparseData):
        raise _unsupported_combination("mul", a, b)
    # Dense: its elements at a's indices (broadcast to a's shape first).
    picked = b.expand(tuple(a.shape))[tuple(a._sp_indices)]
    return _with_values(a, a._sp_values * picked)


def _intersect_mul(a, b):
    sizes = tuple(a.shape[: sparse_dim(a)])
    ka, kb = linear_index(a._sp_indices, sizes), linear_index(b._sp_indices, sizes)
    if kb.shape[0] == 0 or ka.shape[0] == 0:
        keep = flambeau.zeros(ka.shape, dtype=flambeau.bool, device=ka.device)
        pos = flambeau.zeros(ka.shape, dtype=flambeau.int64, device=ka.device)
    else:
        pos = flambeau.searchsorted(kb, ka).clamp(max=kb.shape[0] - 1)
        keep = kb[pos] == ka
    product = a._sp_values[keep] * b._sp_values[pos[keep]]
    return make_coo(a._sp_indices[:, keep], product, a.shape, coalesced=True)


@register(OPS, "mul_", "__imul__")
def mul_inplace(a, b):
    return _in_place(a, mul(a, b))


@register(OPS, "div", "divide", "true_divide", "__truediv__")
def div(a, b, *, rounding_mode=None):
    """A sparse tensor divided by a scalar (zeros stay zero)."""
    if not isinstance(a, SparseCooTensor) or not _is_scalar(b):
        raise _unsupported_combination("div", a, b)
    if rounding_mode is not None:
        a = coalesce(a)  # rounding is not linear: each element must be summed first
    return _with_values(a, a._sp_values.div(b, rounding_mode=rounding_mode))


@register(OPS, "div_", "divide_", "true_divide_", "__itruediv__")
def div_inplace(a, b, *, rounding_mode=None):
    return _in_place(a, div(a, b, rounding_mode=rounding_mode))


_DENSE_FIRST = "add(sparse, dense) is not supported. Use add(dense, sparse) instead."


@register(OPS, "add", "__add__")
def add(a, b, *, alpha=1):
    """sparse + sparse -> sparse; dense + sparse -> dense (as PyTorch, not sparse + dense)."""
    if not isinstance(a, SparseData):
        return a.add(to_dense(b), alpha=alpha)
    if not isinstance(b, SparseCooTensor):
        raise RuntimeError(_DENSE_FIRST)
    _check_same_size("add", a, b)
    if sparse_dim(a) != sparse_dim(b):
        raise RuntimeError(
            f"add: expected same sparse_dim for both operands, got {sparse_dim(a)} and "
            f"{sparse_dim(b)}"
        )
    dtype = flambeau.result_type(a._sp_values, b._sp_values)
    other = b._sp_values if alpha == 1 else b._sp_values * alpha
    values = flambeau.cat([a._sp_values.to(dtype), other.to(dtype)])
    indices = flambeau.cat([a._sp_indices, b._sp_indices], 1)
    out = make_coo(indices, values, a.shape)
    return coalesce(out) if a._sp_coalesced and b._sp_coalesced else out


# Python tries a subclass's reflected operator first: dense + sparse arrives as
# sparse.__radd__(dense).
@register(OPS, "__radd__")
def radd(s, other):
    if isinstance(other, flambeau.Tensor):
        return add(other, s)
    raise RuntimeError(_DENSE_FIRST)


@register(OPS, "sub", "subtract", "__sub__")
def sub(a, b, *, alpha=1):
    if isinstance(a, SparseData) and not isinstance(b, SparseData):
        raise RuntimeError(_DENSE_FIRST.replace("add", "sub"))
    return add(a, b, alpha=-alpha)


@register(OPS, "__rsub__")
def rsub(s, other):
    if isinstance(other, flambeau.Tensor):
        return add(other, s, alpha=-1)
    raise RuntimeError(_DENSE_FIRST.replace("add", "sub"))


@register(OPS, "add_", "__iadd__")
def add_inplace(a, b, *, alpha=1):
    if not isinstance(a, SparseData):
        return a.add_(to_dense(b), alpha=alpha)
    return _in_place(a, add(a, b, alpha=alpha))


@register(OPS, "sub_", "__isub__")
def sub_inplace(a, b, *, alpha=1):
    return add_inplace(a, b, alpha=-alpha)
