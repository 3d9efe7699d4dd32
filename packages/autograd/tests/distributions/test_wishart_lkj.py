"""Wishart and LKJCholesky: densities against scipy.stats and hand-derived forms,
samples against their known moments, and PyTorch's argument errors."""

import numpy as np
import pytest
import scipy.stats as st
from scipy.special import betaln

import flambeau as F
import flambeau.distributions as D

COV = np.array([[2.0, 0.5, 0.1], [0.5, 1.0, -0.3], [0.1, -0.3, 1.5]])
POINTS = [
    np.array([[3.0, 1.0, 0.2], [1.0, 2.0, 0.1], [0.2, 0.1, 1.0]]),
    np.array([[1.0, -0.2, 0.3], [-0.2, 0.5, 0.0], [0.3, 0.0, 2.5]]),
]


def t64(x):
    return F.tensor(np.asarray(x, dtype=np.float64))


def _wishart(df, how):
    matrix = {
        "covariance_matrix": COV,
        "precision_matrix": np.linalg.inv(COV),
        "scale_tril": np.linalg.cholesky(COV),
    }[how]
    return D.Wishart(t64(df), **{how: t64(matrix)})


@pytest.mark.parametrize("how", ["covariance_matrix", "precision_matrix", "scale_tril"])
@pytest.mark.parametrize("df", [2.5, 4.0, 7.3])
def test_wishart_matches_scipy(df, how):
    d = _wishart(df, how)
    ref = st.wishart(df=df, scale=COV)
    values = d.log_prob(t64(np.stack(POINTS))).numpy()
    np.testing.assert_allclose(values, [ref.logpdf(p) for p in POINTS], rtol=1e-10)
    np.testing.assert_allclose(d.entropy().item(), ref.entropy(), rtol=1e-10)
    np.testing.assert_allclose(d.mean.numpy(), ref.mean(), rtol=1e-12)
    np.testing.assert_allclose(d.variance.numpy(), ref.var(), rtol=1e-12)
    np.testing.assert_allclose(d.covariance_matrix.numpy(), COV, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(d.precision_matrix.numpy(), np.linalg.inv(COV), rtol=1e-10)
    # The exponential family's Bregman entropy agrees with the closed form.
    bregman = D.ExponentialFamily.entropy(d).item()
    np.testing.assert_allclose(bregman, ref.entropy(), rtol=1e-8)
    mode = d.mode.numpy()
    if df > 4:  # (df - p - 1) Sigma where that is positive, else undefined
        np.testing.assert_allclose(mode, (df - 4) * COV, rtol=1e-12)
    else:
        assert np.isnan(mode).all()


def test_wishart_shapes_and_expand():
    df = F.tensor([3.0, 5.0])
    d = D.Wishart(df, covariance_matrix=F.eye(2))
    assert d.batch_shape == (2,) and d.event_shape == (2, 2)
    assert d.sample((4,)).shape == (4, 2, 2, 2)
    e = d.expand((3, 2))
    assert e.batch_shape == (3, 2) and e.log_prob(2 * F.eye(2)).shape == (3, 2)
    np.testing.assert_allclose(
        e.log_prob(2 * F.eye(2))[1].numpy(), d.log_prob(2 * F.eye(2)).numpy()
    )
    # PyTorch's docstring example: a df of shape (1,) gives a batch of one.
    m = D.Wishart(F.Tensor([2]), covariance_matrix=F.eye(2))
    assert m.sample().shape == (1, 2, 2)
    assert D.Wishart(3, covariance_matrix=F.eye(2)).df.item() == 3.0


def test_wishart_samples_have_its_moments():
    F.manual_seed(0)
    cov = COV[:2, :2]
    samples = D.Wishart(t64(5.0), covariance_matrix=t64(cov)).rsample((20000,)).numpy()
    assert np.all(np.linalg.eigvalsh(samples) > 0)
    np.testing.assert_allclose(samples.mean(0), 5 * cov, rtol=0.04, atol=0.05)
    expected_var = 5 * (cov**2 + np.outer(np.diag(cov), np.diag(cov)))
    np.testing.assert_allclose(samples.var(0), expected_var, rtol=0.08)


def test_wishart_rsample_is_differentiable_in_df_and_scale():
    F.manual_seed(1)
    df = t64(5.0).requires_grad_()
    tril = t64(np.linalg.cholesky(COV[:2, :2])).requires_grad_()
    samples = D.Wishart(df, scale_tril=tril).rsample((4000,))
    samples.mean(0).sum().backward()
    # E[W] = df L L^T: d sum(E W) / d df = sum(L L^T)
    np.testing.assert_allclose(df.grad.item(), COV[:2, :2].sum(), rtol=0.05)
    assert tril.grad is not None and tril.grad.shape == (2, 2)


def test_wishart_errors():
    with pytest.raises(AssertionError, match="Exactly one of covariance_matrix"):
        D.Wishart(F.tensor(3.0))
    with pytest.raises(AssertionError, match="Exactly one of covariance_matrix"):
        D.Wishart(F.tensor(3.0), covariance_matrix=F.eye(2), scale_tril=F.eye(2))
    with pytest.raises(ValueError, match=r"expected to be greater than ndim - 1 = 1"):
        D.Wishart(F.tensor(0.5), covariance_matrix=F.eye(2))
    with pytest.raises(ValueError, match="must be at least two-dimensional"):
        D.Wishart(F.tensor(3.0), covariance_matrix=F.ones(2))
    with pytest.raises(ValueError, match="covariance_matrix"):
        D.Wishart(F.tensor(3.0), covariance_matrix=-F.eye(2))
    with pytest.raises(ValueError, match="support"):
        D.Wishart(F.tensor(3.0), covariance_matrix=F.eye(2)).log_prob(-F.eye(2))


# ---- LKJCholesky -------------------------------------------------------------------------


@pytest.mark.parametrize("eta", [0.5, 1.0, 2.5])
def test_lkj_two_by_two_is_a_scaled_beta(eta):
    # For dim 2 the correlation r = L[1, 0] has (r + 1) / 2 ~ Beta(eta, eta).
    r = np.array([-0.7, 0.0, 0.3, 0.95])
    L = np.zeros((4, 2, 2))
    L[:, 0, 0], L[:, 1, 0], L[:, 1, 1] = 1.0, r, np.sqrt(1 - r**2)
    got = D.LKJCholesky(2, t64(eta)).log_prob(t64(L)).numpy()
    expected = (eta - 1) * np.log1p(-(r**2)) - (2 * eta - 1) * np.log(2) - betaln(eta, eta)
    np.testing.assert_allclose(got, expected, rtol=1e-10)


def _corr_cholesky(dim, seed):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(dim, dim + 2))
    c = a @ a.T
    d = np.sqrt(np.diag(c))
    return np.linalg.cholesky(c / np.outer(d, d))


