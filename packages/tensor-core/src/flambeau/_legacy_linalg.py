"""PyTorch's top-level linear algebra (``det``, ``inverse``, ``svd``, ``qr``, ``lu``,
``cholesky_inverse``, ...), written over the core's ``linalg_*`` operators
with PyTorch's older signatures and result types (``svd`` returns V, not Vh; ``lu``
returns LAPACK's packed form).
"""

from __future__ import annotations

import builtins
import math
import warnings

from flambeau import _C
from flambeau._autocast_policy import autocast_policy
from flambeau._householder import geqrf, orgqr, ormqr
from flambeau._linalg_composites import check_square as _check_square
from flambeau._linalg_composites import matrix_exp
from flambeau._named_tuples import named_tuple
from flambeau.overrides import _dispatch_on


def _deprecated(old, new):
    warnings.warn(
        f"torch.{old} is deprecated in favor of {new} and will be removed in a future "
        "PyTorch release.",
        UserWarning,
        stacklevel=5,
    )


@_dispatch_on("input")
def det(input):
    """The determinant of each square matrix (linalg.det).

    >>> flambeau.det(flambeau.tensor([[2.0, 1.0], [1.0, 3.0]]))
    tensor(5.)
    """
    return _C.linalg_det(input)


@_dispatch_on("input")
def slogdet(input):
    """(sign, log|det|) of each square matrix (linalg.slogdet).

    >>> flambeau.slogdet(flambeau.tensor([[1.0, 2.0], [3.0, 4.0]]))
    slogdet(sign=tensor(-1.), logabsdet=tensor(0.6931))
    """
    sign, logabsdet = _C.linalg_slogdet(input)
    return named_tuple("slogdet", ("sign", "logabsdet"))(sign, logabsdet)


@_dispatch_on("input")
def logdet(input):
    """log(det(input)): NaN for a negative determinant, -inf for a zero one.

    >>> flambeau.logdet(flambeau.tensor([[2.0, 0.0], [0.0, 3.0]]))
    tensor(1.7918)
    >>> flambeau.logdet(flambeau.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor(nan)
    """
    sign, logabsdet = _C.linalg_slogdet(input)
    if input.is_complex():
        return sign.log() + logabsdet
    nan = _C.full((), math.nan, dtype=logabsdet.dtype)
    return _C.where(sign < 0, nan, logabsdet)


@_dispatch_on("input", "out")
@autocast_policy("fp32")
def inverse(input, *, out=None):
    """The inverse of each square matrix (linalg.inv).

    >>> flambeau.inverse(flambeau.tensor([[2.0, 0.0], [0.0, 4.0]]))
    tensor([[0.5000, 0.0000],
            [0.0000, 0.2500]])
    """
    return _C.linalg_inv(input) if out is None else _C.linalg_inv(input, out=out)


@_dispatch_on("input")
@autocast_policy("fp32")
def pinverse(input, rcond=1e-15):
    """The pseudo-inverse, singular values below rcond * the largest one taken as zero.

    >>> flambeau.pinverse(flambeau.tensor([[1.0, 0.0], [0.0, 0.0]]))
    tensor([[1., 0.],
            [0., 0.]])
    """
    return _C.linalg_pinv(input, rtol=rcond)


@_dispatch_on("input", "out")
@autocast_policy("fp32")
def cholesky(input, upper=False, *, out=None):
    """The Cholesky factor L (A = L L^H), or U (A = U^H U) when upper (linalg.cholesky).

    >>> A = flambeau.tensor([[4.0, 2.0], [2.0, 5.0]])
    >>> flambeau.cholesky(A)
    tensor([[2., 0.],
            [1., 2.]])
    """
    warnings.warn(
        "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in "
        "a future PyTorch release.",
        UserWarning,
        stacklevel=4,
    )
    kwargs = {} if out is None else {"out": out}
    return _C.linalg_cholesky(input, upper=upper, **kwargs)


def _check_nonsingular_factor(name, L):
    """LinAlgError for a triangular factor with a zero on its diagonal, naming the first
    one (1-based) as LAPACK's potri does."""
    zero = _C.diagonal(L, 0, -2, -1) == 0
    if not zero.any().item():
        return
    rows = zero.reshape(-1, L.shape[-1]).tolist()
    batch = next(b for b, r in enumerate(rows) if any(r))
    where = f"(Batch element {batch}): " if L.dim() > 2 else ""
    raise _C._LinAlgError(
        f"{name}: {where}The diagonal element {rows[batch].index(True) + 1} is zero, the "
        "inversion could not be completed because the input matrix is singular."
    )


