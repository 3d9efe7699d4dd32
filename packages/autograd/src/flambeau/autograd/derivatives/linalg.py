"""Formulas of matrix products and of flambeau.linalg (complex inputs: see complex.py)."""

from __future__ import annotations

import flambeau as F

from .complex import conj
from .helpers import needs_grad, sum_to
from .registry import formula


def _mH(x):
    """The conjugate transpose of the last two dims (the transpose for real x)."""
    return conj(x.transpose(-2, -1))


def _mT(x):
    return x.transpose(-2, -1)


def _grad_of_right(x, g, y):
    """x^H @ g, the gradient of y in x @ y for a 2-D y, in y's layout: when y is a
    transposed weight (linear's w.t()), g^T @ conj(x) transposed, so the leaf's
    gradient comes out contiguous instead of needing a transposing copy. Batch
    dims of x fold into its rows."""
    if x.dim() > 2:
        x, g = x.reshape(-1, x.shape[-1]), g.reshape(-1, g.shape[-1])
    if y.stride(0) == 1 and y.stride(1) != 1:
        return _mT(_mT(g) @ conj(x))
    return _mH(x) @ g


# mat2's gradient reads mat2's strides too (_grad_of_right lays it out like mat2).
@formula("mm", reads={"input": ("mat2",), "mat2": ("input", "mat2")})
def _mm(g, a):
    x, y = a["input"], a["mat2"]
    return {
        "input": g @ _mH(y) if needs_grad(x) else None,
        "mat2": _grad_of_right(x, g, y) if needs_grad(y) else None,
    }


@formula("bmm", reads={"input": ("mat2",), "mat2": ("input",)})
def _bmm(g, a):
    x, y = a["input"], a["mat2"]
    return {
        "input": g @ _mH(y) if needs_grad(x) else None,
        "mat2": _mH(x) @ g if needs_grad(y) else None,
    }


@formula("mv")
def _mv(g, a):
    return {"input": g.unsqueeze(1) * conj(a["vec"]).unsqueeze(0), "vec": _mH(a["input"]) @ g}


@formula("dot")
def _dot(g, a):
    return {"input": g * conj(a["other"]), "other": g * conj(a["input"])}


# other's gradient reads other's strides too (_grad_of_right). Only the wanted gradients
# are computed, and the value of an input whose gradient alone is wanted is not read.
@formula("matmul", reads={"input": ("other",), "other": ("input", "other")})
def _matmul(g, a):
    x, y = a["input"], a["other"]
    if x.dim() == 1 and y.dim() == 1:
        return {
            "input": g * conj(y) if needs_grad(x) else None,
            "other": g * conj(x) if needs_grad(y) else None,
        }
    gm = g
    if x.dim() == 1:
        gm = gm.unsqueeze(-2)
    if y.dim() == 1:
        gm = gm.unsqueeze(-1)
    out = {}
    if needs_grad(x):
        ym = y.unsqueeze(-1) if y.dim() == 1 else y
        xm_shape = (1, *x.shape) if x.dim() == 1 else tuple(x.shape)
        out["input"] = sum_to(gm @ _mH(ym), xm_shape).reshape(tuple(x.shape))
    if needs_grad(y):
        xm = x.unsqueeze(0) if x.dim() == 1 else x
        ym = y.unsqueeze(-1) if y.dim() == 1 else y
        gy = _grad_of_right(xm, gm, ym) if ym.dim() == 2 else _mH(xm) @ gm
        out["other"] = sum_to(gy, ym.shape).reshape(tuple(y.shape))
    return out


# ---- products built on GEMM ----


def _scal(a, key):
    v = a.get(key)
    return 1 if v is None else conj(v)


def _scaled(t, s):
    """t * s, or t itself for s == 1 (no pass over t, and t's layout kept)."""
    return t if isinstance(s, (int, float)) and s == 1 else t * s


# mat2's gradient reads mat2's strides too (_grad_of_right: linear's weight.t()).
@formula(
    "addmm",
    reads={"input": ("beta",), "mat1": ("mat2", "alpha"), "mat2": ("mat1", "mat2", "alpha")},
)
def _addmm(g, a):
    al = _scal(a, "alpha")
    # Only the wanted gradients: a matrix's value is kept only when the other's is wanted.
    return {
        "input": _scaled(g, _scal(a, "beta")) if needs_grad(a["input"]) else None,
        "mat1": _scaled(g @ _mH(a["mat2"]), al) if needs_grad(a["mat1"]) else None,
        "mat2": _scaled(_grad_of_right(a["mat1"], g, a["mat2"]), al)
        if needs_grad(a["mat2"])
        else None,
    }


