"""SparseAdam: Adam for sparse gradients, updating only the rows a gradient touches.

As in PyTorch it requires sparse gradients and refuses dense ones (use Adam): those of
nn.Embedding(sparse=True) and nn.EmbeddingBag(sparse=True), sparse COO tensors (or
anything following their interface: ``is_sparse``, ``coalesce()``, ``_indices()``,
``_values()``). For the rows a gradient names, the moments and the parameter update as
Adam's do; the other rows, and their moments, are left as they are ("lazy" Adam).
"""

from __future__ import annotations

import math

import flambeau

from . import _multi as M
from .optimizer import Optimizer, _closure_loss


class SparseAdam(Optimizer):
    """SparseAdam: a lazy Adam for sparse gradients, updating only the rows (and moments)
    that a gradient names; dense gradients are refused (see the module's documentation).

    >>> p = flambeau.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = flambeau.optim.SparseAdam([p], lr=0.1)
    >>> (p ** 2).sum().backward()
    >>> opt.step()  # a dense gradient: use Adam
    Traceback (most recent call last):
    RuntimeError: SparseAdam does not support dense gradients, please consider Adam instead
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if isinstance(lr, flambeau.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        M.check_range("beta parameter", betas[0], high=1.0, index=0)
        M.check_range("beta parameter", betas[1], high=1.0, index=1)
        defaults = dict(lr=lr, betas=betas, eps=eps, maximize=maximize)
        super().__init__(params, defaults)
        where = {"sparse": [], "complex": []}
        for i, group in enumerate(self.param_groups):
            for j, p in enumerate(group["params"]):
                if getattr(p, "is_sparse", False):
                    where["sparse"].append([i, j])
                if p.is_complex():
                    where["complex"].append([i, j])
        if where["sparse"]:
            raise ValueError(
                f"Sparse params at indices {where['sparse']}: SparseAdam requires dense "
                "parameter tensors"
            )
        if where["complex"]:
            raise ValueError(
                f"Complex params at indices {where['complex']}: SparseAdam does not support "
                "complex parameters"
            )

    @staticmethod
    def _new_state(p):
        return {"step": 0, "exp_avg": M.zeros_like(p), "exp_avg_sq": M.zeros_like(p)}

    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if not getattr(p.grad, "is_sparse", False):
                    raise RuntimeError(
                        "SparseAdam does not support dense gradients, please consider Adam instead"
                    )
                state = self._init_state(p, self._new_state)
                state["step"] += 1
                self._update(group, p, p.grad, state)
        return loss

    @staticmethod
    def _update(group, p, grad, state) -> None:
        (beta1, beta2), eps, lr = group["betas"], group["eps"], float(group["lr"])
        grad = grad.coalesce()  # unique indices: the update is not linear
        indices, values = grad._indices(), grad._values()
        if values.numel() == 0:
            return
        if group["maximize"]:
            values = -values
        rows = tuple(indices[k] for k in range(indices.shape[0]))
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        m = exp_avg[rows].lerp(values, 1 - beta1)
        v = exp_avg_sq[rows].lerp(values * values, 1 - beta2)
        exp_avg[rows] = m
        exp_avg_sq[rows] = v
        t = state["step"]
        step_size = lr * math.sqrt(1 - beta2**t) / (1 - beta1**t)
        p[rows] = p[rows] - step_size * m / (v.sqrt() + eps)
