"""NAdam: Adam with Nesterov momentum and a momentum schedule (Dozat, 2016)."""

from __future__ import annotations

import math

import flambeau

from . import _multi as M
from .adam import _check_adam_args
from .optimizer import _scalar_tensor


class NAdam(M.GroupwiseOptimizer):
    """NAdam: Adam with Nesterov momentum (Dozat, 2016).

    >>> p = flambeau.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = flambeau.optim.NAdam([p], lr=0.1)
    >>> (p ** 2).sum().backward()
    >>> opt.step()
    >>> p
    tensor([ 0.8944, -1.8944], requires_grad=True)
    """

    def __init__(
        self,
        params,
        lr=2e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        momentum_decay=4e-3,
        decoupled_weight_decay=False,
        *,
        foreach=None,
        maximize=False,
        capturable=False,
        differentiable=False,
    ):
        _check_adam_args(lr, betas, eps, weight_decay)
        M.check_range("momentum_decay value", momentum_decay)
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            momentum_decay=momentum_decay,
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
            "mu_product": _scalar_tensor(1.0),
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
        decay = group["momentum_decay"]
        grads = M.maybe_maximize(grads, group["maximize"])
        if wd != 0:
            if group["decoupled_weight_decay"]:
                flambeau._foreach_mul_(params, 1 - lr * wd)
            else:
                grads = M.weight_decayed(grads, params, wd)
        steps = M.advance([s["step"] for s in states])
        exp_avgs = [s["exp_avg"] for s in states]
        exp_avg_sqs = [s["exp_avg_sq"] for s in states]
        mus = [beta1 * (1.0 - 0.5 * 0.96 ** (t * decay)) for t in steps]
        mu_nexts = [beta1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * decay)) for t in steps]
        mu_products = [s["mu_product"] for s in states]
        flambeau._foreach_mul_(mu_products, mus)
        prods = [m.item() for m in mu_products]
        flambeau._foreach_lerp_(exp_avgs, grads, 1 - beta1)
        flambeau._foreach_mul_(exp_avg_sqs, beta2)
        flambeau._foreach_addcmul_(exp_avg_sqs, grads, grads, 1 - beta2)
        denom = flambeau._foreach_sqrt(exp_avg_sqs)
        flambeau._foreach_div_(denom, [math.sqrt(1 - beta2**t) for t in steps])
        flambeau._foreach_add_(denom, eps)
        grad_coef = [-lr * (1 - mu) / (1 - prod) for mu, prod in zip(mus, prods)]
        avg_coef = [-lr * mn / (1 - prod * mn) for mn, prod in zip(mu_nexts, prods)]
        flambeau._foreach_addcdiv_(params, grads, denom, grad_coef)
        flambeau._foreach_addcdiv_(params, exp_avgs, denom, avg_coef)
