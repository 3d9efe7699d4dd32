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


class _RealState(dict):
    """A complex parameter's state as the update sees it: its complex tensors viewed as
    real (the last dimension holding real and imaginary parts); a tensor the update
    stores is kept, viewed as complex again, in the parameter's own state."""

    def __init__(self, state: dict, real_shape):
        super().__init__({k: _as_real(v) for k, v in state.items()})
        self._state = state
        self._real_shape = real_shape

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        if isinstance(value, flambeau.Tensor) and value.shape == self._real_shape:
            value = flambeau.view_as_complex(value)
        self._state[key] = value


def _as_real(t):
    return flambeau.view_as_real(t) if isinstance(t, flambeau.Tensor) and t.is_complex() else t


def as_real(params: list, grads: list, states: list[dict]) -> tuple[list, list, list]:
    """PyTorch's optimizers update a complex parameter as the pairs of reals it holds
    (view_as_real): the moments of Adam, RMSprop, ... are taken of the real and
    imaginary parts separately, not of complex products."""
    if not any(p.is_complex() for p in params):
        return params, grads, states
    out = ([], [], [])
    for p, g, st in zip(params, grads, states):
        if p.is_complex() and not g.is_sparse:
            p, g = flambeau.view_as_real(p), flambeau.view_as_real(g)
            st = _RealState(st, p.shape)
        for lst, item in zip(out, (p, g, st)):
            lst.append(item)
    return out


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
            params, grads, states = as_real(params, grads, states)
            for ps, gs, ss in batches(group, [params, grads, states]) if params else ():
                self._update(group, ps, gs, ss)
        return loss
