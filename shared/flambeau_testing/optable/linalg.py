"""Rows for matrix products."""

import numpy as np

import flambeau

from . import COMPLEX, FLOATS, OpTest, Sample, make

PAIRS = [
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (3, 4)),
    ((2, 3), (3, 4)),
    ((5, 2, 3), (3, 4)),
    ((2, 1, 2, 3), (4, 3, 5)),
    ((0, 3), (3, 2)),
    ((2, 0), (0, 3)),
    ((3,), (2, 3, 4)),
]


def matmul_samples(dtype, rng):
    for sa, sb in PAIRS:
        yield Sample((make(sa, dtype, rng), make(sb, dtype, rng)))
    yield Sample((make((4, 3), dtype, rng).T, make((4, 2), dtype, rng)), note="transposed")
    yield Sample(
        (make((3, 4), dtype, rng, noncontig=True), make((4, 2), dtype, rng)), note="strided"
    )


def shaped(samples, ndims):
    def gen(dtype, rng):
        for s in samples(dtype, rng):
            if tuple(a.ndim for a in s.args) == ndims:
                yield s

    return gen


DTYPES = FLOATS + COMPLEX + ("int64", "float16", "bfloat16")

TESTS = [
    OpTest("matmul", flambeau.matmul, np.matmul, matmul_samples, dtypes=DTYPES),
    OpTest("mm", flambeau.mm, np.matmul, shaped(matmul_samples, (2, 2)), dtypes=DTYPES),
    OpTest(
        "bmm",
        flambeau.bmm,
        np.matmul,
        lambda d, rng: [
            Sample((make((3, 2, 4), d, rng), make((3, 4, 5), d, rng))),
            Sample((make((0, 2, 4), d, rng), make((0, 4, 5), d, rng))),
            Sample(
                (make((2, 2, 3), d, rng), make((2, 2, 3), d, rng).transpose(0, 2, 1)),
                note="small, transposed",
            ),
        ],
        dtypes=DTYPES,
    ),
    OpTest("mv", flambeau.mv, np.matmul, shaped(matmul_samples, (2, 1)), dtypes=DTYPES),
    OpTest("dot", flambeau.dot, np.dot, shaped(matmul_samples, (1, 1)), dtypes=DTYPES),
]


# ---- products built on GEMM ----


def addmm_family_samples(kind):
    shapes = {
        "addmm": [((2, 4), (2, 3), (3, 4)), ((4,), (2, 3), (3, 4)), ((0, 4), (0, 3), (3, 4))],
        "baddbmm": [((2, 3, 4), (2, 3, 5), (2, 5, 4)), ((1, 4), (2, 3, 5), (2, 5, 4))],
        "addbmm": [((3, 4), (2, 3, 5), (2, 5, 4)), ((4,), (0, 3, 5), (0, 5, 4))],
        "addmv": [((3,), (3, 4), (4,)), ((1,), (3, 4), (4,))],
        "addr": [((3, 4), (3,), (4,)), ((4,), (3,), (4,))],
    }[kind]

    def gen(dtype, rng):
        for si, sa, sb in shapes:
            yield Sample((make(si, dtype, rng), make(sa, dtype, rng), make(sb, dtype, rng)))
            kw = (
                {"beta": 2, "alpha": 3}
                if dtype in ("int32", "int64")
                else {"beta": 0.5, "alpha": -2.0}
            )
            yield Sample(
                (make(si, dtype, rng), make(sa, dtype, rng, noncontig=True), make(sb, dtype, rng)),
                kw,
                note="strided, scaled",
            )

    return gen


def addmm_ref(kind):
    def ref(i, a, b, beta=1, alpha=1):
        if kind == "addbmm":
            p = (
                np.matmul(a, b).sum(axis=0)
                if a.shape[0]
                else np.zeros((a.shape[1], b.shape[2]), a.dtype)
            )
        elif kind == "addr":
            p = np.outer(a, b)
        else:
            p = np.matmul(a, b)
        return (beta * i + alpha * p).astype(a.dtype)

    return ref


def vectors(dtype, rng):
    yield Sample((make((5,), dtype, rng), make((5,), dtype, rng)))
    yield Sample((make((4,), dtype, rng, noncontig=True), make((4,), dtype, rng)), note="strided")
    yield Sample((make((0,), dtype, rng), make((0,), dtype, rng)), note="empty")


