"""nn.Module conversions and load_state_dict under flambeau.__future__'s settings, as
PyTorch's: by default a parameter keeps its object and takes the converted data; with
set_overwrite_module_params_on_conversion(True) it is replaced by a new Parameter; with
set_swap_module_params_on_conversion(True) it keeps its object through swap_tensors (so
an optimizer made before still holds it) and load_state_dict goes through module_load."""

from __future__ import annotations

import numpy as np
import pytest

import flambeau
from flambeau import nn

FUT = flambeau.__future__


@pytest.fixture
def swap():
    FUT.set_swap_module_params_on_conversion(True)
    yield
    FUT.set_swap_module_params_on_conversion(False)


@pytest.fixture
def overwrite():
    FUT.set_overwrite_module_params_on_conversion(True)
    yield
    FUT.set_overwrite_module_params_on_conversion(False)


def _trained_linear():
    flambeau.manual_seed(0)
    m = nn.Linear(2, 3)
    m(flambeau.tensor([[1.0, 2.0]])).sum().backward()
    return m


def test_default_keeps_parameter_objects():
    m = _trained_linear()
    w, g = m.weight, m.weight.grad
    values = w.detach().numpy().astype(np.float64)
    m.double()
    assert m.weight is w and m.weight.grad is g
    assert w.dtype == flambeau.float64 and g.dtype == flambeau.float64
    np.testing.assert_allclose(w.detach().numpy(), values)


def test_overwrite_gives_new_parameters(overwrite):
    m = _trained_linear()
    w = m.weight
    values = w.detach().numpy().astype(np.float64)
    m.double()
    assert m.weight is not w and isinstance(m.weight, nn.Parameter)
    assert m.weight.dtype == flambeau.float64 and m.weight.is_leaf and m.weight.requires_grad
    assert m.weight.grad.dtype == flambeau.float64 and w.dtype == flambeau.float32
    np.testing.assert_allclose(m.weight.detach().numpy(), values)


def test_swap_keeps_objects_and_an_optimizer_sees_the_converted_tensors(swap):
    m = _trained_linear()
    w, g = m.weight, m.weight.grad
    opt = flambeau.optim.SGD(m.parameters(), lr=0.5)
    grad = g.numpy().astype(np.float64)
    before = w.detach().numpy().astype(np.float64)
    m.double()
    assert m.weight is w and w.grad is g and type(w) is nn.Parameter
    assert w.dtype == flambeau.float64 and g.dtype == flambeau.float64 and w.requires_grad
    opt.step()
    np.testing.assert_allclose(w.detach().numpy(), before - 0.5 * grad, rtol=1e-6)


def test_swap_load_state_dict_goes_through_module_load(swap):
    m = _trained_linear()
    w = m.weight
    state = {k: flambeau.full_like(v, 5.0) for k, v in m.state_dict().items()}
    m.load_state_dict(state)
    assert m.weight is w and float(w.detach().sum()) == 30.0 and w.requires_grad
    m.load_state_dict({k: v.double() for k, v in state.items()}, assign=True)
    assert m.weight is w and w.dtype == flambeau.float64


def test_swap_load_state_dict_reports_a_module_load_that_returns_its_input(swap):
    class Echo(nn.Parameter):
        def module_load(self, other, assign=False):
            return other

    m = nn.Linear(2, 2)
    m.weight = Echo(flambeau.zeros(2, 2))
    with pytest.raises(RuntimeError, match="module_load returned one of self or other"):
        m.load_state_dict({"weight": flambeau.ones(2, 2), "bias": flambeau.ones(2)})


def test_swap_refuses_a_parameter_held_elsewhere(swap):
    m = nn.Linear(2, 2)
    view = m.weight[0]  # a view holds the parameter's tensor
    with pytest.raises(RuntimeError, match="Couldn't swap Linear.weight"):
        m.double()
    del view


def test_shared_parameters_stay_shared(overwrite):
    a, b = nn.Linear(2, 2), nn.Linear(2, 2)
    b.weight = a.weight
    seq = nn.Sequential(a, b).double()
    assert seq[0].weight is seq[1].weight and seq[0].weight.dtype == flambeau.float64
