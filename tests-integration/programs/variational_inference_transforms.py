"""Black-box variational inference with transformed distributions.

In the style of Pyro-free VI scripts: conjugate models whose posteriors are known in
closed form (Poisson-Gamma, Bernoulli-Beta, Dirichlet-Categorical) are fitted by
maximizing a reparameterized ELBO, with variational families built from
torch.distributions.TransformedDistribution over Normal base distributions and
transforms (ExpTransform, SigmoidTransform, AffineTransform, ComposeTransform,
StickBreakingTransform), constraint registries (biject_to / transform_to), Independent
and kl_divergence (analytic pairs and a user-registered pair with @register_kl).
Checks: log_prob of transformed distributions against change-of-variables by hand,
analytic KLs against Monte Carlo estimates, and the fitted posteriors' means against
the closed-form ones.
"""

import math

import flambeau as torch
from flambeau import distributions as D
from flambeau.distributions import constraints
from flambeau.distributions import transforms as T


class LogitNormal(D.TransformedDistribution):
    def __init__(self, loc, scale):
        super().__init__(D.Normal(loc, scale), [T.SigmoidTransform()])


@D.register_kl(LogitNormal, LogitNormal)
def _kl_logitnormal(p, q):
    # a bijection leaves KL unchanged: it is the KL of the base normals
    return D.kl_divergence(p.base_dist, q.base_dist)


def check_transforms(g):
    x = torch.rand(5, generator=g) * 0.8 + 0.1
    q = LogitNormal(torch.tensor(0.3), torch.tensor(0.7))
    logit = torch.log(x) - torch.log1p(-x)
    by_hand = D.Normal(0.3, 0.7).log_prob(logit) - torch.log(x) - torch.log1p(-x)
    assert torch.allclose(q.log_prob(x), by_hand, atol=1e-5)
    assert q.support.check(x).all() and isinstance(q.support, type(constraints.unit_interval))

    affine_exp = T.ComposeTransform([T.AffineTransform(1.0, 2.0), T.ExpTransform()])
    y = affine_exp(torch.tensor([0.0, 0.5]))
    assert torch.allclose(y, torch.exp(torch.tensor([1.0, 2.0])))
    assert torch.allclose(affine_exp.inv(y), torch.tensor([0.0, 0.5]), atol=1e-6)
    ladj = affine_exp.log_abs_det_jacobian(torch.tensor([0.0, 0.5]), y)
    assert torch.allclose(ladj, math.log(2.0) + torch.tensor([1.0, 2.0]))

    pos = D.biject_to(constraints.positive)
    assert torch.allclose(pos(torch.tensor([0.0])), torch.tensor([1.0]))
    u = torch.randn(3, 4, generator=g)
    s = D.biject_to(constraints.simplex)(u)  # stick-breaking: one coordinate more
    assert s.shape == (3, 5) and torch.allclose(s.sum(-1), torch.ones(3))
    s = D.transform_to(constraints.simplex)(u)  # softmax: same shape
    assert s.shape == (3, 4) and torch.allclose(s, torch.softmax(u, -1))
    sb = T.StickBreakingTransform()
    z = torch.randn(4, generator=g)
    assert torch.allclose(sb.inv(sb(z)), z, atol=1e-5)
    # its Jacobian determinant against autograd (drop the last, dependent coordinate)
    jac = torch.autograd.functional.jacobian(lambda v: sb(v)[:-1], z)
    ladj = sb.log_abs_det_jacobian(z, sb(z))
    assert torch.allclose(ladj, torch.linalg.slogdet(jac)[1], atol=1e-4)


def check_kls(g):
    t = torch.tensor
    pairs = [
        (D.Normal(0.5, 1.3), D.Normal(-0.2, 0.8)),
        (D.Gamma(2.0, 3.0), D.Gamma(1.5, 1.0)),
        (D.Beta(2.0, 5.0), D.Beta(1.0, 1.0)),
        (D.Dirichlet(t([1.0, 2.0, 3.0])), D.Dirichlet(t([2.0, 2.0, 2.0]))),
        (
            D.Independent(D.Normal(torch.zeros(3), torch.ones(3)), 1),
            D.Independent(D.Normal(torch.ones(3), 2 * torch.ones(3)), 1),
        ),
        (D.Categorical(probs=t([0.2, 0.3, 0.5])), D.Categorical(logits=torch.zeros(3))),
        (LogitNormal(t(0.0), t(1.0)), LogitNormal(t(1.0), t(0.5))),
    ]
    for p, q in pairs:
        analytic = D.kl_divergence(p, q)
        x = p.sample((20000,))
        mc = (p.log_prob(x) - q.log_prob(x)).mean()
        assert abs(analytic.item() - mc.item()) < 0.05 + 0.05 * abs(analytic.item()), (
            type(p).__name__,
            analytic.item(),
            mc.item(),
        )
    try:
        D.kl_divergence(D.Beta(1.0, 1.0), D.Poisson(1.0))
    except NotImplementedError:
        pass
    else:
        raise AssertionError("no KL is registered for (Beta, Poisson)")


