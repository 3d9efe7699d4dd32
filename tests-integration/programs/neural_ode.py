"""A neural ODE fitted to trajectories with a hand-written Runge-Kutta 4 integrator.

In the style of the torchdiffeq "ode_demo" without torchdiffeq: a fixed-step RK4
odeint(func, y0, t) that backpropagates through every step, an ODEFunc nn.Module
with a forward(t, y), trajectories of a damped spiral dy/dt = A y sampled at
torch.linspace times, random time windows as mini-batches, RMSprop, and an MLP vector
field. Checks RK4's fourth-order accuracy against the exact solution
torch.linalg.matrix_exp(A t) y0, that a linear ODEFunc recovers A itself, that the
MLP field's extrapolated trajectory stays close, and that gradients through the
solver match finite differences.
"""

import flambeau as torch
import flambeau.nn as nn

TRUE_A = torch.tensor([[-0.1, 2.0], [-2.0, -0.1]])


def rk4_step(func, t, y, dt):
    k1 = func(t, y)
    k2 = func(t + dt / 2, y + dt / 2 * k1)
    k3 = func(t + dt / 2, y + dt / 2 * k2)
    k4 = func(t + dt, y + dt * k3)
    return y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def odeint(func, y0, t, substeps=4):
    ys = [y0]
    y = y0
    for i in range(len(t) - 1):
        dt = (t[i + 1] - t[i]) / substeps
        for k in range(substeps):
            y = rk4_step(func, t[i] + k * dt, y, dt)
        ys.append(y)
    return torch.stack(ys)


class LinearODE(nn.Module):
    def __init__(self):
        super().__init__()
        self.A = nn.Linear(2, 2, bias=False)

    def forward(self, t, y):
        return self.A(y)


class ODEFunc(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, 50), nn.Tanh(), nn.Linear(50, 2))
        for m in self.net.modules():
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, mean=0, std=0.1)
                nn.init.constant_(m.bias, val=0)

    def forward(self, t, y):
        return self.net(y)


def exact(y0, t, A=TRUE_A):
    return torch.stack([y0 @ torch.linalg.matrix_exp(A * ti).T for ti in t])


def get_batch(true_y, t, batch_time, batch_size):
    s = torch.randint(0, len(t) - batch_time, (batch_size,))
    batch_y0 = true_y[s]  # (M, D)
    batch_t = t[:batch_time]
    batch_y = torch.stack([true_y[s + i] for i in range(batch_time)], dim=0)  # (T, M, D)
    return batch_y0, batch_t, batch_y


def fit(func, true_y, t, iters, lr):
    optimizer = torch.optim.RMSprop(func.parameters(), lr=lr)
    for _ in range(iters):
        batch_y0, batch_t, batch_y = get_batch(true_y, t, batch_time=10, batch_size=20)
        pred_y = odeint(func, batch_y0, batch_t, substeps=1)
        loss = torch.mean(torch.abs(pred_y - batch_y))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()


def main():
    torch.manual_seed(0)
    y0 = torch.tensor([[2.0, 0.0]])
    t = torch.linspace(0.0, 10.0, 200)
    true_y = exact(y0, t).squeeze(1)  # (200, 2)

    # RK4 is fourth order: halving the step divides the error by about 16.
    A64 = TRUE_A.double()

    class TrueField(nn.Module):
        def forward(self, t, y):
            return y @ A64.T

    reference = exact(y0.double(), t.double(), A64).squeeze(1)
    errors = []
    for substeps in (1, 2):
        with torch.no_grad():
            approx = odeint(TrueField(), y0.double(), t.double(), substeps=substeps)
        errors.append((approx.squeeze(1) - reference).abs().max().item())
    ratio = errors[0] / errors[1]
    print(f"RK4 max error: {errors[0]:.2e} (h), {errors[1]:.2e} (h/2), ratio {ratio:.1f}")
    assert 12 < ratio < 20, ratio

    # A linear vector field learns the matrix itself.
    linear = LinearODE()
    loss = fit(linear, true_y, t, iters=300, lr=1e-2)
    learned = linear.A.weight.detach()
    print(f"learned A {learned.tolist()}, loss {loss:.4f}")
    assert torch.allclose(learned, TRUE_A, atol=0.05), learned

    # Gradients through the solver match central finite differences.
    probe = LinearODE()
    with torch.no_grad():
        probe.A.weight.copy_(torch.tensor([[0.0, 1.5], [-1.5, 0.0]]))
    probe.double()
    t_short = torch.linspace(0, 1, 6, dtype=torch.float64)

    def objective():
        return odeint(probe, y0.double(), t_short).pow(2).sum()

    objective().backward()
    analytic = probe.A.weight.grad.clone()
    numeric = torch.zeros_like(analytic)
    eps = 1e-6
    with torch.no_grad():
        for i in range(2):
            for j in range(2):
                probe.A.weight[i, j] += eps
                up = objective()
                probe.A.weight[i, j] -= 2 * eps
                down = objective()
                probe.A.weight[i, j] += eps
                numeric[i, j] = (up - down) / (2 * eps)
    assert torch.allclose(analytic, numeric, rtol=1e-6, atol=1e-8), (analytic, numeric)

    # An MLP vector field, trained on the first 150 time points, extrapolates.
    func = ODEFunc()
    with torch.no_grad():
        before = (odeint(func, y0, t).squeeze(1) - true_y).abs().mean().item()
    train_t, train_y = t[:150], true_y[:150]
    for phase, lr in enumerate((1e-2, 3e-3)):
        loss = fit(func, train_y, train_t, iters=400, lr=lr)
        print(f"phase {phase}: batch loss {loss:.4f}")
    with torch.no_grad():
        pred = odeint(func, y0, t).squeeze(1)
    fit_err = (pred[:150] - true_y[:150]).abs().mean().item()
    extrapolation_err = (pred[150:] - true_y[150:]).abs().mean().item()
    print(
        f"mean abs error: untrained {before:.3f}, fit {fit_err:.3f}, "
        f"extrapolation {extrapolation_err:.3f}"
    )
    assert fit_err < 0.12 and fit_err < before / 5, (before, fit_err)
    assert extrapolation_err < 0.3, extrapolation_err


if __name__ == "__main__":
    main()