def test_lkj_log_prob_ratio_is_the_determinant_power():
    # log p(L1) - log p(L2) = (eta - 1) log(det C1 / det C2) + the Jacobian of C -> L,
    # sum_i (dim - 1 - i) log(L1_ii / L2_ii).
    dim, eta = 4, 1.7
    L1, L2 = _corr_cholesky(dim, 0), _corr_cholesky(dim, 1)
    d = D.LKJCholesky(dim, t64(eta))
    got = (d.log_prob(t64(L1)) - d.log_prob(t64(L2))).item()
    diag_ratio = np.log(np.diag(L1)) - np.log(np.diag(L2))
    expected = (eta - 1) * 2 * diag_ratio.sum() + ((dim - 1 - np.arange(dim)) * diag_ratio).sum()
    np.testing.assert_allclose(got, expected, rtol=1e-10)


@pytest.mark.parametrize("dim, eta", [(3, 2.0), (4, 0.8)])
def test_lkj_samples_are_correlation_factors_with_its_marginals(dim, eta):
    F.manual_seed(0)
    L = D.LKJCholesky(dim, eta).sample((20000,)).double().numpy()
    assert np.allclose(np.triu(L, 1), 0) and np.all(np.diagonal(L, axis1=-2, axis2=-1) > 0)
    C = L @ np.swapaxes(L, -1, -2)
    np.testing.assert_allclose(np.diagonal(C, axis1=-2, axis2=-1), 1.0, rtol=1e-5)
    # Each off-diagonal correlation has (c + 1) / 2 ~ Beta(b, b), b = eta - 1 + dim / 2:
    # mean 0, variance 1 / (2 eta + dim - 1), whichever the row.
    for i, j in [(1, 0), (dim - 1, 0), (dim - 1, dim - 2)]:
        assert abs(C[:, i, j].mean()) < 0.02
        np.testing.assert_allclose(C[:, i, j].var(), 1 / (2 * eta + dim - 1), rtol=0.05)


def test_lkj_shapes_expand_and_errors():
    d = D.LKJCholesky(3, F.tensor([0.5, 2.0]))
    assert d.batch_shape == (2,) and d.event_shape == (3, 3) and d.dim == 3
    assert d.sample((5,)).shape == (5, 2, 3, 3)
    e = d.expand((4, 2))
    L = F.tensor([[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [0.0, 0.6, 0.8]])
    assert e.log_prob(L).shape == (4, 2)
    np.testing.assert_allclose(e.log_prob(L)[2].numpy(), d.log_prob(L).numpy())
    assert not d.has_rsample and isinstance(d.support, type(D.constraints.corr_cholesky))
    with pytest.raises(ValueError, match="greater than or equal to 2. Found dim=1"):
        D.LKJCholesky(1, 0.5)
    with pytest.raises(ValueError, match="concentration"):
        D.LKJCholesky(3, -0.5)
    with pytest.raises(ValueError, match="support"):
        d.log_prob(F.eye(3) * 2)


def test_against_torch():
    torch = pytest.importorskip("torch")
    L = _corr_cholesky(3, 2)
    for eta in (0.5, 3.0):
        mine = D.LKJCholesky(3, t64(eta)).log_prob(t64(L)).item()
        theirs = torch.distributions.LKJCholesky(3, torch.tensor(eta, dtype=torch.float64))
        np.testing.assert_allclose(mine, theirs.log_prob(torch.tensor(L)).item(), rtol=1e-10)
    W = torch.distributions.Wishart(torch.tensor(4.5, dtype=torch.float64), torch.tensor(COV))
    mine = _wishart(4.5, "covariance_matrix")
    np.testing.assert_allclose(
        mine.log_prob(t64(POINTS[0])).item(), W.log_prob(torch.tensor(POINTS[0])).item()
    )
    np.testing.assert_allclose(mine.entropy().item(), W.entropy().item())