def outer_samples(dtype, rng):
    yield Sample((make((3,), dtype, rng), make((4,), dtype, rng)))
    yield Sample((make((3,), dtype, rng, noncontig=True), make((0,), dtype, rng)), note="empty")


EINSUMS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("ij->ji", [(2, 3)]),
    ("i,j", [(2,), (3,)]),
    ("...ij,...jk", [(2, 1, 2, 3), (3, 3, 2)]),
    ("i...->...", [(3, 2, 2)]),
    ("ijk,jl,lk->i", [(2, 3, 2), (3, 2), (2, 2)]),
    ("iij->ij", [(2, 2, 3)]),
    ("bn,anm,bm->ba", [(2, 3), (2, 3, 2), (2, 2)]),
    ("i,i->", [(4,), (4,)]),
    (" a b , b c -> a c ", [(2, 3), (3, 2)]),
    ("Ab,bC->AC", [(2, 2), (2, 3)]),
]


def einsum_samples(dtype, rng):
    for eq, shapes in EINSUMS:
        arrs = [make(s, dtype, rng) for s in shapes]
        yield Sample(tuple(arrs), {"equation": eq}, note=eq)
    yield Sample(
        (make((3, 4), dtype, rng, noncontig=True), make((4, 2), dtype, rng).T.copy().T),
        {"equation": "ij,jk"},
        note="strided",
    )


def tensordot_samples(dtype, rng):
    yield Sample((make((2, 3, 4), dtype, rng), make((3, 4, 5), dtype, rng)), {"dims": 2})
    yield Sample((make((2, 3), dtype, rng), make((3, 2), dtype, rng)), {"dims": 0})
    yield Sample(
        (make((3, 4, 2), dtype, rng, noncontig=True), make((4, 3), dtype, rng)),
        {"dims": ([1, 0], [0, 1])},
    )


def tensordot_fn(a, b, dims):
    return flambeau.tensordot(a, b, dims=dims)  # an int or PyTorch's pair of lists


def kron_samples(dtype, rng):
    yield Sample((make((2, 3), dtype, rng), make((2, 2), dtype, rng)))
    yield Sample((make((2,), dtype, rng), make((3, 2), dtype, rng, noncontig=True)))
    yield Sample((make((2, 1, 2), dtype, rng), make((0, 2), dtype, rng)), note="empty")


def cross_samples(dtype, rng):
    yield Sample((make((3,), dtype, rng), make((3,), dtype, rng)))
    yield Sample((make((2, 3), dtype, rng), make((1, 3), dtype, rng)), note="broadcast")
    yield Sample((make((3, 4), dtype, rng, noncontig=True), make((3, 4), dtype, rng)), {"dim": 0})


def trace_samples(dtype, rng):
    yield Sample((make((3, 3), dtype, rng),))
    yield Sample((make((2, 4), dtype, rng, noncontig=True),), note="strided")
    yield Sample((make((0, 2), dtype, rng),), note="empty")


PROD_DTYPES = FLOATS + COMPLEX + ("int64",)

TESTS += [
    OpTest("vdot", flambeau.vdot, np.vdot, vectors, dtypes=FLOATS + COMPLEX),
    OpTest("outer", flambeau.outer, np.outer, outer_samples, dtypes=PROD_DTYPES),
    OpTest("ger", flambeau.ger, np.outer, outer_samples, dtypes=FLOATS),
]
for _kind in ("addmm", "baddbmm", "addbmm", "addmv", "addr"):
    TESTS.append(
        OpTest(
            _kind,
            getattr(flambeau, _kind),
            addmm_ref(_kind),
            addmm_family_samples(_kind),
            dtypes=FLOATS + COMPLEX + ("int64",),
        )
    )
