"""nn.grad: the input and weight gradients of conv1d/2d/3d, against autograd and by hand."""

from __future__ import annotations

import numpy as np
import pytest
from _helpers import f64, np_of, randn64

import flambeau
from flambeau import nn
from flambeau.autograd import gradcheck
from flambeau.nn import functional as F

CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}

# (in_channels, out_channels, spatial size, kernel, stride, padding, dilation, groups);
# an int stands for every spatial dimension, as the functions accept.
CASES = [
    (1, 1, 5, 2, 1, 0, 1, 1),
    (2, 3, 7, 3, 2, 1, 1, 1),
    (4, 2, 6, 2, 1, 2, 2, 2),
    (3, 3, 8, 3, 3, 0, 1, 3),  # depthwise; the stride leaves the last rows unread
    (2, 4, 5, 1, 2, 1, 1, 2),
]


def tuple_of(value, nd, step):
    """A per-dimension tuple differing across dimensions (stride, padding...)."""
    return tuple(value + step * i for i in range(nd))


def make(nd, case, seed):
    cin, cout, size, kernel, _, _, _, groups = case
    x = randn64(2, cin, *[size] * nd, seed=seed)
    w = randn64(cout, cin // groups, *[kernel] * nd, seed=seed + 1)
    return x, w


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("case", CASES)
def test_gradients_match_autograd(nd, case):
    stride, padding, dilation, groups = case[4:]
    x, w = make(nd, case, seed=nd)
    out = CONV[nd](x, w, None, stride, padding, dilation, groups)
    g = randn64(*out.shape, requires_grad=False, seed=7)
    grad_x, grad_w = flambeau.autograd.grad(out, (x, w), g)
    grad_input = getattr(nn.grad, f"conv{nd}d_input")
    grad_weight = getattr(nn.grad, f"conv{nd}d_weight")
    gi = grad_input(x.shape, w, g, stride, padding, dilation, groups)
    gw = grad_weight(x, w.shape, g, stride, padding, dilation, groups)
    assert gi.shape == x.shape and gw.shape == w.shape
    np.testing.assert_allclose(np_of(gi), np_of(grad_x), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np_of(gw), np_of(grad_w), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("nd", [2, 3])
def test_per_dimension_arguments(nd):
    stride, padding, dilation = tuple_of(1, nd, 1), tuple_of(0, nd, 1), tuple_of(1, nd, 1)
    x = randn64(1, 2, *tuple_of(6, nd, 2), seed=3)
    w = randn64(3, 2, *tuple_of(2, nd, 1), seed=4)
    out = CONV[nd](x, w, None, stride, padding, dilation)
    g = randn64(*out.shape, requires_grad=False, seed=5)
    grad_x, grad_w = flambeau.autograd.grad(out, (x, w), g)
    gi = getattr(nn.grad, f"conv{nd}d_input")(list(x.shape), w, g, stride, padding, dilation)
    gw = getattr(nn.grad, f"conv{nd}d_weight")(x, tuple(w.shape), g, stride, padding, dilation)
    np.testing.assert_allclose(np_of(gi), np_of(grad_x), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np_of(gw), np_of(grad_w), rtol=1e-12, atol=1e-12)


def test_conv1d_gradients_by_hand():
    # out[t] = sum_k w[k] x[2t + k]: x of 5, kernel 2, stride 2 -> 2 outputs.
    x = f64([[[1.0, 2.0, 3.0, 4.0, 5.0]]])
    w = f64([[[10.0, -1.0]]])
    g = f64([[[1.0, 2.0]]])
    gi = nn.grad.conv1d_input((1, 1, 5), w, g, stride=2)
    np.testing.assert_array_equal(np_of(gi), [[[10.0, -1.0, 20.0, -2.0, 0.0]]])
    gw = nn.grad.conv1d_weight(x, (1, 1, 2), g, stride=2)
    np.testing.assert_array_equal(np_of(gw), [[[1 * 1 + 2 * 3, 1 * 2 + 2 * 4]]])


def test_gradients_match_finite_differences():
    x, w = make(2, CASES[1], seed=11)
    g = randn64(2, 3, 4, 4, requires_grad=False, seed=12)
    stride, padding = 2, 1

    def loss(x_, w_):
        return float((F.conv2d(x_, w_, None, stride, padding) * g).sum())

    gi = np_of(nn.grad.conv2d_input(x.shape, w, g, stride, padding))
    gw = np_of(nn.grad.conv2d_weight(x, w.shape, g, stride, padding))
    eps = 1e-6
    rng = np.random.default_rng(0)
    for tensor, analytic, which in ((x, gi, 0), (w, gw, 1)):
        base = np_of(tensor)
        for flat in rng.choice(base.size, 8, replace=False):
            index = np.unravel_index(flat, base.shape)
            plus, minus = base.copy(), base.copy()
            plus[index] += eps
            minus[index] -= eps
            args_plus = [np_of(x), np_of(w)]
            args_minus = [np_of(x), np_of(w)]
            args_plus[which], args_minus[which] = plus, minus
            numeric = (loss(*map(f64, args_plus)) - loss(*map(f64, args_minus))) / (2 * eps)
            assert analytic[index] == pytest.approx(numeric, rel=1e-6, abs=1e-8)


def test_the_gradients_are_differentiable():
    w = randn64(2, 1, 2, seed=1)
    g = randn64(1, 2, 3, seed=2)
    x = randn64(1, 1, 4, seed=3)
    assert gradcheck(lambda w_, g_: nn.grad.conv1d_input((1, 1, 4), w_, g_), (w, g))
    assert gradcheck(lambda x_, g_: nn.grad.conv1d_weight(x_, (2, 1, 2), g_), (x, g))


def test_functional_grad_is_nn_grad():
    assert F.grad is nn.grad
    assert nn.grad.__all__ == [
        "conv1d_input",
        "conv1d_weight",
        "conv2d_input",
        "conv2d_weight",
        "conv3d_input",
        "conv3d_weight",
    ]


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_values_match_pytorch(nd):
    torch = pytest.importorskip("torch")
    import torch.nn.grad as torch_grad

    case = (4, 2, 6, 2, 2, 1, 2, 2)
    stride, padding, dilation, groups = case[4:]
    x, w = make(nd, case, seed=21)
    out_shape = CONV[nd](x, w, None, stride, padding, dilation, groups).shape
    g = randn64(*out_shape, requires_grad=False, seed=22)
    tx, tw, tg = (torch.from_numpy(np_of(t).copy()) for t in (x, w, g))
    args = (stride, padding, dilation, groups)
    pairs = [
        (
            getattr(nn.grad, f"conv{nd}d_input")(x.shape, w, g, *args),
            getattr(torch_grad, f"conv{nd}d_input")(tx.shape, tw, tg, *args),
        ),
        (
            getattr(nn.grad, f"conv{nd}d_weight")(x, w.shape, g, *args),
            getattr(torch_grad, f"conv{nd}d_weight")(tx, tw.shape, tg, *args),
        ),
    ]
    for ours, theirs in pairs:
        np.testing.assert_allclose(np_of(ours), theirs.numpy(), rtol=1e-10, atol=1e-12)
