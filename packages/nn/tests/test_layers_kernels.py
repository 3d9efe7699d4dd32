"""Layers backed by the core's NN kernels: NumPy references, float64 gradchecks, module state."""

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


def i64(values):
    return flambeau.tensor(np.asarray(values), dtype=flambeau.int64)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _softmax(x, dim):
    e = np.exp(x - x.max(dim, keepdims=True))
    return e / e.sum(dim, keepdims=True)


def _erf(x):
    return np.vectorize(math.erf)(x)


# ---- activations ----------------------------------------------------------------------------

SELU_A, SELU_S = 1.6732632423543772, 1.0507009873554805

ACTIVATIONS = {
    "gelu": (lambda x: F.gelu(x), lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2)))),
    "gelu_tanh": (
        lambda x: F.gelu(x, approximate="tanh"),
        lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
    ),
    "silu": (F.silu, lambda x: x * _sigmoid(x)),
    "elu": (lambda x: F.elu(x, 0.7), lambda x: np.where(x > 0, x, 0.7 * np.expm1(x))),
    "selu": (F.selu, lambda x: SELU_S * np.where(x > 0, x, SELU_A * np.expm1(x))),
    "celu": (lambda x: F.celu(x, 0.6), lambda x: np.where(x > 0, x, 0.6 * np.expm1(x / 0.6))),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.2), lambda x: np.where(x > 0, x, 0.2 * x)),
    "relu6": (lambda x: F.relu6(x * 4), lambda x: np.clip(x * 4, 0, 6)),
    "hardtanh": (lambda x: F.hardtanh(x, -0.5, 0.8), lambda x: np.clip(x, -0.5, 0.8)),
    "hardswish": (lambda x: F.hardswish(x * 3), lambda x: 3 * x * np.clip(3 * x + 3, 0, 6) / 6),
    "hardsigmoid": (lambda x: F.hardsigmoid(x * 3), lambda x: np.clip(3 * x + 3, 0, 6) / 6),
    "mish": (F.mish, lambda x: x * np.tanh(np.log1p(np.exp(x)))),
    "softplus": (
        lambda x: F.softplus(x, 2.0, 1.0),
        lambda x: np.where(2 * x > 1.0, x, np.log1p(np.exp(2 * x)) / 2),
    ),
    "logsigmoid": (F.logsigmoid, lambda x: np.log(_sigmoid(x))),
    "softshrink": (
        lambda x: F.softshrink(x, 0.3),
        lambda x: np.where(x > 0.3, x - 0.3, np.where(x < -0.3, x + 0.3, 0.0)),
    ),
    "hardshrink": (lambda x: F.hardshrink(x, 0.3), lambda x: np.where(np.abs(x) > 0.3, x, 0.0)),
    "softmax": (lambda x: F.softmax(x, 1), lambda x: _softmax(x, 1)),
    "log_softmax": (lambda x: F.log_softmax(x, -1), lambda x: np.log(_softmax(x, -1))),
    "softmin": (lambda x: F.softmin(x, 0), lambda x: _softmax(-x, 0)),
    "glu": (lambda x: F.glu(x, 1), lambda x: x[:, :2] * _sigmoid(x[:, 2:])),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_forward_and_gradcheck(name):
    fn, ref = ACTIVATIONS[name]
    x = randn64(3, 4, seed=7)
    np.testing.assert_allclose(np_of(fn(x)), ref(np_of(x)), rtol=1e-10, atol=1e-12)
    assert gradcheck(fn, (x,))


INPLACE = [
    (F.silu, {}), (F.elu, {"alpha": 0.5}), (F.selu, {}), (F.celu, {"alpha": 0.5}),
    (F.leaky_relu, {"negative_slope": 0.1}), (F.relu6, {}), (F.hardtanh, {}),
    (F.hardswish, {}), (F.hardsigmoid, {}), (F.mish, {}),
]  # fmt: skip


@pytest.mark.parametrize("fn,kw", INPLACE, ids=[f.__name__ for f, _ in INPLACE])
def test_inplace_activations_write_input_and_differentiate(fn, kw):
    a = randn64(5, seed=3)
    expected = fn(a * 2, **kw)
    x = a * 2
    out = fn(x, inplace=True, **kw)
    assert out is x
    np.testing.assert_allclose(np_of(x), np_of(expected), rtol=1e-12)
    out.sum().backward()
    b = a.detach().clone().requires_grad_(True)
    fn(b * 2, **kw).sum().backward()
    np.testing.assert_allclose(np_of(a.grad), np_of(b.grad), rtol=1e-12)


