"""Autograd's state lives in typed slots, not in Python __dict__s.

A tensor's grad_fn, output_nr, .grad, AccumulateGrad node and view record are
kept in the core's slot on the tensor (csrc/python/autograd_meta.h); a node's
name, edges, formula, saved values and hook tables are members of the core's
_C._Node (csrc/python/autograd_node.h). These tests check what users can see of
that: PyTorch's attribute rules, user attributes beside it, and that reference
cycles through the slots are still found by the garbage collector.
"""

from __future__ import annotations

import copy
import gc
import weakref

import numpy as np
import pytest

import flambeau
from flambeau import nn
from flambeau.autograd.graph import Node


def _collected(make) -> bool:
    """Whether what make() returns a weak reference to is freed once unreachable."""
    gc.collect()
    ref = make()
    gc.collect()
    return ref() is None


def test_autograd_state_is_not_in_the_tensor_dict():
    x = flambeau.tensor([1.0, 2.0], requires_grad=True)
    y = (x * 3)[0:1]
    y.sum().backward()
    assert x.__dict__ == {} and y.__dict__ == {}
    assert y.grad_fn is not None and y._view is not None and x._accumulate is not None
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 0.0])


def test_user_attributes_live_beside_it():
    x = flambeau.ones(2, requires_grad=True)
    x.label = "weights"
    (x * 2).sum().backward()
    assert x.label == "weights" and x.__dict__ == {"label": "weights"}
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])


def test_grad_fn_is_not_writable_as_in_pytorch():
    y = flambeau.ones(2, requires_grad=True) * 2
    with pytest.raises(AttributeError):
        y.grad_fn = None
    with pytest.raises(AttributeError):
        y.is_leaf = True


def test_leaf_and_output_numbers():
    x = flambeau.arange(6.0).reshape(2, 3).requires_grad_()
    a, b = x.unbind(0)
    assert x.is_leaf and x.output_nr == 0 and x.grad_fn is None
    assert not a.is_leaf and (a.output_nr, b.output_nr) == (0, 1)
    assert a.grad_fn is b.grad_fn


def test_detach_in_place_makes_a_leaf_again():
    y = flambeau.ones(2, requires_grad=True) * 2
    y.detach_()
    assert y.is_leaf and y.grad_fn is None and y.output_nr == 0 and not y.requires_grad


def test_grad_assignment_keeps_pytorch_checks():
    x = flambeau.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="size"):
        x.grad = flambeau.ones(3)
    with pytest.raises(TypeError):
        x.grad = [1.0, 2.0]
    x.grad = flambeau.full((2,), 5.0)
    np.testing.assert_array_equal(x.grad.numpy(), [5.0, 5.0])
    x.grad = None
    assert x.grad is None


def test_grad_dtype_defaults_to_the_tensor_dtype_and_casts_when_set():
    x = flambeau.ones(2, dtype=flambeau.float64, requires_grad=True)
    assert x.grad_dtype == flambeau.float64
    x.grad_dtype = flambeau.float32
    (x * 2).sum().backward()
    assert x.grad.dtype == flambeau.float32
    x.grad = None
    x.grad_dtype = None  # any dtype
    assert x.grad_dtype is None


def test_deep_copies_carry_a_tensors_gradient_but_not_a_parameters():
    # PyTorch's rules: Tensor.__deepcopy__ copies .grad, Parameter.__deepcopy__ does not.
    x = flambeau.ones(2, requires_grad=True)
    (x * 2).sum().backward()
    clone = copy.deepcopy(x)
    np.testing.assert_array_equal(clone.grad.numpy(), [2.0, 2.0])
    assert clone.grad is not x.grad and clone.is_leaf
    layer = nn.Linear(3, 2)
    layer(flambeau.ones(4, 3)).sum().backward()
    assert copy.deepcopy(layer).weight.grad is None and layer.weight.grad is not None


def test_a_cycle_through_a_tensors_slot_is_collected():
    def make():
        x = flambeau.ones(3, requires_grad=True)
        y = x.exp()  # its node keeps y's value
        y.grad_fn.metadata["output"] = y  # node -> y -> (slot) node
        return weakref.ref(y.grad_fn)

    assert _collected(make)


def test_a_hook_that_refers_to_its_tensor_is_collected():
    def make():
        x = flambeau.ones(3, requires_grad=True)
        # x -> (slot) AccumulateGrad -> hook table -> closure -> x
        x.register_hook(lambda g: g * x.detach())
        return weakref.ref(x)

    assert _collected(make)


def test_a_gradient_that_refers_to_its_leaf_is_collected():
    def make():
        x = flambeau.ones(3, requires_grad=True)
        g = flambeau.ones(3)
        g.owner = x  # x -> (slot) .grad -> __dict__ -> x
        x.grad = g
        return weakref.ref(x)

    assert _collected(make)


def test_nodes_keep_their_fields_in_typed_members():
    x = flambeau.ones(2, requires_grad=True)
    y = x * 2
    node = y.grad_fn
    assert isinstance(node, flambeau._C._Node) and isinstance(node, Node)
    assert node.name() == "MulBackward0" and node.n_outputs == 1
    assert node.next_functions[0][0] is x._accumulate
    assert "_name" not in node.__dict__ and "next_functions" not in node.__dict__
    assert len(node._hooks) == 0
    with pytest.raises(TypeError):
        node._hooks[0] = print  # the shared empty table is read-only
    handle = node.register_hook(lambda gi, go: None)
    assert isinstance(node._hooks, dict) and len(node._hooks) == 1
    handle.remove()
    y.sum().backward()
    assert node._released and node._saved is None


def test_a_long_chain_of_nodes_frees_without_exhausting_the_stack():
    x = flambeau.ones(1, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    ref = weakref.ref(y.grad_fn)
    del y
    gc.collect()
    assert ref() is None


def test_random_graphs_under_frequent_collections_free_everything():
    # Graphs, views, hooks, node metadata and gradients that refer back to tensors, made,
    # run and dropped at random while the collector runs every few allocations: nothing
    # crashes, and once the pool is dropped every tensor is freed.
    rng = np.random.default_rng(0)
    pool, refs = [], []
    threshold = gc.get_threshold()
    gc.set_threshold(3, 1, 1)
    try:
        for _ in range(3000):
            r = rng.random()
            if r < 0.2 or not pool:
                pool.append(
                    flambeau.randn(int(rng.integers(1, 4)), requires_grad=rng.random() < 0.7)
                )
                continue
            a = pool[int(rng.integers(len(pool)))]
            other = pool[int(rng.integers(len(pool)))]
            if r < 0.3:
                pool.append(a * 2.0 if rng.random() < 0.5 else a.exp())
            elif r < 0.35:
                pool.append(a[0:1])
            elif r < 0.4 and a.requires_grad:
                a.register_hook(lambda g, o=other: g)
            elif r < 0.45 and a.grad_fn is not None:
                a.grad_fn.metadata["other"] = other
            elif r < 0.5 and a.is_leaf:
                a.grad = flambeau.ones(a.shape)
                a.grad.owner = other
            elif r < 0.6 and a.requires_grad:
                try:
                    a.sum().backward(retain_graph=rng.random() < 0.5)
                except RuntimeError:  # a graph already freed
                    pass
            elif r < 0.9:
                refs.append(weakref.ref(pool.pop(int(rng.integers(len(pool))))))
            if len(pool) > 60:
                del pool[:30]
        del a, other
        pool.clear()
        gc.collect()
    finally:
        gc.set_threshold(*threshold)
    assert refs and all(r() is None for r in refs)