TESTS += [
    OpTest(
        "einsum",
        lambda *xs, equation: flambeau.einsum(equation, *xs),
        lambda *xs, equation: np.einsum(equation.replace(" ", ""), *xs),
        einsum_samples,
        dtypes=FLOATS + COMPLEX,
    ),
    OpTest(
        "tensordot",
        tensordot_fn,
        lambda a, b, dims: np.tensordot(a, b, axes=dims),
        tensordot_samples,
        dtypes=FLOATS + COMPLEX,
    ),
    OpTest(
        "tensordot.int",
        lambda a, b, dims: flambeau.tensordot(a, b, dims=dims),
        lambda a, b, dims: np.tensordot(a, b, axes=dims),
        lambda d, rng: [s for s in tensordot_samples(d, rng) if isinstance(s.kwargs["dims"], int)],
        dtypes=FLOATS,
    ),
    OpTest("kron", flambeau.kron, np.kron, kron_samples, dtypes=PROD_DTYPES),
    OpTest(
        "cross",
        flambeau.cross,
        lambda a, b, dim=-1: np.cross(a, b, axis=dim),
        cross_samples,
        dtypes=PROD_DTYPES,
    ),
    OpTest(
        "linalg_cross",
        lambda a, b, **kw: flambeau.linalg.cross(a, b, **kw),
        lambda a, b, dim=-1: np.cross(a, b, axis=dim),
        cross_samples,
        dtypes=FLOATS + COMPLEX,
    ),
    OpTest("trace", flambeau.trace, np.trace, trace_samples, dtypes=PROD_DTYPES),
]


# ---- flambeau.linalg (LAPACK) ----
# Decompositions are checked through invariants (reconstruction, orthogonality,
# sign-free products), which are also what gradcheck differentiates.

LA = flambeau.linalg
LA_DTYPES = FLOATS + COMPLEX


def _h(x):
    return np.swapaxes(x, -1, -2).conj()


def square(dtype, rng, shape, kind="general", noncontig=False):
    """Well-conditioned square matrices: general (diagonally dominant), spd, or triangular."""
    a = make(shape, dtype, rng, low=-1, high=1, noncontig=noncontig)
    n = shape[-1]
    eye = np.eye(n, dtype=a.dtype)
    if kind == "spd":
        a = a @ _h(a) + n * eye
    elif kind == "general":
        a = a + (n + 1) * eye
    elif kind == "symmetric":
        a = a + _h(a)
    return a


SQUARE_SHAPES = [((3, 3), False), ((2, 4, 4), True), ((2, 1, 2, 2), False), ((1, 1), False)]


def square_samples(kind, empty=True):
    def gen(dtype, rng):
        for shape, nc in SQUARE_SHAPES:
            a = square(dtype, rng, shape, kind, noncontig=nc)
            yield Sample((a if not nc else a[..., ::1],), note=str(shape))
        # a transposed (column-major) view
        yield Sample((np.swapaxes(square(dtype, rng, (2, 3, 3), kind), -1, -2),), note="transposed")
        if empty:
            yield Sample((square(dtype, rng, (0, 2, 2), kind),), note="empty batch")

    return gen


def rect_samples(dtype, rng):
    for shape in [(3, 2), (2, 3), (2, 4, 3), (3, 3)]:
        yield Sample((make(shape, dtype, rng, low=-1, high=1),), note=str(shape))
    yield Sample((make((3, 4), dtype, rng, low=-1, high=1, noncontig=True),), note="strided")


def solve_samples(dtype, rng):
    yield Sample((square(dtype, rng, (3, 3)), make((3, 2), dtype, rng)))
    yield Sample((square(dtype, rng, (2, 3, 3)), make((3,), dtype, rng)), note="vector rhs")
    yield Sample((square(dtype, rng, (2, 3, 3)), make((2, 3), dtype, rng)), note="batch of vectors")
    yield Sample(
        (square(dtype, rng, (2, 1, 3, 3)), make((4, 3, 2), dtype, rng, noncontig=True)),
        note="broadcast strided",
    )
    yield Sample((square(dtype, rng, (3, 3)), make((2, 3), dtype, rng)), {"left": False})


def np_solve(a, b, left=True):
    if not left:
        return _h(np.linalg.solve(_h(a), _h(b)))
    if b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1]):
        return np.linalg.solve(a, b[..., None])[..., 0]
    return np.linalg.solve(a, b)


def triangular_samples(dtype, rng):
    a = square(dtype, rng, (2, 3, 3))
    yield Sample((np.triu(a), make((2, 3, 2), dtype, rng)), {"upper": True})
    yield Sample((np.tril(a), make((3, 4), dtype, rng, noncontig=True)), {"upper": False})
    yield Sample((np.triu(a), make((2, 3), dtype, rng)), {"upper": True, "left": False})
    yield Sample((np.tril(a), make((2, 3, 2), dtype, rng)), {"upper": False, "unitriangular": True})


