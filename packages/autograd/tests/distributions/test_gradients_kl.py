"""rsample gradients (finite differences, analytic expectations), KL divergences, validation."""

import math

import numpy as np
import pytest
import scipy.special as sp
import scipy.stats as st
from scipy.integrate import quad

import flambeau as F
import flambeau.distributions as D
from flambeau.autograd import gradcheck
from flambeau.distributions import constraints
from flambeau.distributions import transforms as T


def t64(x, grad=False):
    return F.tensor(np.asarray(x, dtype=np.float64), requires_grad=grad)


def arr(t):
    return np.array(t.detach().tolist(), dtype=np.float64)


def test_log_prob_gradcheck():
    x = t64([0.3, 1.2, 2.5])
    for make, params in [
        (lambda a, b: D.Normal(a, b).log_prob(x), ([0.1, 0.5, -1.0], [1.0, 2.0, 0.5])),
        (lambda a, b: D.Gamma(a, b).log_prob(x), ([0.7, 2.0, 3.0], [1.0, 2.0, 0.5])),
        (lambda a, b: D.Beta(a, b).log_prob(x / 3), ([0.7, 2.0, 3.0], [1.0, 2.0, 0.5])),
        (lambda a, b: D.StudentT(a, b).log_prob(x), ([3.0, 5.0, 7.0], [1.0, 2.0, 0.5])),
        (lambda a, b: D.VonMises(a, b).log_prob(x), ([0.1, 0.5, -1.0], [1.0, 20.0, 40.0])),
    ]:
        assert gradcheck(make, tuple(t64(p, True) for p in params))


def test_reparameterized_samples_are_differentiable_by_finite_differences():
    # with a fixed seed, the rsample map from parameters to samples is smooth
    for make, params in [
        (lambda a, b: D.Normal(a, b).rsample((4,)), ([0.1, 0.5], [1.0, 2.0])),
        (lambda a, b: D.Laplace(a, b).rsample((4,)), ([0.1, 0.5], [1.0, 2.0])),
        (lambda a, b: D.Uniform(a, a + b).rsample((4,)), ([0.1, 0.5], [1.0, 2.0])),
        (lambda a, b: D.LogNormal(a, b).rsample((4,)), ([0.1, 0.5], [1.0, 2.0])),
        (lambda a: D.Exponential(a).rsample((4,)), ([1.0, 2.0],)),
        (lambda a, b: D.Gumbel(a, b).rsample((4,)), ([0.1, 0.5], [1.0, 2.0])),
    ]:
        seeded = lambda *args, make=make: (F.manual_seed(0), make(*args))[1]  # noqa: E731
        assert gradcheck(seeded, tuple(t64(p, True) for p in params))
    loc = t64([0.0, 1.0], True)
    L = t64([[1.0, 0.0], [0.3, 0.8]], True)

    def seeded(m, s):
        F.manual_seed(0)
        return D.MultivariateNormal(m, scale_tril=s.tril()).rsample((3,))

    assert gradcheck(seeded, (loc, L))


@pytest.mark.parametrize(
    "alpha,x", [(0.3, 0.01), (0.3, 2.0), (2.0, 1.0), (7.0, 15.0), (150.0, 140.0), (3e4, 3.01e4)]
)
def test_standard_gamma_implicit_gradient(alpha, x):
    from flambeau.distributions._samplers import _gamma_grad_float64

    got = _gamma_grad_float64(t64([x]), t64([alpha])).item()
    h = 1e-6 * alpha
    dcdf = (sp.gammainc(alpha + h, x) - sp.gammainc(alpha - h, x)) / (2 * h)
    assert got == pytest.approx(-dcdf / st.gamma(alpha).pdf(x), rel=1e-6)


