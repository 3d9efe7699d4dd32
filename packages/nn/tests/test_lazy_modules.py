"""Lazy modules: UninitializedParameter / UninitializedBuffer, initialize_parameters on the
first forward, the switch to cls_to_become, state_dict, conversion, copying and errors."""

from __future__ import annotations

import copy
import io
import pickle

import numpy as np
import pytest
from _helpers import np_of, randn64

import flambeau
from flambeau import nn
from flambeau.nn.parameter import UninitializedBuffer, UninitializedParameter, is_lazy


def test_uninitialized_parameter_refuses_use_until_materialized():
    p = UninitializedParameter()
    assert repr(p) == "<UninitializedParameter>" and is_lazy(p)
    assert isinstance(p, nn.Parameter) and p.requires_grad
    assert p.dtype == flambeau.float32 and p.device == flambeau.device("cpu")
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized"):
        p.shape  # noqa: B018
    for use in (lambda: p + 1, lambda: p.sum(), lambda: p.numel(), lambda: len(p)):
        with pytest.raises(ValueError, match="Attempted to use an uninitialized parameter"):
            use()
    with pytest.raises(RuntimeError, match="Can't share memory"):
        p.share_memory_()
    assert p.to(flambeau.float64).dtype == flambeau.float64  # allowed, as in PyTorch
    p.materialize((2, 3))  # in place, as in PyTorch: the same object becomes a Parameter
    assert type(p) is nn.Parameter and p.shape == (2, 3)


def test_uninitialized_buffer_and_copies():
    b = UninitializedBuffer(dtype=flambeau.float64, persistent=False)
    assert repr(b) == "<UninitializedBuffer>" and not b.requires_grad and not b.persistent
    assert isinstance(b, nn.Buffer) and b.dtype == flambeau.float64
    c = copy.deepcopy(b)
    assert type(c) is UninitializedBuffer and c.dtype == flambeau.float64 and not c.persistent
    p = pickle.loads(pickle.dumps(UninitializedParameter(requires_grad=False)))
    assert type(p) is UninitializedParameter and not p.requires_grad


def test_lazy_linear_initializes_on_first_forward():
    m = nn.LazyLinear(4)
    assert repr(m) == "LazyLinear(in_features=0, out_features=4, bias=True)"
    assert m.has_uninitialized_params() and m.in_features == 0
    state = m.state_dict()
    assert list(state) == ["weight", "bias"] and all(is_lazy(v) for v in state.values())
    flambeau.manual_seed(0)
    x = randn64(2, 3, requires_grad=False).float()
    y = m(x)
    assert type(m) is nn.Linear and repr(m) == "Linear(in_features=3, out_features=4, bias=True)"
    assert type(m.weight) is nn.Parameter and m.weight.shape == (4, 3) and y.shape == (2, 4)
    assert not hasattr(m, "_initialize_hook") and not m._forward_pre_hooks
    bound = 1 / np.sqrt(3)
    assert np.abs(np_of(m.weight)).max() <= bound and np.abs(np_of(m.bias)).max() <= bound
    np.testing.assert_allclose(np_of(y), np_of(x) @ np_of(m.weight).T + np_of(m.bias), rtol=1e-6)
    assert [n for n, _ in m.named_parameters()] == ["weight", "bias"]
    with pytest.raises(RuntimeError):
        m(randn64(2, 5).float())  # now a Linear of in_features 3


def test_lazy_linear_without_bias_dtype_and_conversion():
    m = nn.LazyLinear(3, bias=False, dtype=flambeau.float64)
    assert m.bias is None and m.weight.dtype == flambeau.float64
    m2 = nn.LazyLinear(3).double()
    assert is_lazy(m2.weight) and m2.weight.dtype == flambeau.float64
    m2(randn64(2, 2))
    assert m2.weight.dtype == flambeau.float64 and m2.weight.shape == (3, 2)
    frozen = nn.LazyLinear(2).requires_grad_(False)
    frozen(flambeau.ones(1, 5))
    assert not frozen.weight.requires_grad


def _saved_and_loaded(module):
    buffer = io.BytesIO()
    flambeau.save(module, buffer)
    buffer.seek(0)
    return flambeau.load(buffer, weights_only=False)