@formula("baddbmm")
def _baddbmm(g, a):
    al = _scal(a, "alpha")
    return {
        "input": g * _scal(a, "beta"),
        "batch1": (g @ _mH(a["batch2"])) * al,
        "batch2": (_mH(a["batch1"]) @ g) * al,
    }


@formula("addbmm")
def _addbmm(g, a):
    al, gb = _scal(a, "alpha"), g.unsqueeze(0)
    return {
        "input": g * _scal(a, "beta"),
        "batch1": (gb @ _mH(a["batch2"])) * al,
        "batch2": (_mH(a["batch1"]) @ gb) * al,
    }


@formula("addmv")
def _addmv(g, a):
    al = _scal(a, "alpha")
    return {
        "input": g * _scal(a, "beta"),
        "mat": F.outer(g, conj(a["vec"])) * al,
        "vec": (_mH(a["mat"]) @ g) * al,
    }


@formula("addr")
def _addr(g, a):
    al = _scal(a, "alpha")
    return {
        "input": g * _scal(a, "beta"),
        "vec1": (g @ conj(a["vec2"])) * al,
        "vec2": (g.t() @ conj(a["vec1"])) * al,
    }


@formula("outer", "ger")
def _outer(g, a):
    return {"input": g @ conj(a["vec2"]), "vec2": g.t() @ conj(a["input"])}


@formula("vdot")
def _vdot(g, a):
    # vdot(x, y) = sum(conj(x) * y): antiholomorphic in x.
    return {"input": conj(g) * a["other"], "other": g * a["input"]}


@formula("trace")
def _trace(g, a):
    x = a["input"]
    return {"input": F.eye(x.shape[0], x.shape[1], dtype=g.dtype) * g}


@formula("kron")
def _kron(g, a):
    x, y = a["input"], a["other"]
    nd = max(x.dim(), y.dim())
    xs = (1,) * (nd - x.dim()) + tuple(x.shape)
    ys = (1,) * (nd - y.dim()) + tuple(y.shape)
    inter = tuple(v for pair in zip(xs, ys) for v in pair)
    gr = g.reshape(inter)
    xr = x.reshape(tuple(v for s in xs for v in (s, 1)))
    yr = y.reshape(tuple(v for s in ys for v in (1, s)))
    odd, even = tuple(range(1, 2 * nd, 2)), tuple(range(0, 2 * nd, 2))
    return {
        "input": (gr * conj(yr)).sum(dim=odd).reshape(tuple(x.shape)),
        "other": (gr * conj(xr)).sum(dim=even).reshape(tuple(y.shape)),
    }


def _cross_dim(a):
    dim = a.get("dim")
    if dim is None:  # torch.cross's default: the first dim of size 3
        import numpy as np

        shape = np.broadcast_shapes(tuple(a["input"].shape), tuple(a["other"].shape))
        dim = next(i for i, s in enumerate(shape) if s == 3)
    return dim


@formula("cross", "linalg_cross")
def _cross(g, a):
    d = _cross_dim(a)
    return {
        "input": F.linalg.cross(conj(a["other"]), g, dim=d),
        "other": F.linalg.cross(g, conj(a["input"]), dim=d),
    }


# ---- einsum and tensordot: gradients are einsums ----

