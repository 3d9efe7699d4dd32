"""PyTorch's top-level linear algebra (``det``, ``inverse``, ``svd``, ``qr``, ``lu``,
``cholesky_solve``, ``matrix_exp``, ...), written over the core's ``linalg_*`` operators
with PyTorch's older signatures and result types (``svd`` returns V, not Vh; ``lu``
returns LAPACK's packed form).
"""

from __future__ import annotations

import builtins
import math
import warnings

from flambeau import _C
from flambeau._autocast_policy import autocast_policy
from flambeau._named_tuples import named_tuple


def _check_square(name, A):
    if A.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            f"{name}: A must be batches of square matrices, but they are {A.shape[-2]} by "
            f"{A.shape[-1]} matrices"
        )


def _deprecated(old, new):
    warnings.warn(
        f"torch.{old} is deprecated in favor of {new} and will be removed in a future "
        "PyTorch release.",
        UserWarning,
        stacklevel=3,
    )


def det(input):
    """The determinant of each square matrix (linalg.det)."""
    return _C.linalg_det(input)


def slogdet(input):
    """(sign, log|det|) of each square matrix (linalg.slogdet)."""
    sign, logabsdet = _C.linalg_slogdet(input)
    return named_tuple("slogdet", ("sign", "logabsdet"))(sign, logabsdet)


def logdet(input):
    """log(det(input)): NaN for a negative determinant, -inf for a zero one."""
    sign, logabsdet = _C.linalg_slogdet(input)
    if input.is_complex():
        return sign.log() + logabsdet
    nan = _C.full((), math.nan, dtype=logabsdet.dtype)
    return _C.where(sign < 0, nan, logabsdet)


@autocast_policy("fp32")
def inverse(input, *, out=None):
    """The inverse of each square matrix (linalg.inv)."""
    return _C.linalg_inv(input) if out is None else _C.linalg_inv(input, out=out)


@autocast_policy("fp32")
def pinverse(input, rcond=1e-15):
    """The pseudo-inverse, singular values below rcond * the largest one taken as zero."""
    return _C.linalg_pinv(input, rtol=rcond)


def matrix_exp(A):
    """exp(A) of each square matrix: Taylor series of A / 2**s (norm <= 1/2), squared s times."""
    _check_square("linalg.matrix_exp", A)
    if A.shape[-1] == 0 or A.numel() == 0:
        return A.clone()
    if not (A.is_floating_point() or A.is_complex()):
        raise RuntimeError(
            "linalg.matrix_exp: Expected a floating point or complex tensor as input. "
            f"Got {A.dtype}"
        )
    norm = A.detach().abs().sum(-2).amax().item()  # the largest column 1-norm in the batch
    if not math.isfinite(norm):
        return _C.full(A.shape, math.nan, dtype=A.dtype)
    s = builtins.max(0, math.ceil(math.log2(norm / 0.5))) if norm > 0.5 else 0
    X = A / (2.0**s)
    eye = _C.eye(A.shape[-1], dtype=A.dtype).expand(A.shape)
    # ||X|| <= 1/2: the terms after X^18/18! are below 2^-19 / 19!, far under float64's eps.
    result, term = eye, eye
    for k in builtins.range(1, 19):
        term = _C.matmul(term, X) / k
        result = result + term
    for _ in builtins.range(s):
        result = _C.matmul(result, result)
    return result


@autocast_policy("fp32")
def cholesky(input, upper=False, *, out=None):
    """The Cholesky factor L (A = L L^H), or U (A = U^H U) when upper (linalg.cholesky)."""
    warnings.warn(
        "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in "
        "a future PyTorch release.",
        UserWarning,
        stacklevel=2,
    )
    kwargs = {} if out is None else {"out": out}
    return _C.linalg_cholesky(input, upper=upper, **kwargs)


@autocast_policy("fp32")
def cholesky_solve(B, L, upper=False, *, out=None):
    """X with A X = B, given A's Cholesky factor L (lower, or upper when upper=True)."""
    if L.dim() < 2 or B.dim() < 2:
        raise RuntimeError(
            f"cholesky_solve: b should have at least 2 dimensions, but has {B.dim()} dimensions "
            "instead"
            if B.dim() < 2
            else f"cholesky_solve: u should have at least 2 dimensions, "
            f"but has {L.dim()} dimensions instead"
        )
    _check_square("cholesky_solve", L)
    if upper:
        Y = _C.linalg_solve_triangular(L.mH, B, upper=False)
        X = _C.linalg_solve_triangular(L, Y, upper=True)
    else:
        Y = _C.linalg_solve_triangular(L, B, upper=False)
        X = _C.linalg_solve_triangular(L.mH, Y, upper=True)
    return X if out is None else out.copy_(X)