def test_gamma_family_rsample_gradient_expectations():
    # d/dalpha E[X] for X ~ Gamma(alpha, rate) is 1/rate; for Beta, d/da E[X] = b / (a + b)^2
    F.manual_seed(0)
    a = t64([0.5, 2.0, 10.0], True)
    rate = t64([2.0, 1.0, 0.5], True)
    D.Gamma(a, rate).rsample((40000,)).mean(0).sum().backward()
    np.testing.assert_allclose(arr(a.grad), 1 / arr(rate), rtol=0.03)
    np.testing.assert_allclose(arr(rate.grad), -arr(a) / arr(rate) ** 2, rtol=0.03)
    c1, c0 = t64([0.5, 2.0], True), t64([1.5, 3.0], True)
    D.Beta(c1, c0).rsample((40000,)).mean(0).sum().backward()
    np.testing.assert_allclose(arr(c1.grad), arr(c0) / (arr(c1) + arr(c0)) ** 2, rtol=0.05)
    conc = t64([1.0, 2.0, 3.0], True)
    D.Dirichlet(conc).rsample((40000,)).mean(0)[0].backward()
    s = 6.0
    np.testing.assert_allclose(
        arr(conc.grad), [(s - 1) / s**2, -1 / s**2, -1 / s**2], rtol=0.05, atol=3e-3
    )


def _kl_numeric(p, q, lo, hi):
    f = lambda x: float(p.log_prob(t64(x)).exp() * (p.log_prob(t64(x)) - q.log_prob(t64(x))))  # noqa: E731
    return quad(f, lo, hi, limit=200)[0]


@pytest.mark.parametrize(
    "p,q,lo,hi",
    [
        (lambda: D.Normal(t64(0.3), t64(1.2)), lambda: D.Normal(t64(-0.5), t64(0.7)), -15, 15),
        (lambda: D.Gamma(t64(2.0), t64(1.5)), lambda: D.Gamma(t64(3.0), t64(0.5)), 0, 60),
        (lambda: D.Beta(t64(2.0), t64(1.5)), lambda: D.Beta(t64(3.0), t64(2.5)), 0, 1),
        (lambda: D.Exponential(t64(2.0)), lambda: D.Exponential(t64(0.5)), 0, 60),
        (lambda: D.Laplace(t64(0.3), t64(1.2)), lambda: D.Laplace(t64(-0.5), t64(0.7)), -40, 40),
        (lambda: D.Uniform(t64(0.0), t64(1.0)), lambda: D.Uniform(t64(-1.0), t64(2.0)), 0, 1),
        (
            lambda: D.Cauchy(t64(0.3), t64(1.2)),
            lambda: D.Cauchy(t64(-0.5), t64(0.7)),
            -np.inf,
            np.inf,
        ),
        (lambda: D.Gumbel(t64(0.3), t64(1.2)), lambda: D.Gumbel(t64(-0.5), t64(0.7)), -20, 40),
        (lambda: D.LogNormal(t64(0.3), t64(0.5)), lambda: D.LogNormal(t64(-0.5), t64(0.7)), 0, 60),
        (lambda: D.HalfNormal(t64(1.2)), lambda: D.HalfNormal(t64(0.7)), 0, 20),
        (lambda: D.Uniform(t64(0.5), t64(2.0)), lambda: D.Normal(t64(0.0), t64(1.5)), 0.5, 2),
        (lambda: D.Uniform(t64(0.5), t64(2.0)), lambda: D.Gamma(t64(2.0), t64(1.5)), 0.5, 2),
        (lambda: D.Normal(t64(0.3), t64(1.2)), lambda: D.Laplace(t64(-0.5), t64(0.7)), -15, 15),
        (lambda: D.Exponential(t64(2.0)), lambda: D.Gamma(t64(2.0), t64(1.5)), 0, 60),
        (lambda: D.Gamma(t64(2.0), t64(1.5)), lambda: D.Normal(t64(0.0), t64(1.5)), 0, 60),
        (lambda: D.Pareto(t64(1.0), t64(3.0)), lambda: D.Pareto(t64(0.5), t64(2.0)), 1, np.inf),
    ],
)
def test_kl_against_numerical_integration(p, q, lo, hi):
    p, q = p(), q()
    assert float(D.kl_divergence(p, q)) == pytest.approx(
        _kl_numeric(p, q, lo, hi), rel=1e-5, abs=1e-8
    )


