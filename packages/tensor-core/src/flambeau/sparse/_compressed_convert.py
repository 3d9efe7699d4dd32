"""Conversions between dense, COO and the compressed layouts, and the compressed
constructors (``sparse_csr_tensor`` ...)."""

from __future__ import annotations

import flambeau
from flambeau.sparse._base import SparseData
from flambeau.sparse._compressed import (
    BLOCKED,
    ROW_MAJOR,
    SparseCompressedTensor,
    block_size,
    check_compressed,
    compress,
    expand,
    make_compressed,
)
from flambeau.sparse._construct import as_tensor, dense_to_coo
from flambeau.sparse._coo import SparseCooTensor, coalesce, make_coo, to_dense

_LAYOUT_NAMES = {
    "sparse_csr": "Csr",
    "sparse_csc": "Csc",
    "sparse_bsr": "Bsr",
    "sparse_bsc": "Bsc",
}


def to_coo(s) -> SparseCooTensor:
    """A compressed matrix as COO (blocks expanded element by element)."""
    if isinstance(s, SparseCooTensor):
        return s
    outer, inner = expand(s._sp_compressed), s._sp_plain
    rows, cols = (outer, inner) if s._sp_layout in ROW_MAJOR else (inner, outer)
    values = s._sp_values
    if s._sp_layout in BLOCKED:
        r, c = block_size(s)
        dr = flambeau.arange(r).repeat_interleave(c)
        dc = flambeau.arange(c).repeat(r)
        rows = (rows.unsqueeze(1) * r + dr).reshape(-1)
        cols = (cols.unsqueeze(1) * c + dc).reshape(-1)
        values = values.reshape(-1)
    csr = s._sp_layout in ROW_MAJOR and s._sp_layout not in BLOCKED  # already row-major sorted
    coo = make_coo(flambeau.stack([rows, cols]), values, s.shape, coalesced=csr)
    return coo if csr else coalesce(coo)


def _check_blocksize(shape, blocksize):
    if blocksize is None or len(blocksize) != 2:
        raise RuntimeError("to_sparse_bsr/bsc: blocksize must be a tuple of two ints")
    r, c = blocksize
    if shape[0] % r or shape[1] % c:
        raise RuntimeError(
            f"Tensor size({shape[0]}, {shape[1]}) must be divisible by given blocksize ({r}, {c})."
        )
    return r, c


def to_compressed(x, layout, blocksize=None, dense_dim=None):
    """x (dense, COO or compressed) in the given compressed layout."""
    if dense_dim:
        raise RuntimeError("flambeau's compressed tensors have no dense dims (dense_dim)")
    if x.dim() != 2:
        raise RuntimeError(
            f"to_sparse_{layout._name[7:]}: expected a 2-D tensor, got {x.dim()}-D "
            "(flambeau has no batched compressed tensors)"
        )
    if isinstance(x, SparseCompressedTensor) and x._sp_layout is layout:
        if layout in BLOCKED and blocksize is not None and tuple(blocksize) != block_size(x):
            raise RuntimeError("to_sparse: the blocksize differs from the tensor's")
        return x
    if layout in BLOCKED:
        r, c = _check_blocksize(x.shape, blocksize)
        dense = x if not isinstance(x, SparseData) else to_dense(to_coo(x))
        grid = dense.reshape(x.shape[0] // r, r, x.shape[1] // c, c).permute(0, 2, 1, 3)
        blocks = dense_to_coo(grid, 2)
        indices, values = blocks._sp_indices, blocks._sp_values
        grid_shape = (x.shape[0] // r, x.shape[1] // c)
    else:
        coo = dense_to_coo(x) if not isinstance(x, SparseData) else coalesce(to_coo(x))
        indices, values, grid_shape = coo._sp_indices, coo._sp_values, tuple(x.shape)
    if layout in ROW_MAJOR:
        outer, inner, n_outer = indices[0], indices[1], grid_shape[0]
    else:  # column-major order: sort by (column, row)
        key = indices[1] * grid_shape[0] + indices[0]
        order = flambeau.argsort(key)
        outer, inner, values = indices[1][order], indices[0][order], values[order]
        n_outer = grid_shape[1]
    return make_compressed(layout, compress(outer, n_outer), inner, values, x.shape)


def sparse_compressed_tensor(
    compressed_indices,
    plain_indices,
    values,
    size=None,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
    check_invariants=None,
):
    """A compressed sparse matrix (CSR, CSC, BSR or BSC, as layout says) from its index
    arrays and values; size is inferred when not given. Invariants are always checked."""
    del pin_memory, check_invariants
    if layout not in (
        flambeau.sparse_csr,
        flambeau.sparse_csc,
        flambeau.sparse_bsr,
        flambeau.sparse_bsc,
    ):
        raise RuntimeError(
            f"sparse_compressed_tensor expected sparse compressed tensor layout but got {layout}"
        )
    values = as_tensor(values, dtype, device)
    compressed = as_tensor(compressed_indices, flambeau.int64, values.device)
    plain = as_tensor(plain_indices, flambeau.int64, values.device)
    blocked = layout in BLOCKED
    if values.dim() != (3 if blocked else 1):
        raise RuntimeError(
            f"values must be a {3 if blocked else 1}-D tensor "
            f"({'nnz x blocks' if blocked else 'nnz'}; flambeau has no batch or dense dims), "
            f"got {values.dim()}-D"
        )
    r, c = (values.shape[1], values.shape[2]) if blocked else (1, 1)
    if size is None:
        n_outer = compressed.shape[0] - 1
        n_inner = int(plain.max()) + 1 if plain.numel() else 0
        rows, cols = (n_outer, n_inner) if layout in ROW_MAJOR else (n_inner, n_outer)
        size = (rows * r, cols * c)
    size = tuple(size)
    if len(size) != 2:
        raise RuntimeError(
            f"size must have 2 dims (flambeau has no batched compressed tensors), got {len(size)}"
        )
    if blocked and (size[0] % r or size[1] % c):
        raise RuntimeError(f"size {list(size)} is not divisible by the blocksize ({r}, {c})")
    check_compressed(layout, compressed, plain, values, size)
    if requires_grad:
        values = values.detach().requires_grad_(True)
    return make_compressed(layout, compressed, plain, values, size)


def _constructor(layout_name: str):
    layout = getattr(flambeau, layout_name)
    compressed, plain = ("crow", "col") if layout in ROW_MAJOR else ("ccol", "row")

    # PyTorch's parameter names, which callers pass as keywords (crow_indices=, ...).
    if layout in ROW_MAJOR:

        def construct(crow_indices, col_indices, values, size=None, **kwargs):
            return sparse_compressed_tensor(
                crow_indices, col_indices, values, size, layout=layout, **kwargs
            )

    else:

        def construct(ccol_indices, row_indices, values, size=None, **kwargs):
            return sparse_compressed_tensor(
                ccol_indices, row_indices, values, size, layout=layout, **kwargs
            )

    construct.__name__ = f"{layout_name}_tensor"
    construct.__doc__ = (
        f"A sparse {_LAYOUT_NAMES[layout_name].upper()} matrix from {compressed}_indices, "
        f"{plain}_indices and values (see sparse_compressed_tensor)."
    )
    return construct


sparse_csr_tensor = _constructor("sparse_csr")
sparse_csc_tensor = _constructor("sparse_csc")
sparse_bsr_tensor = _constructor("sparse_bsr")
sparse_bsc_tensor = _constructor("sparse_bsc")
