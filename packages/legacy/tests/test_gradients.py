"""Every module's updateGradInput and accGradParameters against finite differences."""

from __future__ import annotations

import math

import pytest
from gradcheck import check_module

import flambeau
from flambeau.legacy import nn

D = flambeau.float64


def r(*shape):
    return flambeau.randn(*shape, dtype=D)


def pos(*shape):
    return flambeau.rand(*shape, dtype=D) + 0.5


def away(*shape, gap=0.1):
    # Values kept off the kinks at 0 and ±0.5, ±1 of the piecewise functions.
    x = r(*shape)
    return x + gap * x.sign()


# (id, module factory, input factory, options)
CASES = [
    ("Linear-1d", lambda: nn.Linear(4, 3), lambda: r(4), {}),
    ("Linear-2d", lambda: nn.Linear(4, 3), lambda: r(5, 4), {}),
    ("Linear-nobias", lambda: nn.Linear(4, 3).noBias(), lambda: r(2, 4), {}),
    ("Bilinear", lambda: nn.Bilinear(3, 2, 4), lambda: [r(5, 3), r(5, 2)], {}),
    (
        "SpatialConvolution",
        lambda: nn.SpatialConvolution(2, 3, 3, 2, 1, 2, 1, 0),
        lambda: r(2, 2, 5, 6),
        {},
    ),
    ("SpatialConvolution-3d", lambda: nn.SpatialConvolution(2, 3, 3, 3), lambda: r(2, 4, 4), {}),
    (
        "SpatialConvolutionMM",
        lambda: nn.SpatialConvolutionMM(2, 2, 2, 3, 1, 1, 1, 1),
        lambda: r(2, 2, 4, 4),
        {},
    ),
    (
        "SpatialDilatedConvolution",
        lambda: nn.SpatialDilatedConvolution(2, 2, 2, 2, 1, 1, 1, 1, 2, 2),
        lambda: r(1, 2, 5, 5),
        {},
    ),
    (
        "SpatialFullConvolution",
        lambda: nn.SpatialFullConvolution(2, 3, 3, 3, 2, 2, 1, 1, 1, 1),
        lambda: r(2, 2, 3, 3),
        {},
    ),
    ("TemporalConvolution", lambda: nn.TemporalConvolution(3, 2, 3, 2), lambda: r(2, 7, 3), {}),
    ("TemporalConvolution-2d", lambda: nn.TemporalConvolution(3, 2, 2), lambda: r(5, 3), {}),
    (
        "VolumetricConvolution",
        lambda: nn.VolumetricConvolution(2, 2, 2, 2, 2, 1, 1, 1, 1, 0, 1),
        lambda: r(1, 2, 3, 4, 3),
        {},
    ),
    ("SpatialMaxPooling", lambda: nn.SpatialMaxPooling(2, 2), lambda: r(2, 2, 4, 4), {}),
    (
        "SpatialMaxPooling-ceil",
        lambda: nn.SpatialMaxPooling(3, 3, 2, 2, 1, 1).ceil(),
        lambda: r(2, 6, 6),
        {},
    ),
    (
        "SpatialAveragePooling",
        lambda: nn.SpatialAveragePooling(3, 2, 2, 1, 1, 1).ceil(),
        lambda: r(2, 2, 5, 5),
        {},
    ),
    (
        "SpatialAveragePooling-exclude",
        lambda: nn.SpatialAveragePooling(3, 3, 2, 2, 1, 1).setCountExcludePad(),
        lambda: r(1, 2, 5, 5),
        {},
    ),
    (
        "SpatialAdaptiveMaxPooling",
        lambda: nn.SpatialAdaptiveMaxPooling(2, 3),
        lambda: r(2, 2, 5, 7),
        {},
    ),
    ("TemporalMaxPooling", lambda: nn.TemporalMaxPooling(2, 1), lambda: r(2, 5, 3), {}),
    (
        "VolumetricMaxPooling",
        lambda: nn.VolumetricMaxPooling(2, 2, 2),
        lambda: r(1, 2, 4, 4, 4),
        {},
    ),
    ("BatchNormalization", lambda: nn.BatchNormalization(3), lambda: r(6, 3), {}),
    (
        "BatchNormalization-noaffine",
        lambda: nn.BatchNormalization(3, affine=False),
        lambda: r(6, 3),
        {},
    ),
    (
        "SpatialBatchNormalization",
        lambda: nn.SpatialBatchNormalization(2),
        lambda: r(3, 2, 3, 3),
        {},
    ),
    (
        "SpatialCrossMapLRN",
        lambda: nn.SpatialCrossMapLRN(3, 0.5, 0.75, 2),
        lambda: r(2, 5, 3, 3),
        {},
    ),
    ("SpatialCrossMapLRN-4", lambda: nn.SpatialCrossMapLRN(4, 0.3, 0.6, 1), lambda: r(4, 2, 2), {}),
    ("Normalize-2", lambda: nn.Normalize(2), lambda: r(3, 4), {}),
    ("Normalize-1.5", lambda: nn.Normalize(1.5), lambda: r(4), {}),
    ("Normalize-inf", lambda: nn.Normalize(math.inf), lambda: r(3, 4), {}),
    ("View", lambda: nn.View(6), lambda: r(2, 2, 3), {}),
    ("View-batch", lambda: nn.View(-1).setNumInputDims(2), lambda: r(2, 2, 3), {}),
    ("Reshape", lambda: nn.Reshape(3, 2), lambda: r(4, 6), {}),
    ("Transpose", lambda: nn.Transpose((0, 1), (1, 2)), lambda: r(2, 3, 4), {}),
    ("Narrow", lambda: nn.Narrow(1, 1, -1), lambda: r(2, 4), {}),
    ("Select", lambda: nn.Select(1, -1), lambda: r(2, 3, 2), {}),
    ("Squeeze", lambda: nn.Squeeze(), lambda: r(2, 1, 3), {}),
    ("Unsqueeze", lambda: nn.Unsqueeze(1), lambda: r(2, 3), {}),
    ("Replicate", lambda: nn.Replicate(3, 1), lambda: r(2, 2), {}),
    ("Padding-after", lambda: nn.Padding(1, 2, value=1.5), lambda: r(2, 3), {}),
    ("Padding-before-index", lambda: nn.Padding(0, -2, index=1), lambda: r(3, 2), {}),
    ("SpatialZeroPadding", lambda: nn.SpatialZeroPadding(1, -1, 2, 0), lambda: r(1, 2, 3, 3), {}),
    (
        "SpatialReflectionPadding",
        lambda: nn.SpatialReflectionPadding(1, 2, 2, 1),
        lambda: r(2, 3, 4),
        {},
    ),
    (
        "SpatialReplicationPadding",
        lambda: nn.SpatialReplicationPadding(2, 1, 0, 1),
        lambda: r(1, 2, 3, 3),
        {},
    ),
    ("Mean", lambda: nn.Mean(1), lambda: r(3, 4), {}),
    ("Sum-keep", lambda: nn.Sum(0, squeeze=False), lambda: r(3, 4), {}),
    ("Sum-batch", lambda: nn.Sum(0, nInputDims=1, sizeAverage=True), lambda: r(3, 4), {}),
    ("Max", lambda: nn.Max(1), lambda: r(3, 4), {}),
    ("Min", lambda: nn.Min(0), lambda: r(3, 4), {}),
    ("Mul", lambda: nn.Mul(), lambda: r(3, 2), {}),
    ("Add", lambda: nn.Add(4), lambda: r(3, 4), {}),
    ("Add-scalar", lambda: nn.Add(4, scalar=True), lambda: r(4), {}),
    ("CMul", lambda: nn.CMul(2, 3), lambda: r(4, 2, 3), {}),
    ("CMul-broadcast", lambda: nn.CMul(2, 1, 1), lambda: r(3, 2, 2, 2), {}),
    ("CAdd", lambda: nn.CAdd(3), lambda: r(2, 3), {}),
    ("MulConstant", lambda: nn.MulConstant(-2.5), lambda: r(2, 3), {}),
    ("AddConstant", lambda: nn.AddConstant(3), lambda: r(2, 3), {}),
    ("Euclidean", lambda: nn.Euclidean(3, 4), lambda: r(2, 3), {}),
    ("Euclidean-1d", lambda: nn.Euclidean(3, 2), lambda: r(3), {}),
    ("Cosine", lambda: nn.Cosine(3, 4), lambda: r(2, 3), {}),
    ("MM", lambda: nn.MM(), lambda: [r(2, 3), r(3, 4)], {}),
    ("MM-trans-batch", lambda: nn.MM(True, True), lambda: [r(2, 3, 2), r(2, 4, 3)], {}),
    ("MV", lambda: nn.MV(), lambda: [r(3, 2), r(2)], {}),
    ("MV-trans-batch", lambda: nn.MV(True), lambda: [r(2, 3, 2), r(2, 3)], {}),
    ("Copy", lambda: nn.Copy(D, D, forceCopy=True), lambda: r(2, 3), {}),
    ("Contiguous", lambda: nn.Contiguous(), lambda: r(3, 2), {}),
    ("Identity", lambda: nn.Identity(), lambda: r(3), {}),
    # transfer functions
    ("Tanh", lambda: nn.Tanh(), lambda: r(3, 4), {}),
    ("Sigmoid", lambda: nn.Sigmoid(), lambda: r(3, 4), {}),
    ("ReLU", lambda: nn.ReLU(), lambda: away(3, 4), {}),
    ("ReLU6", lambda: nn.ReLU6(), lambda: away(3, 4) * 4, {}),
    ("PReLU-shared", lambda: nn.PReLU(), lambda: away(3, 4), {}),
    ("PReLU-channels", lambda: nn.PReLU(3), lambda: away(2, 3, 2, 2), {}),
    ("ELU", lambda: nn.ELU(0.7), lambda: away(3, 4), {}),
    ("LeakyReLU", lambda: nn.LeakyReLU(0.2), lambda: away(3, 4), {}),
    ("HardTanh", lambda: nn.HardTanh(-0.5, 0.8), lambda: away(3, 4), {}),
    ("HardShrink", lambda: nn.HardShrink(0.3), lambda: away(3, 4, gap=0.4), {}),
    ("SoftShrink", lambda: nn.SoftShrink(0.3), lambda: away(3, 4, gap=0.4), {}),
    ("Threshold", lambda: nn.Threshold(0.2, -1), lambda: away(3, 4, gap=0.3), {}),
    ("SoftMax", lambda: nn.SoftMax(), lambda: r(3, 4), {}),
    ("SoftMax-1d", lambda: nn.SoftMax(), lambda: r(4), {}),
    ("LogSoftMax", lambda: nn.LogSoftMax(), lambda: r(3, 4), {}),
    ("SoftMin", lambda: nn.SoftMin(), lambda: r(3, 4), {}),
    ("SpatialSoftMax", lambda: nn.SpatialSoftMax(), lambda: r(2, 3, 2, 2), {}),
    ("SoftPlus", lambda: nn.SoftPlus(2, 5), lambda: r(3, 4), {}),
    ("SoftSign", lambda: nn.SoftSign(), lambda: r(3, 4), {}),
    ("LogSigmoid", lambda: nn.LogSigmoid(), lambda: r(3, 4), {}),
    ("TanhShrink", lambda: nn.TanhShrink(), lambda: r(3, 4), {}),
    ("Abs", lambda: nn.Abs(), lambda: away(3, 4), {}),
    ("Square", lambda: nn.Square(), lambda: r(3, 4), {}),
    ("Sqrt", lambda: nn.Sqrt(), lambda: pos(3, 4), {}),
    ("Power", lambda: nn.Power(2.5), lambda: pos(3, 4), {}),
    ("Exp", lambda: nn.Exp(), lambda: r(3, 4), {}),
    ("Log", lambda: nn.Log(), lambda: pos(3, 4), {}),
    ("Clamp", lambda: nn.Clamp(-0.3, 0.4), lambda: away(3, 4, gap=0.5), {}),
    # tables
    ("JoinTable", lambda: nn.JoinTable(1), lambda: [r(2, 3), r(2, 1)], {}),
    ("JoinTable-batch", lambda: nn.JoinTable(0, nInputDims=1), lambda: [r(2, 3), r(2, 2)], {}),
    ("SplitTable", lambda: nn.SplitTable(1), lambda: r(2, 3), {}),
    ("SelectTable", lambda: nn.SelectTable(-1), lambda: [r(2), r(3)], {}),
    ("NarrowTable", lambda: nn.NarrowTable(1, 2), lambda: [r(2), r(3), r(1)], {}),
    ("FlattenTable", lambda: nn.FlattenTable(), lambda: [r(2), [r(3), [r(1)]]], {}),
    ("CAddTable", lambda: nn.CAddTable(), lambda: [r(2, 3), r(2, 3), r(2, 3)], {}),
    ("CSubTable", lambda: nn.CSubTable(), lambda: [r(2, 3), r(2, 3)], {}),
    ("CMulTable", lambda: nn.CMulTable(), lambda: [r(2, 3), r(2, 3), r(2, 3)], {}),
    ("CDivTable", lambda: nn.CDivTable(), lambda: [r(2, 3), pos(2, 3)], {}),
    # containers
    (
        "Sequential",
        lambda: nn.Sequential().add(nn.Linear(3, 4)).add(nn.Tanh()).add(nn.Linear(4, 2)),
        lambda: r(5, 3),
        {},
    ),
    ("Concat", lambda: nn.Concat(1).add(nn.Linear(3, 2)).add(nn.Linear(3, 4)), lambda: r(2, 3), {}),
    (
        "ConcatTable",
        lambda: nn.ConcatTable().add(nn.Linear(3, 2)).add(nn.Identity()),
        lambda: r(2, 3),
        {},
    ),
    (
        "ParallelTable",
        lambda: nn.ParallelTable().add(nn.Linear(3, 2)).add(nn.Tanh()),
        lambda: [r(2, 3), r(4)],
        {},
    ),
    (
        "Parallel",
        lambda: nn.Parallel(0, 0).add(nn.Linear(3, 2)).add(nn.Linear(3, 1)),
        lambda: r(2, 3),
        {},
    ),
    (
        "Residual",
        lambda: (
            nn.Sequential()
            .add(nn.ConcatTable().add(nn.Linear(3, 3)).add(nn.Identity()))
            .add(nn.CAddTable())
        ),
        lambda: r(4, 3),
        {},
    ),
]


