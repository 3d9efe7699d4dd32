"""Muon (Jordan et al., 2024): momentum, then an approximate orthogonalization of the
update by a quintic Newton-Schulz iteration, for 2-D parameters.

The iteration runs in bfloat16, as in PyTorch: on X = B / ||B||_F (transposed to be
wide), it repeats X <- a X + (b A + c A A) X with A = X X^T, which drives the singular
values of X towards 1 (roughly, to [0.5, 1.5]). Weight decay is decoupled, and the
learning rate is scaled by sqrt(max(1, rows / cols)) ("original") or
0.2 sqrt(max(rows, cols)) ("match_rms_adamw").
"""

from __future__ import annotations

import math

import flambeau

from . import _multi as M
from .optimizer import Optimizer, _closure_loss


def _orthogonalize(update, coefficients, steps: int, eps: float):
    """The Newton-Schulz approximation of U V^T for update = U S V^T (2-D)."""
    if steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if update.dim() != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = coefficients
    tall = update.shape[0] > update.shape[1]
    x = update.to(flambeau.bfloat16)
    if tall:
        x = x.t()
    x = x / x.norm().clamp(min=eps)
    # Each step rounds to bfloat16 once per product, as a bfloat16 addmm accumulating in
    # float32 does: the sums are formed in float32 (where products of bfloat16 values are
    # exact) and only their results are rounded.
    bf16, f32 = flambeau.bfloat16, flambeau.float32
    for _ in range(steps):
        gram = (x.to(f32) @ x.t().to(f32)).to(bf16)
        g = gram.to(f32)
        poly = (b * g + c * (g @ g)).to(bf16)  # b A + c A A
        x = (a * x.to(f32) + poly.to(f32) @ x.to(f32)).to(bf16)  # a X + poly X
    return x.t() if tall else x


def _adjusted_lr(lr: float, rule, shape) -> float:
    rows, cols = shape[:2]
    if rule is None or rule == "original":
        return lr * math.sqrt(max(1, rows / cols))
    return lr * 0.2 * math.sqrt(max(rows, cols))  # "match_rms_adamw"


class Muon(Optimizer):
    """Muon (Jordan et al., 2024): SGD with momentum whose update of each 2-D parameter is
    orthogonalized by a Newton-Schulz iteration (see the module's documentation).

    >>> w = flambeau.tensor([[1.0, 0.0], [0.0, 2.0]], requires_grad=True)
    >>> opt = flambeau.optim.Muon([w], lr=0.1, weight_decay=0.0)
    >>> (w ** 2).sum().backward()
    >>> opt.step()
    >>> w
    tensor([[0.8883, 0.0000],
            [0.0000, 1.9309]], requires_grad=True)
    """

    def __init__(
        self,
        params,
        lr=1e-3,
        weight_decay=0.1,
        momentum=0.95,
        nesterov=True,
        ns_coefficients=(3.4445, -4.775, 2.0315),
        eps=1e-7,
        ns_steps=5,
        adjust_lr_fn=None,
    ):
        if isinstance(lr, flambeau.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(
            lr=lr,
            weight_decay=weight_decay,
            momentum=momentum,
            nesterov=nesterov,
            ns_coefficients=ns_coefficients,
            eps=eps,
            ns_steps=ns_steps,
            adjust_lr_fn=adjust_lr_fn,
        )
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.dim() != 2:
                    raise ValueError(
                        "Muon only supports 2D parameters whereas we found a parameter with "
                        f"size: {p.size()}"
                    )

    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group in self.param_groups:
            lr, wd, momentum = float(group["lr"]), group["weight_decay"], group["momentum"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                if p.is_complex():
                    raise RuntimeError("Muon does not support complex parameters")
                if p.grad.is_sparse:
                    raise RuntimeError("Muon does not support sparse gradients")
                grad = p.grad
                state = self._init_state(p, lambda q: {"momentum_buffer": M.zeros_like(q)})
                buf = state["momentum_buffer"]
                buf.lerp_(grad, 1 - momentum)
                update = grad.lerp(buf, momentum) if group["nesterov"] else buf
                ortho = _orthogonalize(
                    update, group["ns_coefficients"], group["ns_steps"], group["eps"]
                )
                p.mul_(1 - lr * wd)
                p.add_(ortho.to(p.dtype), alpha=-_adjusted_lr(lr, group["adjust_lr_fn"], p.shape))
        return loss