def cholesky_solve_samples(dtype, rng):
    a = square(dtype, rng, (2, 3, 3))
    yield Sample((make((2, 3, 2), dtype, rng), np.tril(a)))
    yield Sample((make((3, 4), dtype, rng, noncontig=True), np.triu(a[0])), {"upper": True})
    yield Sample((make((4, 1, 3, 1), dtype, rng), np.tril(a)), note="broadcast batch")


def _cholesky_solve_fn(b, factor, upper=False):
    # The factor's other triangle is not read, but PyTorch's gradient is dense there: the
    # row masks it first so that finite differences and the formula agree.
    return flambeau.cholesky_solve(b, factor.triu() if upper else factor.tril(), upper)


def np_cholesky_solve(b, factor, upper=False):
    a = _h(factor) @ factor if upper else factor @ _h(factor)
    shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return np.linalg.solve(
        np.broadcast_to(a, shape + a.shape[-2:]), np.broadcast_to(b, shape + b.shape[-2:])
    )


def np_solve_triangular(a, b, upper, left=True, unitriangular=False):
    import scipy.linalg

    if not left:
        return np.swapaxes(
            np_solve_triangular(
                np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2), not upper, True, unitriangular
            ),
            -1,
            -2,
        )
    shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, shape + a.shape[-2:])
    b = np.broadcast_to(b, shape + b.shape[-2:])
    out = np.empty(b.shape, np.result_type(a, b))
    for idx in np.ndindex(*shape):
        out[idx] = scipy.linalg.solve_triangular(
            a[idx], b[idx], lower=not upper, unit_diagonal=unitriangular
        )
    return out


def lstsq_samples(dtype, rng):
    yield Sample((make((4, 2), dtype, rng), make((4, 3), dtype, rng)))
    yield Sample((make((2, 5, 3), dtype, rng), make((2, 5, 1), dtype, rng, noncontig=True)))


def np_lstsq(a, b):
    sols = [
        np.linalg.lstsq(ai, bi, rcond=None)
        for ai, bi in zip(a.reshape(-1, *a.shape[-2:]), b.reshape(-1, *b.shape[-2:]))
    ]
    x = np.stack([s[0] for s in sols]).reshape(*a.shape[:-2], a.shape[-1], b.shape[-1])
    res = np.stack([s[1] for s in sols]).reshape(*a.shape[:-2], b.shape[-1])
    sv = np.stack([s[3] for s in sols]).reshape(*a.shape[:-2], min(a.shape[-2:]))
    return x, res.astype(sv.dtype), sv


def _lstsq_fn(a, b):
    r = LA.lstsq(a, b, driver="gelsd")
    return r.solution, r.residuals, r.singular_values


def _qr_fn(a, mode="reduced"):
    q, r = LA.qr(a, mode=mode)
    if mode == "r":
        return r.abs()
    return q @ r, _adj(q) @ q


def _np_qr(a, mode="reduced"):
    k = min(a.shape[-2:])
    if mode == "r":
        return np.abs(np.linalg.qr(a, mode="r"))
    cols = a.shape[-2] if mode == "complete" else k
    return a, np.broadcast_to(np.eye(cols, dtype=a.dtype), a.shape[:-2] + (cols, cols))


def qr_samples(dtype, rng):
    yield from rect_samples(dtype, rng)
    yield Sample((make((2, 4, 3), dtype, rng),), {"mode": "r"})


def _adj(t):
    return t.mH  # recorded by autograd, so the complex rows can be differentiated


def _sym(a):
    """(A + A^H) / 2: rows of functions that read one triangle differentiate this."""
    return (a + _adj(a)) * 0.5


def _svd_fn(a, full_matrices=True):
    u, s, vh = LA.svd(a, full_matrices=full_matrices)
    k = s.shape[-1]
    u, vh = u[..., :, :k], vh[..., :k, :]  # the extra full columns are not unique
    us = u * s.unsqueeze(-2).to(a.dtype)
    return us @ vh, s, _adj(u) @ u, vh @ _adj(vh)


def _np_svd(a, full_matrices=True):
    k = min(a.shape[-2:])
    s = np.linalg.svd(a, compute_uv=False)
    eye = np.broadcast_to(np.eye(k, dtype=a.dtype), a.shape[:-2] + (k, k))
    return a, s, eye, eye


