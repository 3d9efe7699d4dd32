"""Criteria against hand-derived values, and their gradients against finite differences."""

from __future__ import annotations

import math

import pytest
from gradcheck import numeric_grad, tensors_of

import flambeau
from flambeau.legacy import nn

D = flambeau.float64


def t(*values):
    return flambeau.tensor(values, dtype=D)


def fd_check(crit, input, target, atol=1e-6):
    crit.forward(input, target)
    grad = crit.backward(input, target)
    grads = tensors_of(grad)
    for x, g in zip(tensors_of(input), grads):
        num = numeric_grad(lambda: crit.forward(input, target), x, 1e-6)
        assert flambeau.allclose(g, num, atol=atol, rtol=1e-5), (
            f"{crit!r}: max error {float((g - num).abs().max())}"
        )


def test_mse_abs_smoothl1_by_hand():
    x, y = t(1.0, 2.0, 4.0), t(0.0, 2.5, 1.0)
    assert nn.MSECriterion().forward(x, y) == pytest.approx((1 + 0.25 + 9) / 3)
    assert nn.MSECriterion(False).forward(x, y) == pytest.approx(10.25)
    assert flambeau.allclose(nn.MSECriterion().backward(x, y), t(2.0, -1.0, 6.0) / 3)
    assert nn.AbsCriterion().forward(x, y) == pytest.approx((1 + 0.5 + 3) / 3)
    assert flambeau.allclose(nn.AbsCriterion(False).backward(x, y), t(1.0, -1.0, 1.0))
    # smooth L1: |d| = 1 -> 0.5; 0.5 -> 0.125; 3 -> 2.5
    assert nn.SmoothL1Criterion().forward(x, y) == pytest.approx((0.5 + 0.125 + 2.5) / 3)
    assert flambeau.allclose(nn.SmoothL1Criterion(False).backward(x, y), t(1.0, -0.5, 1.0))


def test_class_nll_by_hand():
    logp = flambeau.log(t(0.2, 0.3, 0.5, 0.6, 0.1, 0.3).view(2, 3))
    target = flambeau.tensor([2, 0])
    crit = nn.ClassNLLCriterion()
    assert crit.forward(logp, target) == pytest.approx(-(math.log(0.5) + math.log(0.6)) / 2)
    g = crit.backward(logp, target)
    assert flambeau.allclose(g, t(0, 0, -0.5, -0.5, 0, 0).view(2, 3))
    # weighted: mean divides by the sum of the targets' weights (PyTorch's NLLLoss)
    w = t(2.0, 1.0, 3.0)
    crit = nn.ClassNLLCriterion(w)
    expected = -(3 * math.log(0.5) + 2 * math.log(0.6)) / 5
    assert crit.forward(logp, target) == pytest.approx(expected)
    assert flambeau.allclose(crit.backward(logp, target), t(0, 0, -0.6, -0.4, 0, 0).view(2, 3))
    assert nn.ClassNLLCriterion(w, False).forward(logp, target) == pytest.approx(
        -(3 * math.log(0.5) + 2 * math.log(0.6))
    )
    # a single sample with an integer target
    assert nn.ClassNLLCriterion().forward(logp[0], 1) == pytest.approx(-math.log(0.3))
    with pytest.raises(IndexError):
        nn.ClassNLLCriterion().forward(logp, flambeau.tensor([3, 0]))


def test_cross_entropy_and_spatial_nll():
    x = t(1.0, 2.0, 0.5).view(1, 3)
    lse = math.log(math.exp(1) + math.exp(2) + math.exp(0.5))
    crit = nn.CrossEntropyCriterion()
    assert crit.forward(x, flambeau.tensor([1])) == pytest.approx(lse - 2.0)
    soft = flambeau.softmax(x, 1)
    assert flambeau.allclose(crit.backward(x, flambeau.tensor([1])), soft - t(0, 1, 0))
    flambeau.manual_seed(0)
    logp = flambeau.log_softmax(flambeau.randn(2, 3, 2, 2, dtype=D), 1)
    tgt = flambeau.randint(0, 3, (2, 2, 2))
    manual = (
        -sum(
            float(logp[n, int(tgt[n, i, j]), i, j])
            for n in range(2)
            for i in range(2)
            for j in range(2)
        )
        / 8
    )
    assert nn.SpatialClassNLLCriterion().forward(logp, tgt) == pytest.approx(manual)
    fd_check(nn.SpatialClassNLLCriterion(), logp.clone(), tgt)


