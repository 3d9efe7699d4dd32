"""Second-order training: Newton-CG for logistic regression with Hessian-vector products.

In the style of "Hessian-free" optimization code: the gradient from
torch.autograd.grad(create_graph=True) and Hessian-vector products by differentiating
grad . v again (Pearlmutter's trick), cross-checked against
torch.autograd.functional.hvp, vhp, hessian and jacobian; conjugate gradient solving
H d = -g with those products only (the Hessian is never formed in the solver); a
backtracking (Armijo) line search; float64 throughout. Checks the Hessian against its
closed form X^T diag(p (1 - p)) X / n + lambda I, quadratic convergence (the gradient
norm squares itself from step to step near the optimum), and that the optimum equals
what torch.optim.LBFGS(line_search_fn="strong_wolfe") finds, with a held-out accuracy
well above chance.
"""

import flambeau as torch
from flambeau.autograd.functional import hessian, hvp, jacobian, vhp

LAM = 1e-2


def make_data(n, w_true, generator):
    X = torch.randn(n, len(w_true), generator=generator, dtype=torch.float64)
    logits = X @ w_true + 0.5
    y = torch.bernoulli(torch.sigmoid(logits), generator=generator)
    return X, y


def loss_fn(w, X, y):
    """Mean logistic loss with an L2 penalty; w holds the weights and a bias last."""
    logits = X @ w[:-1] + w[-1]
    return torch.nn.functional.binary_cross_entropy_with_logits(logits, y) + 0.5 * LAM * (
        w[:-1] @ w[:-1]
    )


def pearlmutter_hvp(w, v, X, y):
    w = w.detach().requires_grad_(True)
    (g,) = torch.autograd.grad(loss_fn(w, X, y), w, create_graph=True)
    (hv,) = torch.autograd.grad(g @ v, w)
    return hv


def conjugate_gradient(hvp_fn, b, max_iter=50, tol=1e-10):
    x = torch.zeros_like(b)
    r = b.clone()
    p = r.clone()
    rs = r @ r
    for i in range(max_iter):
        Ap = hvp_fn(p)
        alpha = rs / (p @ Ap)
        x = x + alpha * p
        r = r - alpha * Ap
        rs_new = r @ r
        if rs_new.sqrt() < tol:
            return x, i + 1
        p = r + (rs_new / rs) * p
        rs = rs_new
    return x, max_iter


def newton_cg(X, y, w0, iters=10):
    w = w0.clone()
    history = []
    for it in range(iters):
        wg = w.detach().requires_grad_(True)
        loss = loss_fn(wg, X, y)
        (g,) = torch.autograd.grad(loss, wg)
        history.append(g.norm().item())
        if g.norm() < 1e-9:  # near float64's floor for this loss
            break
        d, cg_iters = conjugate_gradient(lambda v, w=w: pearlmutter_hvp(w, v, X, y), -g)
        step = 1.0
        with torch.no_grad():
            while loss_fn(w + step * d, X, y) > loss + 1e-4 * step * (g @ d):
                step *= 0.5
            w = w + step * d
        print(
            f"Newton iter {it}: loss {loss.item():.6f} |grad| {g.norm().item():.2e} "
            f"CG iters {cg_iters} step {step}"
        )
    return w, history


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    w_true = torch.randn(10, generator=g, dtype=torch.float64)
    X, y = make_data(600, w_true, g)
    X_test, y_test = make_data(400, w_true, g)
    d = X.shape[1]
    w0 = torch.zeros(d + 1, dtype=torch.float64)

    # The Hessian: closed form, autograd.functional.hessian, and its products.
    w_probe = 0.1 * torch.randn(d + 1, dtype=torch.float64)
    H = hessian(lambda w: loss_fn(w, X, y), w_probe)
    Xb = torch.cat([X, torch.ones(len(X), 1, dtype=torch.float64)], dim=1)
    p = torch.sigmoid(Xb @ w_probe)
    closed = Xb.T @ (Xb * (p * (1 - p)).unsqueeze(1)) / len(X)
    closed[:d, :d] += LAM * torch.eye(d, dtype=torch.float64)
    assert torch.allclose(H, closed, atol=1e-12), (H - closed).abs().max()
    assert torch.allclose(H, H.T, atol=1e-14)
    v = torch.randn(d + 1, dtype=torch.float64)
    _, hv = hvp(lambda w: loss_fn(w, X, y), w_probe, v)
    _, vh = vhp(lambda w: loss_fn(w, X, y), w_probe, v)
    assert torch.allclose(hv, H @ v, atol=1e-12) and torch.allclose(vh, v @ H, atol=1e-12)
    assert torch.allclose(pearlmutter_hvp(w_probe, v, X, y), H @ v, atol=1e-12)
    # The Jacobian of the gradient is the Hessian.
    J = jacobian(lambda w: torch.autograd.grad(loss_fn(w, X, y), w, create_graph=True)[0], w_probe)
    assert torch.allclose(J, H, atol=1e-12)
    assert torch.linalg.eigvalsh(H).min() > 0  # convex: CG applies

    w_newton, history = newton_cg(X, y, w0)
    assert history[-1] < 1e-9, history
    # Quadratic convergence: once close, each gradient norm is at most C * previous^2
    # (until the round-off floor, about 1e-11 here).
    tail = [h for h in history if 1e-10 < h < 1e-2]
    assert len(tail) >= 3 and all(b < 50 * a * a for a, b in zip(tail, tail[1:])), history
    assert len(history) <= 8, history

    w_lbfgs = w0.clone().requires_grad_(True)
    optimizer = torch.optim.LBFGS(
        [w_lbfgs],
        lr=1,
        max_iter=200,
        tolerance_grad=1e-12,
        tolerance_change=1e-15,
        history_size=20,
        line_search_fn="strong_wolfe",
    )

    def closure():
        optimizer.zero_grad()
        loss = loss_fn(w_lbfgs, X, y)
        loss.backward()
        return loss

    optimizer.step(closure)
    gap = (w_lbfgs.detach() - w_newton).abs().max().item()
    print(f"max |w_newton - w_lbfgs| = {gap:.2e}")
    assert gap < 1e-6, gap

    with torch.no_grad():
        pred = (X_test @ w_newton[:-1] + w_newton[-1]) > 0
        acc = (pred.double() == y_test).double().mean().item()
    print(f"held-out accuracy {acc:.3f}")
    assert acc > 0.75, acc


if __name__ == "__main__":
    main()
