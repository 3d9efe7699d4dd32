"""What ported programs rely on beyond the layers: PyTorch's module paths, whole-model
pickling and flambeau.save, `param.data = t`, global module hooks and the argument
helpers of nn.modules.utils."""

from __future__ import annotations

import importlib
import io
import pickle

import numpy as np
import pytest
from _helpers import np_of, randn64

import flambeau
from flambeau import nn
from flambeau.nn import functional as F
from flambeau.nn.modules import module as module_file

# ---- module paths ---------------------------------------------------------------------------

PATHS = {
    "activation": ["MultiheadAttention", "NonDynamicallyQuantizableLinear", "RReLU", "Softmax2d"],
    "adaptive": ["AdaptiveLogSoftmaxWithLoss"],
    "batchnorm": ["SyncBatchNorm", "LazyBatchNorm1d", "_BatchNorm", "_NormBase"],
    "channelshuffle": ["ChannelShuffle"],
    "container": ["Container", "_addindent"],
    "conv": ["LazyConv2d", "_ConvNd", "_ConvTransposeNd", "_pair", "_single", "_triple"],
    "dropout": ["FeatureAlphaDropout", "_DropoutNd"],
    "fold": ["Fold", "Unfold"],
    "instancenorm": ["InstanceNorm2d", "LazyInstanceNorm2d", "_InstanceNorm"],
    "lazy": ["LazyModuleMixin"],
    "linear": ["NonDynamicallyQuantizableLinear", "LazyLinear", "Identity"],
    "linear_cross_entropy_options": ["LinearCrossEntropyOptions"],
    "loss": ["MultiMarginLoss", "NLLLoss2d", "LinearCrossEntropyLoss", "_Loss", "_WeightedLoss"],
    "module": ["register_module_forward_hook", "_addindent"],
    "normalization": ["RMSNorm", "CrossMapLRN2d"],
    "padding": ["_ReflectionPadNd", "_ReplicationPadNd", "_CircularPadNd", "_ConstantPadNd"],
    "pooling": ["FractionalMaxPool2d", "_AvgPoolNd", "_AdaptiveAvgPoolNd", "_MaxPoolNd"],
    "rnn": ["apply_permutation", "_apply_permutation"],
    "transformer": ["_get_activation_fn", "_get_clones", "_generate_square_subsequent_mask"],
    "utils": ["consume_prefix_in_state_dict_if_present", "_quadruple", "_reverse_repeat_tuple"],
}


@pytest.mark.parametrize("submodule", sorted(PATHS))
def test_pytorch_module_paths_import(submodule):
    mod = importlib.import_module(f"flambeau.nn.modules.{submodule}")
    for name in PATHS[submodule]:
        assert hasattr(mod, name), f"flambeau.nn.modules.{submodule}.{name}"


def test_aliases_are_the_same_classes():
    from flambeau.nn.modules.activation import MultiheadAttention
    from flambeau.nn.modules.instancenorm import InstanceNorm1d
    from flambeau.nn.modules.pooling import _AvgPoolNd

    assert MultiheadAttention is nn.MultiheadAttention and InstanceNorm1d is nn.InstanceNorm1d
    assert isinstance(nn.AvgPool1d(2), _AvgPoolNd) and isinstance(nn.AvgPool2d(2), _AvgPoolNd)
    assert isinstance(nn.ReflectionPad2d(1), nn.modules.padding._ReflectionPadNd)
    mha = nn.MultiheadAttention(4, 2)
    assert type(mha.out_proj) is nn.modules.linear.NonDynamicallyQuantizableLinear
    assert repr(mha.out_proj).startswith("NonDynamicallyQuantizableLinear(in_features=4")


def test_nn_modules_utils_helpers():
    from flambeau.nn.modules.utils import (
        _list_with_default,
        _pair,
        _reverse_repeat_tuple,
        _triple,
        consume_prefix_in_state_dict_if_present,
    )

    assert _pair(3) == (3, 3) and _pair([1, 2]) == (1, 2) and _triple(1) == (1, 1, 1)
    assert _reverse_repeat_tuple((1, 2), 2) == (2, 2, 1, 1)
    assert _list_with_default([None, 4], [1, 2, 3]) == [2, 4] and _list_with_default(5, []) == 5
    with pytest.raises(ValueError, match="Input dimension should be at least 3"):
        _list_with_default([None, 4], [1, 2])
    state = nn.DataParallel(nn.Linear(2, 2)).state_dict()
    consume_prefix_in_state_dict_if_present(state, "module.")
    assert list(state) == ["weight", "bias"] and "" in state._metadata
    nn.Linear(2, 2).load_state_dict(state)


