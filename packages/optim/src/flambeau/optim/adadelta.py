"""Adadelta (Zeiler, 2012)."""

from __future__ import annotations

import flambeau

from . import _multi as M


class Adadelta(M.GroupwiseOptimizer):
    """Adadelta (Zeiler, 2012): steps scaled by the ratio of running root mean squares
    of past updates and of gradients.

    >>> p = flambeau.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = flambeau.optim.Adadelta([p], lr=1.0)
    >>> (p ** 2).sum().backward()
    >>> opt.step()
    >>> p
    tensor([ 0.9968, -1.9968], requires_grad=True)
    """

    def __init__(
        self,
        params,
        lr=1.0,
        rho=0.9,
        eps=1e-6,
        weight_decay=0,
        foreach=None,
        *,
        capturable=False,
        maximize=False,
        differentiable=False,
    ):
        M.check_range("learning rate", lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        M.check_range("epsilon value", eps)
        M.check_range("weight_decay value", weight_decay)
        defaults = dict(
            lr=lr,
            rho=rho,
            eps=eps,
            weight_decay=weight_decay,
            foreach=foreach,
            capturable=capturable,
            maximize=maximize,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def _new_state(self, group):
        return lambda p: {
            "step": M.step_zero(),
            "square_avg": M.zeros_like(p),
            "acc_delta": M.zeros_like(p),
        }

    @staticmethod
    def _update(group, params, grads, states):
        lr, rho, eps = group["lr"], group["rho"], group["eps"]
        grads = M.maybe_maximize(grads, group["maximize"])
        grads = M.weight_decayed(grads, params, group["weight_decay"])
        M.advance([s["step"] for s in states])
        square_avgs = [s["square_avg"] for s in states]
        acc_deltas = [s["acc_delta"] for s in states]
        flambeau._foreach_mul_(square_avgs, rho)
        flambeau._foreach_addcmul_(square_avgs, grads, grads, 1 - rho)
        # delta = sqrt(acc_delta + eps) / sqrt(square_avg + eps) * grad
        std = flambeau._foreach_add(square_avgs, eps)
        flambeau._foreach_sqrt_(std)
        delta = flambeau._foreach_add(acc_deltas, eps)
        flambeau._foreach_sqrt_(delta)
        flambeau._foreach_div_(delta, std)
        flambeau._foreach_mul_(delta, grads)
        flambeau._foreach_mul_(acc_deltas, rho)
        flambeau._foreach_addcmul_(acc_deltas, delta, delta, 1 - rho)
        flambeau._foreach_add_(params, delta, alpha=-lr)
