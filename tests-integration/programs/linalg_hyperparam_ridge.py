"""Differentiating through linear algebra: hyperparameter learning for kernel ridge
regression and a low-rank-plus-diagonal Gaussian fitted by maximum likelihood.

In the style of "implicit layers" and GP code: (1) kernel ridge regression whose
regularizer log(lambda) and kernel length-scale are trained by gradient descent on a
validation loss that differentiates through torch.linalg.cholesky, cholesky_solve and
torch.linalg.solve (cross-checked with lstsq and a solve through torch.linalg.qr);
(2) a covariance L L^T + diag(d) fitted by maximum likelihood with torch.linalg.slogdet,
solve_triangular and eigvalsh, checked against MultivariateNormal(..).log_prob and
LowRankMultivariateNormal; (3) gradient identities checked by hand: d logdet(A)/dA =
A^{-T}, d lambda_max / dA = v v^T (eigh), d ||A||_* / dA = U V^T (svd), and the
orthogonal Procrustes rotation recovered from torch.linalg.svd.
"""

import math

import flambeau as torch
from flambeau.distributions import LowRankMultivariateNormal, MultivariateNormal

torch.set_default_dtype(torch.float64)


def rbf(a, b, log_ls):
    d2 = torch.cdist(a, b).pow(2)
    return torch.exp(-0.5 * d2 / torch.exp(2 * log_ls))


def ridge_predict(xtr, ytr, xq, log_lam, log_ls):
    K = rbf(xtr, xtr, log_ls) + torch.exp(log_lam) * torch.eye(len(xtr))
    L = torch.linalg.cholesky(K)
    alpha = torch.cholesky_solve(ytr, L)
    return rbf(xq, xtr, log_ls) @ alpha, K, alpha


def check_gradient_identities(g):
    A = torch.randn(4, 4, generator=g) + 4 * torch.eye(4)
    A.requires_grad_(True)
    sign, logabsdet = torch.linalg.slogdet(A)
    (grad,) = torch.autograd.grad(logabsdet, A)
    assert sign.item() == 1.0 and torch.allclose(grad, torch.linalg.inv(A).T.detach()), "logdet"

    S = torch.randn(5, 5, generator=g)
    S = (S + S.T).requires_grad_(True)
    evals, evecs = torch.linalg.eigh(S)
    (grad,) = torch.autograd.grad(evals[-1], S)
    v = evecs[:, -1].detach()
    assert torch.allclose(grad, torch.outer(v, v), atol=1e-8), "eigh"
    assert torch.allclose(torch.linalg.eigvalsh(S), evals)

    M = torch.randn(5, 3, generator=g, requires_grad=True)
    nuclear = torch.linalg.matrix_norm(M, ord="nuc")
    (grad,) = torch.autograd.grad(nuclear, M)
    U, s, Vh = torch.linalg.svd(M.detach(), full_matrices=False)
    assert torch.allclose(grad, U @ Vh, atol=1e-8), "nuclear norm"
    assert torch.allclose(s, torch.linalg.svdvals(M.detach()))
    assert math.isclose(nuclear.item(), s.sum().item(), rel_tol=1e-10)


def check_procrustes(g):
    Q, _ = torch.linalg.qr(torch.randn(3, 3, generator=g))
    if torch.linalg.det(Q) < 0:
        Q[:, 0] = -Q[:, 0]
    X = torch.randn(50, 3, generator=g)
    Y = X @ Q + 0.01 * torch.randn(50, 3, generator=g)
    U, _, Vh = torch.linalg.svd(X.T @ Y)
    R = U @ Vh
    assert torch.allclose(R, Q, atol=1e-2), "procrustes"
    assert torch.allclose(R @ R.T, torch.eye(3), atol=1e-10)