def elbo(q, log_joint, n_samples=64):
    z = q.rsample((n_samples,))
    return (log_joint(z) - q.log_prob(z)).mean()


def fit(q_params, make_q, log_joint, steps=200, lr=0.08):
    opt = torch.optim.Adam(q_params, lr=lr)
    for _ in range(steps):
        opt.zero_grad()
        (-elbo(make_q(), log_joint)).backward()
        opt.step()
    return make_q()


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    check_transforms(g)
    check_kls(g)

    # Poisson counts with a Gamma(2, 1) prior on the rate; q = LogNormal via ExpTransform
    counts = D.Poisson(4.0).sample((40,))
    prior = D.Gamma(2.0, 1.0)
    loc, log_scale = torch.zeros(1, requires_grad=True), torch.zeros(1, requires_grad=True)

    def q_rate():
        base = D.Normal(loc, log_scale.exp())
        return D.Independent(D.TransformedDistribution(base, [T.ExpTransform()]), 1)

    def joint_rate(rate):
        return prior.log_prob(rate).sum(-1) + D.Poisson(rate).log_prob(counts).sum(-1)

    q = fit([loc, log_scale], q_rate, joint_rate)
    post = D.Gamma(2.0 + counts.sum(), 1.0 + len(counts))
    q_mean = q.sample((4000,)).mean().item()
    print(f"rate: VI mean {q_mean:.3f}, exact posterior mean {post.mean.item():.3f}")
    assert abs(q_mean - post.mean.item()) < 0.05 * post.mean.item()

    # coin flips with a Beta(2, 2) prior; q = logit-normal
    flips = D.Bernoulli(0.7).sample((60,))
    loc2, log_scale2 = torch.zeros((), requires_grad=True), torch.zeros((), requires_grad=True)
    beta_prior = D.Beta(2.0, 2.0)

    def q_p():
        return LogitNormal(loc2, log_scale2.exp())

    def joint_p(p):
        return beta_prior.log_prob(p) + D.Bernoulli(probs=p[..., None]).log_prob(flips).sum(-1)

    q = fit([loc2, log_scale2], q_p, joint_p)
    post = D.Beta(2.0 + flips.sum(), 2.0 + len(flips) - flips.sum())
    q_mean = q.sample((4000,)).mean().item()
    print(f"coin: VI mean {q_mean:.3f}, exact posterior mean {post.mean.item():.3f}")
    assert abs(q_mean - post.mean.item()) < 0.02
    assert D.kl_divergence(q, LogitNormal(loc2.detach(), log_scale2.exp().detach())).item() < 1e-6

    # category counts with a Dirichlet prior; q over the simplex via StickBreakingTransform
    cats = D.Categorical(probs=torch.tensor([0.5, 0.3, 0.2])).sample((100,))
    alpha = torch.ones(3)
    loc3 = torch.zeros(2, requires_grad=True)
    log_scale3 = torch.full((2,), -1.0, requires_grad=True)

    def q_simplex():
        base = D.Independent(D.Normal(loc3, log_scale3.exp()), 1)
        return D.TransformedDistribution(base, T.StickBreakingTransform())

    def joint_simplex(pi):
        return D.Dirichlet(alpha).log_prob(pi) + torch.log(pi)[..., cats].sum(-1)

    q = fit([loc3, log_scale3], q_simplex, joint_simplex)
    exact = (alpha + torch.bincount(cats, minlength=3)) / (alpha.sum() + len(cats))
    q_mean = q.sample((4000,)).mean(0)
    print(f"simplex: VI mean {q_mean.tolist()}, exact {exact.tolist()}")
    assert torch.allclose(q_mean, exact, atol=0.03)
    assert q.event_shape == (3,) and q.batch_shape == ()
    print("variational inference with transforms OK")


if __name__ == "__main__":
    main()
