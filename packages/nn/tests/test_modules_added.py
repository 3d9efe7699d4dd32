"""The rest of torch.nn's modules: forward values against NumPy or the functional they wrap,
gradcheck where the math is new, constructor defaults and errors, repr and state_dict."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from _helpers import f64, np_of, randn64

import flambeau
from flambeau import nn
from flambeau.autograd import gradcheck
from flambeau.nn import functional as F

# ---- activations, shuffles, folds, dropout ---------------------------------------------------


def test_rrelu_module_defaults_repr_and_modes():
    m = nn.RReLU()
    assert (m.lower, m.upper, m.inplace) == (1 / 8, 1 / 3, False)
    assert repr(m) == "RReLU(lower=0.125, upper=0.3333333333333333)"
    assert repr(nn.RReLU(0.1, 0.3, True)) == "RReLU(lower=0.1, upper=0.3, inplace=True)"
    x = f64([-3.0, -1.0, 2.0])
    m.eval()
    np.testing.assert_allclose(np_of(m(x)), [-3 * (1 / 8 + 1 / 3) / 2, -(1 / 8 + 1 / 3) / 2, 2])
    m.train()
    slopes = np_of(m(x))[:2] / np_of(x)[:2]
    assert ((slopes >= 1 / 8) & (slopes <= 1 / 3)).all()


def test_softmax2d_normalises_channels():
    x = randn64(2, 3, 4, 5, requires_grad=False)
    xs = np_of(x)
    ref = np.exp(xs) / np.exp(xs).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(np_of(nn.Softmax2d()(x)), ref, rtol=1e-12)
    np.testing.assert_allclose(np_of(nn.Softmax2d()(x[0])), ref[0], rtol=1e-12)
    with pytest.raises(ValueError, match="Softmax2d: expected input to be 3D or 4D, got 2D"):
        nn.Softmax2d()(randn64(2, 3))
    assert repr(nn.Softmax2d()) == "Softmax2d()"


def test_channel_shuffle_module():
    m = nn.ChannelShuffle(2)
    assert repr(m) == "ChannelShuffle(groups=2)" and m.state_dict() == {}
    x = flambeau.arange(8.0).reshape(1, 4, 2)
    np.testing.assert_array_equal(np_of(m(x)), np_of(F.channel_shuffle(x, 2)))


def test_fold_unfold_round_trip_and_repr():
    unfold = nn.Unfold(kernel_size=2, stride=2)
    fold = nn.Fold(output_size=(4, 6), kernel_size=2, stride=2)
    x = randn64(2, 3, 4, 6, requires_grad=False)
    cols = unfold(x)
    assert cols.shape == (2, 12, 6)
    # Non-overlapping blocks: folding the columns back gives the input.
    np.testing.assert_allclose(np_of(fold(cols)), np_of(x))
    # Block (0, 0) of channel 0 is the first 4 entries of column 0, row-major.
    np.testing.assert_allclose(np_of(cols)[0, :4, 0], np_of(x)[0, 0, :2, :2].ravel())
    assert repr(unfold) == "Unfold(kernel_size=2, dilation=1, padding=0, stride=2)"
    assert repr(fold) == (
        "Fold(output_size=(4, 6), kernel_size=2, dilation=1, padding=0, stride=2)"
    )


def test_feature_alpha_dropout_module():
    m = nn.FeatureAlphaDropout(0.2)
    assert repr(m) == "FeatureAlphaDropout(p=0.2, inplace=False)"
    x = randn64(3, 4, 5)
    m.eval()
    assert m(x) is x
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.FeatureAlphaDropout(-0.1)


# ---- fractional max pooling -----------------------------------------------------------------


def test_fractional_max_pool_modules():
    samples = f64(np.random.default_rng(0).random((2, 3, 2)))
    m = nn.FractionalMaxPool2d(2, output_size=3, _random_samples=samples)
    assert repr(m) == "FractionalMaxPool2d()"
    assert list(m.state_dict()) == ["_random_samples"]
    assert m.kernel_size == (2, 2) and m.output_size == (3, 3) and m.output_ratio is None
    x = randn64(2, 3, 7, 6, requires_grad=False)
    expected = F.fractional_max_pool2d(x, 2, output_size=3, _random_samples=samples)
    np.testing.assert_array_equal(np_of(m(x)), np_of(expected))
    m2 = nn.FractionalMaxPool3d(2, output_ratio=0.5, return_indices=True)
    assert m2.output_ratio == (0.5, 0.5, 0.5) and m2.state_dict() == {}
    out, idx = m2(randn64(1, 2, 6, 8, 10))
    assert out.shape == idx.shape == (1, 2, 3, 4, 5)


def test_fractional_max_pool_module_errors():
    with pytest.raises(ValueError, match="requires specifying either an output size"):
        nn.FractionalMaxPool2d(2)
    with pytest.raises(ValueError, match="only one of output_size and output_ratio"):
        nn.FractionalMaxPool2d(2, 3, 0.5)
    with pytest.raises(ValueError, match=r"output_ratio must be between 0 and 1 \(got 1.5\)"):
        nn.FractionalMaxPool2d(2, output_ratio=1.5)
    with pytest.raises(ValueError, match="kernel_size must be greater than 0, but got 0"):
        nn.FractionalMaxPool3d(0, 3)


# ---- losses ---------------------------------------------------------------------------------


def test_multi_margin_loss_module():
    m = nn.MultiMarginLoss()
    assert (m.p, m.margin, m.reduction, m.weight) == (1, 1.0, "mean", None)
    assert repr(m) == "MultiMarginLoss()" and m.state_dict() == {}
    w = f64([1.0, 2.0, 0.5])
    mw = nn.MultiMarginLoss(p=2, margin=0.5, weight=w, reduction="sum")
    assert list(mw.state_dict()) == ["weight"]
    x, y = randn64(4, 3), flambeau.tensor([0, 2, 1, 1])
    expected = F.multi_margin_loss(x, y, 2, 0.5, w, reduction="sum")
    np.testing.assert_allclose(np_of(mw(x, y)), np_of(expected))
    with pytest.raises(ValueError, match="only p == 1 and p == 2"):
        nn.MultiMarginLoss(p=3)
    with pytest.raises(ValueError, match="expected weight to be None or 1D tensor, got 2D"):
        nn.MultiMarginLoss(weight=randn64(3, 3))
    with pytest.warns(UserWarning, match="reduction='sum'"):
        assert nn.MultiMarginLoss(size_average=False).reduction == "sum"


def test_multilabel_margin_loss_module():
    m = nn.MultiLabelMarginLoss(reduction="none")
    assert repr(m) == "MultiLabelMarginLoss()"
    x = f64([[0.1, 0.2, 0.4, 0.8]])
    y = flambeau.tensor([[3, 0, -1, 1]])
    # PyTorch's documented example: targets 3 and 0 against classes 1 and 2.
    expected = (1 - (0.8 - 0.2) + 1 - (0.8 - 0.4) + 1 - (0.1 - 0.2) + 1 - (0.1 - 0.4)) / 4
    np.testing.assert_allclose(np_of(m(x, y)), [expected])


def test_nll_loss2d_is_deprecated_nll_loss():
    with pytest.warns(FutureWarning, match="`NLLLoss2d` has been deprecated"):
        m = nn.NLLLoss2d(ignore_index=1)
    assert isinstance(m, nn.NLLLoss) and m.ignore_index == 1
    logp = F.log_softmax(randn64(2, 3, 4, 4), 1)
    target = flambeau.tensor(np.random.default_rng(0).integers(0, 3, (2, 4, 4)))
    expected = F.nll_loss(logp, target, ignore_index=1)
    np.testing.assert_allclose(np_of(m(logp, target)), np_of(expected))


def test_linear_cross_entropy_loss_module():
    m = nn.LinearCrossEntropyLoss(5, 4, out_features=(3,), bias=True, weight=f64([1, 2, 3, 4]))
    m.double()
    assert list(m.state_dict()) == ["weight", "linear.weight", "linear.bias"]
    assert m.linear.weight.shape == (12, 5)
    assert repr(m).splitlines()[1].strip() == (
        "in_features=5, num_classes=4, out_features=(3,), bias=True, reduction=mean, "
        "ignore_index=None, label_smoothing=0.0, options=None"
    )
    x = randn64(2, 5)
    target = flambeau.tensor([[0, 3, 1], [2, 2, 0]])
    logits = np_of(m.linear(x)).reshape(2, 4, 3)
    logp = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    w = np.array([1.0, 2, 3, 4])
    t = np_of(target)
    picked = np.take_along_axis(logp, t[:, None, :], axis=1)[:, 0]
    expected = -(w[t] * picked).sum() / w[t].sum()
    np.testing.assert_allclose(np_of(m(x, target)), expected, rtol=1e-12)
    assert gradcheck(lambda x, w, b: m(x, target), (x, m.linear.weight, m.linear.bias))


def test_linear_cross_entropy_loss_errors_and_options():
    with pytest.raises(RuntimeError, match=r"expected weight shape to be \(10,\), got \(3,\)"):
        nn.LinearCrossEntropyLoss(5, 10, weight=flambeau.ones(3))
    with pytest.raises(RuntimeError, match=r"label_smoothing to be in range \[0, 1\], got 2"):
        nn.LinearCrossEntropyLoss(5, 10, label_smoothing=2)
    options = nn.LinearCrossEntropyOptions(batch_chunk_size=4)
    assert repr(options) == (
        "LinearCrossEntropyOptions(allow_retain_graph=False, batch_chunk_size=4, "
        "chunking_method='auto', acc_policy='auto', acc_dtype=None)"
    )
    with pytest.raises(AttributeError):
        options.batch_chunk_size = 3  # frozen
    for kwargs, message in [
        ({"acc_policy": "x"}, "invalid acc_policy"),
        ({"chunking_method": "foo"}, "invalid chunking_method"),
        ({"batch_chunk_size": 0}, "batch_chunk_size must be positive int or None"),
        ({"acc_dtype": flambeau.int32}, "acc_dtype must be one of"),
    ]:
        with pytest.raises(ValueError, match=message):
            nn.LinearCrossEntropyOptions(**kwargs)
    assert nn.LinearCrossEntropyOptions(chunking_method="aspect_ratio:3").chunking_method
    m = nn.LinearCrossEntropyLoss(3, 4, options=options, dtype=flambeau.float64)
    x, t = randn64(6, 3), flambeau.tensor([0, 1, 2, 3, 0, 1])
    expected = F.cross_entropy(m.linear(x), t)
    np.testing.assert_allclose(np_of(m(x, t)), np_of(expected), rtol=1e-12)


# ---- normalisation --------------------------------------------------------------------------


def test_rms_norm_module():
    m = nn.RMSNorm(4)
    assert m.normalized_shape == (4,) and m.eps is None and m.elementwise_affine
    assert repr(m) == "RMSNorm((4,), eps=None, elementwise_affine=True)"
    assert list(m.state_dict()) == ["weight"]
    np.testing.assert_array_equal(np_of(m.weight), np.ones(4))
    m2 = nn.RMSNorm([2, 3], eps=1e-3, elementwise_affine=False, dtype=flambeau.float64)
    assert repr(m2) == "RMSNorm((2, 3), eps=0.001, elementwise_affine=False)"
    assert m2.weight is None and m2.state_dict() == {}
    x = randn64(5, 2, 3, requires_grad=False)
    xs = np_of(x)
    ref = xs / np.sqrt((xs**2).mean(axis=(1, 2), keepdims=True) + 1e-3)
    np.testing.assert_allclose(np_of(m2(x)), ref, rtol=1e-12)
    m3 = nn.RMSNorm(3, eps=0.1).double()
    assert gradcheck(lambda x, w: m3(x), (randn64(2, 3), m3.weight))


def _cross_map_lrn_ref(x, size, alpha, beta, k):
    """Lua Torch's SpatialCrossMapLRN: a running sum over channels, built as its kernel does."""
    channels = x.shape[1]
    squares = x**2
    scale = np.zeros_like(x)
    pre_pad = int((size - 1) / 2 + 1)
    scale[:, 0] = squares[:, : min(pre_pad, channels)].sum(axis=1)
    for c in range(1, channels):
        scale[:, c] = scale[:, c - 1]
        if c < channels - pre_pad + 1:
            scale[:, c] += squares[:, c + pre_pad - 1]
        if c > pre_pad:
            scale[:, c] -= squares[:, c - pre_pad]
    scale = scale * alpha / size + k
    return x * scale**-beta


