"""Each optimizer's trajectory against the NumPy implementation of its update rule."""

from __future__ import annotations

import numpy as np
import pytest
import reference as R

import flambeau
from flambeau import optim

SHAPES = [(3, 4), (5,), ()]
STEPS = 7

CASES = [
    ("SGD", R.step_sgd, dict(lr=0.1)),
    ("SGD", R.step_sgd, dict(lr=0.1, momentum=0.9)),
    ("SGD", R.step_sgd, dict(lr=0.1, momentum=0.9, dampening=0.3, weight_decay=0.1)),
    ("SGD", R.step_sgd, dict(lr=0.05, momentum=0.8, nesterov=True, maximize=True)),
    ("Adam", R.step_adam, dict(lr=0.1)),
    ("Adam", R.step_adam, dict(lr=0.1, betas=(0.8, 0.9), weight_decay=0.1, amsgrad=True)),
    ("Adam", R.step_adam, dict(lr=0.05, maximize=True, eps=1e-3)),
    ("AdamW", R.step_adamw, dict(lr=0.1)),
    ("AdamW", R.step_adamw, dict(lr=0.1, weight_decay=0.3, amsgrad=True)),
    ("Adamax", R.step_adamax, dict(lr=0.1)),
    ("Adamax", R.step_adamax, dict(lr=0.1, weight_decay=0.2, maximize=True)),
    ("NAdam", R.step_nadam, dict(lr=0.1)),
    ("NAdam", R.step_nadam, dict(lr=0.1, weight_decay=0.1, momentum_decay=0.01)),
    ("NAdam", R.step_nadam, dict(lr=0.1, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", R.step_radam, dict(lr=0.1)),
    ("RAdam", R.step_radam, dict(lr=0.1, betas=(0.9, 0.6), weight_decay=0.1)),
    (
        "RAdam",
        R.step_radam,
        dict(
            lr=0.1, betas=(0.9, 0.6), weight_decay=0.1, decoupled_weight_decay=True, maximize=True
        ),
    ),
    ("RMSprop", R.step_rmsprop, dict(lr=0.01)),
    ("RMSprop", R.step_rmsprop, dict(lr=0.01, centered=True, weight_decay=0.1)),
    ("RMSprop", R.step_rmsprop, dict(lr=0.01, momentum=0.9, alpha=0.9)),
    ("RMSprop", R.step_rmsprop, dict(lr=0.01, momentum=0.5, centered=True, maximize=True)),
    ("Adagrad", R.step_adagrad, dict(lr=0.1)),
    (
        "Adagrad",
        R.step_adagrad,
        dict(lr=0.1, lr_decay=0.1, initial_accumulator_value=0.5, weight_decay=0.1),
    ),
    ("Adagrad", R.step_adagrad, dict(lr=0.1, maximize=True, eps=1e-3)),
    ("Adadelta", R.step_adadelta, dict()),
    ("Adadelta", R.step_adadelta, dict(lr=0.5, rho=0.8, weight_decay=0.1, maximize=True)),
    ("Rprop", R.step_rprop, dict()),
    ("Rprop", R.step_rprop, dict(lr=0.1, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2))),
    ("Rprop", R.step_rprop, dict(lr=0.05, maximize=True)),
    ("ASGD", R.step_asgd, dict(lr=0.1)),
    ("ASGD", R.step_asgd, dict(lr=0.1, lambd=0.1, alpha=0.5, t0=3, weight_decay=0.1)),
    ("ASGD", R.step_asgd, dict(lr=0.1, t0=2, maximize=True)),
]


def grad_of(x, k):
    """A gradient that depends on x, different per tensor, with sign changes."""
    return (k + 1) * (x - 0.3) + 0.5 * np.sin(3 * x)


def run_numpy(step, opts, xs):
    xs = [x.copy() for x in xs]
    states = [{} for _ in xs]
    for t in range(1, STEPS + 1):
        for k, (x, s) in enumerate(zip(xs, states)):
            step(x, grad_of(x, k), s, t, **opts)
    return xs


def run_flambeau(name, opts, xs, dtype, foreach):
    params = [flambeau.from_numpy(x.copy()).to(dtype).requires_grad_() for x in xs]
    opt = getattr(optim, name)(params, foreach=foreach, **opts)
    for _ in range(STEPS):
        for k, p in enumerate(params):
            x = p.detach().to(flambeau.float64).numpy()
            p.grad = flambeau.from_numpy(np.asarray(grad_of(x, k))).to(dtype)
        opt.step()
    return [p.detach().to(flambeau.float64).numpy() for p in params]


def initial(seed=0):
    rng = np.random.default_rng(seed)
    return [np.asarray(rng.uniform(-1, 1, s)) for s in SHAPES]


@pytest.mark.parametrize("foreach", [None, False], ids=["foreach", "single"])
@pytest.mark.parametrize("name,step,opts", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_trajectory_float64(name, step, opts, foreach):
    xs = initial()
    expected = run_numpy(step, opts, xs)
    got = run_flambeau(name, opts, xs, flambeau.float64, foreach)
    for e, g in zip(expected, got):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name,step,opts", CASES[::3], ids=[c[0] for c in CASES[::3]])
def test_trajectory_float32(name, step, opts):
    xs = initial(1)
    expected = run_numpy(step, opts, xs)
    got = run_flambeau(name, opts, xs, flambeau.float32, None)
    for e, g in zip(expected, got):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-4)


def test_noncontiguous_parameter_follows_the_same_rule():
    base = np.random.default_rng(3).uniform(-1, 1, (4, 6))
    expected = run_numpy(R.step_adam, dict(lr=0.1), [base.T.copy()])
    p = flambeau.from_numpy(base.copy()).t().detach().requires_grad_()
    assert not p.is_contiguous()
    opt = optim.Adam([p], lr=0.1)
    for _ in range(STEPS):
        p.grad = flambeau.from_numpy(grad_of(p.detach().numpy(), 0))
        opt.step()
    np.testing.assert_allclose(p.detach().numpy(), expected[0], rtol=1e-6, atol=1e-9)


def test_parameters_without_grad_are_skipped():
    a = flambeau.ones(3, requires_grad=True)
    b = flambeau.ones(3, requires_grad=True)
    opt = optim.Adam([a, b], lr=0.1)
    a.grad = flambeau.ones(3)
    opt.step()
    assert b.detach().numpy().tolist() == [1.0, 1.0, 1.0]
    assert b not in opt.state or not opt.state[b]
    assert (a.detach().numpy() < 1).all()


def test_training_with_backward_reduces_the_loss():
    rng = np.random.default_rng(0)
    x = flambeau.from_numpy(rng.normal(size=(64, 3)))
    w_true = flambeau.from_numpy(np.array([[1.0], [-2.0], [0.5]]))
    y = x @ w_true
    w = flambeau.zeros(3, 1, dtype=flambeau.float64, requires_grad=True)
    b = flambeau.zeros(1, dtype=flambeau.float64, requires_grad=True)
    opt = optim.SGD([w, b], lr=0.1, momentum=0.9)
    for _ in range(300):
        opt.zero_grad()
        loss = ((x @ w + b - y) ** 2).mean()
        loss.backward()
        opt.step()
    np.testing.assert_allclose(w.detach().numpy(), w_true.numpy(), atol=1e-3)