def test_softmax_implicit_dim_warns_and_picks_pytorchs_dim():
    x = randn64(2, 3, requires_grad=False)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        y = F.softmax(x)
    np.testing.assert_allclose(np_of(y), _softmax(np_of(x), 1))
    v = randn64(4, requires_grad=False)
    with pytest.warns(UserWarning, match="log_softmax"):
        np.testing.assert_allclose(np_of(F.log_softmax(v)), np.log(_softmax(np_of(v), 0)))
    with pytest.warns(UserWarning):
        assert np.allclose(np_of(nn.Softmin()(randn64(2, 3, 4)).sum(0)), 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.softmax(x, 0)


def test_softmax_dtype_casts_first():
    x = flambeau.tensor([[1.0, 2.0, 3.0]])
    y = F.softmax(x, 1, dtype=flambeau.float64)
    assert y.dtype == flambeau.float64
    np.testing.assert_allclose(np_of(y), _softmax(np.array([[1.0, 2.0, 3.0]]), 1), rtol=1e-12)
    assert F.log_softmax(x, 1, dtype=flambeau.float64).dtype == flambeau.float64


def test_prelu_per_channel_and_single_weight():
    x = randn64(2, 3, 4, seed=1)
    w = f64([0.1, 0.2, 0.3], requires_grad=True)
    xn = np_of(x)
    ref = np.where(xn > 0, xn, np.array([0.1, 0.2, 0.3])[None, :, None] * xn)
    np.testing.assert_allclose(np_of(F.prelu(x, w)), ref)
    assert gradcheck(F.prelu, (x, w))
    m = nn.PReLU().double()
    np.testing.assert_allclose(np_of(m.weight), [0.25])
    assert gradcheck(lambda x, w: m(x), (x, m.weight))
    with pytest.raises(RuntimeError, match="parameter numbers = 2 and channel size = 3"):
        F.prelu(x, f64([0.1, 0.2]))


def test_activation_errors():
    with pytest.raises(RuntimeError, match="dimension 1 is size 3"):
        F.glu(randn64(2, 3), 1)
    with pytest.raises(RuntimeError, match="approximate"):
        F.gelu(randn64(2), approximate="fast")
    with pytest.raises(ValueError, match="min_val cannot be greater"):
        F.hardtanh(randn64(2), 1.0, -1.0)


def test_activation_modules_match_functional():
    x = randn64(2, 4, seed=11)
    pairs = [
        (nn.ReLU6(), F.relu6(x)), (nn.LeakyReLU(0.3), F.leaky_relu(x, 0.3)),
        (nn.ELU(0.5), F.elu(x, 0.5)), (nn.SELU(), F.selu(x)), (nn.CELU(2.0), F.celu(x, 2.0)),
        (nn.GELU("tanh"), F.gelu(x, approximate="tanh")), (nn.SiLU(), F.silu(x)),
        (nn.Mish(), F.mish(x)), (nn.Hardtanh(-2, 2), F.hardtanh(x, -2, 2)),
        (nn.Hardsigmoid(), F.hardsigmoid(x)), (nn.Hardswish(), F.hardswish(x)),
        (nn.Softplus(2, 10), F.softplus(x, 2, 10)), (nn.Softshrink(0.1), F.softshrink(x, 0.1)),
        (nn.Hardshrink(0.1), F.hardshrink(x, 0.1)), (nn.LogSigmoid(), F.logsigmoid(x)),
        (nn.Softmax(1), F.softmax(x, 1)), (nn.LogSoftmax(0), F.log_softmax(x, 0)),
        (nn.Softmin(1), F.softmin(x, 1)), (nn.GLU(), F.glu(x)),
    ]  # fmt: skip
    for m, expected in pairs:
        np.testing.assert_allclose(np_of(m(x)), np_of(expected), err_msg=repr(m))
    assert repr(nn.LeakyReLU(0.2, True)) == "LeakyReLU(negative_slope=0.2, inplace=True)"
    assert repr(nn.GELU("tanh")) == "GELU(approximate='tanh')"
    assert repr(nn.Hardtanh(-2, 2)) == "Hardtanh(min_val=-2, max_val=2)"
    assert repr(nn.Softshrink()) == "Softshrink(0.5)"
    assert repr(nn.LogSoftmax()) == "LogSoftmax(dim=None)"
    assert repr(nn.PReLU(3)) == "PReLU(num_parameters=3)"
    assert repr(nn.SELU(True)) == "SELU(inplace=True)"


# ---- normalisation --------------------------------------------------------------------------


def _np_norm(x, axes, eps=1e-5):
    mean = x.mean(axes, keepdims=True)
    var = x.var(axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps)


def test_layer_norm_forward_gradcheck_and_module():
    x = randn64(2, 3, 4, seed=2)
    w, b = randn64(3, 4, seed=3), randn64(3, 4, seed=4)
    ref = _np_norm(np_of(x), (1, 2)) * np_of(w) + np_of(b)
    np.testing.assert_allclose(np_of(F.layer_norm(x, (3, 4), w, b)), ref, rtol=1e-10)
    assert gradcheck(lambda x, w, b: F.layer_norm(x, (3, 4), w, b), (x, w, b))
    m = nn.LayerNorm(4, bias=False).double()
    assert m.bias is None and [n for n, _ in m.named_parameters()] == ["weight"]
    np.testing.assert_allclose(np_of(m(x)), _np_norm(np_of(x), 2), rtol=1e-10)
    assert repr(m) == "LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=False)"
    assert list(nn.LayerNorm([3, 4], elementwise_affine=False).parameters()) == []
    with pytest.raises(RuntimeError, match=r"LayerNorm: expected input with shape \[\*, 4\]"):
        m(randn64(2, 5))


def test_group_norm_forward_gradcheck_and_errors():
    x = randn64(2, 4, 3, seed=5)
    w, b = randn64(4, seed=6), randn64(4, seed=7)
    xg = np_of(x).reshape(2, 2, -1)
    ref = _np_norm(xg, 2).reshape(2, 4, 3) * np_of(w)[:, None] + np_of(b)[:, None]
    np.testing.assert_allclose(np_of(F.group_norm(x, 2, w, b)), ref, rtol=1e-10)
    assert gradcheck(lambda x, w, b: F.group_norm(x, 2, w, b), (x, w, b))
    m = nn.GroupNorm(2, 4).double()
    assert repr(m) == "GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)"
    with pytest.raises(ValueError, match="divisible by num_groups"):
        nn.GroupNorm(3, 4)
    with pytest.raises(RuntimeError, match=r"GroupNorm: expected input of shape \(N, 4, \*\)"):
        m(randn64(2, 3, 3))


def test_batch_norm_functional_and_gradcheck():
    x = randn64(4, 3, 2, seed=8)
    w, b = randn64(3, seed=9), randn64(3, seed=10)
    ref = _np_norm(np_of(x), (0, 2)) * np_of(w)[:, None] + np_of(b)[:, None]
    np.testing.assert_allclose(
        np_of(F.batch_norm(x, None, None, w, b, training=True)), ref, rtol=1e-10
    )
    assert gradcheck(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), (x, w, b))
    rm, rv = f64([0.1, -0.2, 0.3]), f64([1.5, 0.5, 2.0])
    ev = F.batch_norm(x, rm, rv, w, b, training=False, eps=0.0)
    ref = (np_of(x) - np_of(rm)[:, None]) / np.sqrt(np_of(rv))[:, None]
    np.testing.assert_allclose(np_of(ev), ref * np_of(w)[:, None] + np_of(b)[:, None])
    assert gradcheck(lambda x, w, b: F.batch_norm(x, rm, rv, w, b), (x, w, b))
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        F.batch_norm(randn64(1, 3), None, None, training=True)


