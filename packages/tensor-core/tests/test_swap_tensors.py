"""flambeau.utils.swap_tensors: two tensors exchange contents (data, dtype, shape,
autograd state, class, __dict__) and keep their identities, as PyTorch's; and the
refusals: weak references, a tensor the core still holds (a view of it). The values are
checked against NumPy copies taken before."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import flambeau
from flambeau.utils import swap_tensors


def test_contents_move_and_identities_stay():
    a = flambeau.arange(6.0).reshape(2, 3)
    b = flambeau.tensor([7, 8, 9, 10], dtype=flambeau.int64)
    a.tag, b.tag = "a", "b"
    before_a, before_b = a.numpy().copy(), b.numpy().copy()
    ida, idb = id(a), id(b)
    swap_tensors(a, b)
    assert (id(a), id(b)) == (ida, idb)
    np.testing.assert_array_equal(a.numpy(), before_b)
    np.testing.assert_array_equal(b.numpy(), before_a)
    assert a.dtype == flambeau.int64 and a.shape == (4,) and b.shape == (2, 3)
    assert (a.tag, b.tag) == ("b", "a")  # __dict__ goes with the contents


def test_class_and_autograd_state_move():
    p = flambeau.nn.Parameter(flambeau.ones(3))
    (p * flambeau.tensor([1.0, 2.0, 3.0])).sum().backward()
    t = flambeau.zeros(2, dtype=flambeau.float64)
    swap_tensors(p, t)
    assert type(p) is flambeau.Tensor and type(t) is flambeau.nn.Parameter
    assert t.requires_grad and not p.requires_grad
    np.testing.assert_array_equal(t.grad.numpy(), [1.0, 2.0, 3.0])
    assert p.grad is None and p.dtype == flambeau.float64


def test_the_core_maps_each_tensor_to_its_object_after_a_swap():
    a, b = flambeau.ones(2), flambeau.zeros(2)
    swap_tensors(a, b)
    # A result the core hands back for an existing TensorImpl (an in-place op's self)
    # is the object that now holds it.
    assert b.mul_(2) is b and a.add_(1) is a
    np.testing.assert_array_equal(b.numpy(), [2.0, 2.0])


def test_swapped_tensors_are_freed():
    a, b = flambeau.ones(1000), flambeau.zeros(10)
    swap_tensors(a, b)
    ra, rb = weakref.ref(a), weakref.ref(b)
    del a, b
    gc.collect()
    assert ra() is None and rb() is None


def test_use_count_counts_what_holds_the_tensor():
    a = flambeau.ones(4)
    assert a._use_count() == 1
    view = a[1:]
    assert a._use_count() == 2
    with pytest.raises(RuntimeError, match="use_count of t1"):
        swap_tensors(a, flambeau.zeros(4))
    del view
    swap_tensors(a, flambeau.zeros(4))


def test_weak_references_and_non_tensors_are_refused():
    a = flambeau.ones(2)
    ref = weakref.ref(a)
    with pytest.raises(RuntimeError, match="t1 because it has weakref"):
        swap_tensors(a, flambeau.zeros(2))
    with pytest.raises(RuntimeError, match="t2 because it has weakref"):
        swap_tensors(flambeau.zeros(2), a)
    del ref
    with pytest.raises(TypeError, match="expected two tensors"):
        swap_tensors(flambeau.ones(2), [1.0])


def test_an_accumulate_grad_node_that_moved_refuses_to_run():
    leaf = flambeau.ones(2, requires_grad=True)
    out = (leaf * 3).sum()  # the graph holds leaf's AccumulateGrad node
    swap_tensors(leaf, flambeau.zeros(2, requires_grad=True))
    with pytest.raises(RuntimeError, match="poisoned by swap_tensors"):
        out.backward()


def test_future_flags_default_off_and_toggle():
    fut = flambeau.__future__
    assert not fut.get_swap_module_params_on_conversion()
    assert not fut.get_overwrite_module_params_on_conversion()
    fut.set_swap_module_params_on_conversion(True)
    try:
        assert fut.get_swap_module_params_on_conversion()
    finally:
        fut.set_swap_module_params_on_conversion(False)