_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _einsum_terms(equation, shapes):
    """Explicit per-operand subscripts (ellipses spelled with fresh letters) and output."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    fresh = [c for c in _LETTERS if c not in eq]
    n_ell = max(
        (len(s) - len(t.replace("...", "")) for t, s in zip(terms, shapes) if "..." in t), default=0
    )
    ell = "".join(fresh[:n_ell])
    out_terms = []
    for t, s in zip(terms, shapes):
        k = len(s) - len(t.replace("...", ""))
        out_terms.append(t.replace("...", ell[n_ell - k :] if k else ""))
    if arrow:
        out = rhs.replace("...", ell)
    else:
        counts = {}
        for t in out_terms:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        once = sorted(c for c in counts if counts[c] == 1 and c not in ell)
        out = ell + "".join(once)
    return out_terms, out, fresh[n_ell:]


def _einsum_grads(g, terms, out, operands, fresh):
    """Gradient of each operand of einsum(terms -> out): the einsum of g with the others,
    with identity factors for repeated labels and ones for labels summed only there."""
    sizes = {}
    for t, x in zip(terms, operands):
        for c, n in zip(t, x.shape):
            sizes[c] = max(sizes.get(c, 1), n)
    grads = []
    for i, (t, x) in enumerate(zip(terms, operands)):
        if not isinstance(x, F.Tensor) or not x.requires_grad:
            grads.append(None)
            continue
        spare = iter(fresh)
        subs, ops, target = [out], [g], ""
        seen = set()
        for c in t:
            if c in seen:  # a repeated label: the gradient sits on the diagonal
                d = next(spare)
                subs.append(c + d)
                ops.append(F.eye(sizes[c], dtype=g.dtype))
                target += d
            else:
                seen.add(c)
                target += c
        others = "".join(s for j, s in enumerate(terms) if j != i)
        for c in seen:
            if c not in out and c not in others:  # summed only here: broadcast back
                subs.append(c)
                ops.append(F.ones(sizes[c], dtype=g.dtype))
        for j, (s, y) in enumerate(zip(terms, operands)):
            if j != i:
                subs.append(s)
                ops.append(conj(y))
        grads.append(F.einsum(",".join(subs) + "->" + target, *ops))
    return grads


@formula("einsum")
def _einsum(g, a):
    ops = list(a["tensors"])
    terms, out, fresh = _einsum_terms(a["equation"], [tuple(x.shape) for x in ops])
    return {"tensors": _einsum_grads(g, terms, out, ops, fresh)}


@formula("tensordot")
def _tensordot(g, a):
    x, y = a["a"], a["b"]
    if "dims_a" in a:
        da, db = list(a["dims_a"]), list(a["dims_b"])
    else:
        dims = a.get("dims", 2)
        da, db = list(range(x.dim() - dims, x.dim())), list(range(dims))
    da = [d % max(x.dim(), 1) for d in da]
    db = [d % max(y.dim(), 1) for d in db]
    tx = list(_LETTERS[: x.dim()])
    ty = list(_LETTERS[x.dim() : x.dim() + y.dim()])
    for i, j in zip(da, db):
        ty[j] = tx[i]
    out = "".join(c for k, c in enumerate(tx) if k not in da) + "".join(
        c for k, c in enumerate(ty) if k not in db
    )
    gx, gy = _einsum_grads(
        g, ["".join(tx), "".join(ty)], out, [x, y], list(_LETTERS[x.dim() + y.dim() :])
    )
    return {"a": gx, "b": gy}


# ---- flambeau.linalg ----
# det, inv, solve, solve_triangular, matrix_power and lu are holomorphic: their complex
# gradients are the real ones with conjugate transposes (_mH). cholesky, qr, eigh, svd and
# slogdet's sign are not: their factors are pinned by a real diagonal (cholesky, qr) or are
# free up to a phase per column (eigh, svd), which adds terms on the diagonal.


def _re(x):
    return F.real(x) if x.is_complex() else x


def _i_times(x):
    """i x for a real tensor x, recorded so double backward sees it."""
    return F.complex(F.zeros_like(x), x)


def _diag_of(x):
    return x.diagonal(0, -2, -1)


def _check_phase_invariant(im, what):
    """Complex singular vectors and eigenvectors are defined up to a phase per column; a
    loss that depends on those phases leaves Im diag(V^H gV) nonzero and has no gradient.
    Raised as PyTorch does (with its lax tolerance)."""
    im = im.detach()
    if im.numel() and float(im.abs().max()) > 1e-2:
        raise RuntimeError(
            f"{what}: the {'singular' if 'svd' in what else 'eigen'}vectors in the complex case "
            "are specified up to multiplication by e^{i phi}. The specified loss function "
            "depends on this phase term, making it ill-defined."
        )


def _zero_if_none(g, like):
    return g if g is not None else F.zeros(tuple(like.shape), dtype=like.dtype)


@formula("linalg_det", needs_result=True)
def _det(g, a):
    A = a["input"] if "input" in a else a["A"]
    inv_h = _mH(F.linalg.inv(A))
    return {"A": (g * conj(a["result"])).unsqueeze(-1).unsqueeze(-1) * inv_h}


@formula("linalg_slogdet", needs_result=(0,))  # the sign
def _slogdet(g, a):
    A = a["A"]
    gsign, glog = g
    if not A.is_complex():
        gsign = None  # the sign is piecewise constant for real A
    if gsign is None and glog is None:
        return {}
    # With t = tr(A^-1 dA): d logabsdet = Re t and d sign = sign * i Im t, so the loss
    # changes by Re(conj(h) t) with h = glog + i Im(gsign * conj(sign)); gA = h A^-H.
    h = glog
    if gsign is not None:
        turn = _i_times(F.imag(gsign * conj(a["results"][0])))
        h = turn if h is None else h + turn
    return {"A": h.unsqueeze(-1).unsqueeze(-1) * _mH(F.linalg.inv(A))}


def _inv_grad(g, X):
    Xh = _mH(X)
    return -(Xh @ g @ Xh)


@formula("linalg_inv", needs_result=True)
def _inv(g, a):
    return {"A": _inv_grad(g, a["result"])}


@formula("linalg_inv_ex", needs_result=(0,))
def _inv_ex(g, a):
    if g[0] is None:
        return {}
    return {"A": _inv_grad(g[0], a["results"][0])}


def _solve_grad(g, A, B, X, left):
    gB = F.linalg.solve(_mH(A), g, left=left)
    if not left:
        return {"A": -(_mH(X) @ gB), "B": gB}
    if gB.dim() == X.dim() and (
        B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    ):
        return {"A": -(gB.unsqueeze(-1) * conj(X).unsqueeze(-2)), "B": gB}
    return {"A": -(gB @ _mH(X)), "B": gB}


@formula("linalg_solve", needs_result=True)
def _solve(g, a):
    return _solve_grad(g, a["A"], a["B"], a["result"], a.get("left", True))


@formula("linalg_solve_ex", needs_result=(0,))
def _solve_ex(g, a):
    if g[0] is None:
        return {}
    return _solve_grad(g[0], a["A"], a["B"], a["results"][0], a.get("left", True))


@formula("cholesky_solve", needs_result=True)
def _cholesky_solve(g, a):
    # PyTorch's: the factor's gradient is that of (L L^H)^-1 B with L dense (not masked to
    # the triangle the forward reads), which is also what cholesky_inverse's is.
    L, X, upper = a["input2"], a["result"], a.get("upper", False)
    gB = F.cholesky_solve(g, L, upper)
    common = gB @ _mH(X)
    common = common + _mH(common)
    return {"input": gB, "input2": -(L @ common) if upper else -(common @ L)}


@formula("linalg_solve_triangular", needs_result=True)
def _solve_triangular(g, a):
    A, X = a["input"], a["result"]
    upper, left, unit = a["upper"], a.get("left", True), a.get("unitriangular", False)
    gB = F.linalg.solve_triangular(_mH(A), g, upper=not upper, left=left, unitriangular=unit)
    gA = -(gB @ _mH(X)) if left else -(_mH(X) @ gB)
    off = 1 if unit else 0
    gA = gA.triu(off) if upper else gA.tril(-off)
    return {"input": gA, "B": gB}


def _diag(v):
    """Diagonal matrices from the vectors v (..., n), built differentiably."""
    return v.unsqueeze(-1) * F.eye(v.shape[-1], dtype=v.dtype)


@formula("linalg_cholesky", "linalg_cholesky_ex", needs_result=(0,))
def _cholesky(g, a):
    gL = g[0] if isinstance(g, tuple) else g
    L = a["results"][0]
    if gL is None:
        return {}
    if a.get("upper", False):
        L, gL = _mH(L), _mH(gL)
    # gA = L^-H sym(Phi(L^H gL)) L^-1. The Hermitian completion of the lower triangle X,
    # (X + tril(X, -1)^H) / 2, is PyTorch's: it keeps i Im diag(X) / 2, which only adds an
    # anti-Hermitian part (orthogonal to every Hermitian dA) to the gradient.
    X = (_mH(L) @ gL).tril()
    M = (X + _mH(X.tril(-1))) * 0.5
    Y = F.linalg.solve_triangular(_mH(L), M, upper=True)  # L^-H M
    return {"input": F.linalg.solve_triangular(L, Y, upper=False, left=False)}  # (.) L^-1


def _hermitian_from_upper(N):
    """The Hermitian matrix with N's strict upper triangle and the real part of its diagonal."""
    up = N.triu(1)
    return up + _mH(up) + _diag(_re(_diag_of(N)))


