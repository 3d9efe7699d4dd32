"""Double backward of the nn operators whose first derivative runs a backward kernel,
checked where the operator table cannot (rows with list arguments are skipped there)."""

from __future__ import annotations

import numpy as np
import pytest
from _grad_helpers import check, t64

import flambeau as F


@pytest.mark.parametrize("train", [True, False])
@pytest.mark.parametrize("mask", [(True, True, True), (True, False, True), (False, True, False)])
def test_native_batch_norm_backward(train, mask):
    go, x, w = t64((4, 3, 2), 0), t64((4, 3, 2), 1), t64((3,), 2)
    rm, rv = t64((3,), 3), t64((3,), 4, 0.5, 2.0)
    sm, si = t64((3,), 5), t64((3,), 6, 0.5, 2.0)

    def fn(go, x, w, rm, rv, sm, si):
        out = F.native_batch_norm_backward(go, x, w, rm, rv, sm, si, train, 1e-5, list(mask))
        return tuple(o for o, m in zip(out, mask) if m)

    check(fn, (go, x, w, rm, rv, sm, si))


@pytest.mark.parametrize("mask", [(True, True, True), (True, False, False)])
def test_native_group_norm_backward(mask):
    go, x, w = t64((2, 4, 3), 0), t64((2, 4, 3), 1), t64((4,), 2)
    mean, rstd = t64((2, 2), 3), t64((2, 2), 4, 0.5, 2.0)

    def fn(go, x, mean, rstd, w):
        out = F.native_group_norm_backward(go, x, mean, rstd, w, 2, 4, 3, 2, list(mask))
        return tuple(o for o, m in zip(out, mask) if m)

    check(fn, (go, x, mean, rstd, w))


def test_batch_norm_training_double_backward_leaves_running_stats_alone():
    # The running stats are updated in place by the forward and get no gradient.
    x, w, b = t64((5, 3), 0), t64((3,), 1), t64((3,), 2)
    rm, rv = F.zeros(3, dtype=F.float64), F.ones(3, dtype=F.float64)

    def fn(x, w, b):
        return F.batch_norm(x, w, b, rm, rv, True, 0.1, 1e-5, False) ** 2

    check(fn, (x, w, b))
    assert not rm.requires_grad and not rv.requires_grad
    assert not np.allclose(rm.numpy(), 0.0)  # but they were updated


def test_mish_and_bce_third_order():
    # Their backward kernels' formulas are differentiable ops, so they go on.
    x = t64((3, 2), 0, 0.1, 0.9)
    t = t64((3, 2), 1, 0.1, 0.9)
    check(lambda x: F.mish_backward(x * x, x), (x,))
    check(lambda x, t: F.binary_cross_entropy_backward(x.sum(), x, t, None, 1), (x, t))


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_fused_cells_second_derivative_through_gates(cell):
    k = 4 if cell == "lstm" else 3
    ig, hg, state = t64((2, 3 * k), 0, -2, 2), t64((2, 3 * k), 1, -2, 2), t64((2, 3), 2)
    bi, bh = t64((3 * k,), 3), t64((3 * k,), 4)
    op = F._thnn_fused_lstm_cell if cell == "lstm" else F._thnn_fused_gru_cell

    def fn(ig, hg, state, bi, bh):
        return op(ig, hg, state, bi, bh)[0]

    check(fn, (ig, hg, state, bi, bh))


@pytest.mark.parametrize(
    "act",
    [
        F.relu,
        lambda z: F.nn.functional.leaky_relu(z, 0.2),
        lambda z: F.nn.functional.hardtanh(z, -1.0, 1.0),
        lambda z: F.nn.functional.hardsigmoid(z),
        lambda z: F.nn.functional.softshrink(z, 0.5),
        lambda z: F.nn.functional.hardshrink(z, 0.5),
        lambda z: F.threshold(z, 0.1, 0.0),
    ],
    ids=["relu", "leaky_relu", "hardtanh", "hardsigmoid", "softshrink", "hardshrink", "threshold"],
)
def test_piecewise_linear_backwards_give_their_input_a_zero_gradient(act):
    # d/dx act(2x + b) = 2 act'(2x + b), piecewise constant in b: its gradient with respect
    # to b is zero, and PyTorch returns zeros (self: zeros_like(grad)), not None, so a bias
    # in front of a ReLU gets a zero gradient from a gradient penalty and optimizers step it.
    pytest.importorskip("flambeau.nn")
    x = F.tensor([-2.0, -0.1, 0.2, 0.4, 3.0], requires_grad=True)
    b = F.tensor([0.05, 0.05, 0.05, 0.05, 0.05], requires_grad=True)
    (gx,) = F.autograd.grad(act(2 * x + b).sum(), x, create_graph=True)
    (gb,) = F.autograd.grad(gx.square().sum(), b)
    assert gb is not None
    np.testing.assert_array_equal(gb.numpy(), np.zeros(5))
