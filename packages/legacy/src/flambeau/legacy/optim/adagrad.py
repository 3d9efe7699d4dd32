"""AdaGrad (Torch7's optim.adagrad)."""

from __future__ import annotations

from ._common import evaluate, setup, weight_decay


def adagrad(opfunc, x, config=None, state=None):
    """One AdaGrad step; returns `(x, [f])`.

    config: learningRate (1e-3), learningRateDecay (0), weightDecay (0).
    v += g²;  x -= clr · g / (sqrt(v) + 1e-10).

    >>> from flambeau.legacy import optim
    >>> def opfunc(x):  # f(x) = sum(x²), df/dx = 2x
    ...     return float((x * x).sum()), 2 * x
    >>> x = flambeau.tensor([1.0, -2.0])
    >>> optim.adagrad(opfunc, x, {"learningRate": 0.1})
    (tensor([ 0.9000, -1.9000]), [5.0])
    """
    config, state = setup(config, state)
    lr = config.get("learningRate", 1e-3)
    lrd = config.get("learningRateDecay", 0)
    wd = config.get("weightDecay", 0)
    state.setdefault("evalCounter", 0)
    nevals = state["evalCounter"]

    fx, dfdx = evaluate(opfunc, x)
    weight_decay(dfdx, x, wd)
    clr = lr / (1 + nevals * lrd)
    if "paramVariance" not in state:
        state["paramVariance"] = x.new_zeros(x.shape)
    state["paramVariance"].addcmul_(dfdx, dfdx)
    state["paramStd"] = state["paramVariance"].sqrt().add_(1e-10)
    x.addcdiv_(dfdx, state["paramStd"], value=-clr)
    state["evalCounter"] += 1
    return x, [fx]
