"""log_prob / cdf / icdf / entropy / mean / variance against scipy.stats."""

import numpy as np
import pytest
import scipy.stats as st

import flambeau as F
import flambeau.distributions as D


def t64(x):
    return F.tensor(np.asarray(x, dtype=np.float64))


def arr(t):
    return np.array(t.detach().tolist(), dtype=np.float64)


# (flambeau constructor, scipy frozen distribution, points inside the support)
A = np.array([0.5, 1.5, 3.0])
B = np.array([2.0, 0.7, 1.2])
CASES = {
    "Normal": (lambda: D.Normal(t64(A - 1), t64(B)), st.norm(A - 1, B), [-1.0, 0.3, 2.0]),
    "Uniform": (lambda: D.Uniform(t64(-A), t64(B)), st.uniform(-A, B + A), [-0.2, 0.1, 0.6]),
    "Beta": (lambda: D.Beta(t64(A), t64(B)), st.beta(A, B), [0.2, 0.5, 0.9]),
    "Gamma": (lambda: D.Gamma(t64(A), t64(B)), st.gamma(A, scale=1 / B), [0.3, 1.0, 4.0]),
    "Chi2": (lambda: D.Chi2(t64(A * 2)), st.chi2(A * 2), [0.3, 1.0, 4.0]),
    "Exponential": (lambda: D.Exponential(t64(B)), st.expon(scale=1 / B), [0.3, 1.0, 4.0]),
    "Laplace": (lambda: D.Laplace(t64(A), t64(B)), st.laplace(A, B), [-1.0, 0.5, 3.0]),
    "LogNormal": (
        lambda: D.LogNormal(t64(A - 1), t64(B)),
        st.lognorm(B, scale=np.exp(A - 1)),
        [0.3, 1.0, 4.0],
    ),
    "StudentT": (
        lambda: D.StudentT(t64(A + 4), t64(B), t64(A)),
        st.t(A + 4, B, A),
        [-1.0, 0.3, 2.0],
    ),
    "Cauchy": (lambda: D.Cauchy(t64(A), t64(B)), st.cauchy(A, B), [-1.0, 0.3, 2.0]),
    "HalfCauchy": (lambda: D.HalfCauchy(t64(B)), st.halfcauchy(scale=B), [0.3, 1.0, 4.0]),
    "HalfNormal": (lambda: D.HalfNormal(t64(B)), st.halfnorm(scale=B), [0.3, 1.0, 4.0]),
    "Gumbel": (lambda: D.Gumbel(t64(A), t64(B)), st.gumbel_r(A, B), [-1.0, 0.3, 2.0]),
    "Weibull": (lambda: D.Weibull(t64(B), t64(A)), st.weibull_min(A, scale=B), [0.3, 1.0, 4.0]),
    "Pareto": (
        lambda: D.Pareto(t64(B / 4), t64(A + 2)),
        st.pareto(A + 2, scale=B / 4),
        [0.6, 1.0, 4.0],
    ),
    "FisherSnedecor": (
        lambda: D.FisherSnedecor(t64(A + 5), t64(B + 8)),
        st.f(A + 5, B + 8),
        [0.3, 1.0, 4.0],
    ),
    "InverseGamma": (
        lambda: D.InverseGamma(t64(A + 2), t64(B)),
        st.invgamma(A + 2, scale=B),
        [0.3, 1.0, 4.0],
    ),
    "Kumaraswamy": (lambda: D.Kumaraswamy(t64(A + 1), t64(B + 1)), None, [0.2, 0.5, 0.9]),
    "GeneralizedPareto": (
        lambda: D.GeneralizedPareto(t64(A - 1), t64(B), t64([0.3, 0.0, -0.1])),
        st.genpareto([0.3, 0.0, -0.1], A - 1, B),
        [0.1, 1.0, 2.0],
    ),
    "VonMises": (lambda: D.VonMises(t64(A - 1), t64(B)), st.vonmises(B, A - 1), [-1.0, 0.3, 2.0]),
    "Poisson": (lambda: D.Poisson(t64(B * 3)), st.poisson(B * 3), [0.0, 2.0, 5.0]),
    "Geometric": (
        lambda: D.Geometric(t64([0.2, 0.5, 0.9])),
        st.geom([0.2, 0.5, 0.9], loc=-1),
        [0.0, 2.0, 5.0],
    ),
    "Binomial": (
        lambda: D.Binomial(t64([7, 7, 7]), t64([0.2, 0.5, 0.9])),
        st.binom(7, [0.2, 0.5, 0.9]),
        [0.0, 2.0, 5.0],
    ),
    "NegativeBinomial": (
        lambda: D.NegativeBinomial(t64([3.0, 2.5, 7.0]), t64([0.2, 0.5, 0.7])),
        st.nbinom([3.0, 2.5, 7.0], 1 - np.array([0.2, 0.5, 0.7])),
        [0.0, 2.0, 5.0],
    ),
    "Bernoulli": (
        lambda: D.Bernoulli(t64([0.2, 0.5, 0.9])),
        st.bernoulli([0.2, 0.5, 0.9]),
        [0.0, 1.0, 1.0],
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_log_prob_matches_scipy(name):
    make, ref, pts = CASES[name]
    d = make()
    x = t64(pts)
    got = arr(d.log_prob(x))
    if name == "Kumaraswamy":
        a, b = A + 1, B + 1
        p = np.array(pts)
        want = np.log(a * b) + (a - 1) * np.log(p) + (b - 1) * np.log1p(-(p**a))
    elif ref.dist.name in ("poisson", "geom", "binom", "nbinom", "bernoulli"):
        want = ref.logpmf(pts)
    else:
        want = ref.logpdf(pts)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", sorted(CASES))
def test_moments_and_entropy_match_scipy(name):
    make, ref, _ = CASES[name]
    if ref is None:
        return
    d = make()
    if name == "VonMises":  # flambeau/torch variance is the circular variance
        return
    with np.errstate(all="ignore"):
        want_mean, want_var = ref.mean(), ref.var()
    got_mean = arr(d.mean)
    finite = np.isfinite(want_mean)
    np.testing.assert_allclose(got_mean[finite], want_mean[finite], rtol=1e-6)
    finite = np.isfinite(want_var)
    np.testing.assert_allclose(arr(d.variance)[finite], want_var[finite], rtol=1e-6)
    if name in (
        "Poisson",
        "Geometric",
        "NegativeBinomial",
        "Binomial",
        "FisherSnedecor",
        "Pareto",
        "InverseGamma",
        "Kumaraswamy",
    ):
        if name not in ("Geometric", "Binomial"):
            return
    np.testing.assert_allclose(arr(d.entropy()), ref.entropy(), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize(
    "name",
    [
        "Normal",
        "Uniform",
        "Exponential",
        "Laplace",
        "Cauchy",
        "HalfCauchy",
        "HalfNormal",
        "LogNormal",
        "Gamma",
        "GeneralizedPareto",
    ],
)
def test_cdf_icdf_match_scipy(name):
    make, ref, pts = CASES[name]
    d = make()
    np.testing.assert_allclose(arr(d.cdf(t64(pts))), ref.cdf(pts), rtol=1e-6, atol=1e-10)
    if name == "Gamma":
        return
    q = [0.1, 0.5, 0.8]
    np.testing.assert_allclose(arr(d.icdf(t64(q))), ref.ppf(q), rtol=1e-6, atol=1e-10)


def test_categorical_and_onehot():
    p = np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]])
    c = D.Categorical(probs=t64(p * 3))  # unnormalized probs are normalized
    np.testing.assert_allclose(arr(c.log_prob(F.tensor([2, 0]))), np.log([0.7, 0.5]))
    np.testing.assert_allclose(arr(c.entropy()), st.entropy(p, axis=-1))
    c2 = D.Categorical(logits=t64(np.log(p) + 5))
    np.testing.assert_allclose(arr(c2.probs), p)
    assert c.enumerate_support().shape == (3, 2)
    oh = D.OneHotCategorical(t64(p))
    v = t64([[0, 0, 1], [1, 0, 0]])
    np.testing.assert_allclose(arr(oh.log_prob(v)), np.log([0.7, 0.5]))
    assert oh.sample((4,)).shape == (4, 2, 3)