def test_apply_permutation():
    x = flambeau.arange(6.0).reshape(2, 3)
    perm = flambeau.tensor([2, 0, 1])
    from flambeau.nn.modules.rnn import apply_permutation

    with pytest.warns(FutureWarning, match="`apply_permutation` is deprecated"):
        out = apply_permutation(x, perm)
    np.testing.assert_array_equal(np_of(out), [[2.0, 0.0, 1.0], [5.0, 3.0, 4.0]])


# ---- whole-model pickling and flambeau.save ------------------------------------------------


def _round_trips(model):
    buffer = io.BytesIO()
    flambeau.save(model, buffer)
    buffer.seek(0)
    return [pickle.loads(pickle.dumps(model)), flambeau.load(buffer, weights_only=False)]


@pytest.mark.parametrize("activation", ["relu", "gelu", F.gelu, flambeau.tanh])
def test_transformer_layers_store_the_functional_and_save_whole(activation):
    layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, activation=activation)
    expected_fn = {"relu": F.relu, "gelu": F.gelu}.get(activation, activation)
    assert layer.activation is expected_fn
    code = 1 if expected_fn is F.relu else 2 if expected_fn is F.gelu else 0
    assert layer.activation_relu_or_gelu == code
    layer.eval()
    x = flambeau.randn(3, 2, 8)
    for copy in _round_trips(layer):
        assert copy.activation is expected_fn
        np.testing.assert_array_equal(np_of(copy(x)), np_of(layer(x)))


def test_transformer_and_module_activation_save_whole():
    model = nn.Transformer(8, 2, 1, 1, 16, activation="gelu").eval()
    assert model.decoder.layers[0].activation is F.gelu
    layer = nn.TransformerEncoderLayer(8, 2, 16, activation=nn.GELU())
    assert layer.activation_relu_or_gelu == 2
    src, tgt = flambeau.randn(4, 1, 8), flambeau.randn(3, 1, 8)
    for copy in _round_trips(model):
        np.testing.assert_array_equal(np_of(copy(src, tgt)), np_of(model(src, tgt)))
    for copy in _round_trips(layer):
        assert isinstance(copy.activation, nn.GELU)


def test_old_pickles_without_activation_get_relu():
    layer = nn.TransformerDecoderLayer(4, 2, 8)
    state = layer.__getstate__()
    del state["activation"]
    fresh = nn.TransformerDecoderLayer.__new__(nn.TransformerDecoderLayer)
    fresh.__setstate__(state)
    assert fresh.activation is F.relu


def test_module_attributes_that_are_functions_or_classes_save_by_name():
    m = nn.Linear(2, 2)
    m.act, m.kind = F.silu, nn.ReLU
    for copy in _round_trips(m):
        assert copy.act is F.silu and copy.kind is nn.ReLU


def test_hook_handles_pickle_with_their_module():
    m = nn.LazyLinear(3)
    copy = pickle.loads(pickle.dumps(m))
    copy(flambeau.ones(1, 2))
    assert not copy._forward_pre_hooks and type(copy) is nn.Linear
    handle = nn.Linear(1, 1).register_forward_hook(lambda *a: None)
    assert pickle.loads(pickle.dumps(handle)).id == handle.id


# ---- Parameter.data -------------------------------------------------------------------------


def test_parameter_data_assignment_same_shape_keeps_the_object():
    m = nn.Linear(2, 3)
    weight = m.weight
    m(flambeau.ones(1, 2)).sum().backward()
    grad = m.weight.grad
    m.weight.data = flambeau.ones(3, 2)
    assert m.weight is weight and m.weight.grad is grad and m.weight.requires_grad
    np.testing.assert_array_equal(np_of(m.weight), np.ones((3, 2)))
    square = nn.Parameter(flambeau.arange(4.0).reshape(2, 2))
    square.data = square.data.t()
    np.testing.assert_array_equal(np_of(square), [[0.0, 2.0], [1.0, 3.0]])
    assert square.data.shape == (2, 2) and type(square.data) is flambeau.Tensor