def test_kl_discrete_and_multivariate():
    p, q = np.array([0.2, 0.3, 0.5]), np.array([0.4, 0.4, 0.2])
    want = np.sum(p * np.log(p / q))
    assert float(D.kl_divergence(D.Categorical(t64(p)), D.Categorical(t64(q)))) == pytest.approx(
        want
    )
    assert float(
        D.kl_divergence(D.OneHotCategorical(t64(p)), D.OneHotCategorical(t64(q)))
    ) == pytest.approx(want)
    b = D.kl_divergence(D.Bernoulli(t64(0.3)), D.Bernoulli(t64(0.6)))
    assert float(b) == pytest.approx(0.3 * math.log(0.5) + 0.7 * math.log(0.7 / 0.4))
    ks = np.arange(0, 60)
    want = np.sum(
        st.poisson(3.0).pmf(ks) * (st.poisson(3.0).logpmf(ks) - st.poisson(5.0).logpmf(ks))
    )
    assert float(D.kl_divergence(D.Poisson(t64(3.0)), D.Poisson(t64(5.0)))) == pytest.approx(want)
    ks = np.arange(0, 400)
    g1, g2 = st.geom(0.3, loc=-1), st.geom(0.6, loc=-1)
    want = np.sum(g1.pmf(ks) * (g1.logpmf(ks) - g2.logpmf(ks)))
    assert float(D.kl_divergence(D.Geometric(t64(0.3)), D.Geometric(t64(0.6)))) == pytest.approx(
        want
    )
    ks = np.arange(0, 11)
    b1, b2 = st.binom(10, 0.3), st.binom(10, 0.6)
    want = np.sum(b1.pmf(ks) * (b1.logpmf(ks) - b2.logpmf(ks)))
    kl = D.kl_divergence(D.Binomial(t64(10.0), t64(0.3)), D.Binomial(t64(10.0), t64(0.6)))
    assert float(kl) == pytest.approx(want)
    # multivariate normals: closed form with numpy
    rng = np.random.default_rng(1)
    W1, W2 = rng.normal(size=(3, 2)), rng.normal(size=(3, 1))
    d1, d2 = np.array([0.5, 1.0, 2.0]), np.array([1.0, 0.3, 0.7])
    S1, S2 = W1 @ W1.T + np.diag(d1), W2 @ W2.T + np.diag(d2)
    m1, m2 = np.array([0.1, 0.2, 0.3]), np.array([-0.3, 0.0, 0.5])
    iS2 = np.linalg.inv(S2)
    want = 0.5 * (
        np.trace(iS2 @ S1)
        + (m2 - m1) @ iS2 @ (m2 - m1)
        - 3
        + np.log(np.linalg.det(S2) / np.linalg.det(S1))
    )
    mv1, mv2 = D.MultivariateNormal(t64(m1), t64(S1)), D.MultivariateNormal(t64(m2), t64(S2))
    lr1, lr2 = (
        D.LowRankMultivariateNormal(t64(m1), t64(W1), t64(d1)),
        D.LowRankMultivariateNormal(t64(m2), t64(W2), t64(d2)),
    )
    for p, q in [(mv1, mv2), (lr1, lr2), (mv1, lr2), (lr1, mv2)]:
        assert float(D.kl_divergence(p, q)) == pytest.approx(want, rel=1e-8)
    a, c = np.array([1.0, 2.0, 3.0]), np.array([2.0, 0.5, 1.0])
    want = (
        sp.gammaln(a.sum())
        - sp.gammaln(a).sum()
        - sp.gammaln(c.sum())
        + sp.gammaln(c).sum()
        + ((a - c) * (sp.digamma(a) - sp.digamma(a.sum()))).sum()
    )
    assert float(D.kl_divergence(D.Dirichlet(t64(a)), D.Dirichlet(t64(c)))) == pytest.approx(want)
    ind = D.kl_divergence(
        D.Independent(D.Normal(t64([0.0, 1.0]), 1.0), 1),
        D.Independent(D.Normal(t64([1.0, 1.0]), 1.0), 1),
    )
    assert float(ind) == pytest.approx(0.5)


