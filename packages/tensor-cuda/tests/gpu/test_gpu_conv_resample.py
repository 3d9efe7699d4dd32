"""Convolution and resampling on CUDA against flambeau's CPU kernels: conv1d/2d/3d and
the transposed forms (stride, padding, dilation, groups, depthwise, pointwise, bias or
none, larger batches) with the gradients of input, weight and bias; interpolate in
every mode (nearest, nearest-exact, linear, bilinear, bicubic, trilinear, area;
align_corners, antialias) and the reflect/replicate/circular paddings, with their
gradients; batch norm in training mode (var); and a small Conv2d + BatchNorm2d +
Linear model trained a few SGD steps on both devices, the losses falling and equal."""

from __future__ import annotations

import pytest
from samples import DEVICE, assert_close, sample

import flambeau
import flambeau.nn as nn
import flambeau.nn.functional as F

COMPUTE = [flambeau.float32, flambeau.float64]


def _grads(fn, *inputs):
    """fn(*inputs) and the gradients of a weighted sum of it for every input (None
    inputs pass through)."""
    leaves = [None if x is None else x.detach().clone().requires_grad_(True) for x in inputs]
    out = fn(*leaves)
    g = flambeau.Generator().manual_seed(7)
    weights = flambeau.randn(out.shape, generator=g, dtype=out.dtype).to(out.device)
    (out * weights).sum().backward()
    return [out.detach()] + [x.grad for x in leaves if x is not None]


def _compare(fn, *inputs, dtype=flambeau.float32):
    want = _grads(fn, *inputs)
    got = _grads(fn, *[None if x is None else x.to(DEVICE) for x in inputs])
    tol = (2e-4, 2e-4) if dtype == flambeau.float32 else (1e-10, 1e-10)
    for g, w in zip(got, want):
        assert_close(g, w, *tol)


CONV2D = [
    {},
    {"stride": 2, "padding": 1},
    {"padding": 2, "dilation": 2},
    {"stride": (2, 1), "padding": (0, 1)},
    {"groups": 2, "padding": 1},
    {"groups": 4},  # depthwise
    {"padding": "same"},
]


@pytest.mark.parametrize("kwargs", CONV2D)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("dtype", COMPUTE)
def test_conv2d_forward_and_gradients(dtype, kwargs, bias):
    x = sample(dtype, (3, 4, 9, 8), scale=1.0)
    w = sample(
        dtype,
        (6 if kwargs.get("groups", 1) != 4 else 4, 4 // kwargs.get("groups", 1), 3, 3),
        seed=2,
        scale=0.5,
    )
    b = sample(dtype, (w.shape[0],), seed=3) if bias else None
    _compare(lambda x, w, b: F.conv2d(x, w, b, **kwargs), x, w, b, dtype=dtype)


@pytest.mark.parametrize("dtype", COMPUTE)
def test_conv1d_conv3d_and_pointwise(dtype):
    x1, w1 = sample(dtype, (2, 3, 20), scale=1.0), sample(dtype, (5, 3, 4), seed=2, scale=0.5)
    _compare(lambda x, w: F.conv1d(x, w, stride=3, padding=2, dilation=2), x1, w1, dtype=dtype)
    x3, w3 = sample(dtype, (2, 2, 5, 6, 7), scale=1.0), sample(dtype, (4, 2, 2, 3, 2), seed=2)
    b3 = sample(dtype, (4,), seed=3)
    _compare(
        lambda x, w, b: F.conv3d(x, w, b, stride=(1, 2, 1), padding=1), x3, w3, b3, dtype=dtype
    )
    # 1x1: the input is its own column matrix, with one group and with several.
    xp, wp = sample(dtype, (3, 4, 5, 5)), sample(dtype, (6, 4, 1, 1), seed=2)
    _compare(lambda x, w: F.conv2d(x, w), xp, wp, dtype=dtype)
    wg = sample(dtype, (6, 2, 1, 1), seed=2)
    _compare(lambda x, w: F.conv2d(x, w, groups=2), xp, wg, dtype=dtype)


@pytest.mark.parametrize("dtype", COMPUTE)
def test_transposed_convolutions(dtype):
    x, w = sample(dtype, (2, 4, 5, 6), scale=1.0), sample(dtype, (4, 3, 3, 3), seed=2, scale=0.5)
    b = sample(dtype, (3,), seed=3)
    _compare(
        lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1),
        x,
        w,
        b,
        dtype=dtype,
    )
    wg = sample(dtype, (4, 2, 2, 2), seed=4)
    _compare(lambda x, w: F.conv_transpose2d(x, w, groups=2, dilation=2), x, wg, dtype=dtype)
    x1, w1 = sample(dtype, (2, 3, 7)), sample(dtype, (3, 2, 3), seed=2)
    _compare(lambda x, w: F.conv_transpose1d(x, w, stride=3), x1, w1, dtype=dtype)


