"""Gradients of legacy modules and criteria against flambeau.nn.functional + autograd on the
same weights (skipped when flambeau-nn / flambeau-autograd are not installed)."""

from __future__ import annotations

import pytest

import flambeau
from flambeau.legacy import nn

F = pytest.importorskip("flambeau.nn.functional")
pytest.importorskip("flambeau.autograd")

D = flambeau.float64


def r(*s):
    return flambeau.randn(*s, dtype=D)


def leaf(t):
    return t.detach().clone().requires_grad_()


MODULES = [
    ("Linear", lambda: nn.Linear(4, 3), lambda: r(5, 4), lambda x, w, b: F.linear(x, w, b)),
    ("SpatialConvolution", lambda: nn.SpatialConvolution(2, 3, 3, 2, 2, 1, 1, 0),
     lambda: r(2, 2, 6, 5), lambda x, w, b: F.conv2d(x, w, b, (1, 2), (0, 1))),
    ("SpatialConvolutionMM", lambda: nn.SpatialConvolutionMM(2, 3, 3, 3, 1, 1, 1),
     lambda: r(2, 2, 4, 4), lambda x, w, b: F.conv2d(x, w.view(3, 2, 3, 3), b, 1, 1)),
    ("SpatialDilatedConvolution",
     lambda: nn.SpatialDilatedConvolution(2, 2, 3, 3, 1, 1, 2, 2, 2, 2),
     lambda: r(1, 2, 6, 6), lambda x, w, b: F.conv2d(x, w, b, 1, 2, 2)),
    ("SpatialFullConvolution", lambda: nn.SpatialFullConvolution(2, 3, 3, 3, 2, 2, 1, 1, 1, 1),
     lambda: r(2, 2, 3, 4), lambda x, w, b: F.conv_transpose2d(x, w, b, 2, 1, (1, 1))),
    ("VolumetricConvolution", lambda: nn.VolumetricConvolution(2, 2, 2, 3, 2, 1, 2, 1),
     lambda: r(1, 2, 4, 5, 4), lambda x, w, b: F.conv3d(x, w, b, (1, 1, 2))),
    ("TemporalConvolution", lambda: nn.TemporalConvolution(3, 4, 3, 2), lambda: r(2, 9, 3),
     lambda x, w, b: F.conv1d(x.transpose(1, 2), w.view(4, 3, 3).permute(0, 2, 1), b, 2)
     .transpose(1, 2)),
    ("SpatialMaxPooling", lambda: nn.SpatialMaxPooling(3, 3, 2, 2, 1, 1).ceil(),
     lambda: r(2, 2, 6, 6), lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True)),
    ("SpatialAveragePooling", lambda: nn.SpatialAveragePooling(2, 2, 2, 2), lambda: r(2, 2, 4, 4),
     lambda x: F.avg_pool2d(x, 2, 2)),
    ("BatchNormalization", lambda: nn.BatchNormalization(3), lambda: r(6, 3),
     lambda x, w, b: F.batch_norm(x, None, None, w, b, True, 0.1, 1e-5)),
    ("SpatialBatchNormalization", lambda: nn.SpatialBatchNormalization(2), lambda: r(3, 2, 2, 2),
     lambda x, w, b: F.batch_norm(x, None, None, w, b, True, 0.1, 1e-5)),
    ("SpatialCrossMapLRN", lambda: nn.SpatialCrossMapLRN(3, 0.3, 0.75, 2.0), lambda: r(2, 5, 2, 2),
     lambda x: F.local_response_norm(x, 3, 0.3, 0.75, 2.0)),
    ("PReLU", lambda: nn.PReLU(3), lambda: r(2, 3, 2, 2), lambda x, w: F.prelu(x, w)),
    ("ELU", lambda: nn.ELU(0.5), lambda: r(3, 4), lambda x: F.elu(x, 0.5)),
    ("LeakyReLU", lambda: nn.LeakyReLU(0.1), lambda: r(3, 4), lambda x: F.leaky_relu(x, 0.1)),
    ("SoftPlus", lambda: nn.SoftPlus(2), lambda: r(3, 4), lambda x: F.softplus(x, 2)),
    ("HardTanh", lambda: nn.HardTanh(), lambda: r(3, 4), lambda x: F.hardtanh(x)),
    ("SoftMax", lambda: nn.SoftMax(), lambda: r(3, 4), lambda x: F.softmax(x, 1)),
    ("LogSoftMax", lambda: nn.LogSoftMax(), lambda: r(3, 4), lambda x: F.log_softmax(x, 1)),
    ("LogSigmoid", lambda: nn.LogSigmoid(), lambda: r(3, 4), lambda x: F.logsigmoid(x)),
    ("SoftSign", lambda: nn.SoftSign(), lambda: r(3, 4), lambda x: F.softsign(x)),
    ("Normalize", lambda: nn.Normalize(2, 0), lambda: r(3, 4), lambda x: F.normalize(x, 2, 1)),
]  # fmt: skip


@pytest.mark.parametrize("factory,make,ref", [c[1:] for c in MODULES],
                         ids=[c[0] for c in MODULES])  # fmt: skip
def test_module_against_autograd(factory, make, ref):
    flambeau.manual_seed(0)
    m = factory().double()
    x = make()
    out = m.forward(x).clone()
    g = flambeau.randn(out.shape, dtype=D)
    m.zeroGradParameters()
    gi = m.backward(x, g).clone()
    p = m.parameters()
    params = [leaf(w) for w in p[0]] if p is not None else []
    xl = leaf(x)
    y = ref(xl, *params)
    assert flambeau.allclose(out, y.detach(), rtol=1e-10, atol=1e-12)
    (y * g).sum().backward()
    assert flambeau.allclose(gi, xl.grad, rtol=1e-10, atol=1e-12)
    for leaf_w, gw in zip(params, p[1] if p is not None else []):
        assert flambeau.allclose(gw, leaf_w.grad.reshape(gw.shape), rtol=1e-10, atol=1e-12)


