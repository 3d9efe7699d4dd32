"""Tensors pickle and deep-copy by value; no_grad works without flambeau-autograd."""

import copy
import pickle

import numpy as np
import pytest

import flambeau as F

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16"]
DTYPES += ["float32", "float64", "complex64", "complex128"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_pickle_round_trip(dtype):
    t = (F.arange(12.0).reshape(3, 4) - 5).to(getattr(F, dtype))
    for x in (t, t.t(), t[1:, ::2], t[0, 0]):
        y = pickle.loads(pickle.dumps(x))
        assert y.dtype == x.dtype and y.shape == x.shape
        np.testing.assert_array_equal(y.to(F.float64).numpy().real, x.to(F.float64).numpy().real)


def test_pickle_keeps_requires_grad_and_copies_memory():
    t = F.ones(3).requires_grad_()
    u = pickle.loads(pickle.dumps(t))
    assert u.requires_grad and u.is_leaf and not u._is_view_of(t)


def test_deepcopy():
    t = F.ones(2, 2)
    c = copy.deepcopy({"a": t, "b": t})
    assert c["a"] is c["b"] and not c["a"]._is_view_of(t)
    c["a"][0, 0] = 5
    assert t[0, 0].item() == 1


def test_data_is_the_same_memory_without_grad():
    t = F.ones(2, requires_grad=True)
    d = t.data
    assert not d.requires_grad and d._is_view_of(t)
    d.add_(1)
    assert t.tolist() == [2.0, 2.0]


def test_grad_modes_are_top_level():
    assert F.is_grad_enabled()
    with F.no_grad():
        assert not F.is_grad_enabled()
        with F.enable_grad():
            assert F.is_grad_enabled()
    with F.inference_mode():
        assert not F.is_grad_enabled()
    assert F.is_grad_enabled()