def test_batchnorm_running_stats_by_hand():
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((4, 3, 2)) * (i + 1) + i for i in range(3)]
    for momentum in (0.1, None):
        m = nn.BatchNorm1d(3, momentum=momentum).double()
        mean, var = np.zeros(3), np.ones(3)
        for n, x in enumerate(xs, 1):
            m(f64(x))
            f = 1.0 / n if momentum is None else momentum
            mean = (1 - f) * mean + f * x.mean((0, 2))
            var = (1 - f) * var + f * x.var((0, 2), ddof=1)
        np.testing.assert_allclose(np_of(m.running_mean), mean, rtol=1e-12)
        np.testing.assert_allclose(np_of(m.running_var), var, rtol=1e-12)
        assert m.num_batches_tracked.item() == 3
        assert m.num_batches_tracked.dtype == flambeau.int64
        m.eval()
        out = m(f64(xs[0]))
        ref = (xs[0] - mean[:, None]) / np.sqrt(var[:, None] + 1e-5)
        np.testing.assert_allclose(np_of(out), ref, rtol=1e-10)
        assert m.num_batches_tracked.item() == 3  # eval does not count


def test_batchnorm_without_running_stats_and_state_dict():
    m = nn.BatchNorm2d(3, affine=False, track_running_stats=False).double().eval()
    assert m.running_mean is None and list(m.parameters()) == []
    x = randn64(2, 3, 2, 2, requires_grad=False)
    np.testing.assert_allclose(np_of(m(x)), _np_norm(np_of(x), (0, 2, 3)), rtol=1e-10)
    m = nn.BatchNorm3d(2)
    assert list(m.state_dict()) == [
        "weight", "bias", "running_mean", "running_var", "num_batches_tracked",
    ]  # fmt: skip
    assert repr(m) == (
        "BatchNorm3d(2, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)"
    )
    m.train()
    m(flambeau.randn(2, 2, 2, 2, 2))
    m.reset_running_stats()
    assert m.num_batches_tracked.item() == 0 and np.all(np_of(m.running_var) == 1)


