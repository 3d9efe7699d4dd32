"""Saved-tensor hooks whose unpack_hook returns a copy: backward still sees the saved tensor
as the original (requiring grad, with its history), as PyTorch restores a saved tensor's
grad_fn. Formulas skip gradients of inputs that do not require grad, so without that a copy
silently lost gradients."""

from __future__ import annotations

import numpy as np
import pytest

import flambeau as F
from flambeau import autograd
from flambeau.autograd import graph

COPY_HOOKS = [
    pytest.param((lambda t: t.detach().clone(), lambda t: t), id="packed-copy"),
    pytest.param((lambda t: t, lambda t: t.detach().clone()), id="unpacked-copy"),
    pytest.param((lambda t: t.detach().numpy().copy(), F.from_numpy), id="through-numpy"),
]


def leaves(seed=0):
    F.manual_seed(seed)
    x = F.randn(4, 3, dtype=F.float64, requires_grad=True)
    w = F.randn(3, 5, dtype=F.float64, requires_grad=True)
    return x, w


def model(x, w):
    return ((x @ w).tanh() * x.sum(1, keepdim=True)).square()


@pytest.mark.parametrize("hooks", COPY_HOOKS)
def test_first_order_gradients_as_without_hooks(hooks):
    x, w = leaves()
    want = autograd.grad(model(x, w).sum(), [x, w])
    with graph.saved_tensors_hooks(*hooks):
        out = model(x, w)
    got = autograd.grad(out.sum(), [x, w])
    for g, e in zip(got, want):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-12)


@pytest.mark.parametrize("hooks", COPY_HOOKS[:2])
def test_second_order_reaches_the_originals_history(hooks):
    x, w = leaves(1)
    gx, gw = autograd.grad(model(x, w).sum(), [x, w], create_graph=True)
    want = autograd.grad((gx.square().sum() + gw.sum()), [x, w])
    with graph.saved_tensors_hooks(*hooks):
        out = model(x, w)
    gx, gw = autograd.grad(out.sum(), [x, w], create_graph=True)
    got = autograd.grad((gx.square().sum() + gw.sum()), [x, w])
    for g, e in zip(got, want):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-10)