@autocast_policy("fp32")
def cholesky_inverse(L, upper=False, *, out=None):
    """The inverse of A = L L^H (or U^H U) from its Cholesky factor."""
    _check_square("cholesky_inverse", L)
    eye = _C.eye(L.shape[-1], dtype=L.dtype).expand(L.shape)
    res = cholesky_solve(eye, L, upper)
    return res if out is None else out.copy_(res)


@autocast_policy("fp32")
def qr(input, some=True, *, out=None):
    """(Q, R) with input = Q R: reduced when some, else complete (linalg.qr)."""
    _deprecated("qr", "torch.linalg.qr")
    Q, R = _C.linalg_qr(input, "reduced" if some else "complete")
    if out is not None:
        out[0].copy_(Q)
        out[1].copy_(R)
    return named_tuple("qr", ("Q", "R"))(Q, R)


@autocast_policy("fp32")
def svd(input, some=True, compute_uv=True, *, out=None):
    """(U, S, V) with input = U diag(S) V^H (V, not V^H). some: reduced U and V;
    compute_uv=False: U and V are zero-filled complete matrices."""
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


@autocast_policy("fp32")
def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """(X, A.clone()) with op(A) X = b, op(A) = A or A^T, A triangular."""
    coeff = A.mT if transpose else A
    X = _C.linalg_solve_triangular(coeff, b, upper=upper != transpose, unitriangular=unitriangular)
    res = named_tuple("triangular_solve", ("solution", "cloned_coefficient"))(X, A.clone())
    if out is not None:
        out[0].copy_(res[0])
        out[1].copy_(res[1])
    return res


def _lu_infos(LU):
    """LAPACK's info per matrix: 1 + the index of U's first zero pivot, 0 if none."""
    diag = _C.diagonal(LU, 0, -2, -1)
    zero = diag == 0
    first = zero.to(_C.int32).argmax(-1).to(_C.int32) + 1
    return _C.where(zero.any(-1), first, _C.zeros((), dtype=_C.int32))


def lu(A, pivot=True, get_infos=False, out=None):
    """LAPACK's packed LU factorisation (LU, pivots[, infos]) of each matrix."""
    LU, pivots = _C.linalg_lu_factor(A, pivot=pivot)
    # A singular matrix still factors (as in PyTorch); infos report its first zero pivot.
    res = (LU, pivots, _lu_infos(LU)) if get_infos else (LU, pivots)
    if out is not None:
        for o, r in zip(out, res):
            o.copy_(r)
    return res


@autocast_policy("fp32")
def lu_solve(b, LU_data, LU_pivots, *, out=None):
    """X with A X = b, from lu(A) (linalg.lu_solve)."""
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


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """(P, L, U) with A = P L U, from lu(A)'s packed factors."""
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


# ---- Householder QR (geqrf, orgqr, ormqr) ---------------------------------------------------