def svd_samples(dtype, rng):
    for s in rect_samples(dtype, rng):
        yield s
        yield Sample(s.args, {"full_matrices": False}, note=s.note + " thin")


def _eigh_fn(a, UPLO="L"):
    w, v = LA.eigh(_sym(a), UPLO=UPLO)
    return w, (v * w.unsqueeze(-2).to(a.dtype)) @ _adj(v)


def _np_eigh(a, UPLO="L"):
    w = np.linalg.eigvalsh(a, UPLO=UPLO)
    full = np.tril(a) + _h(np.tril(a, -1)) if UPLO == "L" else np.triu(a) + _h(np.triu(a, 1))
    return w, full


def eigh_samples(dtype, rng):
    yield from square_samples("symmetric")(dtype, rng)
    yield Sample((square(dtype, rng, (3, 3), "symmetric"),), {"UPLO": "U"}, note="upper")


def _eig_fn(a):
    w, v = LA.eig(a)
    ac = a.to(w.dtype)
    # A V = V diag(w), and sorted eigenvalues as a second check
    return ac @ v - v * w.unsqueeze(-2)


def _np_eig(a):
    n = a.shape[-1]
    return np.zeros(
        a.shape[:-2] + (n, n),
        np.complex64 if a.dtype in (np.float32, np.complex64) else np.complex128,
    )


def _sorted_eigvals(a):
    w = LA.eigvals(a).cpu().numpy()
    return np.sort_complex(w.reshape(-1, w.shape[-1])).reshape(w.shape)


def _np_sorted_eigvals(a):
    w = np.linalg.eigvals(a)
    return np.sort_complex(w.reshape(-1, w.shape[-1])).reshape(w.shape)


def _lu_factor_fn(a):
    lu, piv = LA.lu_factor(a)
    return lu, piv


def _np_lu_factor(a):
    import scipy.linalg

    flat = a.reshape(-1, *a.shape[-2:])
    res = [scipy.linalg.lu_factor(x) for x in flat]
    k = min(a.shape[-2:])
    lu = np.stack([r[0] for r in res]).reshape(a.shape) if flat.shape[0] else a.copy()
    piv = (
        (np.stack([r[1] for r in res]) + 1).reshape(*a.shape[:-2], k)
        if flat.shape[0]
        else np.zeros(a.shape[:-2] + (k,), np.int32)
    )
    return lu, piv.astype(np.int32)


def _no_info(a):
    """LAPACK's info of a batch of nonsingular matrices: zeros, one per matrix."""
    return np.zeros(a.shape[:-2], np.int32)


def _lu_fn(a):
    p, l_, u = LA.lu(a)
    return p @ l_ @ u, l_.tril(), u.triu()


def _np_lu(a):
    import scipy.linalg

    flat = a.reshape(-1, *a.shape[-2:])
    ls, us = [], []
    for x in flat:
        _, l_, u = scipy.linalg.lu(x)
        ls.append(l_)
        us.append(u)
    m, n = a.shape[-2:]
    k = min(m, n)
    return a, np.stack(ls).reshape(*a.shape[:-2], m, k), np.stack(us).reshape(*a.shape[:-2], k, n)


def lu_solve_samples(dtype, rng):
    for s in solve_samples(dtype, rng):
        a, b = s.args
        if "vector" in s.note:  # lu_solve takes matrices only
            continue
        yield Sample((a, b), {**s.kwargs, "adjoint": False})
        yield Sample((a, b), {**s.kwargs, "adjoint": True}, note="adjoint")


def _lu_solve_fn(a, b, left=True, adjoint=False):
    lu, piv = LA.lu_factor(a)
    return LA.lu_solve(lu, piv, b, left=left, adjoint=adjoint)


def _np_lu_solve(a, b, left=True, adjoint=False):
    return np_solve(_h(a) if adjoint else a, b, left=left)


def pinv_samples(dtype, rng):
    yield from rect_samples(dtype, rng)
    # rank 2 of 7 (pinv jumps where the rank changes: too large for finite differences)
    low_rank = make((8, 2), dtype, rng) @ make((2, 7), dtype, rng)
    yield Sample((low_rank,), note="rank 2")
    yield Sample((square(dtype, rng, (2, 3, 3), "symmetric"),), {"hermitian": True})
    yield Sample((make((3, 3), dtype, rng),), {"atol": 0.5}, note="atol")


