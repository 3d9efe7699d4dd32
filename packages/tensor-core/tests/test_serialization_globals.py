"""flambeau.save of functions and classes held by an object (an activation on a layer),
and pickling of devices, dtypes, sizes and generators (what spawned workers receive)."""

from __future__ import annotations

import collections
import copy
import datetime
import functools
import io
import pickle
import threading

import pytest

import flambeau as F
from flambeau import serialization

Error = serialization.UnpicklingError


def roundtrip(obj, **load_kwargs):
    buf = io.BytesIO()
    F.save(obj, buf)
    buf.seek(0)
    return F.load(buf, **load_kwargs)


try:
    import flambeau.nn as nn
except ImportError:  # the core's tests run without flambeau-nn too
    nn = None

if nn is not None:

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 3)
            self.act = F.relu
            self.act2 = nn.functional.gelu
            self.cls = nn.ReLU

        def forward(self, x):
            return self.act2(self.act(self.fc(x)))


def scaled_tanh(x):
    return F.tanh(x) * 2


class Holder:
    def __init__(self, act, kind):
        self.act, self.kind = act, kind


def test_functions_and_classes_are_saved_by_name():
    obj = Holder(F.relu, F.Tensor)  # a core function, and a class
    out = roundtrip({"h": obj, "mine": scaled_tanh, "builtin": len}, weights_only=False)
    assert out["h"].act is F.relu and out["h"].kind is F.Tensor
    assert out["mine"] is scaled_tanh and out["builtin"] is len


def test_references_need_the_allow_list_with_weights_only():
    with pytest.raises(Error, match="refers to 'flambeau:relu', which is not allowed"):
        roundtrip([F.relu])
    with serialization.safe_globals([F.relu, scaled_tanh]):
        assert roundtrip([F.relu, scaled_tanh]) == [F.relu, scaled_tanh]
    assert F.relu not in serialization.get_safe_globals()
    with pytest.raises(Error, match="not allowed"):
        roundtrip([scaled_tanh])


def test_what_cannot_be_found_again_is_refused_at_save():
    def local(x):
        return x

    with pytest.raises(TypeError, match="cannot save the function .*local"):
        F.save(local, io.BytesIO())
    with pytest.raises(TypeError, match="cannot save the function"):
        F.save({"f": lambda x: x}, io.BytesIO())


def test_objects_with_their_own_reduction_save_as_pickle_takes_them_apart():
    # functools.partial, defaultdict and date reduce to a callable and its arguments
    # (__reduce_ex__), not to a class and a __dict__: as a saved flow's layers hold them.
    part = functools.partial(scaled_tanh)
    table = collections.defaultdict(list, {"a": [F.ones(2)]})
    out = roundtrip({"p": part, "d": table, "day": datetime.date(2024, 2, 29)}, weights_only=False)
    assert isinstance(out["p"], functools.partial) and out["p"].func is scaled_tanh
    assert F.equal(out["p"](F.zeros(1)), F.zeros(1))
    assert type(out["d"]) is collections.defaultdict and out["d"].default_factory is list
    assert F.equal(out["d"]["a"][0], F.ones(2)) and out["d"]["new"] == []
    assert out["day"] == datetime.date(2024, 2, 29)


def test_a_reduction_calls_only_what_the_allow_list_names_with_weights_only():
    part = functools.partial(scaled_tanh, F.ones(2))
    with pytest.raises(Error, match="refers to 'functools:partial', which is not allowed"):
        roundtrip(part)
    with serialization.safe_globals([functools.partial, scaled_tanh]):
        out = roundtrip(part)
    assert F.allclose(out(), scaled_tanh(F.ones(2)))


class Node:
    def __init__(self, name):
        self.name, self.links = name, []


def test_shared_objects_load_as_one_and_cycles_through_objects_are_kept():
    a, b = Node("a"), Node("b")
    a.links, b.links = [b, a], [a]  # a -> b -> a, and a -> a
    out = roundtrip({"first": a, "again": a, "b": b}, weights_only=False)
    a2 = out["first"]
    assert out["again"] is a2 and a2.links[0] is out["b"] and a2.links[1] is a2
    assert out["b"].links[0] is a2 and a2.name == "a"
    loop = []
    loop.append(loop)  # a cycle through plain containers alone is still refused
    with pytest.raises(ValueError, match="self-referencing"):
        F.save(loop, io.BytesIO())


@pytest.mark.skipif(nn is None, reason="flambeau-nn is not installed")
def test_a_whole_model_keeps_its_shared_layers_and_tied_parameters():
    emb = nn.Embedding(5, 3)
    model = nn.ModuleDict({"enc": emb, "dec": emb, "a": nn.Linear(3, 3), "b": nn.Linear(3, 3)})
    model["b"].weight = model["a"].weight
    out = roundtrip(model, weights_only=False)
    assert out["enc"] is out["dec"] and out["a"].weight is out["b"].weight
    assert len(list(out.parameters())) == len(list(model.parameters())) == 4


def test_what_pickle_cannot_take_apart_is_refused_at_save():
    with pytest.raises(TypeError, match="cannot save an object of type lock"):
        F.save({"lock": threading.Lock()}, io.BytesIO())


@pytest.mark.skipif(nn is None, reason="flambeau-nn is not installed")
def test_a_whole_model_holding_an_activation_function_saves_and_loads():
    model = Net()
    x = F.linspace(-2, 2, 8).reshape(2, 4)
    out = roundtrip(model, weights_only=False)
    assert out.act is F.relu and out.act2 is nn.functional.gelu and out.cls is nn.ReLU
    assert F.allclose(out(x), model(x))
    again = pickle.loads(pickle.dumps(model))  # as a spawned worker receives it
    assert again.act is F.relu and F.allclose(again(x), model(x))


# ---- pickling -------------------------------------------------------------------------------


@pytest.mark.parametrize("device", ["cpu", "cuda:1", "cuda"])
def test_devices_pickle_and_copy(device):
    d = F.device(device)
    for protocol in (2, pickle.HIGHEST_PROTOCOL):
        assert pickle.loads(pickle.dumps(d, protocol)) == d
    assert copy.deepcopy(d) == d and copy.copy(d) == d


def test_dtypes_and_sizes_pickle_to_themselves():
    for dt in (F.float32, F.bfloat16, F.complex128, F.bool):
        assert pickle.loads(pickle.dumps(dt)) is dt
    s = pickle.loads(pickle.dumps(F.Size([2, 3])))
    assert s == (2, 3) and type(s) is F.Size


def test_a_generator_pickles_with_its_seed_and_position():
    g = F.Generator()
    g.manual_seed(1234)
    F.rand(5, generator=g)  # move it along
    h = pickle.loads(pickle.dumps(g))
    assert h.initial_seed() == 1234 and h.device == g.device
    assert F.equal(F.rand(4, generator=h), F.rand(4, generator=g))
    k = copy.deepcopy(g)
    assert F.equal(F.randn(3, generator=k), F.randn(3, generator=g))
