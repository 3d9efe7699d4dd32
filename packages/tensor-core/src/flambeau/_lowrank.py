"""Randomized low-rank decompositions: ``svd_lowrank`` and ``pca_lowrank``.

Both follow Halko, Martinsson and Tropp (2009), "Finding structure with randomness":
a Gaussian test matrix sketches the range of A (Algorithm 4.4, with ``niter`` rounds of
subspace iteration), and the SVD of A projected on that range gives the approximate
decomposition (Algorithm 5.1). They are built on ``linalg.qr`` and ``linalg.svd``, so
autograd differentiates them through those formulas. The results are random: seed the
generator (``flambeau.manual_seed``) for repeatable ones.
"""

from __future__ import annotations

from flambeau import _C
from flambeau._arg_checks import check_tensor, dtype_name
from flambeau.overrides import _dispatch_on

__all__ = ["pca_lowrank", "svd_lowrank"]


def _check_matrix(fn: str, A) -> tuple[int, int]:
    check_tensor(fn, "A", 1, A)
    if A.dim() < 2:
        raise ValueError(f"{fn}: expected A of shape (*, m, n), got {A.dim()} dim(s)")
    if not (A.is_floating_point() or A.is_complex()):
        raise RuntimeError(
            f"{fn}: expected a floating-point or complex A, got {dtype_name(A.dtype)}"
        )
    return A.shape[-2], A.shape[-1]


def _orthonormal_basis(X):
    return _C.linalg_qr(X).Q


def _approximate_range(A, q: int, niter: int, M):
    """Q with orthonormal columns (at most q) such that Q Q^H (A - M) approximates A - M,
    never forming A - M itself."""

    def times(mat, shift, other):
        out = _C.matmul(mat, other)
        return out if shift is None else out - _C.matmul(shift, other)

    R = _C.randn((A.shape[-1], q), dtype=A.dtype, device=A.device)
    Q = _orthonormal_basis(times(A, M, R))
    M_H = None if M is None else M.mH
    for _ in range(niter):
        Q = _orthonormal_basis(times(A.mH, M_H, Q))
        Q = _orthonormal_basis(times(A, M, Q))
    return Q


def _svd_lowrank(A, q: int, niter: int, M):
    m, n = A.shape[-2], A.shape[-1]
    if M is not None:
        M = M.broadcast_to(tuple(A.shape))
    wide = m < n
    if wide:  # sketch the smaller side: work on A^H and swap U and V at the end
        A = A.mH
        M = None if M is None else M.mH
    Q = _approximate_range(A, q, niter, M)
    B = _C.matmul(Q.mH, A)
    if M is not None:
        B = B - _C.matmul(Q.mH, M)
    U, S, Vh = _C.linalg_svd(B, full_matrices=False)
    U, V = _C.matmul(Q, U), Vh.mH
    return (V, S, U) if wide else (U, S, V)


# As in PyTorch, a mode alone does not take the call: only a tensor-like argument does.
@_dispatch_on("A", "M", unless="all(type(_a) is _T or _a is None for _a in (A, M))")
def svd_lowrank(A, q=6, niter=2, M=None):
    """(U, S, V) with A - M ~ U diag(S) V^H (M defaults to zero and broadcasts to A), from
    a rank-q randomized sketch of A with niter subspace iterations; U is (*, m, k), S
    (*, k) and V (*, n, k) with k = min(q, m, n).

    >>> _ = flambeau.manual_seed(0)
    >>> A = flambeau.tensor([[3.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 0.0]])
    >>> U, S, V = flambeau.svd_lowrank(A, q=2)
    >>> S
    tensor([3.0000, 2.0000])
    >>> U.shape, V.shape
    (flambeau.Size([3, 2]), flambeau.Size([3, 2]))
    """
    _check_matrix("svd_lowrank", A)
    check_tensor("svd_lowrank", "M", 4, M, optional=True)
    q = 6 if q is None else q
    if q < 0:
        raise RuntimeError(f"svd_lowrank: q must be non-negative, got {q}")
    niter = 2 if niter is None else niter
    return _svd_lowrank(A, q, niter, M)


# As in PyTorch, a mode alone does not take the call: only a tensor-like argument does.
@_dispatch_on("A", unless="all(type(_a) is _T or _a is None for _a in (A,))")
def pca_lowrank(A, q=None, center=True, niter=2):
    """Principal component analysis of the rows of A (samples by features) as (U, S, V):
    the approximate SVD of A centred on its column means (when center), so V's columns are
    the principal directions and S**2 / (m - 1) the variances along them; q (default
    min(6, m, n)) is a slight overestimate of A's rank.

    >>> _ = flambeau.manual_seed(0)
    >>> x = flambeau.tensor([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]])
    >>> U, S, V = flambeau.pca_lowrank(x, q=1)
    >>> S
    tensor([3.1623])
    >>> V.abs()  # the principal direction, up to sign
    tensor([[0.4472],
            [0.8944]])
    """
    m, n = _check_matrix("pca_lowrank", A)
    if q is None:
        q = min(6, m, n)
    elif not 0 <= q <= min(m, n):
        raise ValueError(
            f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}"
        )
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if center:
        A = A - A.mean(dim=-2, keepdim=True)
    return _svd_lowrank(A, q, niter, None)
