"""``flambeau.lobpcg``: a few extreme eigenpairs of a symmetric (generalized) eigenproblem
A x = lambda B x, B symmetric positive definite, by LOBPCG (Knyazev 2001).

Each step makes a basis S = [X, W, P] of the current Ritz vectors X, the preconditioned
residuals W = iK (A X - B X diag(E)) of the pairs that have not converged, and the
previous search directions P, and solves the eigenproblem projected on span(S)
(Rayleigh-Ritz). The two methods differ in how S is made well conditioned:

``"ortho"`` (default)
    W and P are made B-orthonormal and B-orthogonal to X with repeated projections and
    SVQB passes (Stathopoulos and Wu 2002; Duersch, Shao, Yang and Gu 2018), dropping
    directions S already spans, so S^T B S is close to the identity.
``"basic"``
    S is used as it is, and the Cholesky factorization of S^T B S fails when S is
    (numerically) rank deficient.

Either way Rayleigh-Ritz reduces the projected problem to a standard one through the
Cholesky factor of S^T B S.

A pair has converged when ||r|| / (||x|| (||A|| + |lambda| ||B||)) < tol (norms of A and B
estimated on the initial X); as in PyTorch, pairs count as converged in order, and the
iteration stops when the first k have. ``tracker(worker)`` is called after every step with
the worker's state (``ivars``, ``fvars``, ``bvars``, ``tvars``, ``E``, ``X``, ``R``, ``S``);
setting ``worker.bvars["force_stop"] = True`` stops it.

The iteration runs without recording gradients. When A requires grad (B None), the
result is rebuilt from the converged subspace with differentiable operations whose
derivatives are those of the exact eigenpairs: the eigenvalues get x^T dA x and the
eigenvectors the full first-order perturbation, inside the subspace through ``eigh`` of
the projected matrix and outside it through (lambda I - A)^+ restricted to the complement.
"""

from __future__ import annotations

import builtins
import math

from flambeau import _C
from flambeau._arg_checks import check_tensor, dtype_name
from flambeau._grad_mode import no_grad
from flambeau.overrides import _dispatch_on

__all__ = ["lobpcg"]

_MACHINE_EPS = {_C.float32: 1.2e-07, _C.float64: 2.23e-16}


def _mm(M, X):
    """M @ X with M None standing for the identity."""
    return X if M is None else _C.matmul(M, X)


def _sym(G):
    return (G + G.mT) * 0.5


def _eigh(G, largest: bool):
    """Eigenpairs of a symmetric G, largest first when largest, else smallest first."""
    values, vectors = _C.linalg_eigh(_sym(G))
    if largest:
        return values.flip(-1), vectors.flip(-1)
    return values, vectors


