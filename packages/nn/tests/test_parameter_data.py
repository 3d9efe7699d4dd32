"""``param.data = t`` re-points the very Parameter (PyTorch's idiom for custom init, weight
tying and dtype changes): modules, optimizers and state dicts keep seeing the same object."""

from __future__ import annotations

import numpy as np

import flambeau as F
from flambeau import nn, optim


def test_data_setter_repoints_the_parameter_in_place():
    lin = nn.Linear(3, 2)
    p = lin.weight
    p.grad = F.ones(2, 3)
    new = F.arange(12.0).view(4, 3)
    p.data = new
    assert lin.weight is p and type(p) is nn.Parameter
    assert p.shape == (4, 3) and p.requires_grad and p.is_leaf
    assert p.grad.shape == (2, 3)  # the gradient stays, as in PyTorch
    new[0, 0] = -5.0  # the parameter views new's memory
    assert lin.weight[0, 0].item() == -5.0
    assert [q is p for q in lin.parameters()] == [True, False]


def test_data_setter_changes_dtype_and_the_state_dict_follows():
    lin = nn.Linear(3, 2, bias=False)
    lin.weight.data = F.zeros(2, 3, dtype=F.float64)
    assert lin.weight.dtype == F.float64
    assert lin.state_dict()["weight"].dtype == F.float64
    y = lin(F.ones(1, 3, dtype=F.float64))
    assert y.dtype == F.float64


def test_tied_weights_share_memory_and_train_together():
    enc, dec = nn.Linear(4, 4, bias=False), nn.Linear(4, 4, bias=False)
    dec.weight.data = enc.weight.data  # weight tying through .data
    assert dec.weight._is_view_of(enc.weight)
    opt = optim.SGD([enc.weight], lr=0.5)
    x = F.ones(1, 4)
    enc(x).sum().backward()
    before = dec.weight.detach().clone()
    opt.step()
    # enc's step moved dec's weight too: d(sum(W x))/dW = 1 for x of ones.
    np.testing.assert_allclose(dec.weight.detach().numpy(), before.numpy() - 0.5, rtol=1e-6)


def test_optimizer_made_before_repointing_steps_the_new_data():
    lin = nn.Linear(2, 1, bias=False)
    opt = optim.SGD(lin.parameters(), lr=1.0)
    lin.weight.data = F.tensor([[1.0, 2.0]])
    lin(F.tensor([[3.0, 4.0]])).sum().backward()
    opt.step()
    assert lin.weight.tolist() == [[1.0 - 3.0, 2.0 - 4.0]]


def test_module_conversion_keeps_parameter_and_gradient_objects():
    lin = nn.Linear(2, 2)
    shared = nn.Sequential(lin, lin)  # a parameter reached twice is converted once
    w, b = lin.weight, lin.bias
    w.grad = F.ones(2, 2)
    grad = w.grad
    opt = optim.SGD(shared.parameters(), lr=1.0)
    running = nn.BatchNorm1d(2)
    mean = running.running_mean
    shared.double()
    running.double()
    assert lin.weight is w and lin.bias is b and w.grad is grad
    assert (w.dtype, b.dtype, grad.dtype) == (F.float64,) * 3
    assert running.running_mean is not mean and running.running_mean.dtype == F.float64
    before = w.detach().clone()
    opt.step()  # the optimizer made before .double() steps the converted parameter
    np.testing.assert_allclose(w.detach().numpy(), before.numpy() - 1.0)
