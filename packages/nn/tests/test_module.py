"""Module registration, traversal, modes, conversion and repr."""

from __future__ import annotations

import numpy as np
import pytest

import flambeau
from flambeau import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.scale = nn.Parameter(flambeau.ones(2))
        self.register_buffer("count", flambeau.zeros(1, dtype=flambeau.int64))
        self.register_buffer("scratch", flambeau.zeros(2), persistent=False)

    def forward(self, x):
        return self.fc(x) * self.scale


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Block()
        self.b = Block()
        self.head = nn.Linear(2, 1, bias=False)


def test_parameter_is_a_tensor_sharing_storage():
    data = flambeau.zeros(3)
    p = nn.Parameter(data)
    assert isinstance(p, flambeau.Tensor) and isinstance(p, nn.Parameter)
    assert p.requires_grad and p.is_leaf
    data.fill_(2.0)
    assert p.tolist() == [2.0, 2.0, 2.0]
    assert not nn.Parameter(flambeau.zeros(1), requires_grad=False).requires_grad
    assert repr(p).startswith("Parameter containing:\ntensor(")
    # Operations on a Parameter give plain tensors.
    assert type(p * 2) is flambeau.Tensor


def test_registration_by_assignment():
    m = Block()
    assert list(m._parameters) == ["scale"]
    assert list(m._modules) == ["fc"]
    assert list(m._buffers) == ["count", "scratch"]
    assert m.count is m._buffers["count"]
    m.extra = 5
    assert m.extra == 5 and "extra" not in m._parameters
    # Reassigning None to a registered parameter keeps the slot.
    m.scale = None
    assert "scale" in m._parameters and m.scale is None
    with pytest.raises(TypeError, match="cannot assign 'Tensor' as parameter 'scale'"):
        m.scale = flambeau.ones(2)
    with pytest.raises(TypeError, match="as buffer 'count'"):
        m.count = 3
    with pytest.raises(TypeError, match="as child module 'fc'"):
        m.fc = 3
    del m.fc
    assert "fc" not in m._modules
    with pytest.raises(AttributeError, match="'Block' object has no attribute 'fc'"):
        _ = m.fc


def test_registration_errors():
    m = nn.Module()
    with pytest.raises(KeyError, match="attribute 'training' already exists"):
        m.register_buffer("training", flambeau.ones(1))
    with pytest.raises(KeyError, match="contain"):
        m.register_parameter("a.b", None)
    with pytest.raises(KeyError, match="empty string"):
        m.add_module("", nn.Identity())
    with pytest.raises(TypeError, match="buffer name should be a string"):
        m.register_buffer(1, None)
    with pytest.raises(TypeError, match="is not a Module subclass"):
        m.add_module("x", 3)
    with pytest.raises(TypeError, match="cannot assign 'Tensor' object to parameter"):
        m.register_parameter("w", flambeau.ones(1))
    w = nn.Parameter(flambeau.ones(2, dtype=flambeau.float64))
    computed = w * 2
    computed.__class__ = nn.Parameter  # a Parameter with a grad_fn
    with pytest.raises(ValueError, match="non-leaf"):
        m.register_parameter("w", computed)

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(flambeau.ones(1))

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Early()
    with pytest.raises(TypeError, match="unexpected argument"):
        nn.Module(3)


def test_buffer_class_registers_a_buffer():
    m = nn.Module()
    m.b = nn.Buffer(flambeau.ones(2))
    m.c = nn.Buffer(flambeau.ones(1), persistent=False)
    assert set(m._buffers) == {"b", "c"}
    assert list(m.state_dict()) == ["b"]


def test_named_parameters_prefix_recurse_and_duplicates():
    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names == [
        "a.scale", "a.fc.weight", "a.fc.bias", "b.scale", "b.fc.weight", "b.fc.bias",
        "head.weight",
    ]  # fmt: skip
    assert [n for n, _ in net.named_parameters(prefix="net", recurse=False)] == []
    assert [n for n, _ in net.a.named_parameters(prefix="x", recurse=False)] == ["x.scale"]
    net.b.fc = net.a.fc  # shared submodule
    names = [n for n, _ in net.named_parameters()]
    assert "b.fc.weight" not in names and len(list(net.parameters())) == 5
    dup = [n for n, _ in net.named_parameters(remove_duplicate=False)]
    assert "b.fc.weight" in dup and len(dup) == 7
    assert [n for n, _ in net.named_buffers()] == ["a.count", "a.scratch", "b.count", "b.scratch"]
    assert len(list(net.buffers(recurse=False))) == 0