def test_bce_kl_margins_by_hand():
    p, y = t(0.9, 0.2), t(1.0, 0.0)
    assert nn.BCECriterion().forward(p, y) == pytest.approx(-(math.log(0.9) + math.log(0.8)) / 2)
    w = t(2.0, 0.5)
    assert nn.BCECriterion(w, False).forward(p, y) == pytest.approx(
        -(2 * math.log(0.9) + 0.5 * math.log(0.8))
    )
    logq, target = flambeau.log(t(0.25, 0.75)), t(0.5, 0.5)
    kl = 0.5 * math.log(0.5 / 0.25) + 0.5 * math.log(0.5 / 0.75)
    assert nn.DistKLDivCriterion().forward(logq, target) == pytest.approx(kl / 2)
    x, lab = t(0.5, -2.0, 0.3), t(1.0, -1.0, -1.0)
    assert nn.MarginCriterion().forward(x, lab) == pytest.approx((0.5 + 0 + 1.3) / 3)
    soft = (math.log1p(math.exp(-0.5)) + math.log1p(math.exp(-2)) + math.log1p(math.exp(0.3))) / 3
    assert nn.SoftMarginCriterion().forward(x, lab) == pytest.approx(soft)
    d = t(0.5, 0.2, 1.5)
    assert nn.HingeEmbeddingCriterion(1.0).forward(d, lab) == pytest.approx((0.5 + 0.8 + 0) / 3)


def test_multi_margin_and_multilabel_by_hand():
    x = t(0.1, 0.2, 0.4, 0.8).view(1, 4)
    # y = 3: terms max(0, 1 - 0.8 + x_i) for i = 0, 1, 2
    expected = ((0.3) + (0.4) + (0.6)) / 4
    assert nn.MultiMarginCriterion().forward(x, flambeau.tensor([3])) == pytest.approx(expected)
    assert nn.MultiMarginCriterion(2).forward(x, flambeau.tensor([3])) == pytest.approx(
        (0.09 + 0.16 + 0.36) / 4
    )
    w = t(1.0, 1.0, 1.0, 2.0)
    assert nn.MultiMarginCriterion(1, w).forward(x, flambeau.tensor([3])) == pytest.approx(
        2 * expected
    )
    # targets {3, 0}: pairs (j in {3, 0}) x (i in {1, 2})
    tgt = flambeau.tensor([[3, 0, -1, 1]])
    pairs = [1 - (0.8 - 0.2), 1 - (0.8 - 0.4), 1 - (0.1 - 0.2), 1 - (0.1 - 0.4)]
    assert nn.MultiLabelMarginCriterion().forward(x, tgt) == pytest.approx(sum(pairs) / 4)
    y = t(1.0, 0.0, 0.0, 1.0).view(1, 4)
    sig = [1 / (1 + math.exp(-v)) for v in (0.1, 0.2, 0.4, 0.8)]
    ml = -(math.log(sig[0]) + math.log(1 - sig[1]) + math.log(1 - sig[2]) + math.log(sig[3])) / 4
    assert nn.MultiLabelSoftMarginCriterion().forward(x, y) == pytest.approx(ml)


def test_pair_criteria_by_hand():
    a, b = t(1.0, 0.0), t(1.0, 1.0)
    cos = 1 / math.sqrt(2)
    crit = nn.CosineEmbeddingCriterion(0.5)
    assert crit.forward([a, b], t(1.0)) == pytest.approx(1 - cos)
    assert crit.forward([a, b], t(-1.0)) == pytest.approx(cos - 0.5)
    l1 = nn.L1HingeEmbeddingCriterion(2.0)
    assert l1.forward([a, b], 1) == pytest.approx(1.0)
    assert l1.forward([a, b], -1) == pytest.approx(1.0)
    rank = nn.MarginRankingCriterion(0.5)
    assert rank.forward([t(1.0, 2.0), t(1.2, 0.0)], t(1.0, -1.0)) == pytest.approx((0.7 + 2.5) / 2)


def test_weighted_mse_multi_and_parallel():
    x, y, w = t(1.0, 2.0), t(1.0, 1.0), t(2.0, 3.0)
    # Torch7 weights the target: (1 - 2)^2 + (2 - 3)^2
    assert nn.WeightedMSECriterion(w).forward(x, y) == pytest.approx(1.0)
    multi = nn.MultiCriterion().add(nn.MSECriterion()).add(nn.AbsCriterion(), 0.5)
    assert multi.forward(x, y) == pytest.approx(0.5 + 0.25)
    assert flambeau.allclose(multi.backward(x, y), t(0, 1.0) + 0.5 * t(0, 0.5))
    par = nn.ParallelCriterion().add(nn.MSECriterion()).add(nn.AbsCriterion(), 2)
    assert par.forward([x, x], [y, t(0.0, 0.0)]) == pytest.approx(0.5 + 2 * 1.5)
    rep = nn.ParallelCriterion(True).add(nn.MSECriterion()).add(nn.MSECriterion())
    assert rep.forward([x, x], y) == pytest.approx(1.0)