def _qr_square_backward(gQ, gR, Q, R):
    """A = QR with m >= n (reduced): gA = (gQ + Q B) R^-H, B built from gR R^H - Q^H gQ.
    Q^H dQ is skew-Hermitian and dR R^-1 upper triangular with a real diagonal (LAPACK's
    R has one), which is why B keeps only the upper triangle and the real diagonal."""
    B = _hermitian_from_upper(gR @ _mH(R) - _mH(Q) @ gQ)
    # (.) R^-H: solve X R^H = gQ + Q B, R^H lower triangular
    return F.linalg.solve_triangular(_mH(R), gQ + Q @ B, upper=False, left=False)


@formula("linalg_qr", needs_result=True)
def _qr(g, a):
    A = a["A"]
    mode = a.get("mode", "reduced")
    m, n = A.shape[-2], A.shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError(
            "The derivative of linalg.qr depends on Q, which is not unique when mode='complete' "
            "and nrows > ncols."
        )
    Q, R = a["results"]
    if mode == "r":
        Q = F.linalg.qr(A).Q
    gQ = None if mode == "r" else g[0]
    gR = g[1]
    gQ = _zero_if_none(gQ, Q)
    gR = _zero_if_none(gR, R)
    if m >= n:
        return {"A": _qr_square_backward(gQ, gR, Q, R)}
    # Wide: A = [X | Y], X = Q R1, Y = Q R2.
    R1 = R[..., :, :m]
    gR1, gR2 = gR[..., :, :m], gR[..., :, m:]
    Y = A[..., :, m:]
    gX = _qr_square_backward(gQ + Y @ _mH(gR2), gR1, Q, R1)
    gY = Q @ gR2
    return {"A": F.cat([gX, gY], -1)}