@pytest.mark.parametrize("size", [1, 2, 3, 4, 5])
def test_cross_map_lrn2d_matches_running_sum_and_gradcheck(size):
    x = randn64(2, 6, 3, 3)
    m = nn.CrossMapLRN2d(size, alpha=0.1, beta=0.75, k=1.0)
    ref = _cross_map_lrn_ref(np_of(x), size, 0.1, 0.75, 1.0)
    np.testing.assert_allclose(np_of(m(x)), ref, rtol=1e-12)
    assert gradcheck(m, (x,))


def test_cross_map_lrn2d_repr_and_errors():
    m = nn.CrossMapLRN2d(3)
    assert repr(m) == "CrossMapLRN2d(3, alpha=0.0001, beta=0.75, k=1)"
    assert m.state_dict() == {}
    with pytest.raises(ValueError, match="CrossMapLRN2d: Expected input to be 4D, got 3D"):
        m(randn64(2, 3, 4))


def test_sync_batch_norm_is_batch_norm_in_one_process():
    s = nn.SyncBatchNorm(3, dtype=flambeau.float64)
    b = nn.BatchNorm1d(3, dtype=flambeau.float64)
    assert s.process_group is None
    assert repr(s) == (
        "SyncBatchNorm(3, eps=1e-05, momentum=0.1, affine=True, bias=True, "
        "track_running_stats=True)"
    )
    assert list(s.state_dict()) == list(b.state_dict())
    x = randn64(8, 3, 2, 2, 2, requires_grad=False)  # any rank >= 2
    flat = x.permute(0, 2, 3, 4, 1).reshape(-1, 3)
    out = np_of(s(x).permute(0, 2, 3, 4, 1).reshape(-1, 3))
    np.testing.assert_allclose(out, np_of(b(flat)), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np_of(s.running_mean), np_of(b.running_mean), rtol=1e-12)
    with pytest.raises(ValueError, match="expected at least 2D input \\(got 1D input\\)"):
        s(randn64(3))
    with pytest.raises(ValueError, match="number of input channels should be non-zero"):
        nn.SyncBatchNorm(0)(randn64(4, 0))