@pytest.mark.parametrize("factory,make_input,opts", [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])  # fmt: skip
def test_finite_differences(factory, make_input, opts):
    flambeau.manual_seed(0)
    module = factory().double()
    check_module(module, make_input(), **opts)


def test_scale_is_applied():
    flambeau.manual_seed(1)
    check_module(nn.Linear(3, 2).double(), r(4, 3), scale=0.25)
    check_module(nn.SpatialConvolution(1, 2, 2, 2).double(), r(1, 1, 3, 3), scale=-2.0)


def test_lookup_table_parameters():
    flambeau.manual_seed(2)
    m = nn.LookupTable(5, 3).double()
    idx = flambeau.tensor([[0, 2, 2], [4, 0, 1]])
    check_module(m, idx, check_input=False)
    assert flambeau.equal(m.forward(idx)[0, 1], m.weight[2])


def test_lookup_table_padding_and_maxnorm():
    m = nn.LookupTable(4, 2, paddingValue=1, maxNorm=1.0).double()
    m.weight.copy_(flambeau.tensor([[3.0, 4.0], [1.0, 0.0], [0.1, 0.1], [0.0, 2.0]], dtype=D))
    idx = flambeau.tensor([0, 1, 1, 2])
    m.forward(idx)
    assert abs(float(m.weight[0].norm()) - 1.0) < 1e-6  # renormalised
    assert float(m.weight[3].norm()) == 2.0  # not looked up: untouched
    m.zeroGradParameters()
    m.backward(idx, flambeau.ones(4, 2, dtype=D))
    assert float(m.gradWeight[1].abs().sum()) == 0.0  # the padding row gets no gradient
    assert flambeau.equal(m.gradWeight[0], flambeau.ones(2, dtype=D))