def _offdiag_inv(d):
    """F_ij = 1 / (d_j - d_i) off the diagonal, 0 on it."""
    diff = d.unsqueeze(-2) - d.unsqueeze(-1)
    n = d.shape[-1]
    eye = F.eye(n, dtype=d.dtype)
    return (1 - eye) / (diff + eye)


def _skew(x):
    return x - _mH(x)


@formula("linalg_eigh", needs_result=True)
def _eigh(g, a):
    w, V = a["results"]
    gw, gV = g
    inner = _diag(_zero_if_none(gw, w))
    if gV is not None:
        VhgV = _mH(V) @ gV
        if V.is_complex():  # the phase of each eigenvector is free: Im diag(V^H gV) = 0
            _check_phase_invariant(F.imag(_diag_of(VhgV)), "linalg.eigh")
        # V^H dV is skew-Hermitian: only the skew part of V^H gV counts (its imaginary
        # diagonal, the phase direction, is dropped with the diagonal of _offdiag_inv).
        inner = inner + (_skew(VhgV) * 0.5) * _offdiag_inv(w)
    return {"A": V @ inner.to(V.dtype) @ _mH(V)}


@formula("linalg_eigvalsh")
def _eigvalsh(g, a):
    V = F.linalg.eigh(a["A"], UPLO=a.get("UPLO", "L")).eigenvectors
    return {"A": (V * g.unsqueeze(-2)) @ _mH(V)}


def _eig_backward(gw, gV, w, V):
    """A = V diag(w) V^-1 with distinct eigenvalues and unit-norm columns of V. With
    E = V^-1 dA V: dw = diag(E) and V^-1 dV = E / (w_j - w_i) off the diagonal, plus the
    diagonal that keeps each column's norm (its imaginary part is the free phase). Hence
    gA = V^-H M V^H, M = diag(gw) + (V^H gV - V^H V diag(Re diag(V^H gV))) / conj(w_j - w_i)."""
    M = _diag(_zero_if_none(gw, w))
    if gV is not None:
        VhgV = _mH(V) @ gV
        diag_VhgV = _diag_of(VhgV)
        _check_phase_invariant(F.imag(diag_VhgV), "linalg.eig")
        G = VhgV - (_mH(V) @ V) * F.real(diag_VhgV).to(V.dtype).unsqueeze(-2)
        M = M + G * _offdiag_inv(conj(w))
    return F.linalg.solve(_mH(V), M @ _mH(V))


@formula("linalg_eig", needs_result=True)
def _eig(g, a):
    w, V = a["results"]
    gw, gV = g
    if gw is None and gV is None:
        return {}
    return {"A": _eig_backward(gw, gV, w, V)}


@formula("linalg_eigvals")
def _eigvals(g, a):
    _, V = F.linalg.eig(a["A"])
    return {"A": _eig_backward(g, None, None, V)}


