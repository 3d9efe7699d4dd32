"""Stochastic gradient descent (Torch7's optim.sgd)."""

from __future__ import annotations

from ._common import as_tensor, evaluate, setup


def sgd(opfunc, x, config=None, state=None):
    """One step of SGD on the flat tensor x (updated in place); returns `(x, [f(x_before)])`.

    config: learningRate (1e-3), learningRateDecay (0): clr = lr / (1 + evalCounter·decay),
    weightDecay (0) or weightDecays (per element), momentum (0), dampening (= momentum),
    nesterov (False), learningRates (per element). The first momentum step uses the
    gradient itself as the buffer (Torch7).

    >>> from flambeau.legacy import optim
    >>> def opfunc(x):  # f(x) = sum(x²), df/dx = 2x
    ...     return float((x * x).sum()), 2 * x
    >>> x = flambeau.tensor([1.0, -2.0])
    >>> optim.sgd(opfunc, x, {"learningRate": 0.1})
    (tensor([ 0.8000, -1.6000]), [5.0])
    """
    config, state = setup(config, state)
    lr = config.get("learningRate", 1e-3)
    lrd = config.get("learningRateDecay", 0)
    wd = config.get("weightDecay", 0)
    mom = config.get("momentum", 0)
    damp = config.get("dampening", mom)
    nesterov = config.get("nesterov", False)
    lrs = config.get("learningRates")
    wds = config.get("weightDecays")
    if nesterov and (mom <= 0 or damp != 0):
        raise ValueError("Nesterov momentum requires a momentum and zero dampening")
    if wd != 0 and wds is not None:
        raise ValueError("only one of weightDecay and weightDecays can be specified")
    state.setdefault("evalCounter", 0)
    nevals = state["evalCounter"]

    fx, dfdx = evaluate(opfunc, x)
    if wd != 0:
        dfdx.add_(x, alpha=wd)
    elif wds is not None:
        state["decayParameters"] = as_tensor(wds, x) * x
        dfdx.add_(state["decayParameters"])

    if mom != 0:
        if "dfdx" not in state:
            state["dfdx"] = dfdx.clone()
        else:
            state["dfdx"].mul_(mom).add_(dfdx, alpha=1 - damp)
        if nesterov:
            dfdx.add_(state["dfdx"], alpha=mom)
        else:
            dfdx = state["dfdx"]

    clr = lr / (1 + nevals * lrd)
    if lrs is not None:
        state["deltaParameters"] = as_tensor(lrs, x) * dfdx
        x.add_(state["deltaParameters"], alpha=-clr)
    else:
        x.add_(dfdx, alpha=-clr)
    state["evalCounter"] += 1
    return x, [fx]
