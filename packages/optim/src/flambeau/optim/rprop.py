"""Rprop: resilient backpropagation (Riedmiller & Braun, 1993), the iRprop- variant."""

from __future__ import annotations

import flambeau

from . import _multi as M


class Rprop(M.GroupwiseOptimizer):
    """Rprop (resilient backpropagation): per-element step sizes that grow while the
    gradient keeps its sign and shrink when it flips; only the sign of the gradient is used.

    >>> p = flambeau.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = flambeau.optim.Rprop([p], lr=0.1)
    >>> (p ** 2).sum().backward()
    >>> opt.step()
    >>> p
    tensor([ 0.9000, -1.9000], requires_grad=True)
    """

    def __init__(
        self,
        params,
        lr=1e-2,
        etas=(0.5, 1.2),
        step_sizes=(1e-6, 50),
        *,
        capturable=False,
        foreach=None,
        maximize=False,
        differentiable=False,
    ):
        M.check_range("learning rate", lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(
            lr=lr,
            etas=etas,
            step_sizes=step_sizes,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            capturable=capturable,
        )
        super().__init__(params, defaults)

    def _new_state(self, group):
        lr = group["lr"]
        # A complex parameter steps its real and imaginary parts by lr each.
        return lambda p, lr=lr: {
            "step": M.step_zero(),
            "prev": M.zeros_like(p),
            "step_size": flambeau.full_like(p, complex(lr, lr) if p.is_complex() else lr),
        }

    @staticmethod
    def _update(group, params, grads, states):
        etaminus, etaplus = group["etas"]
        step_min, step_max = group["step_sizes"]
        grads = M.maybe_maximize(grads, group["maximize"])
        M.advance([s["step"] for s in states])
        prevs = [s["prev"] for s in states]
        step_sizes = [s["step_size"] for s in states]
        # s = sign(g * prev) in {-1, 0, 1}; the step size grows by etaplus where the
        # gradient kept its sign, shrinks by etaminus where it flipped, else stays.
        s = flambeau._foreach_mul(grads, prevs)
        flambeau._foreach_sign_(s)
        a = flambeau._foreach_abs(s)
        pos = flambeau._foreach_add(s, a)  # 2 where s > 0
        flambeau._foreach_mul_(pos, 0.5)
        neg = flambeau._foreach_sub(a, s)  # 2 where s < 0
        flambeau._foreach_mul_(neg, 0.5)
        factor = flambeau._foreach_mul(pos, etaplus)
        flambeau._foreach_add_(factor, neg, alpha=etaminus)
        flambeau._foreach_add_(factor, flambeau._foreach_add(flambeau._foreach_neg(a), 1))
        flambeau._foreach_mul_(step_sizes, factor)
        flambeau._foreach_clamp_min_(step_sizes, step_min)
        flambeau._foreach_clamp_max_(step_sizes, step_max)
        # Where the sign flipped the gradient counts as zero: no step, and no sign
        # to compare with next time.
        keep = flambeau._foreach_add(flambeau._foreach_neg(neg), 1)
        grads = flambeau._foreach_mul(grads, keep)
        flambeau._foreach_addcmul_(params, flambeau._foreach_sign(grads), step_sizes, -1)
        flambeau._foreach_copy_(prevs, grads)