class _Worker:
    """One LOBPCG run on a single matrix; its attributes are what a tracker sees."""

    def __init__(self, A, B, X, iK, iparams, fparams, bparams, method, tracker):
        self.A, self.B, self.iK = A, B, iK
        self.iparams, self.fparams, self.bparams = iparams, fparams, bparams
        self.method, self.tracker = method, tracker
        n = X.shape[-1]
        self.X = X
        self.E = _C.zeros((n,), dtype=X.dtype)
        self.R = _C.zeros(tuple(X.shape), dtype=X.dtype)
        self.P = X[:, :0]
        self.S = X
        self.ivars = {"istep": 0, "converged_count": 0, "iterations_left": iparams["niter"]}
        self.fvars: dict = {}
        self.bvars = {"force_stop": False}
        self.tvars: dict = {}

    # ---- B-orthonormal bases ----------------------------------------------------------------

    def _svqb(self, U, drop: bool, tau: float):
        """U B-orthonormalized through the eigenvectors of its scaled Gram matrix; directions
        with eigenvalue below tau * (the largest) are dropped (drop) or floored there."""
        gram = _sym(_C.matmul(U.mT, _mm(self.B, U)))
        norms = gram.diagonal()
        keep = norms > 0
        if not builtins.bool(keep.all()):
            U, gram, norms = U[:, keep], gram[keep][:, keep], norms[keep]
        if U.shape[-1] == 0:
            return U
        d = norms.rsqrt()
        theta, Z = _C.linalg_eigh(gram * d.unsqueeze(0) * d.unsqueeze(1))
        floor = tau * builtins.float(theta.abs().max())
        if drop:
            kept = theta > floor
            theta, Z = theta[kept], Z[:, kept]
        else:
            theta = theta.clamp_min(floor)
        return _C.matmul(U, (Z * d.unsqueeze(1)) * theta.rsqrt())

    def _ortho(self, U, V):
        """U made B-orthonormal and B-orthogonal to the B-orthonormal V (which may be None),
        dropping the directions V and U already span."""
        ip, fp = self.iparams, self.fparams
        tol = fp["ortho_tol"]
        use_drop = self.bparams["ortho_use_drop"]
        tau = fp["ortho_tol_drop"] if use_drop else fp["ortho_tol_replace"]
        eye = None
        for _ in range(ip["ortho_i_max"]):
            if V is not None and V.shape[-1]:
                U = U - _C.matmul(V, _C.matmul(V.mT, _mm(self.B, U)))
            for _ in range(ip["ortho_j_max"]):
                U = self._svqb(U, use_drop, tau)
                if U.shape[-1] == 0:
                    return U
                eye = _C.eye(U.shape[-1], dtype=U.dtype)
                gram = _C.matmul(U.mT, _mm(self.B, U))
                if builtins.float((gram - eye).abs().max()) < tol:
                    break
            if V is None or V.shape[-1] == 0:
                break
            if builtins.float(_C.matmul(V.mT, _mm(self.B, U)).abs().max()) < tol:
                break
        # Floored directions that stayed dependent on V or each other carry nothing new.
        return self._svqb(U, True, fp["ortho_tol_drop"])

    def _rayleigh_ritz_cholesky(self, S):
        """C with S C B-orthonormal and C^T S^T A S C diagonal: the Ritz values and
        coefficients through a Cholesky factor of the (scaled) S^T B S."""
        SBS = _sym(_C.matmul(S.mT, _mm(self.B, S)))
        d = SBS.diagonal().rsqrt()
        upper = _C.linalg_cholesky(SBS * d.unsqueeze(0) * d.unsqueeze(1), upper=True)
        Ri = _C.linalg_solve_triangular(upper, _C.diag(d), upper=True, left=False)
        SAS = _C.matmul(S.mT, _C.matmul(self.A, S))
        theta, Z = _eigh(_C.matmul(Ri.mT, _C.matmul(SAS, Ri)), self.bparams["largest"])
        return theta, _C.matmul(Ri, Z)

    # ---- the iteration -----------------------------------------------------------------------

    def _residual_and_convergence(self) -> None:
        X, E = self.X, self.E
        self.R = _C.matmul(self.A, X) - _mm(self.B, X) * E
        rerr = _C.linalg_vector_norm(self.R, 2, 0) / (
            _C.linalg_vector_norm(X, 2, 0) * (self.fvars["A_norm"] + E.abs() * self.fvars["B_norm"])
        )
        count = 0
        for ok in (rerr < self.fparams["tol"]).tolist():
            if not ok:
                break
            count += 1
        self.ivars["converged_count"] = count
        self.tvars["rerr"] = rerr

    def _first_step(self) -> None:
        X = self.X
        x_norm = builtins.float(_C.linalg_vector_norm(X))
        self.fvars["X_norm"] = x_norm
        self.fvars["A_norm"] = builtins.float(_C.linalg_vector_norm(_C.matmul(self.A, X))) / x_norm
        self.fvars["B_norm"] = builtins.float(_C.linalg_vector_norm(_mm(self.B, X))) / x_norm
        theta, C = self._rayleigh_ritz_cholesky(X)
        self.X, self.E = _C.matmul(X, C), theta
        self.S = self.X
        self._residual_and_convergence()

    def _step(self) -> None:
        n = self.iparams["n"]
        nc = self.ivars["converged_count"]
        X, P = self.X, self.P
        W = _mm(self.iK, self.R[:, nc:])
        if self.method == "ortho":
            P = self._ortho(P, X) if P.shape[-1] else P
            W = self._ortho(W, _C.cat([X, P], 1))
        # With the ortho method S^T B S is the identity up to the orthogonalization's
        # tolerance; Rayleigh-Ritz through its Cholesky factor keeps that error out of the
        # Ritz pairs (well conditioned, it cannot fail).
        S = _C.cat([X, P, W], 1)
        theta, C = self._rayleigh_ritz_cholesky(S)
        self.S = S
        self.X, self.E = _C.matmul(S, C[:, :n]), theta[:n]
        # The new directions: the part of the unconverged Ritz vectors outside the old X.
        self.P = _C.matmul(S[:, n:], C[n:, nc:n])
        self._residual_and_convergence()

    def run(self) -> None:
        while True:
            if self.ivars["istep"] == 0:
                self._first_step()
            else:
                self._step()
            self.ivars["istep"] += 1
            self.ivars["iterations_left"] -= 1
            if self.tracker is not None:
                self.tracker(self)
            if (
                self.bvars.get("force_stop", False)
                or self.ivars["iterations_left"] == 0
                or self.ivars["converged_count"] >= self.iparams["k"]
            ):
                return


