"""Samples: shapes, seeding, and their distribution checked by KS / moment tests."""

import numpy as np
import pytest
import scipy.stats as st

import flambeau as F
import flambeau.distributions as D

N = 20000


def t64(x):
    return F.tensor(np.asarray(x, dtype=np.float64))


def draws(d, n=N):
    return np.array(d.sample((n,)).tolist(), dtype=np.float64)


CONTINUOUS = [
    (lambda: D.Normal(t64(0.5), t64(2.0)), st.norm(0.5, 2.0)),
    (lambda: D.Uniform(t64(-1.0), t64(3.0)), st.uniform(-1, 4)),
    (lambda: D.Gamma(t64(0.3), t64(2.0)), st.gamma(0.3, scale=0.5)),
    (lambda: D.Gamma(t64(4.5), t64(0.5)), st.gamma(4.5, scale=2.0)),
    (lambda: D.Beta(t64(0.5), t64(2.5)), st.beta(0.5, 2.5)),
    (lambda: D.Chi2(t64(3.0)), st.chi2(3.0)),
    (lambda: D.Exponential(t64(1.5)), st.expon(scale=1 / 1.5)),
    (lambda: D.Laplace(t64(1.0), t64(0.5)), st.laplace(1.0, 0.5)),
    (lambda: D.LogNormal(t64(0.1), t64(0.7)), st.lognorm(0.7, scale=np.exp(0.1))),
    (lambda: D.StudentT(t64(3.0), t64(1.0), t64(2.0)), st.t(3.0, 1.0, 2.0)),
    (lambda: D.Cauchy(t64(0.0), t64(1.5)), st.cauchy(0, 1.5)),
    (lambda: D.HalfNormal(t64(1.5)), st.halfnorm(scale=1.5)),
    (lambda: D.HalfCauchy(t64(1.5)), st.halfcauchy(scale=1.5)),
    (lambda: D.Gumbel(t64(1.0), t64(2.0)), st.gumbel_r(1.0, 2.0)),
    (lambda: D.Weibull(t64(2.0), t64(1.5)), st.weibull_min(1.5, scale=2.0)),
    (lambda: D.Pareto(t64(1.0), t64(3.0)), st.pareto(3.0)),
    (lambda: D.FisherSnedecor(t64(5.0), t64(7.0)), st.f(5.0, 7.0)),
    (lambda: D.InverseGamma(t64(3.0), t64(2.0)), st.invgamma(3.0, scale=2.0)),
    (lambda: D.VonMises(t64(0.5), t64(2.0)), st.vonmises(2.0, 0.5)),
    (lambda: D.VonMises(t64(0.5), t64(0.01)), st.vonmises(0.01, 0.5)),
    (lambda: D.GeneralizedPareto(t64(0.0), t64(1.0), t64(0.2)), st.genpareto(0.2)),
]


@pytest.mark.parametrize("case", range(len(CONTINUOUS)))
def test_continuous_samples_follow_distribution(case):
    make, ref = CONTINUOUS[case]
    F.manual_seed(case)
    d = make()
    x = draws(d)
    if isinstance(d, D.VonMises):  # scipy's support is [loc - pi, loc + pi), ours [-pi, pi)
        loc = float(d.loc)
        x = np.mod(x - loc + np.pi, 2 * np.pi) - np.pi + loc
    assert st.kstest(x, ref.cdf).pvalue > 1e-3


@pytest.mark.parametrize(
    "make,ref",
    [
        (lambda: D.Poisson(t64(3.5)), st.poisson(3.5)),
        (lambda: D.Binomial(t64(30.0), t64(0.3)), st.binom(30, 0.3)),
        (lambda: D.Binomial(t64(5.0), t64(0.8)), st.binom(5, 0.8)),
        (lambda: D.Geometric(t64(0.3)), st.geom(0.3, loc=-1)),
        (lambda: D.NegativeBinomial(t64(4.0), t64(0.4)), st.nbinom(4, 0.6)),
        (lambda: D.Bernoulli(t64(0.3)), st.bernoulli(0.3)),
        (
            lambda: D.Categorical(t64([0.1, 0.6, 0.3])),
            st.rv_discrete(values=([0, 1, 2], [0.1, 0.6, 0.3])),
        ),
    ],
)
def test_discrete_samples_chi_square(make, ref):
    F.manual_seed(3)
    x = draws(make()).astype(int)
    top = int(ref.ppf(0.999)) + 1
    observed = np.bincount(np.minimum(x, top), minlength=top + 1)
    expected = np.append(ref.pmf(np.arange(top)), ref.sf(top - 1)) * len(x)
    keep = expected > 5
    obs, exp = observed[keep], expected[keep]
    exp = exp * obs.sum() / exp.sum()
    assert st.chisquare(obs, exp).pvalue > 1e-3


def test_binomial_large_counts_moments():
    F.manual_seed(0)
    d = D.Binomial(t64([1e6, 5000.0]), t64([0.4, 0.999]))
    x = draws(d, 4000)
    n, p = np.array([1e6, 5000.0]), np.array([0.4, 0.999])
    se = np.sqrt(n * p * (1 - p) / len(x))
    assert np.all(np.abs(x.mean(0) - n * p) < 5 * se)
    assert np.all(x <= n) and np.all(x >= 0) and np.all(x == np.round(x))