def test_convert_sync_batchnorm_shares_parameters_and_statistics():
    bn = nn.BatchNorm2d(3)
    inner = nn.BatchNorm1d(3, affine=False)
    model = nn.Sequential(nn.Conv2d(3, 3, 1), bn, nn.Sequential(inner))
    model.eval()
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(model, process_group="group")
    sync = converted[1]
    assert type(sync) is nn.SyncBatchNorm and sync.process_group == "group"
    assert sync.weight is bn.weight and sync.running_mean is bn.running_mean
    assert not sync.training
    assert type(converted[2][0]) is nn.SyncBatchNorm and converted[2][0].weight is None
    assert type(converted[0]) is nn.Conv2d
    assert type(nn.SyncBatchNorm.convert_sync_batchnorm(nn.InstanceNorm2d(3))) is (
        nn.InstanceNorm2d
    )


# ---- adaptive softmax -----------------------------------------------------------------------


def _log_softmax(z):
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


def _adaptive_full_log_prob(m, x):
    head = _log_softmax(x @ np_of(m.head.weight).T)
    parts = [head[:, : m.shortlist_size]]
    for i, (i2h, h2o) in enumerate(m.tail):
        cluster = _log_softmax(x @ np_of(i2h.weight).T @ np_of(h2o.weight).T)
        parts.append(cluster + head[:, m.shortlist_size + i][:, None])
    return np.concatenate(parts, axis=1)