def test_children_and_modules():
    net = Net()
    assert [n for n, _ in net.named_children()] == ["a", "b", "head"]
    assert list(net.children())[2] is net.head
    names = [n for n, _ in net.named_modules()]
    assert names == ["", "a", "a.fc", "b", "b.fc", "head"]
    net.b = net.a
    assert [n for n, _ in net.named_modules()] == ["", "a", "a.fc", "head"]
    assert len(list(net.named_modules(remove_duplicate=False))) == 6
    assert [n for n, _ in net.named_modules(prefix="m")][1] == "m.a"
    assert len(list(net.modules())) == 4


def test_get_submodule_parameter_buffer():
    net = Net()
    assert net.get_submodule("a.fc") is net.a.fc
    assert net.get_submodule("") is net
    assert net.get_parameter("a.fc.weight") is net.a.fc.weight
    assert net.get_buffer("b.count") is net.b.count
    with pytest.raises(AttributeError, match="has no attribute `zz`"):
        net.get_submodule("a.zz")
    with pytest.raises(AttributeError, match="`scale` is not an nn.Module"):
        net.get_submodule("a.scale.x")
    with pytest.raises(AttributeError, match="`count` is not an nn.Parameter"):
        net.get_parameter("a.count")
    with pytest.raises(AttributeError, match="`scale` is not a buffer"):
        net.get_buffer("a.scale")


def test_train_eval():
    net = Net()
    assert net.training and net.a.fc.training
    assert net.eval() is net
    assert not net.training and not net.a.fc.training
    net.train()
    assert net.b.training
    with pytest.raises(ValueError, match="boolean"):
        net.train("no")


def test_requires_grad_and_zero_grad():
    net = Block()
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())
    net.requires_grad_()
    net(flambeau.ones(4, 3)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    assert all(float(p.grad.abs().sum()) == 0.0 for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())


def test_apply_visits_children_first():
    net = Net()
    seen = []
    assert net.apply(lambda m: seen.append(type(m).__name__)) is net
    assert seen == ["Linear", "Block", "Linear", "Block", "Linear", "Net"]


def test_dtype_conversion_only_touches_floating_tensors():
    net = Block()
    w_before = net.fc.weight
    net.double()
    assert net.fc.weight.dtype == flambeau.float64 and net.scale.dtype == flambeau.float64
    assert net.count.dtype == flambeau.int64
    assert isinstance(net.fc.weight, nn.Parameter) and net.fc.weight.requires_grad
    np.testing.assert_allclose(net.fc.weight.detach().numpy(), w_before.detach().double().numpy())
    net.float()
    assert net.fc.weight.dtype == flambeau.float32
    net.half()
    assert net.scale.dtype == flambeau.float16
    net.to(flambeau.float64)
    assert net.scale.dtype == flambeau.float64
    net.to("cpu", dtype=flambeau.float32)
    assert net.scale.dtype == flambeau.float32
    net.to(flambeau.zeros(1, dtype=flambeau.float64))
    assert net.fc.bias.dtype == flambeau.float64
    same = net.fc.weight
    net.to(flambeau.float64)  # nothing to convert: the parameter keeps its identity
    assert net.fc.weight is same
    assert net.cpu() is net
    with pytest.raises(TypeError, match="only accepts floating point or complex"):
        net.to(flambeau.int32)


def test_conversion_keeps_shared_parameters_shared():
    net = Net()
    net.b.fc = net.a.fc
    net.double()
    assert net.b.fc.weight is net.a.fc.weight


def test_cuda_without_backend_raises_clearly():
    if flambeau.cuda.is_available():
        pytest.skip("a CUDA backend is installed")
    with pytest.raises(RuntimeError, match="no CUDA device is available"):
        Block().cuda()
    with pytest.raises(RuntimeError, match="no CUDA device is available"):
        Block().to("cuda")


def test_repr_matches_pytorch_layout():
    net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Sequential(nn.Tanh(), nn.Flatten()))
    assert repr(net) == (
        "Sequential(\n"
        "  (0): Linear(in_features=3, out_features=4, bias=True)\n"
        "  (1): ReLU()\n"
        "  (2): Sequential(\n"
        "    (0): Tanh()\n"
        "    (1): Flatten(start_dim=1, end_dim=-1)\n"
        "  )\n"
        ")"
    )

    class Multi(nn.Module):
        def extra_repr(self):
            return "a=1\nb=2"

    assert repr(Multi()) == "Multi(\n  a=1\n  b=2\n)"
    assert repr(nn.ReLU(inplace=True)) == "ReLU(inplace=True)"


def test_dir_lists_registered_names():
    names = dir(Block())
    for n in ("fc", "scale", "count", "forward", "training"):
        assert n in names


def test_forward_missing():
    with pytest.raises(NotImplementedError, match='missing the required "forward"'):
        nn.Module()(1)