@_dispatch_on("L", "out")
@autocast_policy("fp32")
def cholesky_inverse(L, upper=False, *, out=None):
    """The inverse of A = L L^H (or U^H U) from its Cholesky factor.

    >>> A = flambeau.tensor([[4.0, 2.0], [2.0, 5.0]])
    >>> flambeau.cholesky_inverse(flambeau.linalg.cholesky(A))
    tensor([[ 0.3125, -0.1250],
            [-0.1250,  0.2500]])
    """
    _check_square("cholesky_inverse", L)
    _check_nonsingular_factor("cholesky_inverse", L)
    eye = _C.eye(L.shape[-1], dtype=L.dtype).expand(L.shape)
    # Through the core's cholesky_solve, whose gradient (PyTorch's, dense in L) is that of
    # PyTorch's cholesky_inverse too.
    return _C.cholesky_solve(eye, L, upper, **({} if out is None else {"out": out}))


@_dispatch_on("input", "out")
@autocast_policy("fp32")
def qr(input, some=True, *, out=None):
    """(Q, R) with input = Q R: reduced when some, else complete (linalg.qr).

    >>> Q, R = flambeau.qr(flambeau.tensor([[3.0, 1.0], [4.0, 2.0]]))
    >>> R
    tensor([[-5.0000, -2.2000],
            [ 0.0000,  0.4000]])
    >>> flambeau.allclose(Q @ R, flambeau.tensor([[3.0, 1.0], [4.0, 2.0]]))
    True
    """
    _deprecated("qr", "torch.linalg.qr")
    Q, R = _C.linalg_qr(input, "reduced" if some else "complete")
    if out is not None:
        out[0].copy_(Q)
        out[1].copy_(R)
    return named_tuple("qr", ("Q", "R"))(Q, R)


@_dispatch_on("input", "out")
@autocast_policy("fp32")
def svd(input, some=True, compute_uv=True, *, out=None):
    """(U, S, V) with input = U diag(S) V^H (V, not V^H). some: reduced U and V;
    compute_uv=False: U and V are zero-filled complete matrices.

    >>> A = flambeau.tensor([[3.0, 0.0], [0.0, -2.0]])
    >>> U, S, V = flambeau.svd(A)
    >>> S
    tensor([3., 2.])
    >>> flambeau.allclose(U @ flambeau.diag(S) @ V.T, A)
    True
    """
    svd_type = named_tuple("svd", ("U", "S", "V"))
    if not compute_uv:
        S = _C.linalg_svdvals(input)
        m, n = input.shape[-2], input.shape[-1]
        batch = tuple(input.shape[:-2])
        U = _C.zeros(batch + (m, m), dtype=input.dtype)
        V = _C.zeros(batch + (n, n), dtype=input.dtype)
        return svd_type(U, S, V)
    U, S, Vh = _C.linalg_svd(input, full_matrices=not some)
    res = svd_type(U, S, Vh.mH)
    if out is not None:
        for o, r in zip(out, res):
            o.copy_(r)
    return res


@_dispatch_on("b", "A", "out")
@autocast_policy("fp32")
def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """(X, A.clone()) with op(A) X = b, op(A) = A or A^T, A triangular.

    >>> A = flambeau.tensor([[2.0, 1.0], [0.0, 4.0]])
    >>> X, _ = flambeau.triangular_solve(flambeau.tensor([[4.0], [8.0]]), A)
    >>> X
    tensor([[1.],
            [2.]])
    """
    coeff = A.mT if transpose else A
    X = _C.linalg_solve_triangular(coeff, b, upper=upper != transpose, unitriangular=unitriangular)
    res = named_tuple("triangular_solve", ("solution", "cloned_coefficient"))(X, A.clone())
    if out is not None:
        out[0].copy_(res[0])
        out[1].copy_(res[1])
    return res


