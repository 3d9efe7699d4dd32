"""RAdam: Adam with a rectified adaptive learning rate (Liu et al., 2019)."""

from __future__ import annotations

import math

import flambeau

from . import _multi as M
from .adam import _check_adam_args


class RAdam(M.GroupwiseOptimizer):
    """RAdam: Adam with the variance of its adaptive learning rate rectified (Liu et al.,
    2019); the first steps, before the rectification applies, are SGD with momentum.

    >>> p = flambeau.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = flambeau.optim.RAdam([p], lr=0.1)
    >>> (p ** 2).sum().backward()
    >>> opt.step()
    >>> p
    tensor([ 0.8000, -1.6000], requires_grad=True)
    """

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        decoupled_weight_decay=False,
        *,
        foreach=None,
        maximize=False,
        capturable=False,
        differentiable=False,
    ):
        _check_adam_args(lr, betas, eps, weight_decay)
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            decoupled_weight_decay=decoupled_weight_decay,
            foreach=foreach,
            maximize=maximize,
            capturable=capturable,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def _new_state(self, group):
        return lambda p: {
            "step": M.step_zero(),
            "exp_avg": M.zeros_like(p),
            "exp_avg_sq": M.zeros_like(p),
        }

    @staticmethod
    def _update(group, params, grads, states):
        lr, (beta1, beta2), eps, wd = (
            group["lr"],
            group["betas"],
            group["eps"],
            group["weight_decay"],
        )
        grads = M.maybe_maximize(grads, group["maximize"])
        if wd != 0:
            if group["decoupled_weight_decay"]:
                flambeau._foreach_mul_(params, 1 - lr * wd)
            else:
                grads = M.weight_decayed(grads, params, wd)
        steps = M.advance([s["step"] for s in states])
        exp_avgs = [s["exp_avg"] for s in states]
        exp_avg_sqs = [s["exp_avg_sq"] for s in states]
        flambeau._foreach_lerp_(exp_avgs, grads, 1 - beta1)
        flambeau._foreach_mul_(exp_avg_sqs, beta2)
        flambeau._foreach_addcmul_(exp_avg_sqs, grads, grads, 1 - beta2)
        rho_inf = 2 / (1 - beta2) - 1
        rect, plain = [], []  # indices whose variance is tractable / not yet
        coef = []
        for i, t in enumerate(steps):
            bc1, bc2 = 1 - beta1**t, 1 - beta2**t
            rho_t = rho_inf - 2 * t * beta2**t / bc2
            if rho_t > 5:
                r = math.sqrt(
                    (rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
                )
                rect.append(i)
                coef.append(-lr * r * math.sqrt(bc2) / bc1)
            else:
                plain.append(i)
        if rect:
            # p -= lr * r * sqrt(bc2) / bc1 * m / (sqrt(v) + eps)
            denom = flambeau._foreach_sqrt([exp_avg_sqs[i] for i in rect])
            flambeau._foreach_add_(denom, eps)
            flambeau._foreach_addcdiv_(
                [params[i] for i in rect], [exp_avgs[i] for i in rect], denom, coef
            )
        if plain:
            # p -= lr / bc1 * m (SGD with momentum while the variance is intractable)
            scaled = flambeau._foreach_mul(
                [exp_avgs[i] for i in plain], [-lr / (1 - beta1 ** steps[i]) for i in plain]
            )
            flambeau._foreach_add_([params[i] for i in plain], scaled)
