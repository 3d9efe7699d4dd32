"""autograd.graph.GradientEdge / get_gradient_edge, and edges as autograd.grad inputs
(PyTorch 2.13's behaviour; gradients hand-derived)."""

import pytest

import flambeau as F
from flambeau.autograd.graph import GradientEdge, get_gradient_edge


def test_edge_of_a_result_and_of_a_leaf():
    x = F.ones(2, requires_grad=True)
    y = x * 2
    edge = get_gradient_edge(y)
    assert isinstance(edge, tuple) and edge.node is y.grad_fn and edge.output_nr == 0
    assert edge.ownership_token is None and tuple(edge)[:2] == (y.grad_fn, 0)
    leaf = get_gradient_edge(x)
    assert leaf.node is get_gradient_edge(x).node  # the leaf's one AccumulateGrad
    assert "GradientEdge(node=" in repr(edge)


def test_grad_with_respect_to_an_edge():
    x = F.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    z = (y * y).sum()  # dz/dy = 2y = 6x, dz/dx = 18x
    (gy,) = F.autograd.grad(z, get_gradient_edge(y), retain_graph=True)
    assert gy.tolist() == [6.0, 12.0]
    gy, gx = F.autograd.grad(z, [get_gradient_edge(y), x])
    assert gy.tolist() == [6.0, 12.0] and gx.tolist() == [18.0, 36.0]


def test_unused_edge_and_errors():
    x = F.ones(2, requires_grad=True)
    w = F.ones(2, requires_grad=True)
    unused = get_gradient_edge(w * 1)
    (g,) = F.autograd.grad((x * 2).sum(), unused, allow_unused=True)
    assert g is None
    with pytest.raises(RuntimeError, match="no shape"):
        F.autograd.grad((x * 2).sum(), unused, materialize_grads=True)
    with pytest.raises(RuntimeError, match="does not require gradients"):
        get_gradient_edge(F.ones(2))
    assert GradientEdge(None, 1) == (None, 1, None)


def test_increment_version_makes_a_hidden_write_visible():
    x = F.tensor([1.0, 2.0], requires_grad=True)
    a = F.tensor([3.0, 4.0])
    y = (x * a).sum()  # saves a
    a.numpy()[0] = 7.0  # written behind autograd's back: not seen
    v = a._version
    F.autograd.graph.increment_version(a)
    assert a._version == v + 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()
    b, c = F.ones(1), F.ones(1)
    before = (b._version, c._version)
    F.autograd.graph.increment_version([b, c])  # an iterable of tensors
    assert (b._version, c._version) == (before[0] + 1, before[1] + 1)
    with F.inference_mode():
        i = F.ones(1)
    F.autograd.graph.increment_version(i)  # inference tensors have no version: skipped
