"""Adam (Torch7's optim.adam; ε is added to sqrt(v) before the bias correction)."""

from __future__ import annotations

import math

from ._common import evaluate, setup, weight_decay


def adam(opfunc, x, config=None, state=None):
    """One Adam step; returns `(x, [f])`.

    config: learningRate (1e-3), learningRateDecay (0), beta1 (0.9), beta2 (0.999),
    epsilon (1e-8), weightDecay (0).
    m = β1·m + (1-β1)g;  v = β2·v + (1-β2)g²;  x -= clr·sqrt(1-β2^t)/(1-β1^t) · m/(sqrt(v)+ε).

    >>> from flambeau.legacy import optim
    >>> def opfunc(x):  # f(x) = sum(x²), df/dx = 2x
    ...     return float((x * x).sum()), 2 * x
    >>> x = flambeau.tensor([1.0, -2.0])
    >>> optim.adam(opfunc, x, {"learningRate": 0.1})
    (tensor([ 0.9000, -1.9000]), [5.0])
    """
    config, state = setup(config, state)
    lr = config.get("learningRate", 1e-3)
    lrd = config.get("learningRateDecay", 0)
    beta1 = config.get("beta1", 0.9)
    beta2 = config.get("beta2", 0.999)
    epsilon = config.get("epsilon", 1e-8)
    wd = config.get("weightDecay", 0)

    fx, dfdx = evaluate(opfunc, x)
    weight_decay(dfdx, x, wd)
    state.setdefault("t", 0)
    if "m" not in state:
        state["m"] = x.new_zeros(x.shape)
        state["v"] = x.new_zeros(x.shape)
    clr = lr / (1 + state["t"] * lrd)
    state["t"] += 1
    t = state["t"]
    state["m"].mul_(beta1).add_(dfdx, alpha=1 - beta1)
    state["v"].mul_(beta2).addcmul_(dfdx, dfdx, value=1 - beta2)
    state["denom"] = state["v"].sqrt().add_(epsilon)
    step = clr * math.sqrt(1 - beta2**t) / (1 - beta1**t)
    x.addcdiv_(state["m"], state["denom"], value=-step)
    return x, [fx]