@pytest.mark.parametrize("inplace_module", [
    lambda: nn.ReLU(True), lambda: nn.ReLU6(True), lambda: nn.LeakyReLU(0.1, True),
    lambda: nn.ELU(1.0, True), lambda: nn.Threshold(0.1, 0.0, True),
])  # fmt: skip
def test_inplace_variants_match(inplace_module):
    flambeau.manual_seed(3)
    m = inplace_module().double()
    x = away(3, 4)
    ref = type(m)()
    ref.__dict__.update({k: v for k, v in vars(m).items() if k not in ("output", "gradInput")})
    ref.inplace = False
    y_ref = ref.forward(x.clone()).clone()
    g = r(3, 4)
    gi_ref = ref.backward(x.clone(), g).clone()
    xi = x.clone()
    y = m.forward(xi)
    assert y is xi and flambeau.allclose(y, y_ref)
    assert flambeau.allclose(m.backward(xi, g), gi_ref)


def test_dropout_gradient_uses_the_mask():
    flambeau.manual_seed(4)
    m = nn.Dropout(0.4).double()
    x = r(50, 20)
    y = m.forward(x)
    kept = y != 0
    assert 0.5 < float(kept.double().mean()) < 0.7
    assert flambeau.allclose(y[kept], x[kept] / 0.6)
    g = r(50, 20)
    assert flambeau.allclose(m.backward(x, g), g * (y / x))
    m.evaluate()
    assert flambeau.equal(m.forward(x), x)
    v1 = nn.Dropout(0.4, v1=True).double()
    v1.evaluate()
    assert flambeau.allclose(v1.forward(x), x * 0.6)


