"""Double backward through the CTC loss and the fused recurrent cells as nn code uses
them (flambeau.nn.functional.ctc_loss, nn.LSTMCell / nn.GRUCell), and through their
backward kernels fed with the forward's own outputs."""

from __future__ import annotations

import numpy as np
import pytest
from _grad_helpers import check, t64

import flambeau as F
import flambeau.nn as nn
import flambeau.nn.functional as NF

# ---- CTC ----------------------------------------------------------------------------------


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_ctc_loss_double_backward(reduction):
    targets = F.tensor([[1, 1, 2], [2, 0, 0]])  # padded, with a repeat

    def fn(x):
        lp = NF.log_softmax(x, -1)
        return NF.ctc_loss(lp, targets, (4, 3), (3, 1), reduction=reduction)

    check(fn, (t64((4, 2, 3), 0),))


def test_ctc_loss_double_backward_tensor_lengths_concatenated():
    targets, il, tl = F.tensor([1, 2, 2]), F.tensor([4, 2]), F.tensor([2, 1])

    def fn(x):
        return NF.ctc_loss(NF.log_softmax(x, -1), targets, il, tl, blank=0, reduction="sum")

    check(fn, (t64((4, 2, 3), 1),))


def test_ctc_loss_double_backward_zero_infinity():
    # The first sample's labels need 5 frames: its loss is infinite in 3, and zeroed.
    targets = F.tensor([[1, 1, 1], [2, 0, 0]])

    def fn(x):
        lp = NF.log_softmax(x, -1)
        return NF.ctc_loss(lp, targets, (3, 3), (3, 1), reduction="none", zero_infinity=True)

    x = t64((3, 2, 3), 2)
    assert fn(x).tolist()[0] == 0.0
    check(fn, (x,))


def test_ctc_loss_gradient_of_gradient_norm():
    """A gradient penalty: d/dx |dL/dx|^2 against central differences of |dL/dx|^2."""
    targets = F.tensor([[1, 2]])

    def grad_sq(x, create):
        loss = NF.ctc_loss(NF.log_softmax(x, -1), targets, (4,), (2,))
        (g,) = F.autograd.grad(loss, x, create_graph=create)
        return (g * g).sum()

    x = t64((4, 1, 3), 3)
    (analytic,) = F.autograd.grad(grad_sq(x, True), x)
    base = x.detach().numpy().copy()
    numeric = np.zeros_like(base)
    eps = 1e-6
    for i in np.ndindex(base.shape):
        vals = []
        for d in (eps, -eps):
            p = base.copy()
            p[i] += d
            vals.append(grad_sq(F.from_numpy(p).requires_grad_(True), False).item())
        numeric[i] = (vals[0] - vals[1]) / (2 * eps)
    np.testing.assert_allclose(analytic.numpy(), numeric, rtol=1e-5, atol=1e-7)


def test_ctc_log_alpha_is_differentiable():
    targets = F.tensor([[1, 2], [1, 0]])

    def fn(x):
        _, log_alpha = F._ctc_loss(NF.log_softmax(x, -1), targets, [4, 3], [2, 1])
        return log_alpha.exp()  # unreachable states: exp(-inf) = 0, constant

    check(fn, (t64((4, 2, 3), 4),))


def test_ctc_backward_kernel_of_forward_outputs():
    """_ctc_loss_backward fed with _ctc_loss's own outputs, differentiated twice."""
    targets = F.tensor([[1, 2], [2, 2]])

    def fn(x, grad):
        lp = NF.log_softmax(x, -1)
        nll, log_alpha = F._ctc_loss(lp, targets, [4, 4], [2, 2])
        return F._ctc_loss_backward(grad, lp, targets, [4, 4], [2, 2], nll, log_alpha, 0)

    check(fn, (t64((4, 2, 3), 5), t64((2,), 6)))


# ---- recurrent cells -----------------------------------------------------------------------


def test_lstm_cell_module_double_backward():
    cell = nn.LSTMCell(3, 2, dtype=F.float64)
    check(lambda x, h, c: cell(x, (h, c)), (t64((2, 3), 0), t64((2, 2), 1), t64((2, 2), 2)))


def test_gru_cell_module_double_backward():
    cell = nn.GRUCell(3, 2, dtype=F.float64)
    check(lambda x, h: cell(x, h), (t64((2, 3), 0), t64((2, 2), 1)))


def test_lstm_cell_double_backward_weights():
    def fn(x, h, c, w_ih, w_hh, b):
        ig, hg = F.matmul(x, w_ih.t()), F.matmul(h, w_hh.t())
        hy, cy, _ = F._thnn_fused_lstm_cell(ig, hg, c, b, b)
        return hy, cy

    inputs = (t64((2, 2), 0), t64((2, 2), 1), t64((2, 2), 2))
    check(fn, inputs + (t64((8, 2), 3), t64((8, 2), 4), t64((8,), 5)))


@pytest.mark.parametrize("bias", [True, False])
def test_lstm_backward_kernel_of_forward_outputs(bias):
    """The backward kernel reads cy and the workspace: both are the forward's outputs."""

    def fn(ig, hg, cx, ghy, gcy, *b):
        _, cy, ws = F._thnn_fused_lstm_cell(ig, hg, cx, *b)
        return F._thnn_fused_lstm_cell_backward(ghy, gcy, cx, cy, ws, bias)[1:4:2]

    inputs = (t64((2, 8), 0), t64((2, 8), 1), t64((2, 2), 2), t64((2, 2), 3), t64((2, 2), 4))
    check(fn, inputs + ((t64((8,), 5), t64((8,), 6)) if bias else ()))


def test_lstm_backward_kernel_without_grad_cy():
    def fn(ghy, cx, cy, ws):
        return F._thnn_fused_lstm_cell_backward(ghy, None, cx, cy, ws, True)[::2]

    check(fn, (t64((2, 2), 0), t64((2, 2), 1), t64((2, 2), 2), t64((2, 8), 3, 0.1, 0.9)))


def test_gru_backward_kernel_of_forward_outputs():
    def fn(ig, hg, hx, ghy, bi, bh):
        _, ws = F._thnn_fused_gru_cell(ig, hg, hx, bi, bh)
        return F._thnn_fused_gru_cell_backward(ghy, ws, True)

    inputs = (t64((2, 6), 0), t64((2, 6), 1), t64((2, 2), 2), t64((2, 2), 3))
    check(fn, inputs + (t64((6,), 4), t64((6,), 5)))


def test_cell_workspace_is_differentiable():
    # The workspace holds the activated gates: its gradient reaches the gate inputs.
    ig, hg, cx = t64((1, 4), 0), t64((1, 4), 1), t64((1, 1), 2)
    _, _, ws = F._thnn_fused_lstm_cell(ig, hg, cx)
    (g,) = F.autograd.grad(ws.sum(), ig)
    pre = (ig + hg).detach().numpy()[0]
    s = 1 / (1 + np.exp(-pre))
    expected = s * (1 - s)
    expected[2] = 1 - np.tanh(pre[2]) ** 2
    np.testing.assert_allclose(g.numpy()[0], expected, rtol=1e-12)