def test_conv_of_a_larger_batch():
    # The column matrices of many samples in one strided batched GEMM.
    x, w = (
        sample(flambeau.float32, (40, 8, 64, 64), scale=1.0),
        sample(flambeau.float32, (16, 8, 3, 3), seed=2, scale=0.2),
    )
    _compare(lambda x, w: F.conv2d(x, w, padding=1), x, w)


def test_conv_empty_batch_and_channels():
    w = sample(flambeau.float32, (4, 3, 3, 3))
    for x in (flambeau.zeros(0, 3, 5, 5), sample(flambeau.float32, (2, 3, 5, 5))):
        got = F.conv2d(x.to(DEVICE), w.to(DEVICE))
        assert_close(got, F.conv2d(x, w))


# ---- resampling ------------------------------------------------------------------

INTERPOLATE = [
    ({"scale_factor": 2, "mode": "nearest"}, 4),
    ({"size": (7, 5), "mode": "nearest"}, 4),
    ({"size": (7, 5), "mode": "nearest-exact"}, 4),
    ({"scale_factor": 1.7, "mode": "bilinear", "align_corners": False}, 4),
    ({"size": (3, 11), "mode": "bilinear", "align_corners": True}, 4),
    ({"scale_factor": 2, "mode": "bicubic", "align_corners": False}, 4),
    ({"size": (6, 4), "mode": "bicubic", "align_corners": True}, 4),
    ({"size": (5, 3), "mode": "area"}, 4),
    ({"scale_factor": 0.5, "mode": "bilinear", "antialias": True}, 4),
    ({"size": (4, 3), "mode": "bicubic", "antialias": True}, 4),
    ({"scale_factor": 2.5, "mode": "linear", "align_corners": False}, 3),
    ({"size": 4, "mode": "linear", "align_corners": True}, 3),
    ({"scale_factor": 2, "mode": "trilinear", "align_corners": False}, 5),
    ({"size": (3, 4, 5), "mode": "nearest"}, 5),
]


@pytest.mark.parametrize("kwargs, rank", INTERPOLATE)
@pytest.mark.parametrize("dtype", COMPUTE)
def test_interpolate_and_gradient(dtype, kwargs, rank):
    shape = {3: (2, 3, 9), 4: (2, 3, 6, 7), 5: (1, 2, 4, 5, 3)}[rank]
    x = sample(dtype, shape, scale=1.0)
    _compare(lambda x: F.interpolate(x, **kwargs), x, dtype=dtype)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("dtype", COMPUTE)
def test_padding_modes_and_gradient(dtype, mode):
    x = sample(dtype, (2, 3, 6, 5), scale=1.0)
    _compare(lambda x: F.pad(x, (2, 1, 3, 2), mode=mode), x, dtype=dtype)
    x1 = sample(dtype, (2, 3, 8))
    _compare(lambda x: F.pad(x, (3, 2), mode=mode), x1, dtype=dtype)


# ---- batch norm (training) and a small model ------------------------------------


@pytest.mark.parametrize("dtype", COMPUTE)
def test_batch_norm_training_statistics_and_gradients(dtype):
    x = sample(dtype, (8, 3, 5, 4))
    w, b = sample(dtype, (3,), seed=2), sample(dtype, (3,), seed=3)
    rm, rv = flambeau.zeros(3, dtype=dtype), flambeau.ones(3, dtype=dtype)
    rm_d, rv_d = rm.to(DEVICE), rv.to(DEVICE)
    want = _grads(lambda x, w, b: F.batch_norm(x, rm, rv, w, b, True, 0.1), x, w, b)
    got = _grads(
        lambda x, w, b: F.batch_norm(x, rm_d, rv_d, w, b, True, 0.1),
        *[t.to(DEVICE) for t in (x, w, b)],
    )
    tol = (1e-4, 1e-4) if dtype == flambeau.float32 else (1e-10, 1e-10)
    for g, ww in zip(got, want):
        assert_close(g, ww, *tol)
    assert_close(rm_d, rm, *tol)
    assert_close(rv_d, rv, *tol)


def _model():
    flambeau.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(8 * 4 * 4, 5),
    )


def _train(model, x, y, steps=5):
    opt = flambeau.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def test_conv_batchnorm_linear_model_trains_like_the_cpu():
    x = sample(flambeau.float32, (16, 3, 8, 8), scale=1.0)
    y = flambeau.tensor([k % 5 for k in range(16)])
    want = _train(_model(), x, y)
    got = _train(_model().to(DEVICE), x.to(DEVICE), y.to(DEVICE))
    assert got[-1] < got[0]
    for g, w in zip(got, want):
        assert abs(g - w) <= 1e-3 * max(1.0, abs(w)), (got, want)