@autocast_policy("fp32")
def geqrf(input, *, out=None):
    """LAPACK's QR in Householder form (a, tau): R on and above a's diagonal, the reflector
    vectors (implicit leading 1) below it, and their scales tau."""
    if input.dim() < 2:
        raise RuntimeError(f"torch.geqrf: input must have at least 2 dimensions. Got {input.dim()}")
    m, n = input.shape[-2], input.shape[-1]
    a = input.clone()
    k = builtins.min(m, n)
    taus = []
    for j in builtins.range(k):
        col = a[..., j:, j]  # (*batch, m - j)
        alpha = col[..., 0]
        tail_sq = (col[..., 1:].abs() ** 2).sum(-1)
        norm = (alpha.abs() ** 2 + tail_sq).sqrt()
        # beta = -sign(real(alpha)) * ||col||; a zero tail (real alpha) needs no reflection.
        sign = (
            _C.where(alpha.real < 0, -1.0, 1.0)
            if alpha.is_complex()
            else _C.where(alpha < 0, -1.0, 1.0)
        )
        beta = -sign * norm
        trivial = tail_sq == 0
        if alpha.is_complex():
            trivial = trivial & (alpha.imag == 0)
        safe_beta = _C.where(trivial, _C.ones((), dtype=beta.dtype), beta)
        tau = _C.where(trivial, _C.zeros((), dtype=a.dtype), (beta - alpha) / safe_beta)
        denom = _C.where(trivial, _C.ones((), dtype=a.dtype), alpha - beta)
        v = _C.cat([_C.ones_like(alpha).unsqueeze(-1), col[..., 1:] / denom.unsqueeze(-1)], -1)
        # Apply H = I - tau v v^H to the trailing columns.
        trailing = a[..., j:, j:]
        w = _C.matmul(v.conj().unsqueeze(-2), trailing)  # (*batch, 1, n - j)
        trailing = trailing - tau.unsqueeze(-1).unsqueeze(-1) * v.unsqueeze(-1) * w
        new_col = _C.where(
            trivial.unsqueeze(-1), col, _C.cat([beta.to(a.dtype).unsqueeze(-1), v[..., 1:]], -1)
        )
        trailing = _C.cat([new_col.unsqueeze(-1), trailing[..., 1:]], -1)
        a = _C.cat([a[..., :j, :], _C.cat([a[..., j:, :j], trailing], -1)], -2)
        taus.append(tau)
    tau = _C.stack(taus, -1) if taus else _C.zeros(tuple(input.shape[:-2]) + (0,), dtype=a.dtype)
    res = named_tuple("geqrf", ("a", "tau"))(a, tau)
    if out is not None:
        for o, r in zip(out, res):
            o.copy_(r)
    return res


def _reflector(a, tau, j):
    v = a[..., j:, j]
    v = _C.cat(
        [_C.zeros(tuple(a.shape[:-2]) + (j,), dtype=a.dtype), _C.ones_like(v[..., :1]), v[..., 1:]],
        -1,
    )
    return v, tau[..., j]


def _apply_reflectors(a, tau, C, left, transpose):
    """op(Q) C (left) or C op(Q) with Q = H_1 ... H_k, H_j = I - tau_j v_j v_j^H."""
    k = tau.shape[-1]
    # Q C = H_1 (H_2 (... H_k C)); Q^H C = H_k^H (... H_1^H C); likewise on the right.
    order = builtins.range(k)
    if left != transpose:
        order = reversed(order)
    for j in order:
        v, t = _reflector(a, tau, j)
        t = t.conj() if transpose else t
        t = t.unsqueeze(-1).unsqueeze(-1)
        if left:
            C = C - t * v.unsqueeze(-1) * _C.matmul(v.conj().unsqueeze(-2), C)
        else:
            C = C - t * _C.matmul(C, v.unsqueeze(-1)) * v.conj().unsqueeze(-2)
    return C


@autocast_policy("fp32")
def orgqr(input, tau):
    """The first n columns of Q = H_1 ... H_k from geqrf's (a, tau) (linalg.householder_product)."""
    m, n = input.shape[-2], input.shape[-1]
    if m < n:
        raise RuntimeError(
            "torch.linalg.householder_product: input.shape[-2] must be greater than or equal to "
            "input.shape[-1]"
        )
    if tau.shape[-1] > n:
        raise RuntimeError(
            "torch.linalg.householder_product: input.shape[-1] must be greater than or equal to "
            "tau.shape[-1]"
        )
    eye = _C.eye(m, n, dtype=input.dtype).expand(tuple(input.shape[:-2]) + (m, n))
    return _apply_reflectors(input, tau, eye, left=True, transpose=False)


@autocast_policy("fp32")
def ormqr(input, tau, other, left=True, transpose=False, *, out=None):
    """op(Q) other (left) or other op(Q), Q from geqrf's (a, tau), op = conj-transpose if
    transpose."""
    need = other.shape[-2] if left else other.shape[-1]
    if input.shape[-2] != need:
        raise RuntimeError(
            f"torch.ormqr: other.shape[{-2 if left else -1}] must be equal to input.shape[-2]"
        )
    res = _apply_reflectors(input, tau, other, left, transpose)
    return res if out is None else out.copy_(res)


__all__ = [
    "cholesky",
    "cholesky_inverse",
    "cholesky_solve",
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
    "cholesky_solve",
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


def _lu_method(self, pivot=True, get_infos=False):
    return lu(self, pivot, get_infos)


def install() -> None:
    T = _C.Tensor
    for name in _METHODS:
        setattr(T, name, globals()[name])
    T.lu = _lu_method
