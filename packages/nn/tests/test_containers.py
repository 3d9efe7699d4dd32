"""Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict."""

from __future__ import annotations

from collections import OrderedDict

import pytest

import flambeau
from flambeau import nn


def test_sequential_from_modules_and_ordereddict():
    s = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert len(s) == 3 and list(s._modules) == ["0", "1", "2"]
    assert s(flambeau.ones(4, 2)).shape == (4, 1)
    named = nn.Sequential(OrderedDict(fc=nn.Linear(2, 2), act=nn.Tanh()))
    assert list(named._modules) == ["fc", "act"] and named.fc is named[0]
    assert isinstance(named[-1], nn.Tanh)


def test_sequential_indexing_slicing_and_edits():
    a, b, c = nn.Identity(), nn.ReLU(), nn.Tanh()
    s = nn.Sequential(a, b, c)
    assert s[1] is b and s[-1] is c
    sub = s[1:]
    assert isinstance(sub, nn.Sequential) and list(sub) == [b, c]
    assert list(sub._modules) == ["1", "2"]  # slices keep their names, as in PyTorch
    with pytest.raises(IndexError, match="index 3 is out of range"):
        s[3]
    s[0] = nn.Sigmoid()
    assert isinstance(s[0], nn.Sigmoid)
    del s[0]
    assert list(s._modules) == ["0", "1"] and s[0] is b
    s.append(a)
    assert s[2] is a and len(s) == 3
    s.insert(0, c)
    assert s[0] is c and len(s) == 4
    assert s.pop(0) is c and len(s) == 3
    s.extend([nn.Identity()])
    assert len(s) == 4
    assert len(s + nn.Sequential(nn.ReLU())) == 5
    assert len(nn.Sequential(a) * 3) == 3
    assert [type(m) for m in iter(nn.Sequential(a, b))] == [nn.Identity, nn.ReLU]


def test_module_list():
    layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    assert len(layers) == 3 and len(list(layers.parameters())) == 6
    layers.append(nn.ReLU())
    layers.extend([nn.Tanh()])
    layers.insert(1, nn.Identity())
    assert [type(m).__name__ for m in layers] == [
        "Linear", "Identity", "Linear", "Linear", "ReLU", "Tanh",
    ]  # fmt: skip
    assert isinstance(layers[1:3], nn.ModuleList)
    del layers[1]
    assert list(layers._modules) == [str(i) for i in range(5)]
    layers += nn.ModuleList([nn.Sigmoid()])
    assert len(layers) == 6
    with pytest.raises(TypeError, match="extend should be called with an iterable"):
        layers.extend(3)
    # Runs of identical layers print compressed, as in PyTorch.
    assert repr(nn.ModuleList([nn.ReLU(), nn.ReLU(), nn.Tanh()])) == (
        "ModuleList(\n  (0-1): 2 x ReLU()\n  (2): Tanh()\n)"
    )


def test_module_dict():
    d = nn.ModuleDict({"b": nn.ReLU(), "a": nn.Tanh()})
    assert list(d.keys()) == ["b", "a"] and "a" in d and len(d) == 2
    d["c"] = nn.Identity()
    d.update([("e", nn.Sigmoid())])
    assert list(d) == ["b", "a", "c", "e"]
    assert isinstance(d.pop("a"), nn.Tanh) and "a" not in d
    assert [k for k, _ in d.items()] == ["b", "c", "e"]
    assert len(list(d.values())) == 3
    with pytest.raises(ValueError, match="has length 3; 2 is required"):
        d.update([("x", nn.ReLU(), 1)])
    d.clear()
    assert len(d) == 0


def test_parameter_list():
    pl = nn.ParameterList([flambeau.ones(2), nn.Parameter(flambeau.zeros(3))])
    assert len(pl) == 2 and all(isinstance(p, nn.Parameter) for p in pl)
    pl.append(flambeau.ones(1))
    assert [n for n, _ in pl.named_parameters()] == ["0", "1", "2"]
    assert pl[-1].shape == (1,)
    pl[0] = flambeau.full((2,), 5.0)
    assert pl[0].tolist() == [5.0, 5.0] and isinstance(pl[0], nn.Parameter)
    assert len(pl[1:]) == 2
    assert repr(pl).splitlines()[1] == "    (0): Parameter containing: [flambeau.float32 of size 2]"


