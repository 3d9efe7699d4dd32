"""The Torch7 Module/Container contract: state, parameters, flattening, types, trees."""

from __future__ import annotations

import pytest

import flambeau
from flambeau.legacy import nn

D = flambeau.float64


def mlp():
    return nn.Sequential().add(nn.Linear(3, 4)).add(nn.Tanh()).add(nn.Linear(4, 2))


def test_parameters_none_and_default_dtype():
    assert nn.Tanh().parameters() is None
    assert nn.Sequential().add(nn.ReLU()).parameters() is None
    lin = nn.Linear(3, 2)
    assert lin.weight.dtype == flambeau.get_default_dtype()
    params, grads = lin.parameters()
    assert params[0] is lin.weight and params[1] is lin.bias
    assert grads[0] is lin.gradWeight and grads[1] is lin.gradBias
    assert lin.weight.shape == (2, 3)
    assert nn.Linear(3, 2).noBias().parameters()[0][0].shape == (2, 3)


def test_default_dtype_is_followed():
    old = flambeau.get_default_dtype()
    flambeau.set_default_dtype(D)
    try:
        assert nn.SpatialConvolution(1, 2, 3, 3).weight.dtype == D
    finally:
        flambeau.set_default_dtype(old)


def test_reset_ranges():
    lin = nn.Linear(16, 5)
    assert float(lin.weight.abs().max()) <= 0.25
    lin.reset(0.01)
    assert float(lin.weight.abs().max()) <= 0.01 * 3**0.5 + 1e-7


def test_acc_grad_parameters_adds_and_update_grad_input_does_not_touch():
    flambeau.manual_seed(0)
    lin = nn.Linear(3, 2).double()
    x, g = flambeau.randn(4, 3, dtype=D), flambeau.randn(4, 2, dtype=D)
    lin.forward(x)
    lin.zeroGradParameters()
    lin.updateGradInput(x, g)
    assert float(lin.gradWeight.abs().sum()) == 0.0
    lin.accGradParameters(x, g)
    once = lin.gradWeight.clone()
    lin.accGradParameters(x, g, 0.5)
    assert flambeau.allclose(lin.gradWeight, 1.5 * once)
    lin.zeroGradParameters()
    assert float(lin.gradWeight.abs().sum()) == 0.0


def test_update_parameters_and_backward_update():
    flambeau.manual_seed(1)
    a = mlp().double()
    b = a.clone()
    x, g = flambeau.randn(5, 3, dtype=D), flambeau.randn(5, 2, dtype=D)
    a.forward(x)
    a.zeroGradParameters()
    a.backward(x, g)
    before = [p.clone() for p in a.parameters()[0]]
    a.updateParameters(0.1)
    for p, p0, gp in zip(a.parameters()[0], before, a.parameters()[1]):
        assert flambeau.allclose(p, p0 - 0.1 * gp)
    b.forward(x)
    b.zeroGradParameters()
    b.backwardUpdate(x, g, 0.1)  # accumulates straight into the weights
    for pa, pb in zip(a.parameters()[0], b.parameters()[0]):
        assert flambeau.allclose(pa, pb)
    assert float(b.parameters()[1][0].abs().sum()) == 0.0


def test_flatten_parameters_aliases_both_ways():
    flambeau.manual_seed(2)
    m = mlp()
    values = [p.clone() for p in m.parameters()[0]]
    flat, gflat = m.flattenParameters()
    assert flat.numel() == gflat.numel() == 3 * 4 + 4 + 4 * 2 + 2
    assert flat.is_contiguous() and flat.dtype == flambeau.get_default_dtype()
    for p, v in zip(m.parameters()[0], values):
        assert flambeau.equal(p, v)  # values kept
    first = m.modules[0]
    flat[0] = 42.0
    assert float(first.weight[0, 0]) == 42.0
    first.bias.fill_(-1)
    assert float(flat[12:16].sum()) == -4.0
    gflat.fill_(1)
    assert float(m.modules[2].gradBias.sum()) == 2.0
    m.zeroGradParameters()
    assert float(gflat.abs().sum()) == 0.0
    # Training on the flat tensor trains the network.
    x = flambeau.randn(4, 3)
    m.forward(x)
    m.backward(x, flambeau.ones(4, 2))
    assert float(gflat.abs().sum()) > 0
    w0 = first.weight.clone()
    flat.add_(gflat, alpha=-0.1)
    assert not flambeau.equal(first.weight, w0)


