"""Nonlinear least squares by Levenberg-Marquardt with torch.func transforms.

In the style of curve-fitting code built on functorch: a damped-oscillation model
y = a exp(-b t) cos(w t + phi) + c is fitted to noisy data. The residual Jacobian
comes from torch.func.jacfwd (checked against jacrev, torch.autograd.functional.jacobian
and finite differences), Gauss-Newton products J^T J v from torch.func.jvp and vjp,
torch.func.linearize gives the tangent map at a point, and torch.func.hessian of
the loss is compared with J^T J + the residual curvature term. A batch of
independent fits from different starting points runs at once with
vmap(..., chunk_size=...); vmap(randomness="different") draws a per-fit jitter.
Checks the recovered parameters against the ground truth.
"""

import flambeau as torch
from flambeau.func import hessian, jacfwd, jacrev, jvp, linearize, vjp, vmap

torch.set_default_dtype(torch.float64)
TRUE = torch.tensor([2.0, 0.3, 3.0, 0.5, -0.4])  # a, b, w, phi, c


def model(theta, t):
    a, b, w, phi, c = theta.unbind(-1)
    return a * torch.exp(-b * t) * torch.cos(w * t + phi) + c


def make_residuals(t, y):
    def residuals(theta):
        return model(theta, t) - y

    return residuals


def check_derivatives(res, theta):
    J_fwd = jacfwd(res)(theta)
    J_rev = jacrev(res)(theta)
    J_ag = torch.autograd.functional.jacobian(res, theta)
    assert torch.allclose(J_fwd, J_rev) and torch.allclose(J_fwd, J_ag)
    eps = 1e-6
    fd = torch.stack(
        [(res(theta + eps * e) - res(theta - eps * e)) / (2 * eps) for e in torch.eye(5)], 1
    )
    assert torch.allclose(J_fwd, fd, atol=1e-6)

    v = torch.tensor([0.1, -0.2, 0.3, 0.05, 1.0])
    r, Jv = jvp(res, (theta,), (v,))
    assert torch.allclose(Jv, J_fwd @ v) and torch.allclose(r, res(theta))
    r2, pullback = vjp(res, theta)
    (JtJv,) = pullback(Jv)
    assert torch.allclose(JtJv, J_fwd.T @ J_fwd @ v)
    r3, tangent = linearize(res, theta)
    assert torch.allclose(tangent(v), Jv) and torch.allclose(r3, r)

    # Hessian of 0.5 |r|^2 = J^T J + sum_i r_i H_i
    loss = lambda th: 0.5 * res(th).pow(2).sum()  # noqa: E731
    H = hessian(loss)(theta)
    second = hessian(lambda th: (r.detach() * res(th)).sum())(theta)  # sum_i r_i H_i
    assert torch.allclose(H, J_fwd.T @ J_fwd + second, atol=1e-8)
    assert torch.allclose(H, H.T)


def lm_step(res, theta, lam):
    r = res(theta)
    J = jacfwd(res)(theta)
    A = J.T @ J
    A = A + lam * torch.diag(torch.diagonal(A))
    delta = torch.linalg.solve(A, -(J.T @ r))
    return delta, 0.5 * r.pow(2).sum()


def levenberg_marquardt(res, theta, iters=25):
    lam = 1e-2
    loss = 0.5 * res(theta).pow(2).sum()
    for _ in range(iters):
        delta, loss = lm_step(res, theta, lam)
        new_loss = 0.5 * res(theta + delta).pow(2).sum()
        if new_loss < loss:
            theta, lam = theta + delta, max(lam / 3, 1e-9)
        else:
            lam = min(lam * 4, 1e6)
    return theta, 0.5 * res(theta).pow(2).sum()


def fixed_lm(res, theta, iters=15, lam=1e-1):
    """A fixed damping schedule: branch-free, so vmap can batch it."""
    for _ in range(iters):
        r = res(theta)
        J = jacfwd(res)(theta)
        A = J.T @ J + lam * torch.eye(5)
        theta = theta + torch.linalg.solve(A, -(J.T @ r))
    return theta


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    t = torch.linspace(0, 10, 80)
    y = model(TRUE, t) + 0.05 * torch.randn(80, generator=g)
    res = make_residuals(t, y)

    start = torch.tensor([1.5, 0.2, 2.8, 0.0, 0.0])
    check_derivatives(res, start)

    theta, loss = levenberg_marquardt(res, start)
    print(f"LM: loss {loss.item():.5f}, theta {[round(v, 3) for v in theta.tolist()]}")
    assert torch.allclose(theta, TRUE, atol=0.05), theta
    # at the optimum the gradient J^T r vanishes
    grad = jacfwd(res)(theta).T @ res(theta)
    assert grad.abs().max() < 1e-6, grad

    # many fits at once: starting points jittered per fit by vmap's randomness
    def jittered(base):
        return base + 0.1 * torch.randn(5)

    starts = vmap(jittered, randomness="different")(start.expand(4, 5))
    assert starts.shape == (4, 5) and not torch.allclose(starts[0], starts[1])
    same = vmap(jittered, randomness="same")(start.expand(4, 5))
    assert torch.allclose(same[0], same[1])
    try:
        vmap(jittered)(start.expand(2, 5))
    except RuntimeError as e:
        assert "randomness" in str(e), e
    else:
        raise AssertionError("vmap's default randomness='error' should refuse torch.randn")

    fits = vmap(lambda s: fixed_lm(res, s), chunk_size=2)(starts)
    losses = vmap(lambda th: 0.5 * res(th).pow(2).sum())(fits)
    print(f"batched fits: losses {[round(v, 4) for v in losses.tolist()]}")
    assert (losses < loss + 1e-3).float().mean() >= 0.75, losses
    best = fits[losses.argmin()]
    assert torch.allclose(best, theta, atol=1e-3)
    print("levenberg marquardt func OK")


if __name__ == "__main__":
    main()
