"""RMSprop (Hinton's lecture 6e), optionally centered and with momentum."""

from __future__ import annotations

import flambeau

from . import _multi as M


class RMSprop(M.GroupwiseOptimizer):
    """RMSprop (Hinton): steps divided by a running root mean square of the gradient,
    with optional momentum and centering.

    >>> p = flambeau.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = flambeau.optim.RMSprop([p], lr=0.01)
    >>> (p ** 2).sum().backward()
    >>> opt.step()
    >>> p
    tensor([ 0.9000, -1.9000], requires_grad=True)
    """

    def __init__(
        self,
        params,
        lr=1e-2,
        alpha=0.99,
        eps=1e-8,
        weight_decay=0,
        momentum=0,
        centered=False,
        capturable=False,
        foreach=None,
        maximize=False,
        differentiable=False,
    ):
        M.check_range("learning rate", lr)
        M.check_range("epsilon value", eps)
        M.check_range("momentum value", momentum)
        M.check_range("weight_decay value", weight_decay)
        M.check_range("alpha value", alpha)
        defaults = dict(
            lr=lr,
            alpha=alpha,
            eps=eps,
            weight_decay=weight_decay,
            momentum=momentum,
            centered=centered,
            capturable=capturable,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def _new_state(self, group):
        def make(p):
            state = {"step": M.step_zero(), "square_avg": M.zeros_like(p)}
            if group["momentum"] > 0:
                state["momentum_buffer"] = M.zeros_like(p)
            if group["centered"]:
                state["grad_avg"] = M.zeros_like(p)
            return state

        return make

    @staticmethod
    def _update(group, params, grads, states):
        lr, alpha, eps, momentum = group["lr"], group["alpha"], group["eps"], group["momentum"]
        grads = M.maybe_maximize(grads, group["maximize"])
        grads = M.weight_decayed(grads, params, group["weight_decay"])
        M.advance([s["step"] for s in states])
        square_avgs = [s["square_avg"] for s in states]
        flambeau._foreach_mul_(square_avgs, alpha)
        flambeau._foreach_addcmul_(square_avgs, grads, grads, 1 - alpha)
        if group["centered"]:
            grad_avgs = [s["grad_avg"] for s in states]
            flambeau._foreach_lerp_(grad_avgs, grads, 1 - alpha)
            avg = flambeau._foreach_addcmul(square_avgs, grad_avgs, grad_avgs, -1)
            flambeau._foreach_sqrt_(avg)
        else:
            avg = flambeau._foreach_sqrt(square_avgs)
        flambeau._foreach_add_(avg, eps)
        if momentum > 0:
            bufs = [s["momentum_buffer"] for s in states]
            flambeau._foreach_mul_(bufs, momentum)
            flambeau._foreach_addcdiv_(bufs, grads, avg)
            flambeau._foreach_add_(params, bufs, alpha=-lr)
        else:
            flambeau._foreach_addcdiv_(params, grads, avg, -lr)
