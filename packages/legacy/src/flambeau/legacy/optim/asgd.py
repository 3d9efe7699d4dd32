"""Averaged SGD (Torch7's optim.asgd, after Bottou)."""

from __future__ import annotations

from ._common import evaluate, setup


def asgd(opfunc, x, config=None, state=None):
    """One ASGD step; returns `(x, [f], ax)` with ax the averaged parameters.

    config: eta0 (1e-4), lambda (1e-4), alpha (0.75), t0 (1e6).
    x ← x·(1 - λ·η_t) - η_t·g;  ax averages x from t0 on;
    η_t = η0 / (1 + λ·η0·t)^α,  μ_t = 1 / max(1, t - t0).

    >>> from flambeau.legacy import optim
    >>> def opfunc(x):  # f(x) = sum(x²), df/dx = 2x
    ...     return float((x * x).sum()), 2 * x
    >>> x = flambeau.tensor([1.0, -2.0])
    >>> optim.asgd(opfunc, x, {"eta0": 0.1, "lambda": 0.0})  # (x, [f], averaged x)
    (tensor([ 0.8000, -1.6000]), [5.0], tensor([ 0.8000, -1.6000]))
    """
    config, state = setup(config, state)
    eta0 = config.get("eta0", 1e-4)
    lam = config.get("lambda", 1e-4)
    alpha = config.get("alpha", 0.75)
    t0 = config.get("t0", 1e6)
    state.setdefault("eta_t", eta0)
    state.setdefault("mu_t", 1)
    state.setdefault("t", 0)

    fx, dfdx = evaluate(opfunc, x)
    x.mul_(1 - lam * state["eta_t"])
    x.add_(dfdx, alpha=-state["eta_t"])
    if "ax" not in state:
        state["ax"] = x.new_zeros(x.shape)
    if state["mu_t"] != 1:
        state["ax"].add_((x - state["ax"]).mul_(state["mu_t"]))
    else:
        state["ax"].copy_(x)
    state["t"] += 1
    state["eta_t"] = eta0 / (1 + lam * eta0 * state["t"]) ** alpha
    state["mu_t"] = 1 / max(1, state["t"] - t0)
    return x, [fx], state["ax"]
