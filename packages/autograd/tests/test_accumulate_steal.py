"""A leaf's first gradient: kept without a copy when nothing else refers to it or its
memory and it has the leaf's layout (PyTorch's AccumulateGrad); else a copy, so that
a gradient the caller passed, a hook kept or a view of shared memory never becomes
.grad itself."""

import numpy as np

import flambeau as F
from flambeau.autograd import engine


def test_owned_gradient_with_the_leafs_layout_is_kept():
    leaf = F.zeros(3, 4, requires_grad=True)
    g = F.ones(3, 4)
    assert engine._new_grad(g, leaf, owned=True) is g
    assert engine._new_grad(g, leaf, owned=False) is not g


def test_other_layouts_are_copied_to_the_leafs_strides():
    leaf = F.zeros(3, 4, requires_grad=True)
    g = F.ones(4, 3).t()  # same shape, transposed strides
    out = engine._new_grad(g, leaf, owned=True)
    assert out is not g and out.stride() == leaf.stride()
    expanded = F.ones(1, 4).expand(3, 4)
    out = engine._new_grad(expanded, leaf, owned=True)
    assert out is not expanded and out.stride() == (4, 1)


def test_a_gradient_the_caller_holds_is_never_kept():
    a = F.ones(3, requires_grad=True)
    given = F.full((3,), 2.0)
    (a + 0).backward(given)  # add's gradient is the incoming one itself
    a.grad.add_(1)
    np.testing.assert_allclose(given.numpy(), [2.0, 2.0, 2.0])
    np.testing.assert_allclose(a.grad.numpy(), [3.0, 3.0, 3.0])


def test_a_gradient_a_hook_kept_is_never_kept():
    kept = []
    b = F.ones(3, requires_grad=True)
    b.register_hook(kept.append)
    (b * 2).sum().backward()
    b.grad.add_(1)
    np.testing.assert_allclose(kept[0].numpy(), [2.0, 2.0, 2.0])


def test_two_leaves_fed_by_one_gradient_do_not_share_memory():
    x = F.ones(2, requires_grad=True)
    y = F.ones(2, requires_grad=True)
    (x + y).backward(F.ones(2) * 5)  # x and y receive the same tensor
    x.grad.add_(1)
    np.testing.assert_allclose(y.grad.numpy(), [5.0, 5.0])
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 6.0])


def test_gradients_accumulate_after_a_kept_first_one():
    w = F.ones(2, 3, requires_grad=True)
    for _ in range(3):
        (w * 2.0).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), np.full((2, 3), 6.0))


def test_a_view_of_memory_only_it_holds_is_kept():
    # Linear's weight gradient is the transposed product that TBackward hands on: a view
    # of a product nothing else holds. It is laid out as the weight, so it is kept.
    seen = []
    original = engine._new_grad

    def spy(g, leaf, owned=False):
        out = original(g, leaf, owned)
        seen.append((tuple(leaf.shape), owned, out is g))
        return out

    engine._new_grad = spy
    try:
        lin = F.nn.Linear(6, 4)
        x = np.arange(30.0).reshape(5, 6) / 7
        lin(F.tensor(x.tolist())).sum().backward()
    finally:
        engine._new_grad = original
    assert sorted(seen) == [((4,), True, True), ((4, 6), True, True)]
    np.testing.assert_allclose(lin.weight.grad.numpy(), np.ones((4, 5)) @ x, rtol=1e-6)
    np.testing.assert_allclose(lin.bias.grad.numpy(), np.full(4, 5.0))
    assert lin.weight.grad.stride() == lin.weight.stride()


def test_a_view_of_the_callers_gradient_is_never_kept():
    w = F.zeros(4, 3, requires_grad=True)
    given = F.ones(3, 4)
    w.t().backward(given)  # t's gradient is a view of the caller's tensor
    w.grad.add_(1)
    np.testing.assert_allclose(given.numpy(), np.ones((3, 4)))
    flat = F.ones(12)
    w.grad = None
    w.reshape(12).backward(flat)
    w.grad.add_(1)
    np.testing.assert_allclose(flat.numpy(), np.ones(12))
