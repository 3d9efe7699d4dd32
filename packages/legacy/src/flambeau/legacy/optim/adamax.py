"""AdaMax (Torch7's optim.adamax)."""

from __future__ import annotations

import flambeau

from ._common import evaluate, setup, weight_decay


def adamax(opfunc, x, config=None, state=None):
    """One AdaMax step; returns `(x, [f])`.

    config: learningRate (2e-3), beta1 (0.9), beta2 (0.999), epsilon (1e-38), weightDecay (0).
    ``m = β1·m + (1-β1)g;  u = max(β2·u, |g| + ε);  x -= lr/(1-β1^t) · m/u``.

    >>> from flambeau.legacy import optim
    >>> def opfunc(x):  # f(x) = sum(x²), df/dx = 2x
    ...     return float((x * x).sum()), 2 * x
    >>> x = flambeau.tensor([1.0, -2.0])
    >>> optim.adamax(opfunc, x, {"learningRate": 0.1})
    (tensor([ 0.9000, -1.9000]), [5.0])
    """
    config, state = setup(config, state)
    lr = config.get("learningRate", 0.002)
    beta1 = config.get("beta1", 0.9)
    beta2 = config.get("beta2", 0.999)
    epsilon = config.get("epsilon", 1e-38)
    wd = config.get("weightDecay", 0)

    fx, dfdx = evaluate(opfunc, x)
    weight_decay(dfdx, x, wd)
    state.setdefault("t", 0)
    if "m" not in state:
        state["m"] = x.new_zeros(x.shape)
        state["u"] = x.new_zeros(x.shape)
    state["t"] += 1
    state["m"].mul_(beta1).add_(dfdx, alpha=1 - beta1)
    state["u"] = flambeau.maximum(state["u"] * beta2, dfdx.abs() + epsilon)
    step = lr / (1 - beta1 ** state["t"])
    x.addcdiv_(state["m"], state["u"], value=-step)
    return x, [fx]
