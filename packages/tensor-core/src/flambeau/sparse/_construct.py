"""Making COO tensors: ``sparse_coo_tensor`` and dense ``to_sparse``."""

from __future__ import annotations

import flambeau
from flambeau.sparse._coo import make_coo


def as_tensor(data, dtype=None, device=None):
    """data (a tensor or nested sequence) as a tensor, converted as asked."""
    if isinstance(data, flambeau.Tensor):
        return data.to(device=device or data.device, dtype=dtype or data.dtype)
    return flambeau.tensor(data, dtype=dtype, device=device)


def check_coo(indices, shape) -> None:
    """Every index in range for its dim (PyTorch's invariant-check messages)."""
    if indices.shape[1] == 0:
        return
    low = indices.amin(1).tolist()
    high = indices.amax(1).tolist()
    for d, size in enumerate(shape[: indices.shape[0]]):
        if low[d] < 0:
            raise RuntimeError(f"found negative index {low[d]} for dim {d}")
        if high[d] >= size:
            raise RuntimeError(
                f"size is inconsistent with indices: for dim {d}, size is {size} but found "
                f"index {high[d]}"
            )


def _is_size(x) -> bool:
    return isinstance(x, (tuple, list)) and all(
        isinstance(d, int) and not isinstance(d, bool) for d in x
    )


def sparse_coo_tensor(
    indices=None,
    values=None,
    size=None,
    *,
    dtype=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
    check_invariants=None,
    is_coalesced=None,
):
    """A sparse COO tensor with the given indices (sparse_dim x nnz) and values (nnz x dense
    dims); its size is inferred from the largest index when not given. Given a size alone
    (``sparse_coo_tensor(size=(5, 3))``, or the size as the one argument), an empty one.

    Indices are always checked against the size (flambeau never reads out of range), with
    or without ``check_invariants``.
    """
    del pin_memory, check_invariants  # no pinned memory here; checks always run
    if values is None and size is None and _is_size(indices):
        indices, size = None, indices  # PyTorch's sparse_coo_tensor(size) overload
    if indices is None and values is None:
        if size is None:
            raise TypeError(
                "sparse_coo_tensor() missing required arguments: indices and values, or size"
            )
        shape = tuple(size)
        empty = flambeau.zeros(len(shape), 0, dtype=flambeau.int64, device=device)
        values = flambeau.zeros(0, dtype=dtype, device=device)
        return sparse_coo_tensor(empty, values, shape, requires_grad=requires_grad)
    if indices is None or values is None:
        raise TypeError("sparse_coo_tensor() takes both indices and values (or a size alone)")
    values = as_tensor(values, dtype, device)
    indices = as_tensor(indices, device=values.device)
    if indices.is_floating_point() or indices.dtype != flambeau.int64:
        indices = indices.to(flambeau.int64)
    if indices.dim() != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    sparse_dim, nnz = indices.shape
    if values.dim() == 0 or values.shape[0] != nnz:
        got = values.shape[0] if values.dim() else 1
        raise RuntimeError(
            "indices and values must have same nnz, but got nnz from indices: "
            f"{nnz}, nnz from values: {got}"
        )
    dense_shape = tuple(values.shape[1:])
    if size is None:
        sparse_shape = indices.amax(1).add(1).tolist() if nnz else [0] * sparse_dim
        shape = (*sparse_shape, *dense_shape)
    else:
        shape = tuple(size)
        if len(shape) != sparse_dim + len(dense_shape):
            raise RuntimeError(
                "'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = "
                f"{len(shape)}, sparse_dim = {sparse_dim}, dense_dim = {len(dense_shape)}"
            )
        if tuple(shape[sparse_dim:]) != dense_shape:
            raise RuntimeError(
                f"values has incorrect size, expected {list(shape[sparse_dim:])}, got "
                f"{list(dense_shape)}"
            )
    check_coo(indices, shape)
    if requires_grad:
        values = values.detach().requires_grad_(True)
    return make_coo(indices, values, shape, coalesced=bool(is_coalesced) or nnz <= 1)


def dense_to_coo(dense, sparse_dim=None):
    """The COO tensor of a dense one: entries (rows of the dense dims) that are not all zero."""
    ndim = dense.dim()
    if sparse_dim is None:
        sparse_dim = ndim
    if not 0 <= sparse_dim <= ndim:
        raise RuntimeError(
            f"dense_to_sparse: sparse_dim argument must be in [0,{ndim}] range, but "
            f"{sparse_dim} is given"
        )
    mask = dense.detach() != 0
    if sparse_dim < ndim:
        mask = mask.reshape((*dense.shape[:sparse_dim], -1)).any(-1)
    if sparse_dim == 0:
        indices = flambeau.zeros((0, 1), dtype=flambeau.int64, device=dense.device)
        return make_coo(indices, dense.unsqueeze(0), dense.shape, coalesced=True)
    indices = mask.nonzero().t().contiguous()
    values = dense[tuple(indices)]
    return make_coo(indices, values, dense.shape, coalesced=True)
