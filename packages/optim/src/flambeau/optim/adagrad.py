"""Adagrad (Duchi et al., 2011) with learning-rate decay."""

from __future__ import annotations

import flambeau

from . import _multi as M


class Adagrad(M.GroupwiseOptimizer):
    """Adagrad (Duchi et al., 2011): steps divided by the root of the sum of all squared
    gradients so far. Sparse gradients update the sums and parameters at their indices
    only, as in PyTorch (weight decay does not combine with them).

    >>> p = flambeau.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = flambeau.optim.Adagrad([p], lr=0.1)
    >>> (p ** 2).sum().backward()
    >>> opt.step()
    >>> p
    tensor([ 0.9000, -1.9000], requires_grad=True)
    """

    _sparse_grad_error = None

    def __init__(
        self,
        params,
        lr=1e-2,
        lr_decay=0,
        weight_decay=0,
        initial_accumulator_value=0,
        eps=1e-10,
        foreach=None,
        *,
        maximize=False,
        differentiable=False,
        fused=None,
    ):
        M.check_range("learning rate", lr)
        M.check_range("lr_decay value", lr_decay)
        M.check_range("weight_decay value", weight_decay)
        M.check_range("initial_accumulator_value value", initial_accumulator_value)
        M.check_range("epsilon value", eps)
        defaults = dict(
            lr=lr,
            lr_decay=lr_decay,
            eps=eps,
            weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            fused=fused,
        )
        super().__init__(params, defaults)
        # As in PyTorch, the state exists from the start (so share_memory works).
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, self._new_state(group))

    @staticmethod
    def _new_state(group):
        init = group["initial_accumulator_value"]
        return lambda p: {"step": M.step_zero(), "sum": flambeau.full_like(p, init)}

    @staticmethod
    def _update(group, params, grads, states):
        sparse = [i for i, g in enumerate(grads) if g.is_sparse]
        if sparse:
            for i in sparse:
                Adagrad._sparse_update(group, params[i], grads[i], states[i])
            dense = [i for i in range(len(grads)) if not grads[i].is_sparse]
            params, grads, states = ([lst[i] for i in dense] for lst in (params, grads, states))
            if not params:
                return
        lr, lr_decay, eps = group["lr"], group["lr_decay"], group["eps"]
        grads = M.maybe_maximize(grads, group["maximize"])
        grads = M.weight_decayed(grads, params, group["weight_decay"])
        steps = M.advance([s["step"] for s in states])
        sums = [s["sum"] for s in states]
        flambeau._foreach_addcmul_(sums, grads, grads, 1)
        std = flambeau._foreach_sqrt(sums)
        flambeau._foreach_add_(std, eps)
        clrs = [-lr / (1 + (t - 1) * lr_decay) for t in steps]
        flambeau._foreach_addcdiv_(params, grads, std, clrs)

    @staticmethod
    def _sparse_update(group, param, grad, state):
        """PyTorch's Adagrad step for a sparse gradient: the sum of squares and the
        parameter change only at the gradient's (coalesced) indices."""
        (step,) = M.advance([state["step"]])
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"] != 0:
            raise RuntimeError("weight_decay option is not compatible with sparse gradients")
        clr = group["lr"] / (1 + (step - 1) * group["lr_decay"])
        grad = grad.coalesce()  # the update is not linear: each index once
        indices, values = grad._indices(), grad._values()
        if values.numel() == 0:
            return
        state_sum = state["sum"]
        state_sum.add_(flambeau.sparse_coo_tensor(indices, values.pow(2), grad.shape))
        std_values = state_sum.sparse_mask(grad)._values().sqrt().add_(group["eps"])
        param.add_(flambeau.sparse_coo_tensor(indices, values / std_values, grad.shape), alpha=-clr)
