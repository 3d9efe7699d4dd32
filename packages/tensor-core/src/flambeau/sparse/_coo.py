"""The sparse COO layout: ``indices`` (int64, sparse_dim x nnz) and ``values`` (nnz x the
dense dims), possibly with repeated or unsorted indices until coalesced.

The helpers here (linear indices, coalescing, densifying) are compositions of dense
flambeau ops, so autograd flows from the result back to ``values``.
"""

from __future__ import annotations

import math

import flambeau
from flambeau._dtype_aliases import sparse_coo
from flambeau.sparse._base import SparseData, wrap

OPS: dict = {}  # the COO op table, filled by the _coo_* modules


class SparseCooTensor(SparseData):
    """A sparse tensor in COO layout (``flambeau.sparse_coo``)."""

    __slots__ = ()
    _OPS = OPS
    _BACKEND_PREFIX = "Sparse"

    @property
    def layout(self):
        return sparse_coo

    @property
    def is_sparse(self):
        return True

    def _repr_parts(self):
        return (("indices", self._sp_indices), ("values", self._sp_values))


def make_coo(indices, values, shape, coalesced: bool = False) -> SparseCooTensor:
    """A COO tensor over the given (checked) indices and values."""
    return wrap(
        SparseCooTensor,
        shape,
        values.dtype,
        values.device,
        _sp_indices=indices,
        _sp_values=values,
        _sp_coalesced=bool(coalesced),
    )


def sparse_dim(s) -> int:
    return s._sp_indices.shape[0]


def nnz(s) -> int:
    return s._sp_indices.shape[1]


def linear_index(indices, sizes):
    """Each column of indices as one row-major position in a tensor of the given sizes."""
    flat = flambeau.zeros((indices.shape[1],), dtype=flambeau.int64, device=indices.device)
    for d, size in enumerate(sizes):
        flat = flat * size + indices[d]
    return flat


def unravel(flat, sizes):
    """The inverse of linear_index: a (len(sizes), n) index tensor."""
    rows = []
    for size in reversed(sizes):
        rows.append(flat % size)
        flat = flat // size
    rows.reverse()
    if not rows:
        return flambeau.zeros((0, flat.shape[0]), dtype=flambeau.int64, device=flat.device)
    return flambeau.stack(rows)


def accumulate(values, index, n: int):
    """Rows of values summed into n rows by index (index_add; bool sums as logical or)."""
    if values.dtype == flambeau.bool:
        return accumulate(values.to(flambeau.int64), index, n) != 0
    out = flambeau.zeros((n, *values.shape[1:]), dtype=values.dtype, device=values.device)
    return out.index_add(0, index, values)


def coalesce(s) -> SparseCooTensor:
    """s with its indices unique and sorted, the values of repeated indices summed."""
    if s._sp_coalesced:
        return s
    indices, values = s._sp_indices, s._sp_values
    sizes = tuple(s.shape[: sparse_dim(s)])
    if indices.shape[1] == 0:
        return make_coo(indices, values, s.shape, coalesced=True)
    keys, inverse = flambeau.unique(linear_index(indices, sizes), sorted=True, return_inverse=True)
    summed = accumulate(values, inverse, keys.shape[0])
    return make_coo(unravel(keys, sizes), summed, s.shape, coalesced=True)


def to_dense(s, dtype=None, *, masked_grad=None):
    """The dense tensor s stands for (differentiable with respect to its values)."""
    del masked_grad  # gradients reach the values, which are masked by construction
    sd = sparse_dim(s)
    sizes = tuple(s.shape[:sd])
    flat = linear_index(s._sp_indices, sizes)
    dense = accumulate(s._sp_values, flat, math.prod(sizes)).reshape(tuple(s.shape))
    return dense if dtype is None else dense.to(dtype)