def test_kl_dispatch_and_registration():
    class MyNormal(D.Normal):
        pass

    assert float(D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(1.0, 1.0))) == pytest.approx(0.5)

    @D.register_kl(MyNormal, D.Normal)
    def _kl(p, q):
        return F.tensor(42.0)

    assert float(D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(1.0, 1.0))) == 42.0
    assert float(D.kl_divergence(D.Normal(0.0, 1.0), MyNormal(1.0, 1.0))) == pytest.approx(0.5)
    with pytest.raises(NotImplementedError, match="No KL"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.VonMises(0.0, 1.0))
    with pytest.raises(TypeError):
        D.register_kl(int, D.Normal)
    # exponential-family Bregman fallback for same-type pairs without a closed form
    p, q = D.ContinuousBernoulli(t64(0.3)), D.ContinuousBernoulli(t64(0.8))
    f = lambda x: float(p.log_prob(t64(x)).exp() * (p.log_prob(t64(x)) - q.log_prob(t64(x))))  # noqa: E731
    assert float(D.kl_divergence(p, q)) == pytest.approx(quad(f, 0, 1)[0], rel=1e-6)


def test_validation_errors():
    with pytest.raises(ValueError, match="Expected parameter scale"):
        D.Normal(0.0, -1.0)
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        D.Categorical()
    with pytest.raises(ValueError, match="at least one-dimensional"):
        D.Dirichlet(F.tensor(1.0))
    with pytest.raises(ValueError, match="Exactly one of covariance_matrix"):
        D.MultivariateNormal(F.zeros(2))
    with pytest.raises(ValueError, match="must be a Tensor"):
        D.Normal(0.0, 1.0).log_prob(1.0)
    with pytest.raises(ValueError, match="not broadcastable"):
        D.Normal(F.zeros(3), 1.0).log_prob(F.zeros(2))
    with pytest.raises(ValueError, match="within the support"):
        D.Categorical(F.ones(3)).log_prob(F.tensor(3))
    with pytest.raises(ValueError, match="right-most size"):
        D.Dirichlet(F.ones(3)).log_prob(F.ones(2) / 2)
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args(3)
    D.Normal(0.0, -1.0, validate_args=False)  # no error
    D.Distribution.set_default_validate_args(False)
    try:
        D.Normal(0.0, -1.0)
    finally:
        D.Distribution.set_default_validate_args(True)