def test_spatial_dropout_drops_whole_planes():
    flambeau.manual_seed(5)
    m = nn.SpatialDropout(0.5).double()
    x = pos(4, 6, 3, 3)
    y = m.forward(x)
    planes = (y == 0).reshape(4, 6, 9)
    assert bool((planes.all(2) | (~planes).all(2)).all())
    g = r(4, 6, 3, 3)
    assert flambeau.allclose(m.backward(x, g), g * (y / x))
    m.evaluate()
    assert flambeau.allclose(m.forward(x), x * 0.5)


def test_rrelu_train_and_evaluate():
    flambeau.manual_seed(6)
    m = nn.RReLU(0.1, 0.3).double()
    x = away(40, 5)
    y = m.forward(x)
    slope = y[x < 0] / x[x < 0]
    assert float(slope.min()) >= 0.1 and float(slope.max()) <= 0.3
    g = r(40, 5)
    assert flambeau.allclose(m.backward(x, g), g * (y / x))
    m.evaluate()
    assert flambeau.allclose(m.forward(x)[x < 0], x[x < 0] * 0.2)
    check_module(m, away(3, 4))  # deterministic in evaluation


def test_batchnorm_running_statistics_and_evaluate():
    flambeau.manual_seed(7)
    m = nn.BatchNormalization(3, momentum=0.5).double()
    x = r(8, 3) * 2 + 1
    m.forward(x)
    assert flambeau.allclose(m.running_mean, 0.5 * x.mean(0))
    assert flambeau.allclose(m.running_var, 0.5 + 0.5 * x.var(0))  # unbiased
    m.evaluate()
    y = m.forward(x)
    ref = (x - m.running_mean) / flambeau.sqrt(m.running_var + m.eps) * m.weight + m.bias
    assert flambeau.allclose(y, ref)
    check_module(m, r(4, 3))  # evaluation mode: an affine map


def test_gradient_reversal():
    m = nn.GradientReversal(0.5).double()
    x, g = r(2, 3), r(2, 3)
    assert flambeau.equal(m.forward(x), x)
    assert flambeau.allclose(m.backward(x, g), -0.5 * g)  # deliberately not the derivative
    assert flambeau.allclose(m.setLambda(2).backward(x, g), -2 * g)