def test_sequential_mlp_and_nll_against_autograd():
    flambeau.manual_seed(1)
    m = nn.Sequential().add(nn.Linear(5, 4)).add(nn.Tanh()).add(nn.Linear(4, 3))
    m.add(nn.LogSoftMax())
    m.double()
    crit = nn.ClassNLLCriterion(flambeau.tensor([1.0, 2.0, 0.5], dtype=D))
    x, t = r(6, 5), flambeau.tensor([0, 2, 1, 1, 0, 2])
    loss = crit.forward(m.forward(x), t)
    m.zeroGradParameters()
    m.backward(x, crit.backward(m.output, t))
    w1, b1, w2, b2 = [leaf(w) for w in m.parameters()[0]]
    y = F.log_softmax(F.linear(flambeau.tanh(F.linear(x, w1, b1)), w2, b2), 1)
    ref = F.nll_loss(y, t, flambeau.tensor([1.0, 2.0, 0.5], dtype=D))
    ref.backward()
    assert abs(loss - float(ref)) < 1e-12
    for gw, w in zip(m.parameters()[1], (w1, b1, w2, b2)):
        assert flambeau.allclose(gw, w.grad, rtol=1e-10, atol=1e-12)


CRITERIA = [
    ("MSE", nn.MSECriterion, lambda: (r(3, 4), r(3, 4)), lambda x, t: F.mse_loss(x, t)),
    ("Abs", nn.AbsCriterion, lambda: (r(3, 4), r(3, 4)), lambda x, t: F.l1_loss(x, t)),
    ("SmoothL1", nn.SmoothL1Criterion, lambda: (r(3, 4), r(3, 4)),
     lambda x, t: F.smooth_l1_loss(x, t)),
    ("BCE", nn.BCECriterion, lambda: (flambeau.rand(3, 4, dtype=D) * 0.8 + 0.1,
                                      flambeau.rand(3, 4, dtype=D)),
     lambda x, t: F.binary_cross_entropy(x, t)),
    ("CrossEntropy", nn.CrossEntropyCriterion, lambda: (r(4, 3), flambeau.tensor([0, 2, 1, 2])),
     lambda x, t: F.cross_entropy(x, t)),
    ("DistKLDiv", nn.DistKLDivCriterion, lambda: (r(3, 4), flambeau.rand(3, 4, dtype=D)),
     lambda x, t: F.kl_div(x, t, reduction="mean")),
    ("SoftMargin", nn.SoftMarginCriterion, lambda: (r(6), r(6).sign()),
     lambda x, t: F.soft_margin_loss(x, t)),
    ("HingeEmbedding", nn.HingeEmbeddingCriterion, lambda: (r(6), r(6).sign()),
     lambda x, t: F.hinge_embedding_loss(x, t)),
    ("MultiMargin", nn.MultiMarginCriterion, lambda: (r(3, 4), flambeau.tensor([1, 0, 3])),
     lambda x, t: F.multi_margin_loss(x, t)),
    ("MultiLabelMargin", nn.MultiLabelMarginCriterion,
     lambda: (r(2, 4), flambeau.tensor([[3, 0, -1, 1], [1, -1, 0, 0]])),
     lambda x, t: F.multilabel_margin_loss(x, t)),
    ("MultiLabelSoftMargin", nn.MultiLabelSoftMarginCriterion,
     lambda: (r(2, 4), (flambeau.rand(2, 4) > 0.5).double()),
     lambda x, t: F.multilabel_soft_margin_loss(x, t)),
]  # fmt: skip


@pytest.mark.filterwarnings("ignore:reduction. .mean. divides")
@pytest.mark.parametrize("cls,make,ref", [c[1:] for c in CRITERIA], ids=[c[0] for c in CRITERIA])
def test_criterion_against_autograd(cls, make, ref):
    flambeau.manual_seed(2)
    x, t = make()
    crit = cls()
    loss = crit.forward(x, t)
    g = crit.backward(x, t).clone()
    xl = leaf(x)
    y = ref(xl, t)
    y.backward()
    assert abs(loss - float(y)) < 1e-12 * max(1.0, abs(loss))
    assert flambeau.allclose(g, xl.grad, rtol=1e-10, atol=1e-12)


def test_pair_criteria_against_autograd():
    flambeau.manual_seed(3)
    a, b, y = r(4, 3), r(4, 3), flambeau.tensor([1.0, -1.0, -1.0, 1.0], dtype=D)
    crit = nn.CosineEmbeddingCriterion(0.1)
    loss = crit.forward([a, b], y)
    ga, gb = [g.clone() for g in crit.backward([a, b], y)]
    al, bl = leaf(a), leaf(b)
    ref = F.cosine_embedding_loss(al, bl, y, 0.1)
    ref.backward()
    assert abs(loss - float(ref)) < 1e-10
    assert flambeau.allclose(ga, al.grad, atol=1e-10) and flambeau.allclose(gb, bl.grad, atol=1e-10)
    x1, x2 = r(5), r(5)
    yy = r(5).sign()
    crit = nn.MarginRankingCriterion(0.2)
    loss = crit.forward([x1, x2], yy)
    g1, g2 = [g.clone() for g in crit.backward([x1, x2], yy)]
    l1, l2 = leaf(x1), leaf(x2)
    ref = F.margin_ranking_loss(l1, l2, yy, 0.2)
    ref.backward()
    assert abs(loss - float(ref)) < 1e-12
    assert flambeau.allclose(g1, l1.grad) and flambeau.allclose(g2, l2.grad)
