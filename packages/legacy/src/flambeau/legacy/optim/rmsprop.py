"""RMSprop (Torch7's optim.rmsprop)."""

from __future__ import annotations

from ._common import evaluate, setup, weight_decay


def rmsprop(opfunc, x, config=None, state=None):
    """One RMSprop step; returns `(x, [f])`.

    config: learningRate (1e-2), alpha (0.99), epsilon (1e-8), weightDecay (0),
    initialMean (0: the starting value of the mean square).
    m = α·m + (1-α)g²;  x -= lr · g / (sqrt(m) + ε).

    >>> from flambeau.legacy import optim
    >>> def opfunc(x):  # f(x) = sum(x²), df/dx = 2x
    ...     return float((x * x).sum()), 2 * x
    >>> x = flambeau.tensor([1.0, -2.0])
    >>> optim.rmsprop(opfunc, x)
    (tensor([ 0.9000, -1.9000]), [5.0])
    """
    config, state = setup(config, state)
    lr = config.get("learningRate", 1e-2)
    alpha = config.get("alpha", 0.99)
    epsilon = config.get("epsilon", 1e-8)
    wd = config.get("weightDecay", 0)
    mfill = config.get("initialMean", 0)

    fx, dfdx = evaluate(opfunc, x)
    weight_decay(dfdx, x, wd)
    if "m" not in state:
        state["m"] = x.new_full(x.shape, mfill)
    state["m"].mul_(alpha).addcmul_(dfdx, dfdx, value=1 - alpha)
    state["tmp"] = state["m"].sqrt().add_(epsilon)
    x.addcdiv_(dfdx, state["tmp"], value=-lr)
    return x, [fx]
