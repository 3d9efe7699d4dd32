"""flambeau.lobpcg: extreme eigenpairs of symmetric and generalized symmetric-definite
problems against NumPy's and SciPy's eigh, both methods, the options (X, n, iK, niter, tol,
tracker), batches, gradients against finite differences, and PyTorch's errors."""

import numpy as np
import pytest

import flambeau as torch

scipy_linalg = pytest.importorskip("scipy.linalg")

rng = np.random.default_rng(3)


def spd(m, spread=1.0):
    """A symmetric positive definite matrix with well separated eigenvalues."""
    q, _ = np.linalg.qr(rng.standard_normal((m, m)))
    return (q * np.linspace(1.0, 1.0 + spread * m, m)) @ q.T


def assert_eigenpairs(A, B, E, X, want, rtol=1e-7):
    E, X = E.numpy(), X.numpy()
    np.testing.assert_allclose(E, want, rtol=rtol)
    B = np.eye(A.shape[0]) if B is None else B
    # Residuals of A x = lambda B x, and B-orthonormal eigenvectors.
    np.testing.assert_allclose(A @ X - B @ X * E, 0, atol=1e-5 * np.abs(E).max())
    np.testing.assert_allclose(X.T @ B @ X, np.eye(X.shape[1]), atol=1e-7)


@pytest.mark.parametrize("method", ["ortho", "basic"])
@pytest.mark.parametrize("largest", [True, False])
def test_standard_problem(method, largest):
    torch.manual_seed(0)
    a = spd(30)
    E, X = torch.lobpcg(torch.tensor(a), k=3, largest=largest, method=method)
    w = np.linalg.eigvalsh(a)
    want = w[::-1][:3] if largest else w[:3]
    assert E.dtype == torch.float64 and tuple(X.shape) == (30, 3)
    assert_eigenpairs(a, None, E, X, want)


@pytest.mark.parametrize("largest", [True, False])
def test_generalized_problem_with_b(largest):
    torch.manual_seed(1)
    a, b = spd(24), spd(24, spread=0.1)
    E, X = torch.lobpcg(torch.tensor(a), k=2, B=torch.tensor(b), largest=largest)
    w = scipy_linalg.eigh(a, b, eigvals_only=True)
    want = w[::-1][:2] if largest else w[:2]
    assert_eigenpairs(a, b, E, X, want)


def test_initial_guess_sets_n_and_default_k():
    a = spd(27)
    x0 = torch.tensor(rng.standard_normal((27, 4)))
    E, X = torch.lobpcg(torch.tensor(a), X=x0)  # k defaults to X's columns
    assert tuple(E.shape) == (4,)
    assert_eigenpairs(a, None, E, X, np.linalg.eigvalsh(a)[::-1][:4])
    E, X = torch.lobpcg(torch.tensor(a), k=2, X=x0)
    assert_eigenpairs(a, None, E, X, np.linalg.eigvalsh(a)[::-1][:2])
    torch.manual_seed(2)
    E, X = torch.lobpcg(torch.tensor(a))  # k = n = 1
    assert tuple(X.shape) == (27, 1)
    np.testing.assert_allclose(E.numpy(), np.linalg.eigvalsh(a)[-1:], rtol=1e-7)


def test_preconditioner_float32_and_batches():
    torch.manual_seed(4)
    a = spd(21)
    exact_inverse = torch.tensor(np.linalg.inv(a))
    E, X = torch.lobpcg(torch.tensor(a), k=2, iK=exact_inverse, largest=False)
    assert_eigenpairs(a, None, E, X, np.linalg.eigvalsh(a)[:2])
    E, X = torch.lobpcg(torch.tensor(a, dtype=torch.float32), k=2)
    assert E.dtype == torch.float32
    np.testing.assert_allclose(E.numpy(), np.linalg.eigvalsh(a)[::-1][:2], rtol=1e-4)
    stack = np.stack([spd(18), spd(18)])
    E, X = torch.lobpcg(torch.tensor(stack), k=2, largest=False)
    assert tuple(E.shape) == (2, 2) and tuple(X.shape) == (2, 18, 2)
    for i in range(2):
        assert_eigenpairs(stack[i], None, E[i], X[i], np.linalg.eigvalsh(stack[i])[:2])