def test_lazy_modules_copy_pickle_and_save_before_initialization():
    m = nn.Sequential(nn.LazyLinear(4), nn.ReLU(), nn.LazyLinear(2), nn.LazyBatchNorm1d())
    for clone in (copy.deepcopy(m), pickle.loads(pickle.dumps(m)), _saved_and_loaded(m)):
        assert is_lazy(clone[0].weight) and is_lazy(clone[3].running_mean)
        out = clone(flambeau.ones(5, 7))
        assert out.shape == (5, 2) and clone[2].weight.shape == (2, 4)
        assert type(clone[0]) is nn.Linear and type(clone[3]) is nn.BatchNorm1d
        assert not clone[0]._forward_pre_hooks
        clone(flambeau.ones(3, 7))  # the initialization hook is gone
    assert is_lazy(m[0].weight)  # the original is untouched


def test_lazy_load_state_dict_materializes_from_the_checkpoint():
    source = nn.Linear(3, 4)
    m = nn.LazyLinear(4)
    assert str(m.load_state_dict(source.state_dict())) == "<All keys matched successfully>"
    assert type(m) is nn.LazyLinear and m.weight.shape == (4, 3) and not is_lazy(m.weight)
    np.testing.assert_array_equal(np_of(m.weight), np_of(source.weight))
    x = flambeau.ones(2, 3)
    np.testing.assert_allclose(np_of(m(x)), np_of(source(x)), rtol=1e-6)
    assert type(m) is nn.Linear and m.in_features == 3
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized"):
        nn.Linear(3, 4).load_state_dict(nn.LazyLinear(4).state_dict())
    lazy = nn.LazyLinear(4)
    lazy.load_state_dict(nn.LazyLinear(4).state_dict())  # both uninitialized: fine
    assert is_lazy(lazy.weight)


@pytest.mark.parametrize(
    "lazy, eager, shape, expected_weight",
    [
        (lambda: nn.LazyConv1d(6, 3), nn.Conv1d, (2, 4, 9), (6, 4, 3)),
        (lambda: nn.LazyConv2d(6, 3, groups=2), nn.Conv2d, (2, 4, 7, 7), (6, 2, 3, 3)),
        (lambda: nn.LazyConv3d(2, 2, bias=False), nn.Conv3d, (3, 4, 4, 4), (2, 3, 2, 2, 2)),
        (lambda: nn.LazyConvTranspose1d(6, 3), nn.ConvTranspose1d, (5, 9), (5, 6, 3)),
        (lambda: nn.LazyConvTranspose2d(4, 2, groups=2), nn.ConvTranspose2d, (1, 6, 3, 3),
         (6, 2, 2, 2)),
        (lambda: nn.LazyConvTranspose3d(2, 2), nn.ConvTranspose3d, (1, 3, 2, 2, 2),
         (3, 2, 2, 2, 2)),
    ],
)  # fmt: skip
def test_lazy_convolutions(lazy, eager, shape, expected_weight):
    m = lazy()
    assert repr(m).startswith(f"Lazy{eager.__name__}(0, ")
    x = flambeau.randn(*shape)
    y = m(x)
    assert type(m) is eager and m.weight.shape == expected_weight
    in_channels = shape[1] if len(shape) == len(expected_weight) else shape[0]
    assert m.in_channels == in_channels
    reference = eager(m.in_channels, m.out_channels, m.kernel_size, stride=m.stride,
                      padding=m.padding, groups=m.groups, bias=m.bias is not None)  # fmt: skip
    reference.load_state_dict(m.state_dict())
    np.testing.assert_allclose(np_of(y), np_of(reference(x)), rtol=1e-6)


def test_lazy_conv_errors():
    with pytest.raises(RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\) input"):
        nn.LazyConv2d(6, 3)(flambeau.randn(5, 5))
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.LazyConv2d(6, 3, groups=4)(flambeau.randn(1, 2, 5, 5))
    with pytest.raises(ValueError, match='Only "zeros" padding mode'):
        nn.LazyConvTranspose2d(2, 3, padding_mode="reflect")


