"""flambeau.linalg: PyTorch's ``torch.linalg`` functions.

Each is a core operator declared in ``ops/linalg_lapack.yaml`` under its aten
name (``linalg_det``), bound in ``flambeau._C`` under that name, and
re-exported here under PyTorch's name (``flambeau.linalg.det``).
"""

# ruff: noqa: F401, I001  (one import, in PyTorch's names)
from flambeau._C import (
    linalg_cholesky as cholesky,
    linalg_cholesky_ex as cholesky_ex,
    linalg_cross as cross,
    linalg_det as det,
    linalg_eig as eig,
    linalg_eigh as eigh,
    linalg_eigvals as eigvals,
    linalg_eigvalsh as eigvalsh,
    linalg_inv as inv,
    linalg_inv_ex as inv_ex,
    linalg_lstsq as lstsq,
    linalg_lu as lu,
    linalg_lu_factor as lu_factor,
    linalg_lu_solve as lu_solve,
    linalg_matrix_norm as matrix_norm,
    linalg_matrix_power as matrix_power,
    linalg_matrix_rank as matrix_rank,
    linalg_norm as norm,
    linalg_pinv as pinv,
    linalg_qr as qr,
    linalg_slogdet as slogdet,
    linalg_solve as solve,
    linalg_solve_triangular as solve_triangular,
    linalg_svd as svd,
    linalg_svdvals as svdvals,
    linalg_vector_norm as vector_norm,
    matmul,
)

__all__ = [
    "cholesky",
    "cholesky_ex",
    "cross",
    "det",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "inv",
    "inv_ex",
    "lstsq",
    "lu",
    "lu_factor",
    "lu_solve",
    "matmul",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "norm",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "solve_triangular",
    "svd",
    "svdvals",
    "vector_norm",
]
