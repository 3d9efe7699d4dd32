"""flambeau.functional: the module PyTorch's Python-written tensor functions live in
(``torch.functional``), whose names are also top-level ``flambeau.<name>``: the same
objects, so ``flambeau.functional.einsum is flambeau.einsum`` as in PyTorch (libraries
test membership in sets of them, as opt_einsum_fx does).

>>> import flambeau.functional
>>> flambeau.functional.einsum is flambeau.einsum
True
"""

from __future__ import annotations

from flambeau import (  # noqa: F401
    atleast_1d,
    atleast_2d,
    atleast_3d,
    block_diag,
    broadcast_shapes,
    broadcast_tensors,
    cartesian_prod,
    cdist,
    chain_matmul,
    einsum,
    istft,
    lu,
    meshgrid,
    norm,
    pca_lowrank,
    split,
    stft,
    svd_lowrank,
    tensordot,
    unique,
    unique_consecutive,
    unravel_index,
)

__all__ = [
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "broadcast_shapes",
    "broadcast_tensors",
    "cartesian_prod",
    "block_diag",
    "cdist",
    "chain_matmul",
    "einsum",
    "istft",
    "lu",
    "norm",
    "meshgrid",
    "pca_lowrank",
    "split",
    "stft",
    "svd_lowrank",
    "tensordot",
    "unique",
    "unique_consecutive",
    "unravel_index",
]
