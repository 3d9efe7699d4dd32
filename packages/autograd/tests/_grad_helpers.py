"""Small helpers shared by the double-backward test files."""

from __future__ import annotations

import numpy as np

import flambeau as F
from flambeau.autograd import gradcheck, gradgradcheck


def t64(shape, seed, low=-1.0, high=1.0, grad=True):
    """A float64 tensor of uniform values from a seeded generator."""
    a = np.random.default_rng(seed).uniform(low, high, shape)
    return F.from_numpy(a).requires_grad_(grad)


def check(fn, inputs):
    """First and second derivatives of fn at inputs match finite differences."""
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)
