"""state_dict / load_state_dict, pickling and deep copies."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import flambeau
from flambeau import nn


def make():
    return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))


class WithBuffers(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)
        self.register_buffer("steps", flambeau.zeros((), dtype=flambeau.int64))
        self.register_buffer("cache", flambeau.zeros(2), persistent=False)


def test_state_dict_keys_values_and_detach():
    m = WithBuffers()
    sd = m.state_dict()
    assert list(sd) == ["steps", "lin.weight", "lin.bias"]
    assert not sd["lin.weight"].requires_grad and type(sd["lin.weight"]) is flambeau.Tensor
    assert sd["lin.weight"]._is_view_of(m.lin.weight)  # shares memory, like PyTorch
    kept = m.state_dict(keep_vars=True)
    assert kept["lin.weight"] is m.lin.weight
    assert list(m.state_dict(prefix="p.")) == ["p.steps", "p.lin.weight", "p.lin.bias"]
    assert sd._metadata[""] == {"version": 1} and "lin" in sd._metadata


def test_round_trip():
    a, b = make(), make()
    result = b.load_state_dict(a.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    x = flambeau.randn(5, 3)
    np.testing.assert_array_equal(a(x).detach().numpy(), b(x).detach().numpy())
    # Loading copies: the target's parameters keep their identity.
    w = b[0].weight
    b.load_state_dict(make().state_dict())
    assert b[0].weight is w


def test_missing_and_unexpected_keys():
    m = make()
    sd = m.state_dict()
    del sd["0.bias"]
    sd["9.weight"] = flambeau.zeros(1)
    sd["extra"] = flambeau.zeros(1)
    with pytest.raises(RuntimeError) as e:
        m.load_state_dict(sd)
    msg = str(e.value)
    assert msg.startswith("Error(s) in loading state_dict for Sequential:\n\t")
    assert 'Missing key(s) in state_dict: "0.bias". ' in msg
    assert 'Unexpected key(s) in state_dict: "9.weight", "extra". ' in msg
    assert msg.index("Missing") < msg.index("Unexpected")
    result = m.load_state_dict(sd, strict=False)
    assert result.missing_keys == ["0.bias"]
    assert result.unexpected_keys == ["9.weight", "extra"]
    assert result == (["0.bias"], ["9.weight", "extra"])


def test_shape_mismatch_names_key_and_shapes():
    m = make()
    sd = m.state_dict()
    sd["2.weight"] = flambeau.zeros(3, 3)
    for strict in (True, False):
        with pytest.raises(RuntimeError, match=r"size mismatch for 2\.weight: copying a param "
                           r"with shape flambeau\.Size\(\[3, 3\]\) from checkpoint, the shape in "
                           r"current model is flambeau\.Size\(\[2, 4\]\)"):  # fmt: skip
            m.load_state_dict(sd, strict=strict)


def test_wrong_value_type_and_not_a_dict():
    m = make()
    sd = m.state_dict()
    sd["0.bias"] = [1, 2, 3, 4]
    with pytest.raises(RuntimeError, match='While copying the parameter named "0.bias"'):
        m.load_state_dict(sd)
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        m.load_state_dict([1, 2])


def test_assign_replaces_parameters():
    m = make()
    src = {k: v.clone() for k, v in make().double().state_dict().items()}
    m.load_state_dict(src, assign=True)
    assert isinstance(m[0].weight, nn.Parameter) and m[0].weight.requires_grad
    assert m[0].weight.dtype == flambeau.float64
    assert m[0].weight._is_view_of(src["0.weight"])


def test_non_persistent_buffers_and_extra_state():
    class Extra(nn.Module):
        def __init__(self):
            super().__init__()
            self.value = 1

        def get_extra_state(self):
            return {"value": self.value}

        def set_extra_state(self, state):
            self.value = state["value"]

    a, b = Extra(), Extra()
    a.value = 7
    sd = a.state_dict()
    assert sd["_extra_state"] == {"value": 7}
    b.load_state_dict(sd)
    assert b.value == 7
    with pytest.raises(RuntimeError, match='Missing key.*"_extra_state"'):
        b.load_state_dict({})


def test_zero_dim_from_one_element_checkpoint():
    m = WithBuffers()
    sd = m.state_dict()
    sd["steps"] = flambeau.tensor([5])
    m.load_state_dict(sd)
    assert m.steps.item() == 5


def test_load_state_dict_post_hook():
    m = make()
    seen = []
    m.register_load_state_dict_post_hook(lambda mod, keys: seen.append(list(keys.missing_keys)))
    m.load_state_dict({}, strict=False)
    assert seen == [["0.weight", "0.bias", "2.weight", "2.bias"]]


def test_private_load_state_dict_pre_hook_renames_keys_without_module():
    m = make()
    calls = []

    def rename(state_dict, prefix, local_metadata, strict, missing, unexpected, errors):
        calls.append((prefix, strict))
        for key in list(state_dict):
            if key.startswith(prefix + "old."):
                state_dict[prefix + key[len(prefix + "old.") :]] = state_dict.pop(key)

    handle = m._register_load_state_dict_pre_hook(rename)
    weights = {k: flambeau.full(v.shape, 0.5) for k, v in m.state_dict().items()}
    result = m.load_state_dict({"old." + k: v for k, v in weights.items()})
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert calls == [("", True)]
    np.testing.assert_array_equal(m[2].bias.detach().numpy(), np.full(2, 0.5, np.float32))
    handle.remove()
    result = m.load_state_dict({"old.0.bias": flambeau.zeros(4)}, strict=False)
    assert result.unexpected_keys == ["old.0.bias"]

    seen = []
    m[0]._register_load_state_dict_pre_hook(
        lambda mod, sd, prefix, *rest: seen.append((mod, prefix)), with_module=True
    )
    m.load_state_dict(weights)
    assert seen == [(m[0], "0.")]


def test_private_state_dict_hook_may_return_a_new_dict():
    m = make()
    m._register_state_dict_hook(
        lambda mod, sd, prefix, meta: {k.replace(".", "/"): v for k, v in sd.items()}
    )
    assert list(m.state_dict()) == ["0/weight", "0/bias", "2/weight", "2/bias"]


def test_pickle_round_trip_keeps_values_types_and_ties():
    m = WithBuffers()
    m.steps.fill_(3)
    m.tied = m.lin  # the same module under two names
    m.lin.weight.requires_grad = False
    m2 = pickle.loads(pickle.dumps(m))
    assert type(m2.lin.weight) is nn.Parameter
    assert not m2.lin.weight.requires_grad and m2.lin.bias.requires_grad
    np.testing.assert_array_equal(m2.lin.weight.numpy(), m.lin.weight.detach().numpy())
    assert m2.steps.item() == 3 and m2.steps.dtype == flambeau.int64
    assert m2.tied is m2.lin
    assert "cache" in m2._non_persistent_buffers_set


def test_pickle_bfloat16_and_state_dict():
    m = nn.Linear(2, 3).bfloat16()
    m2 = pickle.loads(pickle.dumps(m))
    assert m2.weight.dtype == flambeau.bfloat16
    sd = pickle.loads(pickle.dumps(m.state_dict()))
    assert list(sd) == ["weight", "bias"]


def test_setstate_fills_tables_of_old_pickles():
    m = nn.Linear(2, 2)
    state = m.__getstate__()
    del state["_forward_hooks_always_called"]
    fresh = nn.Linear.__new__(nn.Linear)
    fresh.__setstate__(state)
    assert fresh(flambeau.ones(1, 2)).shape == (1, 2)


def test_deepcopy_is_independent():
    m = make()
    c = copy.deepcopy(m)
    assert c[0].weight is not m[0].weight and isinstance(c[0].weight, nn.Parameter)
    with flambeau.autograd.no_grad():
        c[0].weight.fill_(0.0)
    assert float(m[0].weight.abs().sum()) > 0


def test_overrides_with_pytorchs_signatures_are_called_as_pytorch_calls_them():
    # Libraries (GPyTorch's constraints and means) override _apply(self, fn) and
    # _load_from_state_dict with PyTorch's seven arguments; assign= reaches them through
    # local_metadata["assign_to_params_buffers"], as in PyTorch.
    seen = []

    class Child(nn.Module):
        def __init__(self, shared):
            super().__init__()
            self.w = shared

        def _apply(self, fn):
            seen.append("apply")
            return super()._apply(fn)

        def _load_from_state_dict(
            self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
            error_msgs,
        ):  # fmt: skip
            seen.append(local_metadata.get("assign_to_params_buffers", False))
            super()._load_from_state_dict(
                state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                error_msgs,
            )  # fmt: skip

    shared = nn.Parameter(flambeau.ones(2))
    parent = nn.Module()
    parent.a, parent.b = Child(shared), Child(shared)
    parent.double()
    assert seen == ["apply", "apply"]
    assert parent.a.w is parent.b.w and parent.a.w.dtype == flambeau.float64
    state = {"a.w": flambeau.full((2,), 3.0, dtype=flambeau.float64), "b.w": flambeau.zeros(2)}
    parent.load_state_dict(state, assign=True)
    assert seen[2:] == [True, True]
    assert parent.a.w.tolist() == [3.0, 3.0]
    parent.load_state_dict({k: v.clone() for k, v in state.items()})
    assert seen[4:] == [False, False]
