"""PyTorch's top-level samplers (flambeau.binomial, _standard_gamma, _standard_gamma_grad,
_sample_dirichlet) against SciPy's distributions, and their handling of bad input."""

import numpy as np
import pytest
import scipy.special as sp
import scipy.stats as st

import flambeau as F

N = 20000


def test_binomial_follows_scipy_and_broadcasts():
    gen = F.Generator().manual_seed(0)
    count = F.tensor([[12.0], [300.0]], dtype=F.float64)
    prob = F.tensor([0.1, 0.5, 0.93], dtype=F.float64)
    out = F.binomial(count.expand(2, 3).repeat(N // 2, 1), prob.expand(N, 3), generator=gen)
    assert out.dtype == F.float64 and out.shape == (N, 3)
    draws = out.numpy().reshape(N // 2, 2, 3)
    for i, n in enumerate([12, 300]):
        for j, p in enumerate([0.1, 0.5, 0.93]):
            x = draws[:, i, j]
            ks = np.arange(n + 1)
            observed = np.bincount(x.astype(int), minlength=n + 1)
            expected = st.binom(n, p).pmf(ks) * len(x)
            keep = expected > 5  # chi-square on the bins with enough mass
            rest = len(x) - observed[keep].sum(), len(x) - expected[keep].sum()
            chi2 = ((observed[keep] - expected[keep]) ** 2 / expected[keep]).sum()
            chi2 += (rest[0] - rest[1]) ** 2 / max(rest[1], 1e-9)
            assert st.chi2(keep.sum()).sf(chi2) > 1e-4, (n, p)


def test_binomial_edges_and_errors():
    out = F.binomial(F.tensor([0.0, 7.0, 5.0, -3.0]), F.tensor([0.5, 1.0, 0.0, 0.5]))
    assert out.tolist() == [0.0, 7.0, 0.0, 0.0] and out.dtype == F.float32
    nan = F.binomial(
        F.tensor([float("nan"), 5.0, float("inf")]), F.tensor([0.5, float("nan"), 0.5])
    )
    assert F.isnan(nan).all()  # not a hang
    with pytest.raises(ValueError, match="floating-point dtypes for count"):
        F.binomial(F.tensor([3]), F.tensor([0.5]))
    with pytest.raises(TypeError, match="must be Tensor"):
        F.binomial(3.0, F.tensor([0.5]))


@pytest.mark.parametrize("alpha", [0.2, 1.0, 7.5])
def test_standard_gamma_follows_scipy(alpha):
    gen = F.Generator().manual_seed(1)
    x = F._standard_gamma(F.full((N,), alpha, dtype=F.float64), generator=gen).numpy()
    assert st.kstest(x, st.gamma(alpha).cdf).pvalue > 1e-4


def test_standard_gamma_is_reparameterized_with_the_implicit_gradient():
    # d x / d alpha = -(d/dalpha of the regularized incomplete gamma P(alpha, x)) / pdf(x)
    alpha = F.tensor([0.3, 1.5, 40.0], dtype=F.float64, requires_grad=True)
    x = F._standard_gamma(alpha, generator=F.Generator().manual_seed(2))
    (g,) = F.autograd.grad(x.sum(), alpha)
    a, xs, h = alpha.detach().numpy(), x.detach().numpy(), 1e-6
    dp = (sp.gammainc(a + h, xs) - sp.gammainc(a - h, xs)) / (2 * h)
    expected = -dp / st.gamma(a).pdf(xs)
    np.testing.assert_allclose(g.numpy(), expected, rtol=1e-5)
    np.testing.assert_allclose(F._standard_gamma_grad(alpha, x).numpy(), expected, rtol=1e-5)


def test_standard_gamma_bad_concentrations_do_not_hang():
    x = F._standard_gamma(F.tensor([0.0, -1.0, float("nan"), float("inf"), 2.0]))
    tiny = F.finfo(F.float32).tiny
    assert x[:2].tolist() == [tiny, tiny] and F.isnan(x[2]) and x[3] == float("inf") and x[4] > 0
    with pytest.raises(ValueError, match="floating-point dtypes"):
        F._standard_gamma(F.tensor([1, 2]))


def test_sample_dirichlet_rows_are_dirichlet():
    alpha = np.array([0.5, 2.0, 3.5])
    gen = F.Generator().manual_seed(3)
    x = F._sample_dirichlet(F.tensor(np.tile(alpha, (N, 1))), generator=gen).numpy()
    np.testing.assert_allclose(x.sum(-1), 1.0, rtol=1e-12)
    # each coordinate is Beta(alpha_i, sum - alpha_i)
    for i, a in enumerate(alpha):
        assert st.kstest(x[:, i], st.beta(a, alpha.sum() - a).cdf).pvalue > 1e-4