def test_parameter_list_and_dict_reprs_are_pytorchs():
    # PyTorch's reprs: a ParameterList names dtypes (torch.float32 there), a ParameterDict
    # legacy type names (torch.FloatTensor, which flambeau.typename spells alike).
    pl = nn.ParameterList(
        [
            nn.Parameter(flambeau.zeros(2, 3)),
            nn.Parameter(flambeau.zeros(4, dtype=flambeau.float64)),
            nn.Parameter(flambeau.zeros(())),
            nn.Parameter(flambeau.zeros(2, dtype=flambeau.int64), requires_grad=False),
            "text",
        ]
    )
    assert repr(pl) == (
        "ParameterList(\n"
        "    (0): Parameter containing: [flambeau.float32 of size 2x3]\n"
        "    (1): Parameter containing: [flambeau.float64 of size 4]\n"
        "    (2): Parameter containing: [flambeau.float32 of size ]\n"
        "    (3): Parameter containing: [flambeau.int64 of size 2]\n"
        "    (4): Object of type: str\n"
        ")"
    )
    pd = nn.ParameterDict(
        {
            "a": nn.Parameter(flambeau.zeros(2, 3)),
            "b": nn.Parameter(flambeau.zeros(5, dtype=flambeau.float64)),
            "c": nn.Parameter(flambeau.zeros(0, 3, dtype=flambeau.float16)),
            "d": nn.Parameter(flambeau.zeros(2, dtype=flambeau.complex64)),
            "e": nn.Parameter(flambeau.zeros(2, dtype=flambeau.bfloat16)),
            "f": nn.Parameter(flambeau.zeros(2, dtype=flambeau.int32), requires_grad=False),
            "g": 3,
            "h": nn.Linear(1, 1),
        }
    )
    assert repr(pd) == (
        "ParameterDict(\n"
        "    (a): Parameter containing: [torch.FloatTensor of size 2x3]\n"
        "    (b): Parameter containing: [torch.DoubleTensor of size 5]\n"
        "    (c): Parameter containing: [torch.HalfTensor of size 0x3]\n"
        "    (d): Parameter containing: [torch.ComplexFloatTensor of size 2]\n"
        "    (e): Parameter containing: [torch.BFloat16Tensor of size 2]\n"
        "    (f): Parameter containing: [torch.IntTensor of size 2]\n"
        "    (g): Object of type: int\n"
        "    (h): Object of type: Linear\n"
        "  (h): Linear(in_features=1, out_features=1, bias=True)\n"
        ")"
    )
    one = nn.ParameterDict({"x": nn.Parameter(flambeau.zeros(1, 2))})
    assert (
        repr(one) == "ParameterDict(  (x): Parameter containing: [torch.FloatTensor of size 1x2])"
    )
    assert repr(nn.ParameterDict()) == "ParameterDict()"
    assert repr(nn.ParameterList()) == "ParameterList()"


def test_parameter_dict():
    pd = nn.ParameterDict({"b": flambeau.ones(1), "a": flambeau.ones(2)})
    assert list(pd) == ["a", "b"]  # a plain dict is taken in sorted order, as in PyTorch
    pd["c"] = flambeau.zeros(3)
    assert isinstance(pd["c"], nn.Parameter) and "c" in pd
    assert [n for n, _ in pd.named_parameters()] == ["a", "b", "c"]
    assert pd.get("zz") is None and pd.pop("a").shape == (2,)
    assert list(pd.keys()) == ["b", "c"]
    merged = pd | nn.ParameterDict({"z": flambeau.ones(1)})
    assert list(merged) == ["b", "c", "z"]
    with pytest.raises(TypeError, match="keys must be strings"):
        pd[1] = flambeau.ones(1)
    state = pd.state_dict()
    assert list(state) == ["b", "c"]
