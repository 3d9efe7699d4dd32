"""Layers and activations: forward against NumPy, gradients by gradcheck in float64."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _helpers import f64, np_of, randn64

import flambeau
from flambeau import nn
from flambeau.autograd import gradcheck
from flambeau.nn import functional as F


def test_identity_ignores_arguments():
    x = flambeau.ones(2)
    assert nn.Identity(3, k=4)(x) is x


@pytest.mark.parametrize("batch", [(), (5,), (2, 3)])
def test_linear_forward_and_gradcheck(batch):
    m = nn.Linear(4, 3).double()
    x = randn64(*batch, 4)
    ref = np_of(x) @ np_of(m.weight).T + np_of(m.bias)
    np.testing.assert_allclose(np_of(m(x)), ref, rtol=1e-12)
    assert gradcheck(lambda x, w, b: m(x), (x, m.weight, m.bias))


def test_linear_without_bias_and_errors():
    m = nn.Linear(4, 3, bias=False, dtype=flambeau.float64)
    assert m.bias is None and m.weight.dtype == flambeau.float64
    assert [n for n, _ in m.named_parameters()] == ["weight"]
    x = randn64(2, 4)
    np.testing.assert_allclose(np_of(m(x)), np_of(x) @ np_of(m.weight).T)
    with pytest.raises(RuntimeError, match=r"input \(2, 5\), weight \(3, 4\)"):
        m(randn64(2, 5))
    assert repr(m) == "Linear(in_features=4, out_features=3, bias=False)"


def test_linear_default_init_bounds():
    flambeau.manual_seed(0)
    m = nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)
    w, b = np_of(m.weight), np_of(m.bias)
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    # U(-bound, bound) has std bound / sqrt(3).
    assert abs(w.std() - bound / math.sqrt(3)) < 0.02 * bound


def test_bilinear_forward_gradcheck_and_errors():
    m = nn.Bilinear(3, 2, 4).double()
    x1, x2 = randn64(5, 3), randn64(5, 2)
    ref = np.einsum("ni,oij,nj->no", np_of(x1), np_of(m.weight), np_of(x2)) + np_of(m.bias)
    np.testing.assert_allclose(np_of(m(x1, x2)), ref, rtol=1e-12)
    assert gradcheck(lambda a, b, w, c: m(a, b), (x1, x2, m.weight, m.bias))
    x1b, x2b = randn64(2, 2, 3), randn64(2, 2, 2)
    assert m(x1b, x2b).shape == (2, 2, 4)
    bound = 1 / math.sqrt(3)
    assert np.abs(np_of(m.weight)).max() <= bound
    with pytest.raises(RuntimeError, match="input1 size does not match weight size: got 2"):
        m(randn64(5, 2), x2)
    with pytest.raises(RuntimeError, match="batch dimensions do not match"):
        m(randn64(4, 3), x2)
    with pytest.raises(RuntimeError, match="input dimensions do not match: got 3 and 2"):
        m(randn64(1, 5, 3), x2)
    assert "in1_features=3, in2_features=2, out_features=4, bias=True" in repr(m)


def test_flatten_unflatten():
    x = flambeau.arange(24.0).reshape(2, 3, 4)
    assert nn.Flatten()(x).shape == (2, 12)
    assert nn.Flatten(0, 1)(x).shape == (6, 4)
    assert nn.Unflatten(1, (3, 1))(flambeau.ones(2, 3)).shape == (2, 3, 1)
    assert repr(nn.Unflatten(1, (2, 2))) == "Unflatten(dim=1, unflattened_size=(2, 2))"
    with pytest.raises(TypeError, match="must be tuple of ints"):
        nn.Unflatten(1, (2, 2.0))
    with pytest.raises(TypeError, match="must be a tuple of ints"):
        nn.Unflatten(1, 4)


ACTIVATIONS = [
    (nn.ReLU(), lambda x: np.maximum(x, 0)),
    (nn.Sigmoid(), lambda x: 1 / (1 + np.exp(-x))),
    (nn.Tanh(), np.tanh),
    (nn.Softsign(), lambda x: x / (1 + np.abs(x))),
    (nn.Tanhshrink(), lambda x: x - np.tanh(x)),
    (nn.Threshold(0.1, 20.0), lambda x: np.where(x > 0.1, x, 20.0)),
]


@pytest.mark.parametrize("module,ref", ACTIVATIONS, ids=lambda v: type(v).__name__)
def test_activation_forward_and_gradcheck(module, ref):
    x = randn64(3, 4)
    # Keep away from the kinks, where finite differences are meaningless.
    x = f64(np.where(np.abs(np_of(x) - 0.1) < 0.05, 0.5, np_of(x)), True)
    np.testing.assert_allclose(np_of(module(x)), ref(np_of(x)), rtol=1e-12)
    assert gradcheck(module, (x,))


def test_activation_dtypes_and_inplace():
    x = flambeau.tensor([-1.0, 2.0], dtype=flambeau.float16)
    assert nn.Sigmoid()(x).dtype == flambeau.float16
    y = flambeau.tensor([-1.0, 2.0])
    out = nn.ReLU(inplace=True)(y)
    assert y.tolist() == [0.0, 2.0] and out._is_view_of(y)
    z = flambeau.tensor([-1.0, 2.0])
    F.threshold(z, 0.0, 5.0, inplace=True)
    assert z.tolist() == [5.0, 2.0]
    assert repr(nn.Threshold(0.1, 20)) == "Threshold(threshold=0.1, value=20)"


def test_cosine_similarity_and_pairwise_distance():
    a, b = randn64(4, 5), randn64(4, 5, seed=1)
    na, nb = np_of(a), np_of(b)
    cos = (na * nb).sum(1) / (np.linalg.norm(na, axis=1) * np.linalg.norm(nb, axis=1))
    np.testing.assert_allclose(np_of(nn.CosineSimilarity()(a, b)), cos, rtol=1e-12)
    assert gradcheck(nn.CosineSimilarity(dim=1), (a, b))
    # Broadcasting and the eps guard on zero vectors.
    zero = f64(np.zeros((1, 5)))
    np.testing.assert_array_equal(np_of(F.cosine_similarity(a, zero)), np.zeros(4))
    for p in (1.0, 2.0, 3.0):
        d = np.sum(np.abs(na - nb + 1e-6) ** p, axis=-1) ** (1 / p)
        np.testing.assert_allclose(np_of(nn.PairwiseDistance(p)(a, b)), d, rtol=1e-10)
    assert nn.PairwiseDistance(keepdim=True)(a, b).shape == (4, 1)
    assert gradcheck(nn.PairwiseDistance(), (a, b))
    with pytest.raises(RuntimeError, match="must match the size"):
        F.cosine_similarity(randn64(3, 5), randn64(4, 5))


def test_normalize():
    x = randn64(3, 4)
    ref = np_of(x) / np.linalg.norm(np_of(x), axis=1, keepdims=True)
    np.testing.assert_allclose(np_of(F.normalize(x)), ref, rtol=1e-12)
    assert gradcheck(lambda t: F.normalize(t, p=2.0, dim=0), (x,))