def _np_pinv(a, atol=None, rtol=None, hermitian=False):
    if atol is None and rtol is None:  # PyTorch's default rtol: eps * max(m, n)
        rc = np.finfo(np.abs(a).dtype).eps * max(a.shape[-2:])
        return np.linalg.pinv(a, rcond=rc, hermitian=hermitian)
    s = np.linalg.svd(a, compute_uv=False)
    r = 0.0 if rtol is None else rtol
    tol = np.maximum(atol or 0.0, r * s.max(-1))
    return np.linalg.pinv(a, rcond=tol / s.max(-1), hermitian=hermitian)


def rank_samples(dtype, rng):
    yield from pinv_samples(dtype, rng)
    yield Sample((np.zeros((2, 3), dtype),), note="zero")


def _np_rank(a, atol=None, rtol=None, hermitian=False):
    s = np.abs(np.linalg.eigvalsh(a)) if hermitian else np.linalg.svd(a, compute_uv=False)
    eps = np.finfo(s.dtype).eps
    r = rtol if rtol is not None else (0.0 if atol else eps * max(a.shape[-2:]))
    tol = np.maximum(atol or 0.0, r * (s.max(-1, keepdims=True) if s.shape[-1] else 0))
    return (s > tol).sum(-1).astype(np.int64)


def power_samples(dtype, rng):
    a = square(dtype, rng, (2, 3, 3)) / 4
    for n in (0, 1, 2, 5, -1, -3):
        yield Sample((a, n), note=f"n={n}")
    yield Sample((square(dtype, rng, (3, 3)).T / 4, 3), note="transposed")


def _np_power(a, n):
    return np.linalg.matrix_power(a, n)


def vector_norm_samples(dtype, rng):
    x = make((2, 3, 4), dtype, rng)
    for ord_ in (2, 1, 3.5, float("inf"), float("-inf"), 0):
        yield Sample((x,), {"ord": ord_}, note=f"ord={ord_}")
    yield Sample((x,), {"ord": 2, "dim": (0, 2), "keepdim": True})
    yield Sample((make((3, 4), dtype, rng, noncontig=True),), {"dim": 1})
    yield Sample((make((), dtype, rng),), note="0-dim")


def _np_vector_norm(x, ord=2, dim=None, keepdim=False):
    ax = tuple(range(x.ndim)) if dim is None else (dim if isinstance(dim, tuple) else (dim,))
    a = np.abs(x)
    if ord == float("inf"):
        r = a.max(axis=ax, keepdims=keepdim) if x.ndim else a
    elif ord == float("-inf"):
        r = a.min(axis=ax, keepdims=keepdim) if x.ndim else a
    elif ord == 0:
        r = (a != 0).sum(axis=ax, keepdims=keepdim).astype(a.dtype)
    else:
        r = (a**ord).sum(axis=ax, keepdims=keepdim) ** (1.0 / ord)
    return np.asarray(r, dtype=np.abs(x).dtype)


MATRIX_ORDS = ["fro", "nuc", float("inf"), float("-inf"), 1, -1, 2, -2]


def matrix_norm_samples(dtype, rng):
    a = make((2, 3, 4), dtype, rng)
    for ord_ in MATRIX_ORDS:
        yield Sample((a,), {"ord": ord_}, note=f"ord={ord_}")
    yield Sample(
        (make((3, 2, 4), dtype, rng, noncontig=True),),
        {"ord": "nuc", "dim": (0, 2), "keepdim": True},
    )
    yield Sample((a,), {"ord": 1, "dim": (2, 0)})


def _np_matrix_norm(a, ord="fro", dim=(-2, -1), keepdim=False):
    r = np.linalg.norm(np.moveaxis(a, dim, (-2, -1)), ord=ord, axis=(-2, -1))
    if keepdim:
        for d in sorted(d % a.ndim for d in dim):
            r = np.expand_dims(r, d)
    return np.asarray(r, dtype=np.abs(a).dtype)


def norm_samples(dtype, rng):
    yield Sample((make((2, 3, 4), dtype, rng),), note="flattened 2-norm")
    yield Sample((make((3, 4), dtype, rng),), {"ord": "nuc"})
    yield Sample((make((3, 4), dtype, rng),), {"ord": 2})
    yield Sample((make((4,), dtype, rng),), {"ord": 1})
    yield Sample((make((2, 3, 4), dtype, rng),), {"dim": (0, 2), "ord": float("inf")})
    yield Sample((make((2, 3, 4), dtype, rng),), {"dim": 1, "ord": 3, "keepdim": True})


