"""Adafactor (Shazeer & Stern, 2018) with PyTorch's choices for lr, eps1 and weight decay.

A matrix (or a batch of them: the last two dimensions) keeps only running means of the
squared gradient over its rows and over its columns; their outer product, divided by
the mean of the row means, estimates the second moment. Vectors keep the full running
mean. The decay of these means is 1 - t**beta2_decay at step t, the relative step
rho_t = min(lr, 1 / sqrt(t)) is scaled by the parameter's RMS (at least eps2), the
update G / sqrt(V) is clipped to RMS d, and weight decay is decoupled (p *= 1 - lr wd).
"""

from __future__ import annotations

import math

import flambeau

from . import _multi as M
from .optimizer import Optimizer, _closure_loss


class Adafactor(Optimizer):
    """Adafactor (Shazeer & Stern, 2018): Adam-like steps whose second-moment estimate of a
    matrix is kept factored, as one row and one column vector.

    >>> p = flambeau.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = flambeau.optim.Adafactor([p], lr=0.1)
    >>> (p ** 2).sum().backward()
    >>> opt.step()
    >>> p
    tensor([ 0.8419, -1.8419], requires_grad=True)
    """

    def __init__(
        self,
        params,
        lr=1e-2,
        beta2_decay=-0.8,
        eps=(None, 1e-3),
        d=1.0,
        weight_decay=0.0,
        *,
        foreach=None,
        maximize=False,
    ):
        if isinstance(lr, flambeau.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(
            lr=lr,
            beta2_decay=beta2_decay,
            eps=eps,
            d=d,
            weight_decay=weight_decay,
            foreach=foreach,
            maximize=maximize,
        )
        super().__init__(params, defaults)

    @staticmethod
    def _new_state(p):
        state = {"step": M.step_zero()}
        if p.dim() > 1:  # factored: row and column means, broadcastable against p
            state["row_var"] = flambeau.zeros((*p.shape[:-1], 1), dtype=p.dtype)
            state["col_var"] = flambeau.zeros((*p.shape[:-2], 1, p.shape[-1]), dtype=p.dtype)
        else:
            state["variance"] = M.zeros_like(p)
        return state

    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if p.is_complex():
                    raise RuntimeError("Adafactor does not support complex parameters")
                if p.grad.is_sparse:
                    raise RuntimeError("Adafactor does not support sparse gradients")
                self._update(group, p, p.grad, self._init_state(p, self._new_state))
        return loss

    @staticmethod
    def _update(group, p, grad, state) -> None:
        lr, wd, d = float(group["lr"]), group["weight_decay"], group["d"]
        eps1, eps2 = group["eps"]
        if eps1 is None:
            eps1 = flambeau.finfo(p.dtype).eps
        grad = -grad if group["maximize"] else grad
        state["step"].add_(1)
        t = state["step"].item()
        decay = t ** group["beta2_decay"]  # the weight of the new squared gradient
        rho = min(lr, 1 / math.sqrt(t))
        alpha = max(eps2, p.norm(2).item() / math.sqrt(p.numel())) * rho
        if wd != 0:
            p.mul_(1 - lr * wd)
        if grad.dim() > 1:
            row_var, col_var = state["row_var"], state["col_var"]
            row_var.lerp_((grad * grad).mean(dim=-1, keepdim=True), decay)
            col_var.lerp_((grad * grad).mean(dim=-2, keepdim=True), decay)
            var = row_var @ col_var  # outer product of the row and column means
            var.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
        else:
            state["variance"].lerp_(grad * grad, decay)
            var = state["variance"].clone()
        update = var.clamp_(min=eps1 * eps1).rsqrt_().mul_(grad)
        denom = max(1.0, update.norm(2).item() / (math.sqrt(update.numel()) * d))
        p.add_(update, alpha=-alpha / denom)