def _svd_phase_term(UhgU, VhgV, S):
    """i Im diag(U^H gU) / S on the diagonal: the imaginary diagonal of U^H dA V turns U's
    phases against V's. A phase-invariant loss has Im diag(U^H gU) = -Im diag(V^H gV) (both
    zero when one factor has no gradient), so their average serves either way."""
    zero = F.zeros_like(S)
    im_u = zero if UhgU is None else F.imag(_diag_of(UhgU))
    im_v = zero if VhgV is None else F.imag(_diag_of(VhgV))
    _check_phase_invariant(im_u + im_v, "linalg.svd")
    return _diag(_i_times((im_u - im_v) * 0.5 / S))


def _svd_backward(gU, gS, gVh, U, S, Vh):
    """A = U diag(S) Vh (thin factors, distinct nonzero S)."""
    if gU is None and gVh is None:
        return (U * gS.unsqueeze(-2)) @ Vh
    V = _mH(Vh)
    gV = None if gVh is None else _mH(gVh)
    UhgU = None if gU is None else _mH(U) @ gU
    VhgV = None if gV is None else _mH(V) @ gV
    E = _offdiag_inv(S * S)  # 1 / (S_j^2 - S_i^2) off the diagonal
    inner = 0
    if gU is not None:
        inner = inner + (_skew(UhgU) * E) * S.unsqueeze(-2)  # J S
    if gV is not None:
        inner = inner + S.unsqueeze(-1) * (_skew(VhgV) * E)  # S K
    if gS is not None:
        inner = inner + _diag(gS)
    if U.is_complex():
        inner = inner + _svd_phase_term(UhgU, VhgV, S)
    gA = U @ inner.to(U.dtype) @ Vh
    m, n, k = U.shape[-2], V.shape[-2], S.shape[-1]
    sinv = (1 / S).unsqueeze(-2)
    # the parts of gU (gV) outside U's (V's) column space, for non-square A
    if m > k and gU is not None:
        gA = gA + ((gU - U @ UhgU) * sinv) @ Vh
    if n > k and gV is not None:
        gA = gA + (U * sinv) @ _mH(gV - V @ VhgV)
    return gA


@formula("linalg_svd", needs_result=True)
def _svd(g, a):
    U, S, Vh = a["results"]
    k = S.shape[-1]
    gU, gS, gVh = g
    if a.get("full_matrices", True):
        U, Vh = U[..., :, :k], Vh[..., :k, :]
        gU = None if gU is None else gU[..., :, :k]
        gVh = None if gVh is None else gVh[..., :k, :]
    return {"A": _svd_backward(gU, gS, gVh, U, S, Vh)}


@formula("linalg_svdvals")
def _svdvals(g, a):
    U, _, Vh = F.linalg.svd(a["A"], full_matrices=False)
    return {"A": (U * g.unsqueeze(-2)) @ Vh}


@formula("linalg_pinv", needs_result=True)
def _pinv(g, a):
    return {"A": _pinv_grad(g, a["A"], a["result"])}


def _pinv_grad(g, A, P):
    Pt, gt = _mH(P), _mH(g)
    m, n = A.shape[-2], A.shape[-1]
    eye_m, eye_n = F.eye(m, dtype=A.dtype), F.eye(n, dtype=A.dtype)
    return -(Pt @ g @ Pt) + (eye_m - A @ P) @ gt @ P @ Pt + Pt @ P @ gt @ (eye_n - P @ A)


@formula("linalg_lstsq", needs_result=(0,), differentiable_outputs=(True, True, False, False))
def _lstsq(g, a):
    # Full-rank A: solution = pinv(A) B. The residuals ||B - A X||^2 (per column, tall A)
    # are differentiable too, as in PyTorch 2.13; the singular values are not.
    gX, gres = g[0], g[1]
    A, B, X = a["input"], a["b"], a["results"][0]
    vector = B.dim() == A.dim() - 1
    Bm, Xm = (B.unsqueeze(-1), X.unsqueeze(-1)) if vector else (B, X)
    gA = gB = None
    if gX is not None:
        gXm = gX.unsqueeze(-1) if vector else gX
        P = F.linalg.pinv(A)
        gB = _mH(P) @ gXm
        if needs_grad(A):
            gA = _pinv_grad(gXm @ _mH(Bm), A, P)
    if gres is not None and gres.numel():
        # At the optimum A^H (B - A X) = 0, so only B and A's explicit terms count.
        R = Bm - A @ Xm
        gR = R * gres.reshape(tuple(Xm.shape[:-2]) + (1, Xm.shape[-1])).to(R.dtype) * 2
        gB = gR if gB is None else gB + gR
        gA_res = -(gR @ _mH(Xm))
        gA = gA_res if gA is None else gA + gA_res
    if vector and gB is not None:
        gB = gB.squeeze(-1)
    return {"input": gA, "b": gB}


