"""The compressed sparse layouts: CSR, CSC and their blocked forms BSR, BSC.

A compressed matrix stores, per row (CSR/BSR) or column (CSC/BSC), where its elements
start in the ``plain`` indices (``compressed_indices``, length rows + 1) and each
element's column (row); values are scalars, or blocks for BSR/BSC. flambeau holds 2-D
compressed matrices (no batch or dense dims); operations go through COO.
"""

from __future__ import annotations

import flambeau
from flambeau._dtype_aliases import sparse_bsc, sparse_bsr, sparse_csc, sparse_csr
from flambeau.sparse._base import SparseData, wrap

OPS: dict = {}  # the compressed layouts' op table (see _compressed_ops)

ROW_MAJOR = (sparse_csr, sparse_bsr)  # compressed over rows; the others over columns
BLOCKED = (sparse_bsr, sparse_bsc)
NAMES = {
    sparse_csr: ("crow_indices", "col_indices"),
    sparse_bsr: ("crow_indices", "col_indices"),
    sparse_csc: ("ccol_indices", "row_indices"),
    sparse_bsc: ("ccol_indices", "row_indices"),
}


class SparseCompressedTensor(SparseData):
    """A matrix in one of the compressed layouts (``flambeau.sparse_csr`` ...)."""

    __slots__ = ()
    _OPS = OPS
    _BACKEND_PREFIX = "SparseCsr"

    @property
    def layout(self):
        return self._sp_layout

    @property
    def is_sparse(self):
        return False

    @property
    def is_sparse_csr(self):
        return self._sp_layout is sparse_csr

    def _repr_parts(self):
        compressed, plain = NAMES[self._sp_layout]
        return (
            (compressed, self._sp_compressed),
            (plain, self._sp_plain),
            ("values", self._sp_values),
        )


def make_compressed(layout, compressed, plain, values, shape) -> SparseCompressedTensor:
    return wrap(
        SparseCompressedTensor,
        shape,
        values.dtype,
        values.device,
        _sp_layout=layout,
        _sp_compressed=compressed,
        _sp_plain=plain,
        _sp_values=values,
    )


def block_size(s) -> tuple[int, int]:
    return tuple(s._sp_values.shape[1:3]) if s._sp_layout in BLOCKED else (1, 1)


def compress(sorted_outer, n_outer: int):
    """Compressed indices (n_outer + 1 offsets) of sorted outer indices."""
    counts = flambeau.bincount(sorted_outer, minlength=n_outer)
    return flambeau.cat([counts.new_zeros(1), counts.cumsum(0)])


def expand(compressed):
    """The outer index of each element of compressed indices."""
    n = compressed.shape[0] - 1
    return flambeau.repeat_interleave(
        flambeau.arange(n, device=compressed.device), compressed.diff()
    )


def check_compressed(layout, compressed, plain, values, shape) -> None:
    """PyTorch's invariants for compressed indices, with its messages."""
    c_name, p_name = NAMES[layout]
    rows, cols = shape
    r, c = (values.shape[1], values.shape[2]) if layout in BLOCKED else (1, 1)
    n_outer, n_inner = (rows // r, cols // c) if layout in ROW_MAJOR else (cols // c, rows // r)
    if compressed.dim() != 1 or plain.dim() != 1:
        raise RuntimeError(
            f"{c_name} and {p_name} must be 1-D (flambeau has no batched compressed tensors)"
        )
    if compressed.shape[0] != n_outer + 1:
        raise RuntimeError(
            f"{c_name}.size(-1) must be equal to size[-{2 if layout in ROW_MAJOR else 1}] + 1 "
            f"(that is {n_outer + 1}), but got: {compressed.shape[0]}"
        )
    if plain.shape[0] != values.shape[0]:
        raise RuntimeError(
            f"{p_name} and values must have the same number of elements, but got "
            f"{p_name}.numel(): {plain.shape[0]}, values.numel(): {values.shape[0]}"
        )
    if int(compressed[0]) != 0:
        raise RuntimeError(f"`{c_name}[..., 0] == 0` is not satisfied.")
    if int(compressed[-1]) != plain.shape[0]:
        raise RuntimeError(f"`{c_name}[..., -1] == nnz` is not satisfied.")
    if compressed.shape[0] > 1 and bool((compressed.diff() < 0).any()):
        raise RuntimeError(
            f"`0 <= {c_name}[..., 1:] - {c_name}[..., :-1] <= {n_inner}` is not satisfied."
        )
    if plain.shape[0] and (int(plain.min()) < 0 or int(plain.max()) >= n_inner):
        raise RuntimeError(f"`0 <= {p_name} < {n_inner}` is not satisfied.")
    if plain.shape[0] > 1:
        outer = expand(compressed)
        same = outer[1:] == outer[:-1]
        if bool((same & (plain[1:] <= plain[:-1])).any()):
            raise RuntimeError(
                f"`{p_name}[..., {c_name}[..., i - 1]:{c_name}[..., i]] for all i = 1, ..., "
                f"{n_outer} are sorted and distinct along the last dimension values` is not "
                "satisfied."
            )