def test_batchnorm_errors_name_the_module():
    with pytest.raises(ValueError, match=r"BatchNorm1d: expected 2D or 3D input \(got 4D"):
        nn.BatchNorm1d(3)(flambeau.randn(2, 3, 2, 2))
    with pytest.raises(ValueError, match=r"BatchNorm2d: expected 4D input \(got 3D"):
        nn.BatchNorm2d(3)(flambeau.randn(2, 3, 2))
    with pytest.raises(ValueError, match=r"BatchNorm3d: expected 5D input"):
        nn.BatchNorm3d(3)(flambeau.randn(2, 3, 2, 2))
    with pytest.raises(ValueError, match=r"BatchNorm1d: expected input with 3 channels"):
        nn.BatchNorm1d(3)(flambeau.randn(2, 4))
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        nn.BatchNorm1d(3)(flambeau.randn(1, 3))


def test_instance_norm_forward_running_stats_and_unbatched():
    x = randn64(2, 3, 5, seed=12)
    w, b = randn64(3, seed=13), randn64(3, seed=14)
    ref = _np_norm(np_of(x), 2) * np_of(w)[:, None] + np_of(b)[:, None]
    np.testing.assert_allclose(np_of(F.instance_norm(x, weight=w, bias=b)), ref, rtol=1e-10)
    assert gradcheck(lambda x, w, b: F.instance_norm(x, weight=w, bias=b), (x, w, b))
    m = nn.InstanceNorm1d(3, track_running_stats=True).double()
    m(x)
    xn = np_of(x)
    np.testing.assert_allclose(np_of(m.running_mean), 0.1 * xn.mean(2).mean(0), rtol=1e-12)
    np.testing.assert_allclose(
        np_of(m.running_var), 0.9 + 0.1 * xn.var(2, ddof=1).mean(0), rtol=1e-12
    )
    unbatched = nn.InstanceNorm2d(3).double()(randn64(3, 2, 2, seed=15))
    assert unbatched.shape == (3, 2, 2)
    with pytest.raises(ValueError, match=r"InstanceNorm1d: expected 2D or 3D input"):
        nn.InstanceNorm1d(3)(randn64(2, 3, 4, 4))
    with pytest.raises(ValueError, match="match num_features"):
        nn.InstanceNorm1d(4, affine=True)(randn64(2, 3, 4))
    with pytest.warns(UserWarning, match="does not match num_features"):
        nn.InstanceNorm1d(4)(randn64(2, 3, 4))