def _power_grad(g, B, n):
    """Gradient of B^n (n >= 1) w.r.t. B: sum_k (B^H)^k g (B^H)^(n-1-k)."""
    Bt = _mH(B)
    pows = [None] * n
    pows[0] = F.eye(B.shape[-1], dtype=B.dtype).expand(tuple(B.shape))
    for k in range(1, n):
        pows[k] = pows[k - 1] @ Bt
    total = None
    for k in range(n):
        term = pows[k] @ g @ pows[n - 1 - k]
        total = term if total is None else total + term
    return total


@formula("matrix_power", "linalg_matrix_power")
def _matrix_power(g, a):
    A = a["input"] if "input" in a else a["A"]
    n = a["n"]
    key = "input" if "input" in a else "A"
    if n == 0:
        return {key: F.zeros(tuple(A.shape), dtype=A.dtype)}
    if n > 0:
        return {key: _power_grad(g, A, n)}
    B = F.linalg.inv(A)
    gB = _power_grad(g, B, -n)
    return {key: _inv_grad(gB, B)}


def _vector_norm_grad(g, x, ord, dim, keepdim, result):
    from .registry import FORMULAS

    args = {"input": x, "p": ord, "dim": dim, "keepdim": keepdim, "result": result}
    return FORMULAS["norm"].fn(g, args)["input"]


@formula("linalg_vector_norm", needs_result=True)
def _vector_norm(g, a):
    x = a["x"]
    return {
        "x": _vector_norm_grad(
            g, x, a.get("ord", 2), a.get("dim"), a.get("keepdim", False), a["result"]
        )
    }


def _matrix_norm_grad(g, A, ord, dim, keepdim, result):
    d0, d1 = (d % A.dim() for d in dim)
    if ord == "fro":
        return _vector_norm_grad(g, A, 2, (d0, d1), keepdim, result)
    if not keepdim:
        for d in sorted((d0, d1)):
            g = g.unsqueeze(d)
            result = result.unsqueeze(d)
    if ord in ("nuc", 2, -2):
        Am = F.movedim(A, (d0, d1), (-2, -1))
        U, S, Vh = F.linalg.svd(Am, full_matrices=False)
        gm = F.movedim(g, (d0, d1), (-2, -1))
        if ord == "nuc":
            gA = (U @ Vh) * gm
        else:
            i = 0 if ord == 2 else S.shape[-1] - 1
            gA = (U[..., :, i : i + 1] @ Vh[..., i : i + 1, :]) * gm
        return F.movedim(gA, (-2, -1), (d0, d1))
    # 1 / -1 (column sums) and inf / -inf (row sums): the extremal line's signs
    sum_dim, ext_dim = (d0, d1) if abs(ord) == 1 else (d1, d0)
    sums = A.abs().sum(dim=sum_dim, keepdim=True)
    mask = (sums == result).to(A.dtype)
    mask = mask / mask.sum(dim=ext_dim, keepdim=True)
    return g * F.sgn(A) * mask


@formula("linalg_matrix_norm", needs_result=True)
def _matrix_norm(g, a):
    A = a["A"]
    ord_ = a.get("ord", "fro")
    dim = a.get("dim", (-2, -1))
    return {"A": _matrix_norm_grad(g, A, ord_, tuple(dim), a.get("keepdim", False), a["result"])}


@formula("linalg_norm", needs_result=True)
def _linalg_norm(g, a):
    A, ord_, dim, keepdim = a["A"], a.get("ord"), a.get("dim"), a.get("keepdim", False)
    if isinstance(dim, int):
        dim = (dim,)
    matrix = (dim is not None and len(dim) == 2) or (
        dim is None and ord_ is not None and A.dim() == 2
    )
    if matrix:
        return {
            "A": _matrix_norm_grad(
                g, A, "fro" if ord_ is None else ord_, tuple(dim or (-2, -1)), keepdim, a["result"]
            )
        }
    return {"A": _vector_norm_grad(g, A, 2 if ord_ is None else ord_, dim, keepdim, a["result"])}


def _perm_matrix(pivots, m, dtype):
    """P with A = P L U from LAPACK's 1-based row interchanges (small loops over pivots)."""
    piv = pivots.reshape(-1, pivots.shape[-1]).tolist()
    rows = []
    for p in piv:
        perm = list(range(m))
        for i, j in enumerate(p):
            perm[i], perm[j - 1] = perm[j - 1], perm[i]
        P = [[0.0] * m for _ in range(m)]
        for i, r in enumerate(perm):
            P[r][i] = 1.0
        rows.append(P)
    return F.tensor(rows, dtype=dtype).reshape(tuple(pivots.shape[:-1]) + (m, m))