def test_dirichlet_and_multinomial():
    a = np.array([[0.5, 2.0, 3.0], [1.0, 1.0, 4.0]])
    x = np.array([[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]])
    d = D.Dirichlet(t64(a))
    np.testing.assert_allclose(
        arr(d.log_prob(t64(x))), [st.dirichlet(ai).logpdf(xi) for ai, xi in zip(a, x)]
    )
    np.testing.assert_allclose(arr(d.entropy()), [st.dirichlet(ai).entropy() for ai in a])
    np.testing.assert_allclose(arr(d.variance), [st.dirichlet(ai).var() for ai in a])
    m = D.Multinomial(6, t64(x))
    counts = np.array([[1, 2, 3], [0, 6, 0]])
    np.testing.assert_allclose(
        arr(m.log_prob(t64(counts))), [st.multinomial(6, xi).logpmf(c) for xi, c in zip(x, counts)]
    )
    np.testing.assert_allclose(
        arr(m.entropy()), [st.multinomial(6, xi).entropy() for xi in x], rtol=1e-6
    )


def test_multivariate_normals():
    rng = np.random.default_rng(0)
    W = rng.normal(size=(3, 2))
    dg = np.array([0.5, 1.0, 2.0])
    cov = W @ W.T + np.diag(dg)
    loc = np.array([0.1, -0.2, 0.3])
    x = rng.normal(size=(4, 3))
    ref = st.multivariate_normal(loc, cov)
    for d in (
        D.MultivariateNormal(t64(loc), covariance_matrix=t64(cov)),
        D.MultivariateNormal(t64(loc), precision_matrix=t64(np.linalg.inv(cov))),
        D.MultivariateNormal(t64(loc), scale_tril=t64(np.linalg.cholesky(cov))),
        D.LowRankMultivariateNormal(t64(loc), t64(W), t64(dg)),
    ):
        np.testing.assert_allclose(arr(d.log_prob(t64(x))), ref.logpdf(x), rtol=1e-8)
        np.testing.assert_allclose(arr(d.entropy()), ref.entropy(), rtol=1e-8)
        np.testing.assert_allclose(arr(d.covariance_matrix), cov, rtol=1e-8)
        np.testing.assert_allclose(
            arr(d.precision_matrix), np.linalg.inv(cov), rtol=1e-7, atol=1e-10
        )
        np.testing.assert_allclose(arr(d.variance), np.diag(cov), rtol=1e-8)