def test_niter_tol_and_tracker():
    torch.manual_seed(5)
    a = spd(30)
    steps = []

    def tracker(worker):
        steps.append((worker.ivars["istep"], worker.ivars["converged_count"]))
        assert tuple(worker.X.shape) == (30, 2) and tuple(worker.tvars["rerr"].shape) == (2,)

    E, X = torch.lobpcg(torch.tensor(a), k=2, tracker=tracker)
    assert [s for s, _ in steps] == list(range(1, len(steps) + 1))
    assert steps[-1][1] >= 2 and all(c < 2 for _, c in steps[:-1])
    steps.clear()
    torch.lobpcg(torch.tensor(a), k=2, niter=3, tracker=tracker)
    assert len(steps) == 3
    steps.clear()

    def stop(worker):
        steps.append(1)
        worker.bvars["force_stop"] = True

    torch.lobpcg(torch.tensor(a), k=2, tracker=stop)
    assert len(steps) == 1
    # A looser tolerance stops earlier: fewer steps than the default one needs.
    counts = []
    for tol in (1e-2, 1e-10):
        torch.manual_seed(6)
        n = []
        torch.lobpcg(torch.tensor(a), k=2, tol=tol, tracker=lambda w, n=n: n.append(1))
        counts.append(len(n))
    assert counts[0] < counts[1]


def test_ortho_parameters_are_accepted():
    torch.manual_seed(7)
    a = spd(24)
    E, X = torch.lobpcg(
        torch.tensor(a),
        k=2,
        ortho_iparams={"ortho_i_max": 2, "ortho_j_max": 2},
        ortho_fparams={"ortho_tol": 1e-10},
        ortho_bparams={"ortho_use_drop": True},
    )
    assert_eigenpairs(a, None, E, X, np.linalg.eigvalsh(a)[::-1][:2])


def test_gradients_of_eigenpairs_match_finite_differences():
    autograd = pytest.importorskip("flambeau.autograd")
    a = spd(12)
    x0 = torch.tensor(rng.standard_normal((12, 2)))

    def pairs(matrix, largest):
        # Finite differences perturb one entry: symmetrize, as lobpcg's input must be.
        symmetric = (matrix + matrix.mT) / 2
        E, X = torch.lobpcg(symmetric, k=2, X=x0, tol=1e-12, niter=500, largest=largest)
        return E, X @ X.mT  # the projector is independent of the eigenvectors' signs

    A = torch.tensor(a, requires_grad=True)
    assert autograd.gradcheck(lambda m: pairs(m, True), (A,), eps=1e-6, atol=1e-5)
    assert autograd.gradcheck(lambda m: pairs(m, False), (A,), eps=1e-6, atol=1e-5)
    E, _ = torch.lobpcg(A, k=2, X=x0, tol=1e-12)
    E.sum().backward()
    # d(lambda_1 + lambda_2)/dA = x1 x1^T + x2 x2^T.
    w, v = np.linalg.eigh(a)
    np.testing.assert_allclose(A.grad.numpy(), v[:, -2:] @ v[:, -2:].T, atol=1e-8)


def test_errors():
    a = torch.tensor(spd(12))
    with pytest.raises(AssertionError, match="A must be square"):
        torch.lobpcg(torch.ones(12, 11), k=1)
    with pytest.raises(AssertionError, match="A and B must have same shape"):
        torch.lobpcg(a, k=1, B=torch.eye(11, dtype=torch.float64))
    with pytest.raises(AssertionError, match="X shape mismatch"):
        torch.lobpcg(a, X=torch.ones(11, 2, dtype=torch.float64))
    with pytest.raises(ValueError, match="smaller than 3 x the number of requested eigenpairs"):
        torch.lobpcg(a, k=5)
    with pytest.raises(ValueError, match="k=3 eigenpairs from n=2"):
        torch.lobpcg(a, k=3, n=2)
    with pytest.raises(ValueError, match="method must be 'ortho' or 'basic'"):
        torch.lobpcg(a, k=1, method="foo")
    with pytest.raises(RuntimeError, match="float32 or float64"):
        torch.lobpcg(torch.eye(12, dtype=torch.int64), k=1)
    with pytest.raises(RuntimeError, match="of A's dtype float64, got float32"):
        torch.lobpcg(a, X=torch.ones(12, 2))
    with pytest.raises(TypeError, match="must be Tensor"):
        torch.lobpcg([[1.0]])
    pytest.importorskip("flambeau.autograd")
    with pytest.raises(ValueError, match="does not support backward with B != I"):
        torch.lobpcg(a.clone().requires_grad_(), k=1, B=torch.eye(12, dtype=torch.float64))
