"""The F.* functions that are PyTorch's top-level functions too (F.pdist is torch.pdist, ...):
one implementation in the core, re-exported; and the F.* wrappers with an inplace flag that
route to the core's in-place function (with working gradients)."""

from __future__ import annotations

import numpy as np
import pytest
from _helpers import f64, np_of

import flambeau
from flambeau.nn import functional as F

SHARED = [
    "bilinear",
    "celu_",
    "channel_shuffle",
    "cosine_similarity",
    "native_channel_shuffle",
    "pairwise_distance",
    "pdist",
    "pixel_shuffle",
    "pixel_unshuffle",
    "prelu",
    "relu_",
    "rrelu_",
    "selu_",
    "threshold_",
]


@pytest.mark.parametrize("name", SHARED)
def test_functional_name_is_the_core_function(name):
    assert getattr(F, name) is getattr(flambeau, name)
    assert name in F.__all__


X = [-1.5, -0.2, 0.0, 0.3, 2.0]


def _value_and_grad(fn, **kwargs):
    x = f64(X, requires_grad=True)
    y = x * 1.0  # a non-leaf, so that the in-place form is allowed
    out = fn(y, **kwargs)
    if kwargs.get("inplace"):
        assert out is y
    out.sum().backward()
    return np_of(out), np_of(x.grad)


@pytest.mark.parametrize(
    ("fn", "reference", "slope"),
    [
        # slope: the reference derivative, hand-derived (at 0 the one of the lower branch)
        (lambda y, **k: F.threshold(y, 0.1, 5.0, **k), lambda x: np.where(x > 0.1, x, 5.0),
         lambda x: np.where(x > 0.1, 1.0, 0.0)),
        (lambda y, **k: F.rrelu(y, 0.1, 0.3, **k), lambda x: np.where(x > 0, x, 0.2 * x),
         lambda x: np.where(x > 0, 1.0, 0.2)),
        (lambda y, **k: F.celu(y, 0.7, **k), lambda x: np.where(x > 0, x, 0.7 * np.expm1(x / 0.7)),
         lambda x: np.where(x > 0, 1.0, np.exp(np.minimum(x, 0) / 0.7))),
    ],
)  # fmt: skip
def test_inplace_flag_matches_reference_value_and_gradient(fn, reference, slope):
    x = np.array(X)
    for inplace in (False, True):
        value, grad = _value_and_grad(fn, inplace=inplace)
        np.testing.assert_allclose(value, reference(x), rtol=1e-12)
        np.testing.assert_allclose(grad, slope(x), rtol=1e-12)


def test_selu_inplace_matches_out_of_place():
    plain = _value_and_grad(F.selu)
    inplace = _value_and_grad(F.selu, inplace=True)
    for a, b in zip(plain, inplace):
        np.testing.assert_allclose(a, b, rtol=1e-15)
