"""Losses: forward against NumPy for every reduction, gradcheck in float64, argument checks."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from _helpers import f64, np_of, randn64

from flambeau import nn
from flambeau.autograd import gradcheck
from flambeau.nn import functional as F

REDUCE = {"none": lambda v: v, "mean": np.mean, "sum": np.sum}


def reduce_np(v, reduction):
    return REDUCE[reduction](v)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_l1_mse_soft_margin(reduction):
    x, y = randn64(3, 4), randn64(3, 4, seed=1, requires_grad=False)
    nx, ny = np_of(x), np_of(y)
    cases = [
        (nn.L1Loss(reduction=reduction), np.abs(nx - ny)),
        (nn.MSELoss(reduction=reduction), (nx - ny) ** 2),
        (nn.SoftMarginLoss(reduction=reduction), np.log1p(np.exp(-nx * np.sign(ny)))),
    ]
    for i, (loss, ref) in enumerate(cases):
        target = f64(np.sign(ny)) if i == 2 else y
        np.testing.assert_allclose(np_of(loss(x, target)), reduce_np(ref, reduction), rtol=1e-12)
        assert gradcheck(lambda a, loss=loss, target=target: loss(a, target), (x,))


def test_weighted_l1_and_mse():
    x, y, w = randn64(2, 3), randn64(2, 3, seed=1), f64(np.arange(1.0, 7.0).reshape(2, 3))
    nx, ny, nw = np_of(x), np_of(y), np_of(w)
    got = F.mse_loss(x, y, weight=w)
    np.testing.assert_allclose(np_of(got), ((nx - ny) ** 2 * nw).sum() / nw.sum())
    np.testing.assert_allclose(np_of(F.l1_loss(x, y, weight=w, reduction="sum")),
                               (np.abs(nx - ny) * nw).sum())  # fmt: skip
    with pytest.raises(ValueError, match="Weights and input must have the same size"):
        F.l1_loss(x, y, weight=f64([1.0]))


def test_target_size_warning_and_legacy_reduction():
    x = randn64(3, 1)
    with pytest.warns(UserWarning, match="different to the input size"):
        F.mse_loss(x, randn64(3, requires_grad=False))
    with pytest.warns(UserWarning, match="reduction='sum'"):
        loss = nn.L1Loss(size_average=False)
    assert loss.reduction == "sum"
    with pytest.raises(ValueError, match="bad is not a valid value for reduction"):
        nn.L1Loss(reduction="bad")(x, x)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_margin_ranking_and_hinge(reduction):
    a, b = randn64(6), randn64(6, seed=3)
    t = f64([1.0, -1.0, 1.0, -1.0, 1.0, -1.0])
    na, nb, nt = np_of(a), np_of(b), np_of(t)
    loss = nn.MarginRankingLoss(margin=0.3, reduction=reduction)
    ref = np.maximum(0, -nt * (na - nb) + 0.3)
    np.testing.assert_allclose(np_of(loss(a, b, t)), reduce_np(ref, reduction), rtol=1e-12)
    assert gradcheck(lambda p, q: loss(p, q, t), (a, b))
    hinge = nn.HingeEmbeddingLoss(margin=0.5, reduction=reduction)
    ref = np.where(nt == 1, na, np.maximum(0, 0.5 - na))
    np.testing.assert_allclose(np_of(hinge(a, t)), reduce_np(ref, reduction), rtol=1e-12)
    assert gradcheck(lambda p: hinge(p, t), (a,))
    with pytest.raises(RuntimeError, match="should have same dimension"):
        loss(a.reshape(2, 3), b, t)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_cosine_embedding(reduction):
    a, b = randn64(4, 3), randn64(4, 3, seed=5)
    t = f64([1.0, -1.0, -1.0, 1.0])
    na, nb = np_of(a), np_of(b)
    cos = (na * nb).sum(1) / np.sqrt(((na * na).sum(1) + 1e-12) * ((nb * nb).sum(1) + 1e-12))
    ref = np.where(np_of(t) == 1, 1 - cos, np.maximum(0, cos - 0.1))
    loss = nn.CosineEmbeddingLoss(margin=0.1, reduction=reduction)
    np.testing.assert_allclose(np_of(loss(a, b, t)), reduce_np(ref, reduction), rtol=1e-12)
    assert gradcheck(lambda p, q: loss(p, q, t), (a, b))
    # A 0-D target goes with 1-D inputs.
    assert loss(randn64(3), randn64(3, seed=2), f64(1.0)).dim() == 0
    with pytest.raises(RuntimeError, match="1D target tensor expects 2D input tensors"):
        loss(randn64(3), randn64(3), t)
    with pytest.raises(RuntimeError, match="0D or 1D target tensor expected"):
        loss(a, b, f64(np.ones((4, 1))))


@pytest.mark.parametrize("log_input", [True, False])
@pytest.mark.parametrize("full", [True, False])
def test_poisson_nll(log_input, full):
    rng = np.random.default_rng(0)
    rate = rng.uniform(0.5, 3.0, (3, 4))
    x = f64(np.log(rate) if log_input else rate, True)
    y = f64(rng.integers(0, 6, (3, 4)).astype(float))
    nx, ny = np_of(x), np_of(y)
    ref = np.exp(nx) - ny * nx if log_input else nx - ny * np.log(nx + 1e-8)
    if full:
        with np.errstate(divide="ignore", invalid="ignore"):
            st = ny * np.log(ny) - ny + 0.5 * np.log(2 * math.pi * ny)
        ref = ref + np.where(ny <= 1, 0, st)
    loss = nn.PoissonNLLLoss(log_input=log_input, full=full)
    np.testing.assert_allclose(np_of(loss(x, y)), ref.mean(), rtol=1e-12)
    assert gradcheck(lambda p: loss(p, y), (x,))


def test_gaussian_nll():
    x, y = randn64(4, 3), randn64(4, 3, seed=1, requires_grad=False)
    var = f64(np.random.default_rng(1).uniform(0.5, 2.0, (4, 3)), True)
    nx, ny, nv = np_of(x), np_of(y), np_of(var)
    ref = 0.5 * (np.log(nv) + (nx - ny) ** 2 / nv)
    loss = nn.GaussianNLLLoss(full=True, reduction="sum")
    np.testing.assert_allclose(np_of(loss(x, y, var)), (ref + 0.5 * np.log(2 * np.pi)).sum())
    assert gradcheck(lambda p, v: nn.GaussianNLLLoss()(p, y, v), (x, var))
    # Homoscedastic forms: one variance per sample, or broadcast over one dimension.
    v1 = f64(np.full(4, 2.0))
    np.testing.assert_allclose(
        np_of(F.gaussian_nll_loss(x, y, v1, reduction="none")),
        0.5 * (np.log(2.0) + (nx - ny) ** 2 / 2.0),
    )
    assert F.gaussian_nll_loss(x, y, f64(np.ones((4, 1)))).dim() == 0
    assert float(F.gaussian_nll_loss(x, y, 1.0)) == pytest.approx(0.5 * ((nx - ny) ** 2).mean())
    with pytest.raises(ValueError, match="var is of incorrect size"):
        F.gaussian_nll_loss(x, y, f64(np.ones((2, 2))))
    with pytest.raises(ValueError, match="var has negative entry"):
        F.gaussian_nll_loss(x, y, -1.0)
    # var below eps is clamped (without a gradient through the clamp).
    tiny = F.gaussian_nll_loss(x, y, f64(np.zeros((4, 3))), reduction="none")
    np.testing.assert_allclose(np_of(tiny), 0.5 * (np.log(1e-6) + (nx - ny) ** 2 / 1e-6))


@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("p", [1.0, 2.0])
def test_triplet_margin(swap, p):
    a, pos, neg = randn64(5, 3), randn64(5, 3, seed=1), randn64(5, 3, seed=2)
    na, npos, nneg = np_of(a), np_of(pos), np_of(neg)

    def dist(u, v):
        return np.sum(np.abs(u - v + 1e-6) ** p, axis=-1) ** (1 / p)

    d_neg = dist(na, nneg)
    if swap:
        d_neg = np.minimum(d_neg, dist(npos, nneg))
    ref = np.maximum(0, 1.5 + dist(na, npos) - d_neg)
    loss = nn.TripletMarginLoss(margin=1.5, p=p, swap=swap, reduction="none")
    np.testing.assert_allclose(np_of(loss(a, pos, neg)), ref, rtol=1e-10)
    assert gradcheck(lambda x, y, z: loss(x, y, z).sum(), (a, pos, neg))


def test_triplet_errors_and_distance_variant():
    a = randn64(2, 3)
    with pytest.raises(ValueError, match="margin to be greater than 0"):
        nn.TripletMarginLoss(margin=0)
    with pytest.raises(RuntimeError, match="anchor 2D, positive 1D, and negative 2D"):
        F.triplet_margin_loss(a, randn64(3), a)
    loss = nn.TripletMarginWithDistanceLoss(
        distance_function=lambda x, y: 1 - F.cosine_similarity(x, y), margin=0.5
    )
    b, c = randn64(2, 3, seed=1), randn64(2, 3, seed=2)
    na, nb, nc = np_of(a), np_of(b), np_of(c)

    def cd(u, v):
        return 1 - (u * v).sum(1) / (np.linalg.norm(u, axis=1) * np.linalg.norm(v, axis=1))

    ref = np.maximum(0, 0.5 + cd(na, nb) - cd(na, nc)).mean()
    np.testing.assert_allclose(np_of(loss(a, b, c)), ref, rtol=1e-12)


def test_losses_have_no_extra_repr():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert repr(nn.MSELoss()) == "MSELoss()"
        assert nn.GaussianNLLLoss().reduction == "mean"