def test_flatten_twice_and_shared_modules():
    lin = nn.Linear(2, 2)
    m = nn.Sequential().add(lin).add(nn.Tanh()).add(lin)  # the same module twice
    flat, _ = m.flattenParameters()
    assert flat.numel() == 6
    flat2, _ = m.flattenParameters()
    flat2[0] = 7
    assert float(lin.weight[0, 0]) == 7
    assert nn.Tanh().flattenParameters()[0].numel() == 0


def test_type_conversion():
    m = mlp()
    assert m.type() == "torch.FloatTensor"
    m.double()
    assert m.type() == "torch.DoubleTensor"
    assert all(p.dtype == D for p in m.parameters()[0])
    assert m.modules[0].gradWeight.dtype == D
    m.type("torch.FloatTensor")
    assert m.modules[2].bias.dtype == flambeau.float32
    with pytest.raises(ValueError):
        m.type("torch.NoSuchTensor")


def test_training_evaluate_and_clear_state():
    m = nn.Sequential().add(nn.Linear(3, 3)).add(nn.Dropout(0.5))
    m.evaluate()
    assert not m.train and not m.modules[1].train
    m.training()
    assert m.modules[1].train
    m.forward(flambeau.randn(2, 3))
    m.clearState()
    assert m.modules[0].output.numel() == 0


def test_sequential_structure_and_repr():
    m = nn.Sequential()
    assert m.add(nn.Linear(2, 3)) is m
    m.add(nn.ReLU()).add(nn.Linear(3, 1))
    assert len(m) == 3 and isinstance(m.modules[0], nn.Linear) and m.get(1) is m.modules[1]
    m.insert(nn.Tanh(), 1)
    assert isinstance(m.modules[1], nn.Tanh)
    m.remove(1)
    assert [type(x).__name__ for x in m.modules] == ["Linear", "ReLU", "Linear"]
    m.remove()
    assert len(m) == 2
    with pytest.raises(IndexError):
        m.remove(5)
    assert repr(m) == (
        "nn.Sequential {\n  [input -> (0) -> (1) -> output]\n"
        "  (0): nn.Linear(2 -> 3)\n  (1): nn.ReLU\n}"
    )
    nested = nn.Sequential().add(m).add(nn.ConcatTable().add(nn.Identity()).add(nn.Identity()))
    text = repr(nested)
    assert "(0): nn.Sequential {" in text and "nn.ConcatTable {" in text


def test_sequential_backward_gives_each_child_its_input():
    seen = []

    class Spy(nn.Identity):
        def updateGradInput(self, input, gradOutput):
            seen.append(input)
            return super().updateGradInput(input, gradOutput)

    lin = nn.Linear(2, 2)
    m = nn.Sequential().add(Spy()).add(lin).add(Spy())
    x = flambeau.randn(3, 2)
    m.forward(x)
    m.backward(x, flambeau.ones(3, 2))
    assert seen[0] is lin.output and seen[1] is x


def test_tree_utilities():
    m = (
        nn.Sequential()
        .add(nn.Linear(2, 2))
        .add(nn.ConcatTable().add(nn.Linear(2, 1)).add(nn.Tanh()))
    )
    nodes, containers = m.findModules("Linear")
    assert len(nodes) == 2 and containers[0] is m and containers[1] is m.modules[1]
    assert len(m.listModules()) == 5
    names = []
    m.apply(lambda mod: names.append(type(mod).__name__))
    assert names == ["Sequential", "Linear", "ConcatTable", "Linear", "Tanh"]


def test_outputs_are_reused_buffers():
    lin = nn.Linear(3, 2)
    out = lin.forward(flambeau.randn(4, 3))
    out2 = lin.forward(flambeau.randn(5, 3))
    assert out is out2 and out2.shape == (5, 2)


def test_shape_errors_are_clear():
    with pytest.raises(ValueError, match="1-D or 2-D"):
        nn.Linear(2, 2).forward(flambeau.randn(2, 2, 2))
    with pytest.raises(ValueError, match="3-D or 4-D"):
        nn.SpatialConvolution(1, 1, 2, 2).forward(flambeau.randn(4, 4))
    with pytest.raises(IndexError):
        nn.LookupTable(3, 2).forward(flambeau.tensor([0, 3]))