def test_local_response_norm_reference_and_gradcheck():
    x = randn64(2, 5, 3, seed=16)
    xn = np_of(x)
    size, alpha, beta, k = 3, 0.1, 0.6, 2.0
    sq = np.pad(xn**2, ((0, 0), (size // 2, (size - 1) // 2), (0, 0)))
    avg = np.stack([sq[:, c : c + size].mean(1) for c in range(5)], 1)
    ref = xn / (k + alpha * avg) ** beta
    m = nn.LocalResponseNorm(size, alpha, beta, k)
    np.testing.assert_allclose(np_of(m(x)), ref, rtol=1e-10)
    assert gradcheck(m, (x,))
    assert repr(m) == "LocalResponseNorm(3, alpha=0.1, beta=0.6, k=2.0)"


# ---- dropout --------------------------------------------------------------------------------


def test_dropout_statistics_and_eval():
    flambeau.manual_seed(0)
    x = flambeau.ones(200, 100, dtype=flambeau.float64)
    y = np_of(F.dropout(x, 0.3))
    assert set(np.unique(y)) <= {0.0, 1 / 0.7}
    assert abs((y == 0).mean() - 0.3) < 0.02
    m = nn.Dropout(0.3)
    assert np.abs(np_of(m(x)) - 1).max() > 0
    m.eval()
    assert np.all(np_of(m(x)) == 1)
    assert np.all(np_of(F.dropout(x, 0.3, training=False)) == 1)
    with pytest.raises(ValueError, match="between 0 and 1, but got 1.5"):
        nn.Dropout(1.5)
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.dropout(x, -0.1)


@pytest.mark.parametrize(
    "cls,shape,batched",
    [
        (nn.Dropout1d, (8, 50, 6), True),
        (nn.Dropout2d, (8, 50, 3, 2), True),
        (nn.Dropout3d, (8, 50, 2, 2, 2), True),
        (nn.Dropout1d, (50, 6), False),
        (nn.Dropout3d, (50, 2, 2, 2), False),
    ],
)
def test_feature_dropout_zeroes_whole_channels(cls, shape, batched):
    flambeau.manual_seed(1)
    y = np_of(cls(0.5)(flambeau.ones(shape, dtype=flambeau.float64)))
    assert y.shape == shape
    channels = y.reshape(shape[0] * shape[1] if batched else shape[0], -1)
    assert np.all((channels == 0).all(1) | (channels == 2.0).all(1))
    assert 0.3 < (channels[:, 0] == 0).mean() < 0.7
    assert np.all(np_of(cls(0.5).eval()(flambeau.ones(shape))) == 1)


def test_feature_dropout_rank_checks():
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input"):
        nn.Dropout1d()(flambeau.ones(2, 3, 4, 5))
    with pytest.warns(UserWarning, match="Received a 3D input to dropout2d"):
        F.dropout2d(flambeau.ones(2, 3, 4))
    with pytest.warns(UserWarning, match="Received a 2-D input to dropout3d"):
        F.dropout3d(flambeau.ones(2, 3))


def test_alpha_dropout_keeps_mean_and_variance():
    flambeau.manual_seed(2)
    x = flambeau.randn(400, 500, dtype=flambeau.float64)
    y = np_of(F.alpha_dropout(x, 0.2, training=True))
    assert abs(y.mean()) < 0.02 and abs(y.std() - 1) < 0.02
    assert np.all(np_of(F.alpha_dropout(x, 0.2)) == np_of(x))  # training=False by default
    m = nn.AlphaDropout(0.2).eval()
    assert np.all(np_of(m(x)) == np_of(x))


def test_dropout_inplace_writes_input():
    flambeau.manual_seed(3)
    x = flambeau.ones(50, 4)
    out = F.dropout(x, 0.5, inplace=True)
    assert out is x and (np_of(x) == 0).any()


# ---- embeddings -----------------------------------------------------------------------------


def test_embedding_lookup_padding_and_gradients():
    w = randn64(5, 3, seed=20)
    idx = i64([[0, 2], [4, 2]])
    np.testing.assert_allclose(np_of(F.embedding(idx, w)), np_of(w)[np_of(idx)])
    F.embedding(idx, w, padding_idx=2).sum().backward()
    np.testing.assert_allclose(np_of(w.grad), [[1] * 3, [0] * 3, [0] * 3, [0] * 3, [1] * 3])
    assert gradcheck(lambda w: F.embedding(idx, w), (w,))
    m = nn.Embedding(6, 4, padding_idx=-1)
    assert m.padding_idx == 5 and np.all(np_of(m.weight)[5] == 0)
    assert repr(m) == "Embedding(6, 4, padding_idx=5)"
    with pytest.raises(AssertionError, match="padding_idx must be within num_embeddings"):
        nn.Embedding(3, 2, padding_idx=3)


def test_embedding_max_norm_renormalises_rows_in_place():
    rows = np.array([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]])
    m = nn.Embedding.from_pretrained(f64(rows), freeze=False, max_norm=1.0)
    out = m(i64([0, 1, 0]))
    w = np_of(m.weight)
    np.testing.assert_allclose(w[0], [0.6, 0.8], rtol=1e-6)
    np.testing.assert_allclose(w[1], [0.3, 0.4])  # already within max_norm
    np.testing.assert_allclose(w[2], [6.0, 8.0])  # not looked up
    np.testing.assert_allclose(np_of(out)[0], [0.6, 0.8], rtol=1e-6)
    out.sum().backward()
    assert m.weight.grad is not None and m.weight.grad.shape == (3, 2)


def test_embedding_from_pretrained_freezes():
    e = nn.Embedding.from_pretrained(f64([[1.0, 2.0], [3.0, 4.0]]))
    assert not e.weight.requires_grad and (e.num_embeddings, e.embedding_dim) == (2, 2)
    with pytest.raises(AssertionError, match="2-dimensional"):
        nn.Embedding.from_pretrained(f64([1.0, 2.0]))


def test_embedding_bag_modes_against_numpy():
    w = randn64(7, 3, seed=21)
    wn = np_of(w)
    idx, off = i64([1, 2, 4, 5, 4, 3, 2, 6]), i64([0, 2, 2, 5])
    bags = [[1, 2], [], [4, 5, 4], [3, 2, 6]]
    ref_sum = np.stack([wn[b].sum(0) if b else np.zeros(3) for b in bags])
    ref_mean = np.stack([wn[b].mean(0) if b else np.zeros(3) for b in bags])
    np.testing.assert_allclose(np_of(F.embedding_bag(idx, w, off, mode="sum")), ref_sum)
    np.testing.assert_allclose(np_of(F.embedding_bag(idx, w, off)), ref_mean)
    two_d = i64([[1, 2, 4], [5, 4, 3]])
    np.testing.assert_allclose(
        np_of(F.embedding_bag(two_d, w, mode="max")), wn[np_of(two_d)].max(1)
    )
    psw = randn64(8, seed=22)
    ref_psw = np.stack(
        [sum((np_of(psw)[i] * wn[j] for i, j in zip(range(s, e), np_of(idx)[s:e])),
             np.zeros(3)) for s, e in [(0, 2), (2, 2), (2, 5), (5, 8)]]
    )  # fmt: skip
    np.testing.assert_allclose(
        np_of(F.embedding_bag(idx, w, off, mode="sum", per_sample_weights=psw)), ref_psw
    )
    last = F.embedding_bag(idx, w, i64([0, 2, 2, 5, 8]), mode="sum", include_last_offset=True)
    np.testing.assert_allclose(np_of(last), ref_sum)
    assert gradcheck(lambda w: F.embedding_bag(idx, w, off), (w,))
    assert gradcheck(lambda w, p: F.embedding_bag(idx, w, off, mode="sum",
                                                  per_sample_weights=p), (w, psw))  # fmt: skip


def test_embedding_bag_module_and_errors():
    bag = nn.EmbeddingBag(7, 3, mode="sum", padding_idx=0).double()
    assert repr(bag) == "EmbeddingBag(7, 3, mode='sum', padding_idx=0)"
    out = bag(i64([[0, 1], [2, 0]]))
    wn = np_of(bag.weight)
    np.testing.assert_allclose(np_of(out), [wn[1], wn[2]])
    with pytest.raises(ValueError, match="offsets has to be None"):
        bag(i64([[0, 1]]), i64([0]))
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        bag(i64([0, 1]))
    with pytest.raises(ValueError, match="mode has to be one of sum, mean or max"):
        F.embedding_bag(i64([[0]]), bag.weight, mode="median")
    with pytest.raises(NotImplementedError, match="per_sample_weights"):
        F.embedding_bag(i64([[0]]), bag.weight, per_sample_weights=f64([[1.0]]))
    pre = nn.EmbeddingBag.from_pretrained(f64([[1.0, 2.0], [3.0, 5.0]]), mode="max")
    assert not pre.weight.requires_grad
    np.testing.assert_allclose(np_of(pre(i64([[0, 1]]))), [[3.0, 5.0]])


# ---- losses ---------------------------------------------------------------------------------


def _log_softmax(x):
    return np.log(_softmax(x, 1))


def test_cross_entropy_class_indices_weight_ignore_and_smoothing():
    x = randn64(5, 4, seed=30)
    t = i64([0, 3, -100, 1, 2])
    w = f64([1.0, 2.0, 0.5, 1.5])
    lp, tn, wn = _log_softmax(np_of(x)), np_of(t), np_of(w)
    keep = tn != -100
    nll = np.array([-lp[i, c] * wn[c] for i, c in enumerate(tn) if c != -100])
    ref = nll.sum() / wn[tn[keep]].sum()
    np.testing.assert_allclose(np_of(F.cross_entropy(x, t, weight=w)), ref, rtol=1e-12)
    np.testing.assert_allclose(np_of(F.nll_loss(F.log_softmax(x, 1), t, weight=w)), ref)
    eps = 0.2
    smooth = np.array([-(lp[i] * wn).sum() / 4 for i in range(5) if keep[i]])
    ref_ls = (1 - eps) * ref + eps * smooth.sum() / wn[tn[keep]].sum()
    got = F.cross_entropy(x, t, weight=w, label_smoothing=eps)
    np.testing.assert_allclose(np_of(got), ref_ls, rtol=1e-12)
    assert gradcheck(lambda x, w: F.cross_entropy(x, t, weight=w, label_smoothing=eps), (x, w))
    m = nn.CrossEntropyLoss(weight=w, reduction="none")
    assert [n for n, _ in m.named_buffers()] == ["weight"]
    none = np_of(m(x, t))
    assert none.shape == (5,) and none[2] == 0


def test_cross_entropy_probabilities_and_spatial():
    x = randn64(3, 4, seed=31)
    p = _softmax(np.random.default_rng(0).standard_normal((3, 4)), 1)
    target = f64(p)
    ref = -(p * _log_softmax(np_of(x))).sum() / 3
    np.testing.assert_allclose(np_of(F.cross_entropy(x, target)), ref, rtol=1e-12)
    assert gradcheck(lambda x: F.cross_entropy(x, target, label_smoothing=0.1), (x,))
    xs = randn64(2, 3, 4, seed=32)
    ts = i64([[0, 1, 2, 1], [2, 2, 0, 1]])
    lp = np.log(_softmax(np_of(xs), 1))
    ref = -np.take_along_axis(lp, np_of(ts)[:, None], 1)[:, 0]
    np.testing.assert_allclose(np_of(F.cross_entropy(xs, ts, reduction="none")), ref)
    with pytest.raises(ValueError, match=r"batch_size \(2\) to match target batch_size \(3\)"):
        F.cross_entropy(randn64(2, 4), i64([0, 1, 2]))
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.cross_entropy(x, target, reduction="avg")


def test_nll_loss_module_sum_and_legacy_args():
    x = randn64(4, 3, seed=33)
    t = i64([0, 2, 1, 2])
    ref = -np_of(x)[np.arange(4), np_of(t)]
    np.testing.assert_allclose(np_of(nn.NLLLoss(reduction="sum")(x, t)), ref.sum())
    np.testing.assert_allclose(np_of(nn.NLLLoss(ignore_index=2)(x, t)), ref[[0, 2]].mean())
    with pytest.warns(UserWarning, match="size_average and reduce"):
        loss = F.nll_loss(x, t, reduce=False)
    np.testing.assert_allclose(np_of(loss), ref)
    assert gradcheck(lambda x: F.nll_loss(x, t), (x,))


def test_binary_cross_entropy_and_with_logits():
    rng = np.random.default_rng(5)
    p = f64(_sigmoid(rng.standard_normal((3, 4))), requires_grad=True)
    y = f64(rng.random((3, 4)))
    w = f64(rng.random(4) + 0.5)
    pn, yn, wn = np_of(p), np_of(y), np_of(w)
    ref = -(wn * (yn * np.log(pn) + (1 - yn) * np.log(1 - pn))).mean()
    np.testing.assert_allclose(np_of(F.binary_cross_entropy(p, y, weight=w)), ref, rtol=1e-12)
    assert gradcheck(lambda p: nn.BCELoss(weight=w)(p, y), (p,))
    x = randn64(3, 4, seed=34)
    pw = f64(rng.random(4) + 0.5)
    xn, pwn = np_of(x), np_of(pw)
    ref = -(pwn * yn * np.log(_sigmoid(xn)) + (1 - yn) * np.log(1 - _sigmoid(xn))).sum()
    m = nn.BCEWithLogitsLoss(reduction="sum", pos_weight=pw)
    np.testing.assert_allclose(np_of(m(x, y)), ref, rtol=1e-12)
    assert gradcheck(lambda x: m(x, y), (x,))
    with pytest.raises(ValueError, match="different to the input size"):
        F.binary_cross_entropy(p, f64([0.5]))
    with pytest.raises(ValueError, match="must be the same as input size"):
        F.binary_cross_entropy_with_logits(x, f64([0.5]))


def test_kl_div_reductions_and_log_target():
    rng = np.random.default_rng(6)
    q = _softmax(rng.standard_normal((3, 4)), 1)
    t = _softmax(rng.standard_normal((3, 4)), 1)
    inp = f64(np.log(q), requires_grad=True)
    pointwise = t * (np.log(t) - np.log(q))
    kl = nn.KLDivLoss(reduction="batchmean")
    np.testing.assert_allclose(np_of(kl(inp, f64(t))), pointwise.sum() / 3, rtol=1e-12)
    got = F.kl_div(inp, f64(np.log(t)), reduction="sum", log_target=True)
    np.testing.assert_allclose(np_of(got), pointwise.sum(), rtol=1e-12)
    with pytest.warns(UserWarning, match="batchmean"):
        np.testing.assert_allclose(np_of(F.kl_div(inp, f64(t))), pointwise.mean(), rtol=1e-12)
    assert gradcheck(lambda i: F.kl_div(i, f64(t), reduction="batchmean"), (inp,))


def test_smooth_l1_huber_and_pointwise_losses():
    x, y = randn64(3, 4, seed=35), randn64(3, 4, seed=36, requires_grad=False)
    d = np.abs(np_of(x) - np_of(y))
    beta, delta = 0.5, 0.7
    sl1 = np.where(d < beta, 0.5 * d**2 / beta, d - 0.5 * beta)
    hub = np.where(d < delta, 0.5 * d**2, delta * (d - 0.5 * delta))
    np.testing.assert_allclose(np_of(nn.SmoothL1Loss(beta=beta)(x, y)), sl1.mean(), rtol=1e-12)
    np.testing.assert_allclose(np_of(F.smooth_l1_loss(x, y, beta=0.0)), d.mean(), rtol=1e-12)
    np.testing.assert_allclose(np_of(nn.HuberLoss("sum", delta)(x, y)), hub.sum(), rtol=1e-12)
    w = f64(np.random.default_rng(7).random((3, 4)))
    got = F.huber_loss(x, y, delta=delta, weight=w)
    np.testing.assert_allclose(np_of(got), (hub * np_of(w)).mean(), rtol=1e-12)
    np.testing.assert_allclose(np_of(F.l1_loss(x, y, reduction="sum")), d.sum())
    np.testing.assert_allclose(np_of(F.mse_loss(x, y)), (d**2).mean())
    for fn in (
        lambda x: F.smooth_l1_loss(x, y, beta=beta), lambda x: F.huber_loss(x, y, delta=delta),
        lambda x: F.l1_loss(x, y), lambda x: F.mse_loss(x, y, reduction="none"),
    ):  # fmt: skip
        assert gradcheck(fn, (x,))
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.mse_loss(x, y, reduction="avg")


def test_multilabel_soft_margin_loss():
    x = randn64(3, 4, seed=37)
    y = f64((np.random.default_rng(8).random((3, 4)) > 0.5) * 1.0)
    w = f64([1.0, 0.5, 2.0, 1.5])
    xn, yn = np_of(x), np_of(y)
    per = -(yn * np.log(_sigmoid(xn)) + (1 - yn) * np.log(_sigmoid(-xn))) * np_of(w)
    m = nn.MultiLabelSoftMarginLoss(weight=w, reduction="none")
    np.testing.assert_allclose(np_of(m(x, y)), per.mean(1), rtol=1e-12)
    assert gradcheck(lambda x: nn.MultiLabelSoftMarginLoss(weight=w)(x, y), (x,))
