"""Nesterov's accelerated gradient (Torch7's optim.nag, after Sutskever et al. 2013)."""

from __future__ import annotations

from ._common import as_tensor, evaluate, setup, weight_decay


def nag(opfunc, x, config=None, state=None):
    """One NAG step; returns `(x, [f])`. The gradient is taken after moving along the
    momentum vector.

    config: learningRate (1e-3), learningRateDecay (0), weightDecay (0), momentum (0.9,
    must be positive), learningRates (per element).

    >>> from flambeau.legacy import optim
    >>> def opfunc(x):  # f(x) = sum(x²), df/dx = 2x
    ...     return float((x * x).sum()), 2 * x
    >>> x, config = flambeau.tensor([1.0, -2.0]), {"learningRate": 0.1, "momentum": 0.5}
    >>> optim.nag(opfunc, x, config)
    (tensor([ 0.8000, -1.6000]), [5.0])
    >>> optim.nag(opfunc, x, config)[0]  # gradient taken at x + 0.5 * (last step)
    tensor([ 0.5600, -1.1200])
    """
    config, state = setup(config, state)
    lr = config.get("learningRate", 1e-3)
    lrd = config.get("learningRateDecay", 0)
    wd = config.get("weightDecay", 0)
    mom = config.get("momentum", 0.9)
    lrs = config.get("learningRates")
    if mom <= 0:
        raise ValueError("Momentum must be positive for Nesterov Accelerated Gradient")
    state.setdefault("evalCounter", 0)
    nevals = state["evalCounter"]

    if "dfdx" in state:
        x.add_(state["dfdx"], alpha=mom)
    fx, dfdx = evaluate(opfunc, x)
    weight_decay(dfdx, x, wd)
    clr = lr / (1 + nevals * lrd)
    if "dfdx" not in state:
        state["dfdx"] = x.new_zeros(x.shape)
    else:
        state["dfdx"].mul_(mom)
    step = dfdx
    if lrs is not None:
        state["deltaParameters"] = as_tensor(lrs, x) * dfdx
        step = state["deltaParameters"]
    x.add_(step, alpha=-clr)
    state["dfdx"].add_(step, alpha=-clr)
    state["evalCounter"] += 1
    return x, [fx]