# ---- derivatives of the converged eigenpairs ---------------------------------------------------


def _differentiable_pairs(A, X, largest: bool):
    """The eigenpairs of the symmetric A that X (orthonormal eigenvectors, computed without
    gradients) spans, as functions of A whose first derivatives are those of exact
    eigenpairs: dlambda_i = x_i^T dA x_i and dx_i = sum_{j != i} x_j x_j^T dA x_i /
    (lambda_i - lambda_j) over all eigenvectors x_j of A."""
    Xd = X.detach()
    # Inside span(X): eigh of the projected matrix gives the terms of the pairs in X.
    theta, Z = _eigh(_C.matmul(Xd.mT, _C.matmul(A, Xd)), largest)
    vectors = _C.matmul(Xd, Z)
    # Outside span(X): (lambda_i I - A)^+ on its complement, applied to dA x_i, added
    # as a term that is zero in value (A - A.detach()) but carries that derivative.
    Ad, vd = A.detach(), vectors.detach()
    eye = _C.eye(A.shape[-1], dtype=A.dtype)
    outside = eye - _C.matmul(Xd, Xd.mT)
    perturbed = _C.matmul(A - Ad, vd)
    columns = []
    for i, lam in enumerate(theta.detach().tolist()):
        shifted = _C.matmul(outside, _C.matmul(lam * eye - Ad, outside))
        columns.append(_C.matmul(_C.linalg_pinv(shifted, hermitian=True), perturbed[:, i]))
    return theta, vectors + _C.stack(columns, 1)


# ---- the public function -------------------------------------------------------------------------


def _check_square(name: str, M, shape=None) -> None:
    check_tensor("lobpcg", name, 1, M)
    if M.dim() < 2 or M.shape[-2] != M.shape[-1]:
        raise AssertionError(f"{name} must be square, got shape {tuple(M.shape)}")
    if shape is not None and tuple(M.shape) != shape:
        raise AssertionError(f"A and {name} must have same shape, got {shape} vs {tuple(M.shape)}")


