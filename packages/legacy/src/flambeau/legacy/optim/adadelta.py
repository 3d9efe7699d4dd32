"""ADADELTA (Torch7's optim.adadelta, after Zeiler 2012)."""

from __future__ import annotations

from ._common import evaluate, setup, weight_decay


def adadelta(opfunc, x, config=None, state=None):
    """One ADADELTA step; returns `(x, [f])`.

    config: rho (0.9), eps (1e-6), learningRate (1), weightDecay (0).
    v = ρv + (1-ρ)g²;  δ = sqrt(a + ε) / sqrt(v + ε) · g;  x -= lr·δ;  a = ρa + (1-ρ)δ².

    >>> from flambeau.legacy import optim
    >>> def opfunc(x):  # f(x) = sum(x²), df/dx = 2x
    ...     return float((x * x).sum()), 2 * x
    >>> x = flambeau.tensor([1.0, -2.0])
    >>> optim.adadelta(opfunc, x)
    (tensor([ 0.9968, -1.9968]), [5.0])
    """
    config, state = setup(config, state)
    rho = config.get("rho", 0.9)
    eps = config.get("eps", 1e-6)
    lr = config.get("learningRate", 1)
    wd = config.get("weightDecay", 0)
    state.setdefault("evalCounter", 0)

    fx, dfdx = evaluate(opfunc, x)
    weight_decay(dfdx, x, wd)
    if "paramVariance" not in state:
        state["paramVariance"] = x.new_zeros(x.shape)
        state["accDelta"] = x.new_zeros(x.shape)
    state["paramVariance"].mul_(rho).addcmul_(dfdx, dfdx, value=1 - rho)
    state["paramStd"] = (state["paramVariance"] + eps).sqrt_()
    state["delta"] = (state["accDelta"] + eps).sqrt_().div_(state["paramStd"]).mul_(dfdx)
    x.add_(state["delta"], alpha=-lr)
    state["accDelta"].mul_(rho).addcmul_(state["delta"], state["delta"], value=1 - rho)
    state["evalCounter"] += 1
    return x, [fx]
