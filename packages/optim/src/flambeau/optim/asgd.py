"""Averaged stochastic gradient descent (Polyak & Juditsky, 1992)."""

from __future__ import annotations

import flambeau

from . import _multi as M
from .optimizer import _scalar_tensor


class ASGD(M.GroupwiseOptimizer):
    """Averaged stochastic gradient descent (Polyak & Juditsky, 1992): SGD that also keeps
    a running average of the iterates (``state[p]["ax"]``).

    >>> p = flambeau.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = flambeau.optim.ASGD([p], lr=0.1)
    >>> (p ** 2).sum().backward()
    >>> opt.step()
    >>> p
    tensor([ 0.8000, -1.6000], requires_grad=True)
    """

    def __init__(
        self,
        params,
        lr=1e-2,
        lambd=1e-4,
        alpha=0.75,
        t0=1e6,
        weight_decay=0,
        foreach=None,
        maximize=False,
        differentiable=False,
        capturable=False,
    ):
        M.check_range("learning rate", lr)
        M.check_range("weight_decay value", weight_decay)
        defaults = dict(
            lr=lr,
            lambd=lambd,
            alpha=alpha,
            t0=t0,
            weight_decay=weight_decay,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            capturable=capturable,
        )
        super().__init__(params, defaults)

    def _new_state(self, group):
        lr = group["lr"]
        return lambda p, lr=lr: {
            "step": M.step_zero(),
            "eta": _scalar_tensor(lr),
            "mu": _scalar_tensor(1.0),
            "ax": M.zeros_like(p),
        }

    @staticmethod
    def _update(group, params, grads, states):
        lr, lambd, alpha, t0 = group["lr"], group["lambd"], group["alpha"], group["t0"]
        grads = M.maybe_maximize(grads, group["maximize"])
        grads = M.weight_decayed(grads, params, group["weight_decay"])
        steps = M.advance([s["step"] for s in states])
        etas = [s["eta"].item() for s in states]
        mus = [s["mu"].item() for s in states]
        # p = p * (1 - lambd * eta) - eta * g
        flambeau._foreach_mul_(params, [1 - lambd * eta for eta in etas])
        scaled = flambeau._foreach_mul(grads, [-eta for eta in etas])
        flambeau._foreach_add_(params, scaled)
        # ax += mu * (p - ax), a copy while mu is 1
        axs = [s["ax"] for s in states]
        averaging = [i for i, mu in enumerate(mus) if mu != 1]
        copying = [i for i, mu in enumerate(mus) if mu == 1]
        if averaging:
            diff = flambeau._foreach_sub(
                [params[i] for i in averaging], [axs[i] for i in averaging]
            )
            flambeau._foreach_mul_(diff, [mus[i] for i in averaging])
            flambeau._foreach_add_([axs[i] for i in averaging], diff)
        if copying:
            flambeau._foreach_copy_([axs[i] for i in copying], [params[i] for i in copying])
        eta_ts, mu_ts = [s["eta"] for s in states], [s["mu"] for s in states]
        flambeau._foreach_zero_(eta_ts)
        flambeau._foreach_add_(eta_ts, [lr / ((1 + lambd * lr * t) ** alpha) for t in steps])
        flambeau._foreach_zero_(mu_ts)
        flambeau._foreach_add_(mu_ts, [1 / max(1, t - t0) for t in steps])