def test_transforms_roundtrip_and_log_det():
    x = t64([[0.3, -1.2, 0.5], [2.0, 0.1, -0.4]])
    for t in [
        T.ExpTransform(),
        T.SigmoidTransform(),
        T.TanhTransform(),
        T.SoftplusTransform(),
        T.AffineTransform(1.0, -2.0),
        T.PowerTransform(2.0),
    ]:
        xx = x.abs() if isinstance(t, T.PowerTransform) else x
        y = t(xx)
        np.testing.assert_allclose(arr(t.inv(y)), arr(xx), rtol=1e-10)
        # elementwise: log|dy/dx| by finite differences
        h = 1e-6
        fd = (arr(t(xx + h)) - arr(t(xx - h))) / (2 * h)
        np.testing.assert_allclose(
            arr(t.log_abs_det_jacobian(xx, y)), np.log(np.abs(fd)), rtol=1e-6, atol=1e-8
        )
    # vector transforms: compare the log-det to a numerical Jacobian's determinant
    v = t64([0.3, -1.2, 0.5])
    for t, proj in [
        (T.StickBreakingTransform(), lambda y: y[:-1]),
        (T.CorrCholeskyTransform(), None),
    ]:
        y = t(v)
        if proj is None:
            assert bool(constraints.corr_cholesky.check(y))
            np.testing.assert_allclose(arr(t.inv(y)), arr(v), rtol=1e-9)
            continue
        assert bool(constraints.simplex.check(y))
        np.testing.assert_allclose(arr(t.inv(y)), arr(v), rtol=1e-9)
        J = np.stack(
            [
                (arr(proj(t(v + h * e))) - arr(proj(t(v - h * e)))) / (2 * h)
                for e in (t64(r) for r in np.eye(3))
            ],
            1,
        )
        assert float(t.log_abs_det_jacobian(v, y)) == pytest.approx(
            np.log(abs(np.linalg.det(J))), rel=1e-6
        )
    c = T.ComposeTransform([T.AffineTransform(0.5, 2.0), T.ExpTransform()])
    y = c(x)
    np.testing.assert_allclose(arr(c.log_abs_det_jacobian(x, y)), np.log(2.0) + arr(x) * 2 + 0.5)
    assert T.identity_transform(x) is x
    m = t64([[0.5, 0.0], [0.3, -0.2]])
    pd = T.PositiveDefiniteTransform()(m)
    assert bool(constraints.positive_definite.check(pd))
    np.testing.assert_allclose(arr(T.PositiveDefiniteTransform().inv(pd)), arr(m), atol=1e-12)
    r = T.ReshapeTransform((2, 3), (3, 2))
    assert tuple(r(x).shape) == (3, 2)
    cat = T.CatTransform([T.ExpTransform(), T.identity_transform], dim=1, lengths=[1, 2])
    np.testing.assert_allclose(arr(cat(x))[:, 0], np.exp(arr(x)[:, 0]))
    stack = T.StackTransform([T.ExpTransform(), T.identity_transform], dim=0)
    np.testing.assert_allclose(arr(stack(x))[0], np.exp(arr(x)[0]))
    cdf = T.CumulativeDistributionTransform(D.Normal(0.0, 1.0))
    assert float(cdf(F.tensor(0.0))) == pytest.approx(0.5)


def test_biject_to_and_transform_to():
    z = t64([-3.0, 0.0, 2.0])
    for c in [
        constraints.positive,
        constraints.unit_interval,
        constraints.interval(-2.0, 5.0),
        constraints.greater_than(1.5),
        constraints.less_than(-1.0),
        constraints.real,
    ]:
        assert bool(c.check(D.biject_to(c)(z)).all())
        assert bool(c.check(D.transform_to(c)(z)).all())
    assert bool(constraints.simplex.check(D.biject_to(constraints.simplex)(z)))
    assert tuple(D.biject_to(constraints.simplex)(z).shape) == (4,)
    assert bool(constraints.simplex.check(D.transform_to(constraints.simplex)(z)))
    assert bool(
        constraints.lower_cholesky.check(
            D.transform_to(constraints.lower_cholesky)(t64([[1.0, 2.0], [3.0, -4.0]]))
        )
    )
    with pytest.raises(NotImplementedError):
        D.biject_to(constraints.lower_cholesky)


def test_transformed_distribution_matches_lognormal():
    base = D.Normal(t64([0.1, 0.4]), t64([0.7, 1.1]))
    td = D.TransformedDistribution(base, [T.ExpTransform()])
    x = t64([0.5, 2.0])
    np.testing.assert_allclose(
        arr(td.log_prob(x)), st.lognorm([0.7, 1.1], scale=np.exp([0.1, 0.4])).logpdf([0.5, 2.0])
    )
    np.testing.assert_allclose(
        arr(td.cdf(x)), st.lognorm([0.7, 1.1], scale=np.exp([0.1, 0.4])).cdf([0.5, 2.0])
    )
    neg = D.TransformedDistribution(base, [T.AffineTransform(0.0, -1.0)])
    np.testing.assert_allclose(
        arr(neg.cdf(x)), st.norm(-np.array([0.1, 0.4]), [0.7, 1.1]).cdf([0.5, 2.0])
    )


def test_lazy_attribute_and_module_paths():
    import flambeau

    assert flambeau.distributions.Normal is D.Normal
    from flambeau.distributions.kl import kl_divergence
    from flambeau.distributions.normal import Normal

    assert Normal is D.Normal and kl_divergence is D.kl_divergence