# As in PyTorch, a mode alone does not take the call: only a tensor-like argument does.
@_dispatch_on(
    "A", "B", "X", "iK", unless="all(type(_a) is _T or _a is None for _a in (A, B, X, iK))"
)
def lobpcg(
    A,
    k=None,
    B=None,
    X=None,
    n=None,
    iK=None,
    niter=None,
    tol=None,
    largest=None,
    method=None,
    tracker=None,
    ortho_iparams=None,
    ortho_fparams=None,
    ortho_bparams=None,
):
    """The k largest (largest=True, the default) or smallest eigenvalues of A x = lambda B x
    (B the identity when None) and their B-orthonormal eigenvectors, as (E (*, k), X (*, m,
    k)), for symmetric A (*, m, m) and symmetric positive definite B. X (*, m, n) is the
    initial guess (default random, n columns, n defaults to k); iK a preconditioner (m, m);
    niter the most steps (default 1000, -1 for no limit); tol the residual tolerance
    (default sqrt of the dtype's machine epsilon).

    >>> _ = flambeau.manual_seed(0)
    >>> A = flambeau.diag(flambeau.arange(1.0, 11.0))
    >>> E, X = flambeau.lobpcg(A, k=2)
    >>> E
    tensor([10.0000,  9.0000])
    >>> X.shape
    flambeau.Size([10, 2])
    """
    _check_square("A", A)
    if B is not None:
        _check_square("B", B, tuple(A.shape))
    if A.dtype not in _MACHINE_EPS:
        raise RuntimeError(
            f"lobpcg: expected A of dtype float32 or float64, got {dtype_name(A.dtype)}"
        )
    for name, M in (("B", B), ("X", X), ("iK", iK)):
        if M is not None and M.dtype != A.dtype:
            raise RuntimeError(
                f"lobpcg: expected {name} of A's dtype {dtype_name(A.dtype)}, got "
                f"{dtype_name(M.dtype)}"
            )
    dtype = A.dtype
    m = A.shape[-1]
    if iK is not None and tuple(iK.shape) != (m, m):
        raise AssertionError(f"iK must have shape {(m, m)}, got {tuple(iK.shape)}")
    k = (1 if X is None else X.shape[-1]) if k is None else k
    n = (k if n is None else n) if X is None else X.shape[-1]
    if n < k:
        raise ValueError(f"lobpcg: asked for k={k} eigenpairs from n={n} initial vectors")
    if m < 3 * n:
        raise ValueError(
            f"LOBPCG algorithm is not applicable when the number of A rows (={m}) is smaller "
            f"than 3 x the number of requested eigenpairs (={n})"
        )
    if X is not None and tuple(X.shape) != tuple(A.shape[:-2]) + (m, n):
        raise AssertionError(
            f"X shape mismatch: got {tuple(X.shape)}, expected {tuple(A.shape[:-2]) + (m, n)}"
        )
    method = "ortho" if method is None else method
    if method not in ("ortho", "basic"):
        raise ValueError(f"lobpcg: method must be 'ortho' or 'basic', got {method!r}")
    tol = math.sqrt(_MACHINE_EPS[dtype]) if tol is None else builtins.float(tol)
    iparams = {"m": m, "n": n, "k": k, "niter": 1000 if niter is None else niter}
    fparams = {"tol": tol}
    bparams = {"largest": True if largest is None else builtins.bool(largest)}
    iparams.update(ortho_iparams or {})
    fparams.update(ortho_fparams or {})
    bparams.update(ortho_bparams or {})
    iparams.setdefault("ortho_i_max", 3)
    iparams.setdefault("ortho_j_max", 3)
    for key in ("ortho_tol", "ortho_tol_drop", "ortho_tol_replace"):
        fparams.setdefault(key, tol)
    bparams.setdefault("ortho_use_drop", False)

    differentiate = A.requires_grad and _C.is_grad_enabled()
    if differentiate and B is not None:
        raise ValueError("lobpcg.backward does not support backward with B != I yet.")
    if differentiate:  # as PyTorch: A's gradient is then symmetric too
        A = _sym(A)
    batch = tuple(A.shape[:-2])
    count = math.prod(batch)
    flat_A = A.reshape((count, m, m))
    flat_B = None if B is None else B.reshape((count, m, m))
    flat_X = None if X is None else X.reshape((count, m, n))
    values, vectors = [], []
    for b in builtins.range(count):
        with no_grad():
            start = _C.randn((m, n), dtype=dtype) if flat_X is None else flat_X[b].detach().clone()
            worker = _Worker(
                flat_A[b].detach(),
                None if flat_B is None else flat_B[b].detach(),
                start,
                None if iK is None else iK.detach(),
                dict(iparams, batch_index=b),
                fparams,
                bparams,
                method,
                tracker,
            )
            worker.run()
        E, V = worker.E[:k], worker.X[:, :k]
        if differentiate:
            E, V = _differentiable_pairs(flat_A[b], V, bparams["largest"])
        values.append(E)
        vectors.append(V)
    return (
        _C.stack(values, 0).reshape(batch + (k,)),
        _C.stack(vectors, 0).reshape(batch + (m, k)),
    )
