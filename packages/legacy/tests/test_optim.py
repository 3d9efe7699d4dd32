"""legacy.optim on the Rosenbrock function from (1.5, 1.5), step by step against NumPy
transcriptions of Torch7's update rules; sgd against flambeau.optim.SGD; the contract."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch7_reference as ref

import flambeau
from flambeau.legacy import optim

D = flambeau.float64


def opfunc(x):
    a, b = float(x[0]), float(x[1])
    f = (1 - a) ** 2 + 100 * (b - a * a) ** 2
    g = flambeau.tensor([-2 * (1 - a) - 400 * a * (b - a * a), 200 * (b - a * a)], dtype=D)
    return f, g


CASES = [
    ("sgd", {"learningRate": 1e-4}),
    ("sgd", {"learningRate": 1e-4, "momentum": 0.9, "dampening": 0}),
    ("sgd", {"learningRate": 1e-4, "momentum": 0.9, "dampening": 0, "nesterov": True}),
    ("sgd", {"learningRate": 2e-4, "learningRateDecay": 1e-2, "weightDecay": 0.1,
             "momentum": 0.5}),
    ("sgd", {"learningRate": 1e-4, "weightDecays": [0.1, 0.2], "learningRates": [1.0, 0.5]}),
    ("asgd", {"eta0": 1e-4}),
    ("asgd", {"eta0": 1e-4, "lambda": 1e-2, "alpha": 0.6, "t0": 20}),
    ("adagrad", {"learningRate": 1e-1}),
    ("adagrad", {"learningRate": 1e-1, "learningRateDecay": 1e-2, "weightDecay": 0.05}),
    ("adadelta", {}),
    ("adadelta", {"rho": 0.95, "eps": 1e-4, "learningRate": 2.0, "weightDecay": 0.01}),
    ("adam", {"learningRate": 1e-2}),
    ("adam", {"learningRate": 1e-2, "learningRateDecay": 1e-3, "beta1": 0.8, "beta2": 0.9,
              "epsilon": 1e-4, "weightDecay": 0.1}),
    ("adamax", {"learningRate": 1e-2}),
    ("adamax", {"learningRate": 1e-2, "beta1": 0.8, "beta2": 0.99, "weightDecay": 0.1}),
    ("rmsprop", {"learningRate": 1e-3}),
    ("rmsprop", {"learningRate": 1e-3, "alpha": 0.9, "epsilon": 1e-4, "initialMean": 0.5,
                 "weightDecay": 0.1}),
    ("rprop", {"stepsize": 1e-3}),
    ("rprop", {"stepsize": 1e-3, "etaplus": 1.5, "etaminus": 0.3, "stepsizemax": 0.1,
               "niter": 3}),
    ("nag", {"learningRate": 1e-4, "momentum": 0.9}),
    ("nag", {"learningRate": 1e-4, "momentum": 0.5, "learningRateDecay": 1e-2,
             "weightDecay": 0.1, "learningRates": [1.0, 0.5]}),
    ("cg", {}),
    ("cg", {"maxIter": 5, "rho": 0.05, "sig": 0.3}),
    ("lbfgs", {"learningRate": 1e-3}),
    ("lbfgs", {"learningRate": 5e-4, "maxIter": 4, "nCorrection": 3}),
]  # fmt: skip


def _tensors(cfg):
    out = dict(cfg)
    for k in ("weightDecays", "learningRates"):
        if k in out:
            out[k] = flambeau.tensor(out[k], dtype=D)
    return out


def _arrays(cfg):
    out = dict(cfg)
    for k in ("weightDecays", "learningRates"):
        if k in out:
            out[k] = np.array(out[k])
    return out


@pytest.mark.parametrize("name,config", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_rosenbrock_trajectory(name, config):
    algo, reference = getattr(optim, name), getattr(ref, name)
    x = flambeau.tensor([1.5, 1.5], dtype=D)
    xr = np.array([1.5, 1.5])
    cfg, st = _tensors(config), {}
    cfg_r, st_r = _arrays(config), {}
    for step in range(100):
        out = algo(opfunc, x, cfg, st)
        assert out[0] is x  # updated in place and returned
        xr = reference(xr, cfg_r, st_r)
        got = np.array(x.tolist())
        assert np.allclose(got, xr, rtol=1e-12, atol=1e-14), (step, got, xr)
    f_end = opfunc(x)[0]
    assert math.isfinite(f_end)
    if name not in ("asgd", "sgd", "nag"):  # the slow ones barely move in 100 steps
        assert f_end < opfunc(flambeau.tensor([1.5, 1.5], dtype=D))[0]


def test_state_defaults_to_config_and_return_values():
    x = flambeau.tensor([1.5, 1.5], dtype=D)
    cfg = {"learningRate": 1e-4, "momentum": 0.9}
    x2, fs = optim.sgd(opfunc, x, cfg)
    assert x2 is x and fs == [opfunc(flambeau.tensor([1.5, 1.5], dtype=D))[0]]
    assert cfg["evalCounter"] == 1 and "dfdx" in cfg
    # Torch7: the first momentum buffer is the gradient itself.
    assert flambeau.equal(cfg["dfdx"], opfunc(flambeau.tensor([1.5, 1.5], dtype=D))[1])
    x = flambeau.tensor([1.5, 1.5], dtype=D)
    _, hist, evals = optim.lbfgs(opfunc, x, {"maxIter": 5, "learningRate": 1e-3})
    assert len(hist) == 5 and evals == 5 and hist[-1] < hist[0]
    _, ax = optim.asgd(opfunc, x, {})[1:]
    assert ax.shape == x.shape


def test_contradictory_settings_raise():
    x = flambeau.tensor([1.5, 1.5], dtype=D)
    with pytest.raises(ValueError):
        optim.sgd(opfunc, x, {"nesterov": True})
    with pytest.raises(ValueError):
        optim.sgd(opfunc, x, {"nesterov": True, "momentum": 0.9})  # dampening = momentum
    with pytest.raises(ValueError):
        optim.sgd(opfunc, x, {"weightDecay": 0.1, "weightDecays": flambeau.ones(2, dtype=D)})
    with pytest.raises(ValueError):
        optim.nag(opfunc, x, {"momentum": 0})


def test_lbfgs_with_strong_wolfe_line_search():
    x = flambeau.tensor([1.5, 1.5], dtype=D)
    calls = []

    def search(*args):
        f0, gtd0 = args[4], args[6]
        x_before = args[1].clone()
        f, g, xs, t, n = optim.lswolfe(*args)
        d = args[3]
        # Strong Wolfe conditions at the accepted step.
        assert f <= f0 + 1e-4 * t * gtd0 + 1e-12
        assert abs(float(g.dot(d))) <= -0.9 * gtd0 + 1e-12
        assert flambeau.allclose(xs, x_before + t * d)
        calls.append(n)
        return f, g, xs, t, n

    _, hist, evals = optim.lbfgs(
        opfunc, x, {"maxIter": 100, "maxEval": 200, "lineSearch": search, "tolFun": 1e-9}
    )
    assert flambeau.allclose(x, flambeau.tensor([1.0, 1.0], dtype=D), atol=1e-5)
    assert hist[-1] < 1e-10 and evals == 1 + sum(calls)


def test_polyinterp_finds_the_cubic_minimum():
    # f(t) = (t - 1)^2 (t + 2) on [0, 3]: the local minimum is at t = 1.
    f = lambda t: (t - 1) ** 2 * (t + 2)  # noqa: E731
    df = lambda t: 2 * (t - 1) * (t + 2) + (t - 1) ** 2  # noqa: E731
    pts = [(0.0, f(0.0), df(0.0)), (3.0, f(3.0), df(3.0))]
    assert optim.polyinterp(pts) == pytest.approx(1.0)
    assert optim.polyinterp(pts, 0.0, 3.0) == pytest.approx(1.0)
    assert optim.polyinterp(pts, 1.5, 2.5) == pytest.approx(1.5)  # bounded: best endpoint


def test_sgd_matches_flambeau_optim_sgd():
    fo = pytest.importorskip("flambeau.optim")
    flambeau.manual_seed(0)
    w0 = flambeau.randn(5, dtype=D)
    target = flambeau.randn(5, dtype=D)
    for cfg, kw in [
        ({"learningRate": 0.01}, {"lr": 0.01}),
        ({"learningRate": 0.01, "momentum": 0.9, "dampening": 0},
         {"lr": 0.01, "momentum": 0.9}),
        ({"learningRate": 0.01, "momentum": 0.9, "dampening": 0, "nesterov": True,
          "weightDecay": 0.01},
         {"lr": 0.01, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}),
        ({"learningRate": 0.05, "momentum": 0.5, "dampening": 0.3},
         {"lr": 0.05, "momentum": 0.5, "dampening": 0.3}),
    ]:  # fmt: skip
        x = w0.clone()

        def feval(x):
            return float(((x - target) ** 4).sum()), 4 * (x - target) ** 3

        state = {}
        for _ in range(20):
            optim.sgd(feval, x, cfg, state)
        assert bool(flambeau.isfinite(x).all())
        w = w0.clone().requires_grad_()
        opt = fo.SGD([w], **kw)
        for _ in range(20):
            opt.zero_grad()
            ((w - target) ** 4).sum().backward()
            opt.step()
        assert flambeau.allclose(x, w.detach(), rtol=1e-12, atol=1e-14), (cfg, x, w)