def test_multinomial_and_dirichlet_samples():
    F.manual_seed(1)
    p = np.array([0.2, 0.3, 0.5])
    x = draws(D.Multinomial(10, t64(p)), 5000)
    assert np.all(x.sum(-1) == 10)
    np.testing.assert_allclose(x.mean(0), 10 * p, atol=0.1)
    a = np.array([0.5, 1.0, 3.0])
    y = draws(D.Dirichlet(t64(a)), 10000)
    np.testing.assert_allclose(y.sum(-1), 1.0, atol=1e-12)
    for k in range(3):
        assert st.kstest(y[:, k], st.beta(a[k], a.sum() - a[k]).cdf).pvalue > 1e-3


def test_mvn_sample_covariance():
    F.manual_seed(2)
    cov = np.array([[2.0, 0.6], [0.6, 1.0]])
    x = draws(D.MultivariateNormal(t64([1.0, -1.0]), t64(cov)), 40000)
    np.testing.assert_allclose(np.cov(x.T), cov, atol=0.05)
    np.testing.assert_allclose(x.mean(0), [1.0, -1.0], atol=0.03)
    W, dg = np.array([[1.0], [0.5]]), np.array([1.0, 0.75])
    x = draws(D.LowRankMultivariateNormal(t64([0.0, 0.0]), t64(W), t64(dg)), 40000)
    np.testing.assert_allclose(np.cov(x.T), W @ W.T + np.diag(dg), atol=0.05)


def test_mixture_samples_and_log_prob():
    F.manual_seed(4)
    mix = D.MixtureSameFamily(
        D.Categorical(t64([0.3, 0.7])), D.Normal(t64([-2.0, 3.0]), t64([0.5, 1.0]))
    )
    ref_cdf = lambda v: 0.3 * st.norm(-2, 0.5).cdf(v) + 0.7 * st.norm(3, 1).cdf(v)  # noqa: E731
    assert st.kstest(draws(mix), ref_cdf).pvalue > 1e-3
    v = np.array([-2.0, 0.0, 3.5])
    want = np.log(0.3 * st.norm(-2, 0.5).pdf(v) + 0.7 * st.norm(3, 1).pdf(v))
    np.testing.assert_allclose(np.array(mix.log_prob(t64(v)).tolist()), want, rtol=1e-10)
    np.testing.assert_allclose(float(mix.mean), 0.3 * -2 + 0.7 * 3)
    np.testing.assert_allclose(np.array(mix.cdf(t64(v)).tolist()), ref_cdf(v), rtol=1e-10)


def test_manual_seed_reproduces_samples():
    for make in (
        lambda: D.Gamma(t64([0.4, 3.0]), 1.0),
        lambda: D.Binomial(t64(50.0), t64(0.3)),
        lambda: D.Normal(0.0, 1.0),
    ):
        F.manual_seed(7)
        a = make().sample((5,)).tolist()
        F.manual_seed(7)
        assert make().sample((5,)).tolist() == a


@pytest.mark.parametrize(
    "make,event",
    [
        (lambda: D.Normal(F.zeros(2, 3), 1.0), ()),
        (lambda: D.Bernoulli(F.full((2, 3), 0.3)), ()),
        (lambda: D.Categorical(F.ones(2, 3, 4)), ()),
        (lambda: D.OneHotCategorical(F.ones(2, 3, 4)), (4,)),
        (lambda: D.Dirichlet(F.ones(2, 3, 4)), (4,)),
        (lambda: D.MultivariateNormal(F.zeros(2, 3, 4), F.eye(4)), (4,)),
        (lambda: D.Gamma(F.ones(2, 3), 2.0), ()),
        (lambda: D.Beta(F.ones(2, 3), 2.0), ()),
        (lambda: D.Independent(D.Normal(F.zeros(2, 3, 4), 1.0), 1), (4,)),
        (lambda: D.RelaxedOneHotCategorical(F.tensor(0.5), F.ones(2, 3, 4) / 4), (4,)),
        (lambda: D.LogisticNormal(F.zeros(2, 3, 3), F.ones(2, 3, 3)), (4,)),
        (lambda: D.Multinomial(5, F.ones(2, 3, 4)), (4,)),
    ],
)
def test_sample_shapes_and_expand(make, event):
    d = make()
    assert tuple(d.batch_shape) == (2, 3)
    assert tuple(d.event_shape) == event
    assert tuple(d.sample((5,)).shape) == (5, 2, 3) + event
    assert tuple(d.sample().shape) == (2, 3) + event
    e = d.expand((4, 2, 3))
    assert tuple(e.batch_shape) == (4, 2, 3)
    x = e.sample((2,))
    assert tuple(x.shape) == (2, 4, 2, 3) + event
    assert tuple(e.log_prob(x).shape) == (2, 4, 2, 3)
