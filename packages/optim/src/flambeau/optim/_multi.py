"""Shared pieces of the optimizers' multi-tensor updates.

Each optimizer writes its update once, over lists of tensors, with the core's
_foreach_* operators (one call per arithmetic step for all parameters of a
group). ``foreach=False`` runs the same update one parameter at a time.
"""

from __future__ import annotations

import flambeau

from .optimizer import Optimizer, _closure_loss, _scalar_tensor


def batches(group: dict, lists: list[list]) -> list[list[list]]:
    """The lists to update together: all at once, or one parameter at a time
    when the group says foreach=False."""
    if group.get("foreach") is False:
        return [[lst[i : i + 1] for lst in lists] for i in range(len(lists[0]))]
    return [lists]


def with_grads(optimizer, group: dict, make_state) -> tuple[list, list, list[dict]]:
    """(params, grads, states) of the group's parameters that have a gradient;
    make_state(p) gives a new parameter's initial state (None: the group keeps no state,
    and each parameter gets a throwaway dict, as SGD without momentum)."""
    params, grads, states = [], [], []
    for p in group["params"]:
        if p.grad is None:
            continue
        if p.grad.is_sparse and optimizer._sparse_grad_error is not None:
            raise RuntimeError(optimizer._sparse_grad_error.format(type(optimizer).__name__))
        params.append(p)
        grads.append(p.grad)
        states.append(optimizer._init_state(p, make_state) if make_state is not None else {})
    return params, grads, states


def advance(steps: list) -> list[float]:
    """Adds one to every step counter and returns their new values."""
    flambeau._foreach_add_(steps, 1)
    return [s.item() for s in steps]


def maybe_maximize(grads: list, maximize: bool) -> list:
    return flambeau._foreach_neg(grads) if maximize else grads


def weight_decayed(grads: list, params: list, weight_decay: float) -> list:
    """grad + weight_decay * param (new tensors; p.grad is left as it is)."""
    if weight_decay == 0:
        return grads
    return flambeau._foreach_add(grads, params, alpha=weight_decay)


def zeros_like(p):
    return flambeau.zeros_like(p)


def step_zero():
    return _scalar_tensor(0.0)


def check_range(name: str, value, low=0.0, high=None, strict_low=False, index=None):
    """PyTorch's argument checks: ValueError naming the option and the value."""
    bad = value < low or (strict_low and value == low) or (high is not None and value >= high)
    if bad:
        where = f" at index {index}" if index is not None else ""
        raise ValueError(f"Invalid {name}{where}: {value}")


class GroupwiseOptimizer(Optimizer):
    """An optimizer whose step updates all of a group's parameters together.

    Subclasses give ``_new_state(group)``, a function from a parameter to its
    initial state (or None for a group that keeps none), and
    ``_update(group, params, grads, states)`` over lists.

    ``_sparse_grad_error`` is PyTorch's error for a sparse gradient (``{}`` is the class's
    name); None in an optimizer that takes sparse gradients (SGD, Adagrad).
    """

    _sparse_grad_error: str | None = "{} does not support sparse gradients"

    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params, grads, states = with_grads(self, group, self._new_state(group))
            for ps, gs, ss in batches(group, [params, grads, states]) if params else ():
                self._update(group, ps, gs, ss)
        return loss
