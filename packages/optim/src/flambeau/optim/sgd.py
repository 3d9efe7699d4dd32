"""Stochastic gradient descent with momentum, dampening, Nesterov and weight decay."""

from __future__ import annotations

import flambeau

from . import _multi as M


class SGD(M.GroupwiseOptimizer):
    """Stochastic gradient descent, with optional momentum (heavy ball or Nesterov),
    dampening and weight decay. Sparse gradients (nn.Embedding(sparse=True)) update only
    the rows they name, as in PyTorch (weight decay does not combine with them).

    >>> p = flambeau.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = flambeau.optim.SGD([p], lr=0.1, momentum=0.9)
    >>> (p ** 2).sum().backward()
    >>> opt.step()
    >>> p
    tensor([ 0.8000, -1.6000], requires_grad=True)
    """

    _sparse_grad_error = None

    def __init__(
        self,
        params,
        lr=1e-3,
        momentum=0,
        dampening=0,
        weight_decay=0,
        nesterov=False,
        *,
        maximize=False,
        foreach=None,
        differentiable=False,
        fused=None,
    ):
        M.check_range("learning rate", lr)
        M.check_range("momentum value", momentum)
        M.check_range("weight_decay value", weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = dict(
            lr=lr,
            momentum=momentum,
            dampening=dampening,
            weight_decay=weight_decay,
            nesterov=nesterov,
            maximize=maximize,
            foreach=foreach,
            differentiable=differentiable,
            fused=fused,
        )
        super().__init__(params, defaults)

    def _new_state(self, group):
        # Without momentum SGD keeps no state at all (PyTorch's state_dict shows none).
        return (lambda p: {"momentum_buffer": None}) if group["momentum"] != 0 else None

    @staticmethod
    def _update(group, params, grads, states):
        lr, momentum = group["lr"], group["momentum"]
        grads = M.maybe_maximize(grads, group["maximize"])
        grads = M.weight_decayed(grads, params, group["weight_decay"])
        if momentum != 0:
            old = [i for i, s in enumerate(states) if s["momentum_buffer"] is not None]
            if old:
                bufs = [states[i]["momentum_buffer"] for i in old]
                flambeau._foreach_mul_(bufs, momentum)
                flambeau._foreach_add_(bufs, [grads[i] for i in old], alpha=1 - group["dampening"])
            for i, s in enumerate(states):
                if s["momentum_buffer"] is None:  # the first step takes the gradient itself
                    s["momentum_buffer"] = grads[i].detach().clone()
            bufs = [s["momentum_buffer"] for s in states]
            if group["nesterov"]:
                grads = flambeau._foreach_add(grads, bufs, alpha=momentum)
            else:
                grads = bufs
        flambeau._foreach_add_(params, grads, alpha=-lr)
