"""LBFGS on the Rosenbrock function, with and without the strong-Wolfe line search."""

from __future__ import annotations

import numpy as np
import pytest

import flambeau
from flambeau import optim


def rosenbrock(x):
    return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2


def minimize(steps, **opts):
    x = flambeau.tensor([-1.5, 2.0], dtype=flambeau.float64, requires_grad=True)
    opt = optim.LBFGS([x], **opts)
    evals = []

    def closure():
        opt.zero_grad()
        loss = rosenbrock(x)
        loss.backward()
        evals.append(loss.item())
        return loss

    for _ in range(steps):
        opt.step(closure)
    return x.detach().numpy(), opt, evals


def test_strong_wolfe_converges_on_rosenbrock():
    x, opt, evals = minimize(10, line_search_fn="strong_wolfe", max_iter=50)
    np.testing.assert_allclose(x, [1.0, 1.0], atol=1e-5)
    assert evals[-1] < 1e-9
    state = opt.state[opt.param_groups[0]["params"][0]]
    assert state["n_iter"] > 0 and state["func_evals"] >= state["n_iter"]


def test_fixed_step_converges_on_rosenbrock():
    x, _, evals = minimize(100, lr=0.5, history_size=10)
    np.testing.assert_allclose(x, [1.0, 1.0], atol=1e-4)
    assert evals[-1] < evals[0]


def test_max_eval_limits_closure_calls():
    _, _, evals = minimize(1, max_iter=100, max_eval=7, line_search_fn="strong_wolfe")
    assert len(evals) <= 7 + 25  # the line search may finish its iteration


def test_tolerance_grad_stops_at_a_minimum():
    x = flambeau.tensor([1.0, 1.0], dtype=flambeau.float64, requires_grad=True)
    opt = optim.LBFGS([x])
    calls = []

    def closure():
        opt.zero_grad()
        loss = rosenbrock(x)
        loss.backward()
        calls.append(1)
        return loss

    opt.step(closure)
    assert len(calls) == 1


def test_lbfgs_errors():
    x = flambeau.zeros(2, requires_grad=True)
    y = flambeau.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match="per-parameter options"):
        optim.LBFGS([{"params": [x]}, {"params": [y]}])
    with pytest.raises(RuntimeError, match="strong_wolfe"):
        optim.LBFGS([x], line_search_fn="armijo")
