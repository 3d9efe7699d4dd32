"""Helpers shared by the optimizers."""

from __future__ import annotations

import flambeau


def setup(config, state):
    """Torch7's `config = config or {}; state = state or config`."""
    config = {} if config is None else config
    state = config if state is None else state
    return config, state


def evaluate(opfunc, x):
    """f(x) as a float and a private copy of df/dx (opfunc may reuse its gradient buffer)."""
    fx, dfdx = opfunc(x)
    return float(fx), dfdx.detach().clone().reshape(x.shape).to(x.dtype)


def as_tensor(value, like):
    if isinstance(value, flambeau.Tensor):
        return value.to(like.dtype).reshape(like.shape)
    return flambeau.full(like.shape, float(value), dtype=like.dtype)


def weight_decay(dfdx, x, wd):
    return dfdx.add_(x, alpha=wd) if wd != 0 else dfdx