@_dispatch_on("A")
def lu(A, pivot=True, get_infos=False, out=None):
    """LAPACK's packed LU factorisation (LU, pivots[, infos]) of each matrix.

    >>> A = flambeau.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> LU, pivots = flambeau.lu(A)
    >>> LU
    tensor([[3.0000, 4.0000],
            [0.3333, 0.6667]])
    >>> pivots
    tensor([2, 2], dtype=flambeau.int32)
    """
    # A singular matrix still factors (as in PyTorch); infos report its first zero pivot.
    LU, pivots, infos = _C.linalg_lu_factor_ex(A, pivot=pivot)
    res = (LU, pivots, infos) if get_infos else (LU, pivots)
    if out is not None:
        for o, r in zip(out, res):
            o.copy_(r)
    return res


@_dispatch_on("b", "LU_data", "LU_pivots", "out")
@autocast_policy("fp32")
def lu_solve(b, LU_data, LU_pivots, *, out=None):
    """X with A X = b, from lu(A) (linalg.lu_solve).

    >>> A = flambeau.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> LU, pivots = flambeau.lu(A)
    >>> flambeau.lu_solve(flambeau.tensor([[5.0], [11.0]]), LU, pivots)
    tensor([[1.],
            [2.]])
    """
    X = _C.linalg_lu_solve(LU_data, LU_pivots, b)
    return X if out is None else out.copy_(X)


def _permutation_from_pivots(pivots, m):
    """P (m x m) with A = P L U, from LAPACK's 1-based sequential row swaps."""
    perm = list(builtins.range(m))
    for i, p in enumerate(pivots):
        p -= 1
        if not 0 <= p < m:
            raise RuntimeError(f"lu_unpack: pivots must be between 1 and {m}, but got {p + 1}")
        perm[i], perm[p] = perm[p], perm[i]
    # Row i of P^T A is row perm[i] of A: P[perm[i], i] = 1.
    P = [[0] * m for _ in builtins.range(m)]
    for i, r in enumerate(perm):
        P[r][i] = 1
    return P


@_dispatch_on("LU_data", "LU_pivots", "out")
def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """(P, L, U) with A = P L U, from lu(A)'s packed factors.

    >>> A = flambeau.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> P, L, U = flambeau.lu_unpack(*flambeau.lu(A))
    >>> P
    tensor([[0., 1.],
            [1., 0.]])
    >>> L
    tensor([[1.0000, 0.0000],
            [0.3333, 1.0000]])
    >>> U
    tensor([[3.0000, 4.0000],
            [0.0000, 0.6667]])
    """
    m, n = LU_data.shape[-2], LU_data.shape[-1]
    k = builtins.min(m, n)
    batch = tuple(LU_data.shape[:-2])
    empty = _C.empty((0,), dtype=LU_data.dtype)
    if unpack_data:
        L = _C.tril(LU_data.narrow(-1, 0, k), -1) + _C.eye(m, k, dtype=LU_data.dtype)
        U = _C.triu(LU_data.narrow(-2, 0, k))
    else:
        L = U = empty
    if unpack_pivots:
        if LU_pivots.shape[-1] != k:
            raise RuntimeError(
                f"lu_unpack: Expected LU_pivots.size(-1) to be {k}, got {LU_pivots.shape[-1]}"
            )
        rows = LU_pivots.reshape(-1, k).tolist()
        P = _C.tensor([_permutation_from_pivots(r, m) for r in rows], dtype=LU_data.dtype)
        P = P.reshape(batch + (m, m))
    else:
        P = empty
    res = named_tuple("lu_unpack", ("P", "L", "U"))(P, L, U)
    if out is not None:
        for o, r in zip(out, res):
            o.copy_(r)
    return res


__all__ = [
    "cholesky",
    "cholesky_inverse",
    "det",
    "geqrf",
    "inverse",
    "logdet",
    "lu",
    "lu_solve",
    "lu_unpack",
    "matrix_exp",
    "orgqr",
    "ormqr",
    "pinverse",
    "qr",
    "slogdet",
    "svd",
    "triangular_solve",
]

_METHODS = (
    "cholesky",
    "cholesky_inverse",
    "det",
    "geqrf",
    "inverse",
    "logdet",
    "lu_solve",
    "matrix_exp",
    "orgqr",
    "ormqr",
    "pinverse",
    "qr",
    "slogdet",
    "svd",
    "triangular_solve",
)


@_dispatch_on("self", method="lu")
def _lu_method(self, pivot=True, get_infos=False):
    return lu(self, pivot, get_infos)


def install() -> None:
    T = _C.Tensor
    for name in _METHODS:
        setattr(T, name, globals()[name])
    T.lu = _lu_method