def test_continuous_bernoulli_normalizes():
    from scipy.integrate import quad

    for p in (0.1, 0.4995, 0.8):
        d = D.ContinuousBernoulli(F.tensor(p, dtype=F.float64))

        def dens(x, d=d):
            return float(d.log_prob(F.tensor(x, dtype=F.float64)).exp())

        assert quad(dens, 0, 1)[0] == pytest.approx(1.0, abs=1e-6)
        assert float(d.mean) == pytest.approx(
            quad(lambda x, dens=dens: x * dens(x), 0, 1)[0], abs=1e-6
        )
        if abs(p - 0.5) > 0.01:  # inside the Taylor region the cdf is the uniform's, as in torch
            want = quad(dens, 0, 0.3)[0]
            assert float(d.cdf(F.tensor(0.3, dtype=F.float64))) == pytest.approx(want, abs=1e-6)


def test_relaxed_and_logistic_normal_normalize():
    from scipy.integrate import quad

    d = D.RelaxedBernoulli(F.tensor(0.7, dtype=F.float64), probs=F.tensor(0.3, dtype=F.float64))
    total = quad(lambda x: float(d.log_prob(F.tensor(x, dtype=F.float64)).exp()), 0, 1)[0]
    assert total == pytest.approx(1.0, abs=1e-5)
    ln = D.LogisticNormal(t64([0.2]), t64([0.8]))
    total = quad(lambda x: float(ln.log_prob(t64([x, 1 - x])).exp()), 0, 1)[0]
    assert total == pytest.approx(1.0, abs=1e-5)


def test_exponential_family_entropy_matches_closed_form():
    from flambeau.distributions.exp_family import ExponentialFamily

    for d in (
        D.Normal(t64(A), t64(B)),
        D.Gamma(t64(A), t64(B)),
        D.Exponential(t64(B)),
        D.Bernoulli(t64([0.2, 0.5, 0.9])),
    ):
        np.testing.assert_allclose(arr(ExponentialFamily.entropy(d)), arr(d.entropy()), rtol=1e-8)
