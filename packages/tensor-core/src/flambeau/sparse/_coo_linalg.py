"""COO matrix products: mm/matmul/@, spmm, smm, hspmm, sspaddmm, addmm.

sparse @ dense gathers the dense rows each stored element needs and sums them into
the output rows (index_add), so gradients reach the dense operand and the values.
"""

from __future__ import annotations

import flambeau
from flambeau.sparse._base import SparseData, register
from flambeau.sparse._coo import OPS, SparseCooTensor, coalesce, make_coo, to_dense


def _check_matrix(x, op: str) -> None:
    if x.dim() != 2:
        raise RuntimeError(f"{op}: expected 2D matrices, got {x.dim()}D tensor")
    if isinstance(x, SparseCooTensor) and x._sp_values.dim() != 1:
        raise RuntimeError(f"{op}: expected a sparse matrix without dense dims")


def _check_shapes(a, b) -> None:
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and "
            f"{b.shape[0]}x{b.shape[1]})"
        )


def _sparse_dense(a, b):
    rows, cols = a._sp_indices
    contributions = a._sp_values.unsqueeze(1) * b[cols]
    out = flambeau.zeros(
        (a.shape[0], b.shape[1]), dtype=contributions.dtype, device=contributions.device
    )
    return out.index_add(0, rows, contributions)


def _sparse_sparse(a, b):
    """Every stored a[i, k] meets every stored b[k, j]: the pairs, summed by coalescing."""
    a, b = coalesce(a), coalesce(b)
    (a_rows, a_cols), (b_rows, b_cols) = a._sp_indices, b._sp_indices
    per_k = flambeau.bincount(b_rows, minlength=b.shape[0])
    first = per_k.cumsum(0) - per_k  # where row k of b starts (b is sorted by row)
    count = per_k[a_cols]
    a_entry = flambeau.repeat_interleave(flambeau.arange(a_cols.shape[0]), count)
    offset = flambeau.arange(a_entry.shape[0]) - (count.cumsum(0) - count)[a_entry]
    b_entry = first[a_cols[a_entry]] + offset
    indices = flambeau.stack([a_rows[a_entry], b_cols[b_entry]])
    values = a._sp_values[a_entry] * b._sp_values[b_entry]
    return coalesce(make_coo(indices, values, (a.shape[0], b.shape[1])))


@register(OPS, "mm", "spmm")
def mm(a, b):
    """sparse @ dense and dense @ sparse -> dense; sparse @ sparse -> sparse."""
    _check_matrix(a, "mm")
    _check_matrix(b, "mm")
    _check_shapes(a, b)
    a_sparse, b_sparse = isinstance(a, SparseData), isinstance(b, SparseData)
    if (a_sparse and not isinstance(a, SparseCooTensor)) or (
        b_sparse and not isinstance(b, SparseCooTensor)
    ):
        from flambeau.sparse._compressed_ops import mm as compressed_mm

        return compressed_mm(a, b)
    if a_sparse and b_sparse:
        return _sparse_sparse(a, b)
    if a_sparse:
        return _sparse_dense(a, b)
    return _sparse_dense(transpose_coo(b), a.t()).t()


def transpose_coo(s):
    """A 2-D COO matrix transposed (indices swapped; no longer sorted)."""
    return make_coo(s._sp_indices.flip(0), s._sp_values, (s.shape[1], s.shape[0]))


@register(OPS, "matmul", "__matmul__")
def matmul(a, b):
    if b.dim() == 1 and a.dim() == 2:
        return mm(a, b.unsqueeze(1)).squeeze(1) if not isinstance(b, SparseData) else _nd(a, b)
    if a.dim() == 1 and b.dim() == 2 and not isinstance(a, SparseData):
        return mm(a.unsqueeze(0), b).squeeze(0)
    if a.dim() != 2 or b.dim() != 2:
        return _nd(a, b)
    return mm(a, b)


def _nd(a, b):
    raise RuntimeError(
        f"matmul: sparse operands must be 2-D matrices (got {a.dim()}D and {b.dim()}D)"
    )


@register(OPS, "__rmatmul__")
def rmatmul(s, other):
    return matmul(other, s)


@register(OPS, "addmm")
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """beta * input + alpha * (mat1 @ mat2), dense (a sparse input is densified)."""
    product = mm(mat1, mat2)
    if isinstance(product, SparseData):
        product = to_dense(product)
    if isinstance(input, SparseData):
        input = to_dense(input)
    product = product if alpha == 1 else product * alpha
    if beta == 0:  # input is ignored, nan and inf included
        return product.expand(tuple(input.shape)).clone() if input.dim() else product
    return product + (input if beta == 1 else input * beta)


@register(OPS, "hspmm")
def hspmm(mat1, mat2):
    """mat1 @ mat2 as a hybrid COO tensor: one sparse dim (mat1's non-empty rows) and the
    result rows as dense values."""
    if not isinstance(mat1, SparseCooTensor) or isinstance(mat2, SparseData):
        raise RuntimeError("hspmm: expected a sparse COO mat1 and a dense mat2")
    dense = mm(mat1, mat2)
    rows = flambeau.unique(mat1._sp_indices[0], sorted=True)
    return make_coo(rows.unsqueeze(0), dense[rows], dense.shape, coalesced=True)


@register(OPS, "smm")
def smm(mat1, mat2):
    """mat1 @ mat2 as a COO tensor holding every element of mat1's non-empty rows."""
    hybrid = hspmm(mat1, mat2)
    rows = hybrid._sp_indices[0]
    n = mat2.shape[1]
    indices = flambeau.stack([rows.repeat_interleave(n), flambeau.arange(n).repeat(rows.shape[0])])
    return make_coo(indices, hybrid._sp_values.reshape(-1), hybrid.shape, coalesced=True)


@register(OPS, "sspaddmm")
def sspaddmm(input, mat1, mat2, *, beta=1, alpha=1):
    """beta * input + alpha * (mat1 @ mat2) as a (not coalesced) COO tensor."""
    if not isinstance(input, SparseCooTensor) or not isinstance(mat1, SparseCooTensor):
        raise RuntimeError("sspaddmm: expected sparse COO input and mat1 and a dense mat2")
    product = smm(mat1, mat2)
    if tuple(input.shape) != tuple(product.shape):
        raise RuntimeError(
            f"sspaddmm: Argument #1: Expected dim 0 size {product.shape[0]}, got {input.shape[0]}"
        )
    values = flambeau.cat([input._sp_values * beta, product._sp_values * alpha])
    indices = flambeau.cat([input._sp_indices, product._sp_indices], 1)
    return make_coo(indices, values, input.shape)