def test_lazy_batch_norm():
    m = nn.LazyBatchNorm1d()
    assert repr(m) == (
        "LazyBatchNorm1d(0, eps=1e-05, momentum=0.1, affine=True, bias=True, "
        "track_running_stats=True)"
    )
    state = m.state_dict()
    assert list(state) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    assert is_lazy(state["running_mean"]) and not is_lazy(state["num_batches_tracked"])
    x = randn64(6, 3, requires_grad=False)
    out = m.double()(x)
    assert type(m) is nn.BatchNorm1d and m.num_features == 3
    xs = np_of(x)
    np.testing.assert_allclose(
        np_of(out), (xs - xs.mean(0)) / np.sqrt(xs.var(0) + 1e-5), rtol=1e-10
    )
    np.testing.assert_allclose(np_of(m.running_mean), 0.1 * xs.mean(0), rtol=1e-10)
    assert int(m.num_batches_tracked) == 1 and m.running_var.dtype == flambeau.float64
    plain = nn.LazyBatchNorm2d(affine=False, track_running_stats=False)
    assert not plain.has_uninitialized_params()
    plain(flambeau.randn(2, 3, 2, 2))
    assert type(plain) is nn.BatchNorm2d and plain.num_features == 0
    with pytest.raises(ValueError, match="expected 5D input"):
        nn.LazyBatchNorm3d()(flambeau.randn(2, 3, 2, 2))


def test_lazy_instance_norm():
    m = nn.LazyInstanceNorm2d(affine=True, track_running_stats=True)
    assert list(m.state_dict()) == [
        "weight", "bias", "running_mean", "running_var", "num_batches_tracked",
    ]  # fmt: skip
    m(flambeau.randn(4, 3, 2, 2))
    assert type(m) is nn.InstanceNorm2d and m.weight.shape == (3,)
    unbatched = nn.LazyInstanceNorm1d(affine=True)
    unbatched(flambeau.randn(5, 7))  # (C, L): five channels
    assert unbatched.num_features == 5 and unbatched.weight.shape == (5,)
    plain = nn.LazyInstanceNorm3d(affine=False, track_running_stats=False)
    assert plain.state_dict() == {}
    with pytest.raises(ValueError, match=r"expected 3D or 4D input \(got 2D input\)"):
        nn.LazyInstanceNorm2d()(flambeau.randn(3, 5))


def test_custom_lazy_module_following_pytorchs_pattern():
    class LazyScale(nn.modules.lazy.LazyModuleMixin, nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = UninitializedParameter()
            self.register_buffer("seen", UninitializedBuffer())

        def initialize_parameters(self, x):
            with flambeau.no_grad():
                self.scale.materialize(x.shape[-1:])
                self.scale.fill_(2.0)
                self.seen.materialize((1,))
                self.seen.zero_()

        def forward(self, x):
            return x * self.scale

    m = LazyScale()
    out = m(flambeau.ones(2, 3))
    np.testing.assert_array_equal(np_of(out), np.full((2, 3), 2.0))
    assert type(m) is LazyScale and m.scale.shape == (3,) and m.seen.shape == (1,)
    assert type(m.seen) is flambeau.Tensor

    class Forgetful(nn.modules.lazy.LazyModuleMixin, nn.Module):
        def __init__(self):
            super().__init__()
            self.w = UninitializedParameter()

        def initialize_parameters(self, x):
            pass

    with pytest.raises(RuntimeError, match="module Forgetful has not been fully initialized"):
        Forgetful()(flambeau.ones(1))

    class NoInit(nn.modules.lazy.LazyModuleMixin, nn.Module):
        pass

    with pytest.raises(NotImplementedError, match="initialize_parameters is not implemented"):
        NoInit()(flambeau.ones(1))


def test_references_taken_before_initialization_see_the_materialized_parameters():
    m = nn.LazyLinear(2)
    early = list(m.parameters())  # e.g. an optimizer made before the dry run
    m(flambeau.ones(3, 4))
    # materialize() changes the tensor in place, as PyTorch does: the references hold it.
    assert all(p is q for p, q in zip(early, m.parameters()))
    assert early[0].shape == (2, 4) and type(early[0]) is nn.Parameter