def _np_norm(a, ord=None, dim=None, keepdim=False):
    if ord is None and dim is None:
        return np.asarray(np.linalg.norm(a.reshape(-1)), dtype=np.abs(a).dtype)
    if isinstance(dim, int):
        dim = (dim,)
    r = np.linalg.norm(a, ord=ord, axis=dim, keepdims=keepdim)
    return np.asarray(r, dtype=np.abs(a).dtype)


def _cholesky_fn(a, upper=False):
    c = LA.cholesky(_sym(a), upper=upper)
    return c


def _np_cholesky(a, upper=False):
    c = np.linalg.cholesky(a)
    return _h(c) if upper else c


def chol_samples(dtype, rng):
    for s in square_samples("spd")(dtype, rng):
        yield s
        yield Sample(s.args, {"upper": True}, note=s.note + " upper")


def _det_fn(a):
    return LA.det(a)


def _slogdet_fn(a):
    r = LA.slogdet(a)
    return r.sign, r.logabsdet


def _np_slogdet(a):
    s, la = np.linalg.slogdet(a)
    return s, la


LAPACK_TOL = {"rtol": 1e-4, "atol": 1e-4}  # float32 factorizations of 4x4 matrices

TESTS += [
    OpTest(
        "linalg_det",
        _det_fn,
        np.linalg.det,
        square_samples("general"),
        dtypes=LA_DTYPES,
        **LAPACK_TOL,
    ),
    OpTest(
        "linalg_slogdet",
        _slogdet_fn,
        _np_slogdet,
        square_samples("general"),
        dtypes=LA_DTYPES,
        **LAPACK_TOL,
    ),
    OpTest(
        "linalg_inv",
        LA.inv,
        np.linalg.inv,
        square_samples("general"),
        dtypes=LA_DTYPES,
        **LAPACK_TOL,
    ),
    OpTest(
        "linalg_inv_ex",
        lambda a: LA.inv_ex(a).inverse,
        np.linalg.inv,
        square_samples("general"),
        dtypes=LA_DTYPES,
        **LAPACK_TOL,
    ),
    OpTest("linalg_solve", LA.solve, np_solve, solve_samples, dtypes=LA_DTYPES, **LAPACK_TOL),
    OpTest(
        "linalg_solve_ex",
        LA.solve_ex,
        lambda a, b, left=True: (np_solve(a, b, left), _no_info(a)),
        solve_samples,
        dtypes=LA_DTYPES,
        **LAPACK_TOL,
    ),
    OpTest(
        "linalg_solve_triangular",
        LA.solve_triangular,
        np_solve_triangular,
        triangular_samples,
        dtypes=LA_DTYPES,
        **LAPACK_TOL,
    ),
    OpTest(
        "cholesky_solve",
        _cholesky_solve_fn,
        np_cholesky_solve,
        cholesky_solve_samples,
        dtypes=LA_DTYPES,
        **LAPACK_TOL,
    ),
    OpTest("linalg_lstsq", _lstsq_fn, np_lstsq, lstsq_samples, dtypes=LA_DTYPES, **LAPACK_TOL),
    OpTest(
        "linalg_cholesky", _cholesky_fn, _np_cholesky, chol_samples, dtypes=LA_DTYPES, **LAPACK_TOL
    ),
    OpTest(
        "linalg_cholesky_ex",
        lambda a: LA.cholesky_ex(_sym(a)).L,
        np.linalg.cholesky,
        square_samples("spd"),
        dtypes=LA_DTYPES,
        **LAPACK_TOL,
    ),
    OpTest("linalg_qr", _qr_fn, _np_qr, qr_samples, dtypes=LA_DTYPES, **LAPACK_TOL),
    OpTest("linalg_svd", _svd_fn, _np_svd, svd_samples, dtypes=LA_DTYPES, **LAPACK_TOL),
    OpTest(
        "linalg_svdvals",
        LA.svdvals,
        lambda a: np.linalg.svd(a, compute_uv=False),
        rect_samples,
        dtypes=LA_DTYPES,
        **LAPACK_TOL,
    ),
    OpTest("linalg_eigh", _eigh_fn, _np_eigh, eigh_samples, dtypes=LA_DTYPES, **LAPACK_TOL),
    OpTest(
        "linalg_eigvalsh",
        lambda a, **kw: LA.eigvalsh(_sym(a), **kw),
        lambda a, UPLO="L": np.linalg.eigvalsh(a, UPLO=UPLO),
        eigh_samples,
        dtypes=LA_DTYPES,
        **LAPACK_TOL,
    ),
    OpTest(
        "linalg_eig", _eig_fn, _np_eig, square_samples("general"), dtypes=LA_DTYPES, **LAPACK_TOL
    ),
    OpTest(
        "linalg_eigvals",
        _sorted_eigvals,
        _np_sorted_eigvals,
        square_samples("general"),
        dtypes=LA_DTYPES,
        **LAPACK_TOL,
    ),
    OpTest(
        "linalg_pinv",
        lambda a, **kw: LA.pinv(_sym(a) if kw.get("hermitian") else a, **kw),
        _np_pinv,
        pinv_samples,
        dtypes=LA_DTYPES,
        **LAPACK_TOL,
    ),
    OpTest("linalg_matrix_rank", LA.matrix_rank, _np_rank, rank_samples, dtypes=LA_DTYPES),
    OpTest(
        "linalg_matrix_power",
        LA.matrix_power,
        _np_power,
        power_samples,
        dtypes=LA_DTYPES,
        **LAPACK_TOL,
    ),
    OpTest(
        "matrix_power",
        flambeau.matrix_power,
        _np_power,
        lambda d, rng: [s for s in power_samples(d, rng) if s.args[1] >= 0],
        dtypes=FLOATS + ("int64",),
        **LAPACK_TOL,
    ),
    OpTest(
        "linalg_lu_factor",
        _lu_factor_fn,
        _np_lu_factor,
        square_samples("general"),
        dtypes=LA_DTYPES,
        **LAPACK_TOL,
    ),
    OpTest(
        "linalg_lu_factor_ex",
        LA.lu_factor_ex,
        lambda a: (*_np_lu_factor(a), _no_info(a)),
        square_samples("general"),
        dtypes=LA_DTYPES,
        **LAPACK_TOL,
    ),
    OpTest(
        "linalg_lu_solve",
        _lu_solve_fn,
        _np_lu_solve,
        lu_solve_samples,
        dtypes=LA_DTYPES,
        **LAPACK_TOL,
    ),
    OpTest(
        "linalg_lu",
        _lu_fn,
        _np_lu,
        square_samples("general", empty=False),
        dtypes=LA_DTYPES,
        **LAPACK_TOL,
    ),
    OpTest(
        "linalg_vector_norm",
        LA.vector_norm,
        _np_vector_norm,
        vector_norm_samples,
        dtypes=LA_DTYPES,
        **LAPACK_TOL,
    ),
    OpTest(
        "linalg_matrix_norm",
        lambda a, ord="fro", **kw: LA.matrix_norm(a, ord, **kw),
        _np_matrix_norm,
        lambda d, rng: [
            s for s in matrix_norm_samples(d, rng) if not isinstance(s.kwargs["ord"], str)
        ],
        dtypes=LA_DTYPES,
        **LAPACK_TOL,
    ),
    OpTest(
        "linalg_matrix_norm.str",
        lambda a, ord="fro", **kw: LA.matrix_norm(a, ord, **kw),
        _np_matrix_norm,
        lambda d, rng: [s for s in matrix_norm_samples(d, rng) if isinstance(s.kwargs["ord"], str)],
        dtypes=LA_DTYPES,
        **LAPACK_TOL,
    ),
    OpTest(
        "linalg_norm",
        LA.norm,
        _np_norm,
        lambda d, rng: [
            s for s in norm_samples(d, rng) if not isinstance(s.kwargs.get("ord"), str)
        ],
        dtypes=LA_DTYPES,
        **LAPACK_TOL,
    ),
    OpTest(
        "linalg_norm.str",
        LA.norm,
        _np_norm,
        lambda d, rng: [s for s in norm_samples(d, rng) if isinstance(s.kwargs.get("ord"), str)],
        dtypes=LA_DTYPES,
        **LAPACK_TOL,
    ),
]
