"""Rows for flambeau.linalg's LDL factorization (ldl_factor, ldl_factor_ex, ldl_solve).

The factors are checked through what they must satisfy whatever pivots LAPACK picks: they
rebuild the matrix (P L D L^T P^T from LAPACK's packed form, unpacked here in NumPy), and
D has the matrix's inertia (Sylvester's law: as many positive and negative eigenvalues).
tests/test_linalg_ldl.py compares the raw factors with scipy.linalg.ldl.
"""

import numpy as np

import flambeau

from . import COMPLEX, FLOATS, OpTest, Sample, make, numpy_dtype

LA = flambeau.linalg
LDL_TOL = {"rtol": 1e-4, "atol": 1e-4}  # float32 factorizations of 4x4 matrices

# Zero diagonal entries force 2x2 pivot blocks.
INDEFINITE = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 3.0], [2.0, 3.0, 1.0]])


def _lower_full(a, hermitian):
    """The symmetric (Hermitian) matrix that a's lower triangle stands for."""
    strict = np.tril(a, -1)
    upper = np.swapaxes(strict, -1, -2)
    if hermitian:
        upper = upper.conj()
    full = np.tril(a) + upper
    if hermitian and np.iscomplexobj(a):  # the diagonal of a Hermitian matrix is real
        d = np.arange(a.shape[-1])
        full[..., d, d] = full[..., d, d].real
    return full


def ldl_unpack(LD, pivots, hermitian):
    """(M, D) with A = M D M^T (M^H when hermitian) from sytrf's lower packed form:
    M = P(1) L(1) P(2) L(2) ..., one interchange and unit-lower factor per 1x1 or 2x2 block
    (a 2x2 block when the pivot is negative, the same in both of its entries)."""
    n = LD.shape[-1]
    M = np.eye(n, dtype=LD.dtype)
    D = np.zeros_like(LD)
    k = 0
    while k < n:
        size = 1 if pivots[k] > 0 else 2
        swap = (pivots[k] if size == 1 else -pivots[k]) - 1
        row = k + size - 1  # the row swapped with `swap`
        P = np.eye(n, dtype=LD.dtype)
        P[[row, swap]] = P[[swap, row]]
        L = np.eye(n, dtype=LD.dtype)
        L[k + size :, k : k + size] = LD[k + size :, k : k + size]
        D[k : k + size, k : k + size] = LD[k : k + size, k : k + size]
        if size == 2:
            D[k, k + 1] = np.conj(LD[k + 1, k]) if hermitian else LD[k + 1, k]
        M = M @ P @ L
        k += size
    return M, D


def _inertia(w):
    return np.array([(w > 0).sum(), (w < 0).sum()])


def _factor_checks(LD, pivots, hermitian):
    """Per matrix of the batch: the rebuilt matrix and the inertia of D."""
    LD, pivots = np.asarray(LD), np.asarray(pivots)
    flat_ld = LD.reshape(-1, *LD.shape[-2:])
    flat_piv = pivots.reshape(-1, LD.shape[-1])
    rebuilt, inertia = [], []
    for ld, piv in zip(flat_ld, flat_piv):
        M, D = ldl_unpack(ld, piv, hermitian)
        Mt = M.conj().T if hermitian else M.T
        rebuilt.append(M @ D @ Mt)
        inertia.append(_inertia(np.linalg.eigvals(D).real))
    shape = LD.shape[:-2]
    return (
        np.array(rebuilt).reshape(LD.shape),
        np.array(inertia, dtype=np.int64).reshape(*shape, 2),
    )


def ldl_samples(dtype, rng):
    for shape in [(3, 3), (2, 4, 4), (1, 1)]:
        yield Sample((make(shape, dtype, rng, low=-1, high=1),), note=str(shape))
    yield Sample((make((4, 4), dtype, rng, low=-1, high=1, noncontig=True),), note="strided")
    yield Sample((INDEFINITE.astype(numpy_dtype(dtype)),), note="2x2 pivots")
    yield Sample((make((0, 3, 3), dtype, rng),), note="empty batch")
    if dtype in COMPLEX:
        yield Sample((make((3, 3), dtype, rng, low=-1, high=1),), {"hermitian": True})
        yield Sample((make((2, 4, 4), dtype, rng, low=-1, high=1),), {"hermitian": True})


