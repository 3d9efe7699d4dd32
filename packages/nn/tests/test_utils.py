"""nn.utils: gradient clipping, parameter vectors, parametrizations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _helpers import f64, np_of, randn64

import flambeau
from flambeau import nn
from flambeau.autograd import gradcheck
from flambeau.nn.utils import parametrizations, parametrize


def params_with_grads(grads):
    ps = []
    for g in grads:
        p = nn.Parameter(flambeau.zeros(len(g), dtype=flambeau.float64))
        p.grad = f64(g)
        ps.append(p)
    return ps


@pytest.mark.parametrize("norm_type", [1.0, 2.0, 3.0, math.inf])
@pytest.mark.parametrize("foreach", [None, True])
def test_clip_grad_norm(norm_type, foreach):
    grads = [[3.0, -4.0], [12.0]]
    ps = params_with_grads(grads)
    flat = np.concatenate([np.asarray(g) for g in grads])
    expected = np.abs(flat).max() if math.isinf(norm_type) else np.linalg.norm(flat, norm_type)
    total = nn.utils.clip_grad_norm_(ps, 1.0, norm_type, foreach=foreach)
    assert float(total) == pytest.approx(expected)
    coef = min(1.0, 1.0 / (expected + 1e-6))
    np.testing.assert_allclose(np_of(ps[0].grad), np.asarray(grads[0]) * coef)
    # Below the limit nothing changes.
    ps = params_with_grads(grads)
    nn.utils.clip_grad_norm_(ps, 100.0, norm_type)
    np.testing.assert_array_equal(np_of(ps[1].grad), [12.0])


def test_clip_grad_norm_nonfinite_and_empty():
    ps = params_with_grads([[math.inf, 1.0]])
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.clip_grad_norm_(ps, 1.0, error_if_nonfinite=True)
    assert float(nn.utils.clip_grad_norm_([nn.Parameter(flambeau.ones(1))], 1.0)) == 0.0
    single = params_with_grads([[6.0, 8.0]])[0]
    assert float(nn.utils.clip_grad_norm_(single, 5.0)) == pytest.approx(10.0)


def test_clip_grad_value():
    ps = params_with_grads([[3.0, -4.0, 0.5]])
    nn.utils.clip_grad_value_(ps, 1.0)
    np.testing.assert_array_equal(np_of(ps[0].grad), [1.0, -1.0, 0.5])


def test_parameter_vector_round_trip():
    m = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
    vec = nn.utils.parameters_to_vector(m.parameters())
    assert vec.shape == (3 * 2 + 2 + 2 + 1,)
    np.testing.assert_array_equal(np_of(vec[:6]), np_of(m[0].weight).reshape(-1))
    nn.utils.vector_to_parameters(flambeau.arange(11.0), m.parameters())
    assert m[1].bias.tolist() == [10.0] and m[0].weight[1].tolist() == [3.0, 4.0, 5.0]
    with pytest.raises(TypeError, match="expected flambeau.Tensor"):
        nn.utils.vector_to_parameters([1.0], m.parameters())


class Symmetric(nn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).t()

    def right_inverse(self, a):
        return a.triu()


def test_register_and_remove_parametrization():
    m = nn.Linear(3, 3).double()
    weight = m.weight
    parametrize.register_parametrization(m, "weight", Symmetric())
    assert parametrize.is_parametrized(m) and parametrize.is_parametrized(m, "weight")
    assert not parametrize.is_parametrized(m, "bias")
    assert type(m).__name__ == "ParametrizedLinear"
    assert parametrize.type_before_parametrizations(m) is nn.Linear
    w = np_of(m.weight)
    np.testing.assert_array_equal(w, w.T)
    # The original keeps its identity; state_dict names it under parametrizations.
    assert m.parametrizations.weight.original is weight
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original"]
    assert "weight" not in dict(m.named_parameters())
    # Gradients flow to the original.
    x = randn64(2, 3)
    assert gradcheck(lambda x, o: m(x), (x, m.parametrizations.weight.original))
    # Assignment goes through right_inverse.
    m.weight = f64(np.arange(9.0).reshape(3, 3))
    np.testing.assert_array_equal(np_of(m.parametrizations.weight.original),
                                  np.triu(np.arange(9.0).reshape(3, 3)))  # fmt: skip
    parametrize.remove_parametrizations(m, "weight")
    assert type(m) is nn.Linear and not parametrize.is_parametrized(m)
    assert m.weight is weight and isinstance(m.weight, nn.Parameter)
    np.testing.assert_array_equal(np_of(m.weight), np_of(m.weight).T)
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        parametrize.remove_parametrizations(m, "weight")
    # Other instances of the class are untouched.
    assert type(nn.Linear(1, 1)) is nn.Linear


def test_parametrization_checks_and_cache():
    class Twice(nn.Module):
        def forward(self, x):
            return flambeau.cat([x, x])

    m = nn.Linear(2, 2)
    with pytest.raises(ValueError, match="may not change the shape"):
        parametrize.register_parametrization(m, "weight", Twice())
    with pytest.raises(ValueError, match="does not have a parameter, a buffer"):
        parametrize.register_parametrization(m, "nope", Symmetric())
    calls = []

    class Counting(nn.Module):
        def forward(self, x):
            calls.append(1)
            return x * 1

    parametrize.register_parametrization(m, "weight", Counting())
    with parametrize.cached():
        first, second = m.weight, m.weight
    assert first is second
    assert len(calls) == 2  # one during registration's check, one inside cached()
    _ = m.weight
    assert len(calls) == 3
    with pytest.raises(RuntimeError, match="does not implement right_inverse"):
        m.weight = flambeau.zeros(2, 2)
    parametrize.register_parametrization(m, "weight", Symmetric())  # chains
    assert len(m.parametrizations.weight) == 2


def test_weight_norm():
    m = nn.Linear(4, 3).double()
    w0 = np_of(m.weight).copy()
    parametrizations.weight_norm(m)
    g = m.parametrizations.weight.original0
    v = m.parametrizations.weight.original1
    assert g.shape == (3, 1) and v.shape == (3, 4)
    np.testing.assert_allclose(np_of(g)[:, 0], np.linalg.norm(w0, axis=1))
    np.testing.assert_allclose(np_of(m.weight), w0, rtol=1e-12)
    x = randn64(2, 4)
    assert gradcheck(lambda x, g, v: m(x), (x, g, v))
    m2 = parametrizations.weight_norm(nn.Linear(4, 3).double(), dim=None)
    assert m2.parametrizations.weight.original0.dim() == 0
    parametrize.remove_parametrizations(m, "weight")
    np.testing.assert_allclose(np_of(m.weight), w0, rtol=1e-12)


def test_spectral_norm():
    flambeau.manual_seed(0)
    m = nn.Linear(5, 4).double()
    w0 = np_of(m.weight).copy()
    parametrizations.spectral_norm(m, n_power_iterations=5)
    sigma = np.linalg.svd(w0, compute_uv=False)[0]
    np.testing.assert_allclose(np_of(m.weight), w0 / sigma, rtol=1e-6)
    assert np.linalg.svd(np_of(m.weight), compute_uv=False)[0] == pytest.approx(1.0, rel=1e-6)
    assert {"parametrizations.weight.0._u", "parametrizations.weight.0._v"} <= set(m.state_dict())
    m.eval()  # no power iteration in eval: the weight is a fixed function of the original
    x = randn64(2, 5)
    assert gradcheck(lambda x, o: m(x), (x, m.parametrizations.weight.original))
    with pytest.raises(ValueError, match="n_power_iterations to be positive"):
        parametrizations.spectral_norm(nn.Linear(2, 2), n_power_iterations=0)


@pytest.mark.parametrize(
    "shape,orthogonal_map",
    [
        ((4, 4), None),
        ((5, 3), None),
        ((3, 5), "householder"),
        ((5, 3), "matrix_exp"),
        ((4, 4), "cayley"),
        ((5, 3), "cayley"),
        ((3, 5), "cayley"),
    ],
)
def test_orthogonal(shape, orthogonal_map):
    flambeau.manual_seed(0)
    m = nn.Linear(shape[1], shape[0]).double()
    w0 = np_of(m.weight).copy()
    parametrizations.orthogonal(m, orthogonal_map=orthogonal_map)
    w = np_of(m.weight)
    small = min(shape)
    gram = w @ w.T if shape[0] <= shape[1] else w.T @ w
    np.testing.assert_allclose(gram, np.eye(small), atol=1e-10)
    if shape[0] == shape[1]:  # the weight starts as the orthogonal factor of its old value
        q, r = np.linalg.qr(w0)
        np.testing.assert_allclose(w, q * np.sign(np.diag(r)), atol=1e-10)
    # Any value of the original gives an orthogonal weight, and gradients flow to it.
    original = m.parametrizations.weight.original
    with flambeau.autograd.no_grad():
        original.add_(randn64(*shape, requires_grad=False) * 0.3)
    w = np_of(m.weight)
    gram = w @ w.T if shape[0] <= shape[1] else w.T @ w
    np.testing.assert_allclose(gram, np.eye(small), atol=1e-10)
    assert gradcheck(lambda o: m.weight, (original,))


def test_orthogonal_assignment_and_errors():
    m = parametrizations.orthogonal(nn.Linear(3, 3).double())
    rot = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    m.weight = f64(rot)
    np.testing.assert_allclose(np_of(m.weight), rot, atol=1e-12)
    with pytest.raises(ValueError, match="Expected a matrix"):
        parametrizations.orthogonal(nn.Bilinear(2, 2, 2), "bias")
    with pytest.raises(ValueError, match="orthogonal_map has to be one of"):
        parametrizations.orthogonal(nn.Linear(2, 2), orthogonal_map="exp")


def test_orthogonal_cayley_map_value():
    # weight = base @ (I - A/2)^{-1} (I + A/2), A the skew part of the original's lower triangle
    m = parametrizations.orthogonal(nn.Linear(4, 4).double(), orthogonal_map="cayley")
    original = m.parametrizations.weight.original
    x = np.random.default_rng(0).normal(size=(4, 4))
    with flambeau.autograd.no_grad():
        original.copy_(f64(x))
    a = np.tril(x) - np.tril(x).T
    eye = np.eye(4)
    expected = np_of(m.parametrizations.weight[0].base) @ np.linalg.solve(eye - a / 2, eye + a / 2)
    np.testing.assert_allclose(np_of(m.weight), expected, atol=1e-12)
