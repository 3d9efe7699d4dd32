"""PyTorch's factory keywords that the bindings handle around the frontends (the
operator table's `factory:` key): layout=, pin_memory=, out= and empty's memory_format=."""

import numpy as np
import pytest

import flambeau

FACTORIES = {
    "zeros": lambda **k: flambeau.zeros(2, 3, **k),
    "ones": lambda **k: flambeau.ones(2, 3, **k),
    "empty": lambda **k: flambeau.empty(2, 3, **k),
    "full": lambda **k: flambeau.full((2, 3), 1.5, **k),
    "rand": lambda **k: flambeau.rand(2, 3, **k),
    "randn": lambda **k: flambeau.randn(2, 3, **k),
    "randint": lambda **k: flambeau.randint(0, 5, (2, 3), **k),
    "randperm": lambda **k: flambeau.randperm(6, **k),
    "arange": lambda **k: flambeau.arange(6, **k),
    "linspace": lambda **k: flambeau.linspace(0, 1, 6, **k),
    "logspace": lambda **k: flambeau.logspace(0, 1, 6, **k),
    "eye": lambda **k: flambeau.eye(3, **k),
}


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_strided_layout_and_unpinned_memory_are_accepted(name):
    make = FACTORIES[name]
    for kwargs in ({"layout": flambeau.strided}, {"layout": None}, {"pin_memory": False}):
        flambeau.manual_seed(0)
        got = make(**kwargs)
        flambeau.manual_seed(0)
        plain = make()
        assert got.shape == plain.shape and got.dtype == plain.dtype
        if name != "empty":
            assert flambeau.equal(got, plain)


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_out_takes_the_result_in_its_own_dtype(name):
    make = FACTORIES[name]
    out = flambeau.empty(7, dtype=flambeau.float64)
    flambeau.manual_seed(0)
    got = make(out=out)
    flambeau.manual_seed(0)
    plain = make(dtype=flambeau.float64)
    assert got is out and out.dtype == flambeau.float64 and out.shape == plain.shape
    if name != "empty":
        np.testing.assert_array_equal(out.numpy(), plain.numpy())


def test_out_with_another_dtype_is_refused():
    with pytest.raises(RuntimeError, match="does not match dtype of out parameter"):
        flambeau.zeros(2, out=flambeau.empty(2), dtype=flambeau.int64)
    with pytest.raises(TypeError, match="'out' must be Tensor"):
        flambeau.zeros(2, out=3)


def test_other_layouts_and_pinned_memory_without_an_accelerator_are_refused():
    with pytest.raises(ValueError, match="layout"):
        flambeau.zeros(2, layout=flambeau.sparse_coo)
    with pytest.raises(RuntimeError):  # no pinned-memory allocator on a CPU-only install
        flambeau.empty(2, pin_memory=True)


def test_empty_in_a_memory_format():
    x = flambeau.empty(2, 3, 4, 5, memory_format=flambeau.channels_last)
    assert x.stride() == (60, 1, 15, 3)
    assert x.is_contiguous(memory_format=flambeau.channels_last)


def test_like_factories_and_windows_take_layout_and_pin_memory_but_not_out():
    x = flambeau.ones(2, 3)
    assert flambeau.zeros_like(x, layout=flambeau.strided, pin_memory=False).sum().item() == 0
    assert flambeau.hann_window(4, layout=flambeau.strided).shape == (4,)
    with pytest.raises(TypeError):
        flambeau.zeros_like(x, out=x)
