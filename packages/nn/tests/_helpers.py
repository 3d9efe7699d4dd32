"""Shared helpers of the nn tests."""

from __future__ import annotations

import numpy as np

import flambeau


def f64(values, requires_grad=False):
    return flambeau.tensor(np.asarray(values, dtype=np.float64), requires_grad=requires_grad)


def randn64(*shape, requires_grad=True, seed=None):
    rng = np.random.default_rng(seed if seed is not None else sum(shape) + len(shape))
    return f64(rng.standard_normal(shape), requires_grad)


def np_of(t):
    return t.detach().numpy()