def test_adaptive_log_softmax_structure_and_values():
    m = nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[3, 6], div_value=2.0)
    m.double()
    assert m.cutoffs == [3, 6, 10] and m.head_size == 5 and m.n_clusters == 2
    assert m.head.weight.shape == (5, 8) and m.head.bias is None
    assert [tuple(s[0].weight.shape) for s in m.tail] == [(4, 8), (2, 8)]
    assert [tuple(s[1].weight.shape) for s in m.tail] == [(3, 4), (4, 2)]
    assert sorted(m.state_dict()) == [
        "head.weight", "tail.0.0.weight", "tail.0.1.weight", "tail.1.0.weight",
        "tail.1.1.weight",
    ]  # fmt: skip
    x = randn64(7, 8)
    target = flambeau.tensor([0, 2, 3, 5, 6, 9, 4])
    full = _adaptive_full_log_prob(m, np_of(x))
    np.testing.assert_allclose(np.exp(full).sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(np_of(m.log_prob(x)), full, rtol=1e-12)
    out, loss = m(x, target)
    expected = full[np.arange(7), np_of(target)]
    np.testing.assert_allclose(np_of(out), expected, rtol=1e-12)
    np.testing.assert_allclose(np_of(loss), -expected.mean(), rtol=1e-12)
    np.testing.assert_array_equal(np_of(m.predict(x)), full.argmax(axis=1))
    one_out, one_loss = m(x[2], target[2])
    assert one_out.shape == () and np.isclose(float(one_out), expected[2])
    params = [m.head.weight, m.tail[0][0].weight, m.tail[1][1].weight]
    assert gradcheck(lambda x, *p: m(x, target).loss, (x, *params))


def test_adaptive_log_softmax_errors():
    with pytest.raises(ValueError, match="cutoffs should be a sequence of length larger than 0"):
        nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[])
    for bad in ([6, 3], [0, 3], [3, 10], [3, 3]):
        with pytest.raises(ValueError, match="cutoffs should be a sequence of unique"):
            nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=bad)
    m = nn.AdaptiveLogSoftmaxWithLoss(4, 6, cutoffs=[2])
    with pytest.raises(RuntimeError, match=r"Target values should be in \[0, 5\]"):
        m(flambeau.randn(2, 4), flambeau.tensor([1, 6]))
    with pytest.raises(RuntimeError, match="same size in the batch dimension"):
        m(flambeau.randn(3, 4), flambeau.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="0D target tensor expects 1D input"):
        m(flambeau.randn(2, 4), flambeau.tensor(1))
    with pytest.raises(RuntimeError, match="multi-target not supported"):
        m(flambeau.randn(2, 4), flambeau.tensor([[1]]))


