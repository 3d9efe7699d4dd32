"""Adam and AdamW (Kingma & Ba; Loshchilov & Hutter), with AMSGrad."""

from __future__ import annotations

import math

import flambeau

from . import _multi as M


def _check_adam_args(lr, betas, eps, weight_decay):
    M.check_range("learning rate", lr)
    M.check_range("epsilon value", eps)
    M.check_range("beta parameter", betas[0], high=1.0, index=0)
    M.check_range("beta parameter", betas[1], high=1.0, index=1)
    M.check_range("weight_decay value", weight_decay)


class Adam(M.GroupwiseOptimizer):
    """Adam (Kingma & Ba, 2014): steps scaled by running averages of the gradient and of
    its square; ``amsgrad`` keeps the maximum of the latter.

    >>> p = flambeau.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = flambeau.optim.Adam([p], lr=0.1)
    >>> (p ** 2).sum().backward()
    >>> opt.step()
    >>> p
    tensor([ 0.9000, -1.9000], requires_grad=True)
    """

    # AdamW's error names Adam too, as in PyTorch.
    _sparse_grad_error = (
        "Adam does not support sparse gradients, please consider SparseAdam instead"
    )

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        amsgrad=False,
        *,
        foreach=None,
        maximize=False,
        capturable=False,
        differentiable=False,
        fused=None,
        decoupled_weight_decay=False,
    ):
        _check_adam_args(lr, betas, eps, weight_decay)
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            amsgrad=amsgrad,
            maximize=maximize,
            foreach=foreach,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=decoupled_weight_decay,
        )
        super().__init__(params, defaults)

    def _new_state(self, group):
        def make(p):
            state = {
                "step": M.step_zero(),
                "exp_avg": M.zeros_like(p),
                "exp_avg_sq": M.zeros_like(p),
            }
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = M.zeros_like(p)
            return state

        return make

    @staticmethod
    def _update(group, params, grads, states):
        _adam_update(group, params, grads, states)


def _adam_update(group, params, grads, states):
    lr, (beta1, beta2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
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
    second = exp_avg_sqs
    if group["amsgrad"]:
        second = [s["max_exp_avg_sq"] for s in states]
        flambeau._foreach_maximum_(second, exp_avg_sqs)
    # p -= lr / bc1 * m / (sqrt(v) / sqrt(bc2) + eps), computed with sqrt(bc2) moved
    # into the scalars: lr * sqrt(bc2) / bc1 * m / (sqrt(v) + eps * sqrt(bc2)), one
    # pass over the parameters fewer.
    bc2_sqrt = [math.sqrt(1 - beta2**t) for t in steps]
    step_sizes = [-lr * c / (1 - beta1**t) for c, t in zip(bc2_sqrt, steps)]
    denom = flambeau._foreach_sqrt(second)
    flambeau._foreach_add_(denom, [eps * c for c in bc2_sqrt])
    flambeau._foreach_addcdiv_(params, exp_avgs, denom, step_sizes)


class AdamW(Adam):
    """AdamW (Loshchilov & Hutter, 2017): Adam with weight decay decoupled from the
    gradient (the parameters shrink by ``lr * weight_decay`` at every step).

    >>> p = flambeau.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = flambeau.optim.AdamW([p], lr=0.1, weight_decay=0.01)
    >>> (p ** 2).sum().backward()
    >>> opt.step()
    >>> p
    tensor([ 0.8990, -1.8980], requires_grad=True)
    """

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=1e-2,
        amsgrad=False,
        *,
        maximize=False,
        foreach=None,
        capturable=False,
        differentiable=False,
        fused=None,
    ):
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            foreach=foreach,
            maximize=maximize,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=True,
        )
