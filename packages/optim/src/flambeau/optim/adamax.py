"""Adamax: Adam with the infinity norm of past gradients (Kingma & Ba, section 7)."""

from __future__ import annotations

import flambeau

from . import _multi as M
from .adam import _check_adam_args


class Adamax(M.GroupwiseOptimizer):
    """Adamax: Adam's variant based on the infinity norm (Kingma & Ba, 2014).

    >>> p = flambeau.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = flambeau.optim.Adamax([p], lr=0.1)
    >>> (p ** 2).sum().backward()
    >>> opt.step()
    >>> p
    tensor([ 0.9000, -1.9000], requires_grad=True)
    """

    def __init__(
        self,
        params,
        lr=2e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        foreach=None,
        *,
        maximize=False,
        differentiable=False,
        capturable=False,
    ):
        _check_adam_args(lr, betas, eps, weight_decay)
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            capturable=capturable,
        )
        super().__init__(params, defaults)

    def _new_state(self, group):
        return lambda p: {
            "step": M.step_zero(),
            "exp_avg": M.zeros_like(p),
            "exp_inf": M.zeros_like(p),
        }

    @staticmethod
    def _update(group, params, grads, states):
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        grads = M.maybe_maximize(grads, group["maximize"])
        grads = M.weight_decayed(grads, params, group["weight_decay"])
        steps = M.advance([s["step"] for s in states])
        exp_avgs = [s["exp_avg"] for s in states]
        exp_infs = [s["exp_inf"] for s in states]
        flambeau._foreach_lerp_(exp_avgs, grads, 1 - beta1)
        # u = max(beta2 * u, |g| + eps)
        flambeau._foreach_mul_(exp_infs, beta2)
        norm = flambeau._foreach_abs(grads)
        flambeau._foreach_add_(norm, eps)
        flambeau._foreach_maximum_(exp_infs, norm)
        flambeau._foreach_addcdiv_(
            params, exp_avgs, exp_infs, [-lr / (1 - beta1**t) for t in steps]
        )