def _lu_square(gL, gU, L, U):
    """Square P^T A = L U: its gradient from those of L (strictly lower) and U (upper)."""
    gM = (_mH(L) @ gL).tril(-1) + (gU @ _mH(U)).triu()
    Y = F.linalg.solve_triangular(_mH(L), gM, upper=True, unitriangular=True)  # L^-H gM
    return F.linalg.solve_triangular(_mH(U), Y, upper=False, left=False)  # (.) U^-H


def _lu_backward(gL, gU, P, L, U):
    """A = P L U with A m x n, L m x k, U k x n (k = min(m, n)): gA from the gradients of L
    (strictly lower) and U (upper). A wide A's trailing columns A2 = P L U2 give U2 directly;
    a tall A's trailing rows A2 = P L2 U give L2; what is left is the square k x k case."""
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    if m == n:
        return P @ _lu_square(gL, gU, L, U)
    if m < n:
        U1, U2 = U[..., :, :k], U[..., :, k:]
        gA2 = F.linalg.solve_triangular(_mH(L), gU[..., :, k:], upper=True, unitriangular=True)
        gL = gL - (gA2 @ _mH(U2)).tril(-1)
        return P @ F.cat([_lu_square(gL, gU[..., :, :k], L, U1), gA2], -1)
    L1, L2 = L[..., :k, :], L[..., k:, :]
    gA2 = F.linalg.solve_triangular(_mH(U), gL[..., k:, :], upper=False, left=False)
    gU = gU - (_mH(L2) @ gA2).triu()
    return P @ F.cat([_lu_square(gL[..., :k, :], gU, L1, U), gA2], -2)


@formula("linalg_lu_factor", "linalg_lu_factor_ex", needs_result=True)
def _lu_factor(g, a):
    A = a["A"]
    LU, piv = a["results"][:2]
    gLU = g[0]
    if gLU is None:
        return {}
    m, n = A.shape[-2], A.shape[-1]
    k = min(m, n)
    L = LU[..., :, :k].tril(-1) + F.eye(m, k, dtype=A.dtype)
    U = LU[..., :k, :].triu()
    P = _perm_matrix(piv, m, A.dtype)
    return {"A": _lu_backward(gLU[..., :, :k].tril(-1), gLU[..., :k, :].triu(), P, L, U)}


@formula("linalg_lu", needs_result=True)
def _lu(g, a):
    P, L, U = a["results"]
    _, gL, gU = g
    return {"A": _lu_backward(_zero_if_none(gL, L).tril(-1), _zero_if_none(gU, U).triu(), P, L, U)}


@formula("linalg_lu_solve", needs_result=True)
def _lu_solve(g, a):
    LU, piv, X = a["LU"], a["pivots"], a["result"]
    left, adjoint = a.get("left", True), a.get("adjoint", False)
    # gB solves the adjoint system; gA = -gB X^H (left) or -X^H gB (right), conjugate-
    # transposed for adjoint; the packed factors get gA pushed through A = P L U.
    gB = F.linalg.lu_solve(LU, piv, g, left=left, adjoint=not adjoint)
    gA = -(gB @ _mH(X)) if left else -(_mH(X) @ gB)
    if adjoint:
        gA = _mH(gA)
    out = {"B": gB}
    if LU.requires_grad:
        n = LU.shape[-1]
        eye = F.eye(n, dtype=LU.dtype)
        L, U = LU.tril(-1) + eye, LU.triu()
        P = _perm_matrix(piv, n, LU.dtype)
        PtgA = _mT(P) @ gA
        out["LU"] = (PtgA @ _mH(U)).tril(-1) + (_mH(L) @ PtgA).triu()
    return out


# PyTorch has no derivative for the LDL factorization or its solves: their results take
# part in the graph, and differentiating through them raises.
def _no_derivative(op):
    def backward(g, a):
        raise RuntimeError(f"derivative for aten::{op} is not implemented")

    return backward


formula("linalg_ldl_factor", "linalg_ldl_factor_ex", needs_input=False)(
    _no_derivative("linalg_ldl_factor_ex")
)
formula("linalg_ldl_solve", needs_input=False)(_no_derivative("linalg_ldl_solve"))
