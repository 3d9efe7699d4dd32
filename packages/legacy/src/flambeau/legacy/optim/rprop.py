"""Resilient backpropagation (Torch7's optim.rprop)."""

from __future__ import annotations

import flambeau

from ._common import evaluate, setup


def rprop(opfunc, x, config=None, state=None):
    """`niter` Rprop steps; returns `(x, [f per step])`.

    config: stepsize (0.1), etaplus (1.2), etaminus (0.5), stepsizemax (50),
    stepsizemin (1e-6), niter (1). Per element: the step grows by etaplus while the
    gradient keeps its sign, shrinks by etaminus when it flips (and that step is skipped).

    >>> from flambeau.legacy import optim
    >>> def opfunc(x):  # f(x) = sum(x²), df/dx = 2x
    ...     return float((x * x).sum()), 2 * x
    >>> x = flambeau.tensor([1.0, -2.0])
    >>> x, fs = optim.rprop(opfunc, x, {"niter": 2})  # steps of 0.1, then 0.1 * 1.2
    >>> x
    tensor([ 0.7800, -1.7800])
    """
    config, state = setup(config, state)
    stepsize = config.get("stepsize", 0.1)
    etaplus = config.get("etaplus", 1.2)
    etaminus = config.get("etaminus", 0.5)
    stepsizemax = config.get("stepsizemax", 50.0)
    stepsizemin = config.get("stepsizemin", 1e-6)
    niter = config.get("niter", 1)

    hfx = []
    for _ in range(niter):
        fx, dfdx = evaluate(opfunc, x)
        if "delta" not in state:
            state["delta"] = x.new_zeros(x.shape)
            state["stepsize"] = x.new_full(x.shape, stepsize)
        sign = (dfdx * state["delta"]).sign()
        # Factors built in x's dtype (a Python float would round through float32).
        factor = flambeau.where(
            sign > 0,
            flambeau.full_like(x, etaplus),
            flambeau.where(sign < 0, flambeau.full_like(x, etaminus), flambeau.ones_like(x)),
        )
        state["stepsize"].mul_(factor).clamp_(stepsizemin, stepsizemax)
        dfdx = flambeau.where(sign < 0, flambeau.zeros_like(dfdx), dfdx)
        x.addcmul_(dfdx.sign(), state["stepsize"], value=-1)
        state["delta"].copy_(dfdx)
        hfx.append(fx)
    return x, hfx