def fit_hyperparameters(g):
    xtr = torch.rand(60, 1, generator=g) * 6
    xva = torch.rand(40, 1, generator=g) * 6
    f = lambda x: torch.sin(1.5 * x) + 0.3 * x  # noqa: E731
    ytr = f(xtr) + 0.2 * torch.randn(60, 1, generator=g)
    yva = f(xva) + 0.2 * torch.randn(40, 1, generator=g)

    log_lam = torch.tensor(2.0, requires_grad=True)  # far too smooth to start
    log_ls = torch.tensor(1.5, requires_grad=True)
    opt = torch.optim.Adam([log_lam, log_ls], lr=0.1)
    first = None
    for _ in range(80):
        opt.zero_grad()
        pred, K, alpha = ridge_predict(xtr, ytr, xva, log_lam, log_ls)
        loss = torch.nn.functional.mse_loss(pred, yva)
        loss.backward()
        opt.step()
        first = first if first is not None else loss.item()
    print(
        f"validation mse {first:.4f} -> {loss.item():.4f}, lambda {log_lam.exp().item():.3f}, "
        f"length-scale {log_ls.exp().item():.3f}"
    )
    assert loss.item() < 0.08 and loss.item() < 0.3 * first, (first, loss.item())

    # the same alpha three more ways
    K, alpha = K.detach(), alpha.detach()
    assert torch.allclose(torch.linalg.solve(K, ytr), alpha, atol=1e-8)
    assert torch.allclose(torch.linalg.lstsq(K, ytr).solution, alpha, atol=1e-6)
    Q, R = torch.linalg.qr(K)
    via_qr = torch.linalg.solve_triangular(R, Q.T @ ytr, upper=True)
    assert torch.allclose(via_qr, alpha, atol=1e-6)
    assert torch.allclose(torch.linalg.pinv(K) @ ytr, alpha, atol=1e-5)


def fit_low_rank_gaussian(g):
    dim, rank, n = 6, 2, 800
    W_true = torch.randn(dim, rank, generator=g)
    d_true = torch.rand(dim, generator=g) + 0.2
    true = LowRankMultivariateNormal(torch.zeros(dim), W_true, d_true)
    data = true.sample((n,))

    W = torch.nn.Parameter(0.1 * torch.randn(dim, rank, generator=g))
    log_d = torch.nn.Parameter(torch.zeros(dim))
    opt = torch.optim.Adam([W, log_d], lr=0.05)
    for _ in range(150):
        opt.zero_grad()
        cov = W @ W.T + torch.diag(log_d.exp())
        L = torch.linalg.cholesky(cov)
        z = torch.linalg.solve_triangular(L, data.T, upper=False)
        _, logdet = torch.linalg.slogdet(cov)
        nll = 0.5 * (z.pow(2).sum(0).mean() + logdet + dim * math.log(2 * math.pi))
        nll.backward()
        opt.step()
    with torch.no_grad():
        cov = W @ W.T + torch.diag(log_d.exp())
        mvn = MultivariateNormal(torch.zeros(dim), covariance_matrix=cov)
        lr_mvn = LowRankMultivariateNormal(torch.zeros(dim), W, log_d.exp())
        assert math.isclose(-mvn.log_prob(data).mean().item(), nll.item(), rel_tol=1e-3)
        assert torch.allclose(mvn.log_prob(data[:5]), lr_mvn.log_prob(data[:5]), atol=1e-8)
        emp = torch.cov(data.T)
        err = torch.linalg.matrix_norm(cov - emp) / torch.linalg.matrix_norm(emp)
        true_nll = -true.log_prob(data).mean().item()
    print(
        f"low-rank gaussian: nll {nll.item():.4f} (true params {true_nll:.4f}), "
        f"relative covariance error {err.item():.3f}"
    )
    assert nll.item() < true_nll + 0.05 and err.item() < 0.1
    assert (torch.linalg.eigvalsh(cov) > 0).all()


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    check_gradient_identities(g)
    check_procrustes(g)
    fit_hyperparameters(g)
    fit_low_rank_gaussian(g)
    print("linalg hyperparameter ridge OK")


if __name__ == "__main__":
    main()