# ---- deprecated Container and factory_kwargs ------------------------------------------------


def test_container_registers_keyword_modules_with_a_warning():
    with pytest.warns(FutureWarning, match="`nn.Container` is deprecated"):
        c = nn.Container(a=nn.Linear(1, 2), b=nn.ReLU())
    assert list(dict(c.named_children())) == ["a", "b"]
    assert list(c.state_dict()) == ["a.weight", "a.bias"]


def test_factory_kwargs():
    assert nn.factory_kwargs(None) == {}
    assert nn.factory_kwargs({"device": "cpu", "dtype": flambeau.float64}) == {
        "device": "cpu", "dtype": flambeau.float64,
    }  # fmt: skip
    merged = nn.factory_kwargs({"factory_kwargs": {"dtype": flambeau.float16}, "device": "cpu"})
    assert merged == {"dtype": flambeau.float16, "device": "cpu"}
    with pytest.raises(TypeError, match="unexpected kwargs"):
        nn.factory_kwargs({"bias": True})
    with pytest.raises(TypeError, match="dtype specified twice"):
        nn.factory_kwargs({"dtype": flambeau.float32, "factory_kwargs": {"dtype": flambeau.int8}})


def test_no_warning_from_plain_construction():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.RMSNorm(3)
        nn.MultiMarginLoss()
        nn.CrossMapLRN2d(3)
    assert math.isclose(nn.RReLU().upper, 1 / 3)
