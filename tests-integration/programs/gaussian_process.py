"""Exact Gaussian process regression with hyperparameters learned by marginal likelihood.

In the style of GP tutorials written directly in PyTorch (before reaching for GPyTorch):
an RBF kernel from torch.cdist with positive hyperparameters kept as raw parameters
through F.softplus, the negative log marginal likelihood from torch.linalg.cholesky
(0.5 y^T K^-1 y via torch.cholesky_solve, 0.5 log|K| as the sum of the log-diagonal of
the factor), minimized with torch.optim.LBFGS(line_search_fn="strong_wolfe") and a
closure, in float64; then the posterior mean and variance with torch.linalg.solve_triangular.
The data are drawn from a GP with known hyperparameters. Checks the likelihood against
torch.distributions.MultivariateNormal, the recovered hyperparameters, the predictive
accuracy and calibration, and that the posterior mean interpolates the noise-free
function.
"""

import math

import flambeau as torch
import flambeau.nn as nn
import flambeau.nn.functional as F
from flambeau.distributions import MultivariateNormal

TRUE_LENGTHSCALE, TRUE_OUTPUTSCALE, TRUE_NOISE = 0.6, 1.5, 0.1


def rbf(a, b, lengthscale, outputscale):
    return outputscale * torch.exp(-0.5 * torch.cdist(a, b).pow(2) / lengthscale**2)


def inv_softplus(x):
    return math.log(math.expm1(x))


class ExactGP(nn.Module):
    def __init__(self, x, y):
        super().__init__()
        self.x, self.y = x, y
        self.raw_lengthscale = nn.Parameter(torch.tensor(inv_softplus(1.5), dtype=torch.float64))
        self.raw_outputscale = nn.Parameter(torch.tensor(inv_softplus(0.5), dtype=torch.float64))
        self.raw_noise = nn.Parameter(torch.tensor(inv_softplus(0.5), dtype=torch.float64))
        self.mean = nn.Parameter(torch.zeros((), dtype=torch.float64))

    @property
    def hyper(self):
        return (
            F.softplus(self.raw_lengthscale),
            F.softplus(self.raw_outputscale),
            F.softplus(self.raw_noise) + 1e-6,
        )

    def covariance(self):
        lengthscale, outputscale, noise = self.hyper
        K = rbf(self.x, self.x, lengthscale, outputscale)
        return K + noise**2 * torch.eye(len(self.x), dtype=K.dtype)

    def neg_log_marginal_likelihood(self):
        K = self.covariance()
        L = torch.linalg.cholesky(K)
        r = (self.y - self.mean).unsqueeze(-1)
        alpha = torch.cholesky_solve(r, L)
        n = len(self.y)
        return (
            0.5 * (r * alpha).sum()
            + torch.log(torch.diagonal(L)).sum()
            + 0.5 * n * math.log(2 * math.pi)
        )

    @torch.no_grad()
    def predict(self, x_new):
        lengthscale, outputscale, noise = self.hyper
        L = torch.linalg.cholesky(self.covariance())
        K_star = rbf(self.x, x_new, lengthscale, outputscale)
        v = torch.linalg.solve_triangular(L, K_star, upper=False)
        r = torch.linalg.solve_triangular(L, (self.y - self.mean).unsqueeze(-1), upper=False)
        mean = self.mean + (v.T @ r).squeeze(-1)
        var = outputscale - (v * v).sum(0) + noise**2
        return mean, var


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    x_all = torch.rand(300, 1, generator=g, dtype=torch.float64) * 10
    K_true = rbf(x_all, x_all, TRUE_LENGTHSCALE, TRUE_OUTPUTSCALE)
    L_true = torch.linalg.cholesky(K_true + 1e-8 * torch.eye(300, dtype=torch.float64))
    f_all = (L_true @ torch.randn(300, 1, generator=g, dtype=torch.float64)).squeeze(-1) + 2.0
    y_all = f_all + TRUE_NOISE * torch.randn(300, generator=g, dtype=torch.float64)
    x, y = x_all[:200], y_all[:200]
    x_test, y_test, f_test = x_all[200:], y_all[200:], f_all[200:]

    model = ExactGP(x, y)
    with torch.no_grad():
        reference = -MultivariateNormal(
            torch.full((200,), model.mean.item(), dtype=torch.float64), model.covariance()
        ).log_prob(y)
        assert torch.allclose(model.neg_log_marginal_likelihood(), reference, rtol=1e-10)

    optimizer = torch.optim.LBFGS(
        model.parameters(), lr=1.0, max_iter=50, line_search_fn="strong_wolfe"
    )

    def closure():
        optimizer.zero_grad()
        loss = model.neg_log_marginal_likelihood()
        loss.backward()
        return loss

    nll0 = model.neg_log_marginal_likelihood().item()
    for round_ in range(4):
        loss = optimizer.step(closure)
        print(f"LBFGS round {round_}: NLML {loss.item():.3f}")
    nll = model.neg_log_marginal_likelihood().item()
    lengthscale, outputscale, noise = (h.item() for h in model.hyper)
    print(
        f"NLML {nll0:.2f} -> {nll:.2f}; lengthscale {lengthscale:.3f} (true {TRUE_LENGTHSCALE}), "
        f"outputscale {outputscale:.3f} ({TRUE_OUTPUTSCALE}), noise {noise:.3f} ({TRUE_NOISE}), "
        f"mean {model.mean.item():.3f} (2.0)"
    )
    assert nll < nll0 - 100, (nll0, nll)
    assert abs(lengthscale - TRUE_LENGTHSCALE) / TRUE_LENGTHSCALE < 0.2, lengthscale
    assert abs(noise - TRUE_NOISE) / TRUE_NOISE < 0.3, noise
    # The gradient is zero at the optimum.
    model.zero_grad()
    model.neg_log_marginal_likelihood().backward()
    grad_norm = torch.stack([p.grad.abs() for p in model.parameters()]).max().item()
    assert grad_norm < 1e-3, grad_norm

    mean, var = model.predict(x_test)
    rmse = (mean - y_test).pow(2).mean().sqrt().item()
    f_rmse = (mean - f_test).pow(2).mean().sqrt().item()
    z = (y_test - mean) / var.sqrt()
    inside = (z.abs() < 1.96).double().mean().item()
    print(
        f"test RMSE {rmse:.4f} (noise {TRUE_NOISE}); vs noise-free f {f_rmse:.4f}; "
        f"95% coverage {inside:.3f}"
    )
    assert rmse < 1.5 * TRUE_NOISE, rmse
    assert f_rmse < 0.6 * TRUE_NOISE, f_rmse
    assert 0.88 < inside <= 1.0, inside
    # Far from the data the posterior reverts to the prior mean and variance.
    far_mean, far_var = model.predict(torch.tensor([[40.0]], dtype=torch.float64))
    assert abs(far_mean.item() - model.mean.item()) < 1e-6
    assert abs(far_var.item() - (outputscale + noise**2)) < 1e-6


if __name__ == "__main__":
    main()