def test_parameter_data_assignment_new_shape_or_dtype_updates_the_module():
    m = nn.Sequential(nn.Linear(2, 3))
    m[0].weight.data = flambeau.ones(4, 5)
    assert type(m[0].weight) is nn.Parameter and m[0].weight.shape == (4, 5)
    assert m[0].weight.requires_grad and [n for n, _ in m.named_parameters()][0] == "0.weight"
    m[0].weight.data = m[0].weight.data.double()
    assert m[0].weight.dtype == flambeau.float64
    assert m.state_dict()["0.weight"].dtype == flambeau.float64
    tied_a, tied_b = nn.Linear(2, 2, bias=False), nn.Linear(2, 2, bias=False)
    tied_b.weight = tied_a.weight
    tied_a.weight.data = flambeau.zeros(3, 3)
    assert tied_a.weight is tied_b.weight and tied_b.weight.shape == (3, 3)
    copied = pickle.loads(pickle.dumps(nn.Linear(2, 2)))
    copied.weight.data = flambeau.zeros(1, 1)
    assert copied.weight.shape == (1, 1)
    emb = nn.Embedding(4, 3)
    emb.weight.data = flambeau.randn(10, 3)  # a larger vocabulary
    assert emb(flambeau.tensor([9])).shape == (1, 3)


def test_parameter_data_assignment_repoints_the_same_object():
    free = nn.Parameter(flambeau.ones(2))
    free.data = flambeau.ones(3)  # as in PyTorch: a new shape, the same Parameter
    assert free.shape == (3,) and isinstance(free, nn.Parameter) and free.requires_grad
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got int"):
        free.data = 3


# ---- global hooks ---------------------------------------------------------------------------


def test_global_forward_hooks_run_before_module_hooks():
    calls = []
    m = nn.Linear(2, 2)
    m.register_forward_pre_hook(lambda mod, args: calls.append("local-pre"))
    m.register_forward_hook(lambda mod, args, out: calls.append("local"))
    pre = module_file.register_module_forward_pre_hook(
        lambda mod, args: calls.append(("pre", type(mod).__name__))
    )
    post = module_file.register_module_forward_hook(
        lambda mod, args, kwargs, out: out * 0, with_kwargs=True
    )
    try:
        out = nn.Sequential(m)(flambeau.ones(1, 2))
    finally:
        pre.remove()
        post.remove()
    assert calls == [("pre", "Sequential"), ("pre", "Linear"), "local-pre", "local"]
    np.testing.assert_array_equal(np_of(out), 0)
    assert not module_file._has_any_global_hook()
    assert float(nn.Identity()(flambeau.ones(1))) == 1.0


def test_global_always_called_hook_and_backward_hooks():
    seen = []
    handle = module_file.register_module_forward_hook(
        lambda mod, args, out: seen.append(out), always_call=True
    )
    try:
        with pytest.raises(RuntimeError):
            nn.Linear(2, 2)(flambeau.ones(1, 3))
    finally:
        handle.remove()
    assert seen == [None]
    grads = []
    bw = module_file.register_module_full_backward_hook(
        lambda mod, gin, gout: grads.append(type(mod).__name__)
    )
    bw_pre = module_file.register_module_full_backward_pre_hook(lambda mod, gout: (gout[0] * 2,))
    try:
        x = randn64(1, 2)
        lin = nn.Linear(2, 1).double()
        lin(x).sum().backward()
    finally:
        bw.remove()
        bw_pre.remove()
    assert grads == ["Linear"]
    np.testing.assert_allclose(np_of(x.grad), 2 * np_of(lin.weight))


def test_global_registration_hooks_can_replace_values():
    swapped = nn.Parameter(flambeau.zeros(1))
    handles = [
        module_file.register_module_parameter_registration_hook(
            lambda mod, name, p: swapped if name == "bias" else None
        ),
        module_file.register_module_buffer_registration_hook(
            lambda mod, name, b: None if b is None else b + 1
        ),
        module_file.register_module_module_registration_hook(
            lambda mod, name, sub: nn.Identity() if isinstance(sub, nn.ReLU) else None
        ),
    ]
    try:
        lin = nn.Linear(1, 1)
        holder = nn.Module()
        holder.register_buffer("count", flambeau.zeros(1))
        holder.act = nn.ReLU()
    finally:
        for h in handles:
            h.remove()
    assert lin.bias is swapped and float(holder.count) == 1.0
    assert type(holder.act) is nn.Identity
    assert type(nn.Sequential(nn.ReLU())[0]) is nn.ReLU  # removed hooks no longer apply