def _checks(LD, pivots, a, hermitian):
    """The rebuilt matrix, D's inertia (empty for a complex symmetric A, which has none),
    and the factor's strict upper triangle (zero, as PyTorch returns it)."""
    herm = hermitian or not a.is_complex()
    rebuilt, inertia = _factor_checks(LD.cpu().numpy(), pivots.cpu().numpy(), herm)
    return rebuilt, inertia if herm else np.zeros(0, np.int64), np.triu(LD.cpu().numpy(), 1)


def _np_checks(a, hermitian=False):
    herm = hermitian or not np.iscomplexobj(a)
    full = _lower_full(a, herm)
    inertia = np.zeros(0, np.int64)
    if herm:
        w = np.linalg.eigvalsh(full) if full.size else np.zeros(full.shape[:-1])
        inertia = np.stack([(w > 0).sum(-1), (w < 0).sum(-1)], -1).astype(np.int64)
    return full, inertia, np.zeros_like(a)


def ldl_solve_samples(dtype, rng):
    yield Sample((make((3, 3), dtype, rng, low=-1, high=1), make((3, 2), dtype, rng)))
    yield Sample(
        (make((2, 4, 4), dtype, rng, low=-1, high=1), make((4, 1), dtype, rng, noncontig=True)),
        note="broadcast B, strided",
    )
    yield Sample(
        (make((4, 4), dtype, rng, low=-1, high=1), make((2, 4, 3), dtype, rng)),
        note="broadcast LD",
    )
    yield Sample(
        (INDEFINITE.astype(numpy_dtype(dtype)), make((3, 2), dtype, rng)),
        note="2x2 pivots",
    )
    if dtype in COMPLEX:
        yield Sample(
            (make((3, 3), dtype, rng, low=-1, high=1), make((3, 2), dtype, rng)),
            {"hermitian": True},
        )


def _ldl_solve_fn(a, b, hermitian=False):
    LD, pivots = LA.ldl_factor(a, hermitian=hermitian)
    return LA.ldl_solve(LD, pivots, b, hermitian=hermitian)


def _np_ldl_solve(a, b, hermitian=False):
    full = _lower_full(a, hermitian or not np.iscomplexobj(a))
    shape = np.broadcast_shapes(full.shape[:-2], b.shape[:-2])
    return np.linalg.solve(
        np.broadcast_to(full, shape + full.shape[-2:]), np.broadcast_to(b, shape + b.shape[-2:])
    )


def _ldl_factor_ex_fn(a, hermitian=False):
    LD, pivots, info = LA.ldl_factor_ex(a, hermitian=hermitian)
    return (*_checks(LD, pivots, a, hermitian), info)


def _np_ldl_factor_ex(a, hermitian=False):
    return (*_np_checks(a, hermitian), np.zeros(a.shape[:-2], np.int32))


TESTS = [
    OpTest(
        "linalg_ldl_factor",
        lambda a, hermitian=False: _checks(*LA.ldl_factor(a, hermitian=hermitian), a, hermitian),
        _np_checks,
        ldl_samples,
        dtypes=FLOATS + COMPLEX,
        **LDL_TOL,
    ),
    OpTest(
        "linalg_ldl_factor_ex",
        _ldl_factor_ex_fn,
        _np_ldl_factor_ex,
        ldl_samples,
        dtypes=FLOATS + COMPLEX,
        **LDL_TOL,
    ),
    OpTest(
        "linalg_ldl_solve",
        _ldl_solve_fn,
        _np_ldl_solve,
        ldl_solve_samples,
        dtypes=FLOATS + COMPLEX,
        **LDL_TOL,
    ),
]