def _r(*s):
    return flambeau.randn(*s, dtype=D)


GRAD_CASES = [
    ("MSE", lambda: nn.MSECriterion(), lambda: (_r(3, 4), _r(3, 4))),
    ("Abs", lambda: nn.AbsCriterion(False), lambda: (_r(3, 4), _r(3, 4))),
    ("SmoothL1", lambda: nn.SmoothL1Criterion(), lambda: (_r(3, 4) * 2, _r(3, 4))),
    (
        "ClassNLL",
        lambda: nn.ClassNLLCriterion(flambeau.rand(4, dtype=D) + 0.1),
        lambda: (_r(5, 4), flambeau.tensor([0, 3, 1, 1, 2])),
    ),
    (
        "CrossEntropy",
        lambda: nn.CrossEntropyCriterion(),
        lambda: (_r(5, 4), flambeau.tensor([0, 3, 1, 1, 2])),
    ),
    (
        "BCE",
        lambda: nn.BCECriterion(flambeau.rand(3, dtype=D)),
        lambda: (flambeau.rand(2, 3, dtype=D) * 0.8 + 0.1, flambeau.rand(2, 3, dtype=D)),
    ),
    (
        "DistKLDiv",
        lambda: nn.DistKLDivCriterion(),
        lambda: (_r(3, 4), flambeau.rand(3, 4, dtype=D)),
    ),
    (
        "Margin",
        lambda: nn.MarginCriterion(0.5),
        lambda: (_r(6), flambeau.tensor([1.0, -1, 1, -1, 1, -1], dtype=D)),
    ),
    (
        "SoftMargin",
        lambda: nn.SoftMarginCriterion(),
        lambda: (_r(6), flambeau.tensor([1.0, -1, 1, -1, 1, -1], dtype=D)),
    ),
    (
        "MultiMargin-p2",
        lambda: nn.MultiMarginCriterion(2, flambeau.rand(4, dtype=D), 0.7),
        lambda: (_r(3, 4), flambeau.tensor([0, 3, 2])),
    ),
    ("MultiMargin-1d", lambda: nn.MultiMarginCriterion(), lambda: (_r(4), flambeau.tensor([2]))),
    (
        "MultiLabelMargin",
        lambda: nn.MultiLabelMarginCriterion(),
        lambda: (_r(2, 4), flambeau.tensor([[1, 3, -1, 0], [2, -1, 1, 1]])),
    ),
    (
        "MultiLabelSoftMargin",
        lambda: nn.MultiLabelSoftMarginCriterion(),
        lambda: (_r(2, 4), (flambeau.rand(2, 4) > 0.5).double()),
    ),
    (
        "HingeEmbedding",
        lambda: nn.HingeEmbeddingCriterion(0.8),
        lambda: (
            flambeau.rand(6, dtype=D) * 1.5,
            flambeau.tensor([1.0, -1, 1, -1, -1, -1], dtype=D),
        ),
    ),
    ("L1HingeEmbedding", lambda: nn.L1HingeEmbeddingCriterion(5.0), lambda: ([_r(4), _r(4)], -1)),
    (
        "CosineEmbedding",
        lambda: nn.CosineEmbeddingCriterion(-0.5),
        lambda: ([_r(3, 4), _r(3, 4)], flambeau.tensor([1.0, -1, -1], dtype=D)),
    ),
    (
        "MarginRanking",
        lambda: nn.MarginRankingCriterion(0.3),
        lambda: ([_r(5), _r(5)], flambeau.tensor([1.0, -1, 1, -1, 1], dtype=D)),
    ),
    ("WeightedMSE", lambda: nn.WeightedMSECriterion(_r(4)), lambda: (_r(3, 4), _r(3, 4))),
]


@pytest.mark.parametrize("factory,make", [c[1:] for c in GRAD_CASES],
                         ids=[c[0] for c in GRAD_CASES])  # fmt: skip
def test_criterion_gradients(factory, make):
    flambeau.manual_seed(0)
    input, target = make()
    fd_check(factory(), input, target)
