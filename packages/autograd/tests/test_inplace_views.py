"""In-place operations through views rebase the root's history (CopySlices)."""

from __future__ import annotations

import pytest

import flambeau as F
from flambeau.autograd import gradcheck, gradgradcheck


def leaf(*shape):
    g = F.Generator()
    g.manual_seed(0)
    return F.randn(*shape, generator=g, dtype=F.float64).requires_grad_()


def through_row(x, w):
    b = x * 1.0
    b[0].mul_(w)  # in place through a view
    return b.exp()


def through_column_then_sibling(x):
    b = x.clone()
    row = b[1]  # a sibling view taken before the write
    b[:, 1].add_(x[:, 0] ** 2)
    return row * 3 + b.t()


def setitem_on_view(x, v):
    b = x.clone()
    view = b[1:]
    view[0, ::2] = v
    return b.sin()


def setitem_value_with_leading_ones(x, v):
    b = x.clone()
    b[1] = v  # v is (1, 1, 4): its leading 1-dims are dropped, as PyTorch does
    b[F.tensor([0, 2])] = v * 2
    return b.sin()


@pytest.mark.parametrize(
    "fn, shapes",
    [
        (through_row, [(2, 3), (3,)]),
        (through_column_then_sibling, [(3, 3)]),
        (setitem_on_view, [(3, 4), (2,)]),
        (setitem_value_with_leading_ones, [(3, 4), (1, 1, 4)]),
    ],
)
def test_gradients_match_finite_differences(fn, shapes):
    inputs = tuple(leaf(*s) for s in shapes)
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


def test_the_root_and_the_view_see_the_new_history():
    x = leaf(2, 3)
    b = x * 1.0
    v = b[0]
    v.mul_(2.0)
    assert b.grad_fn.name() == "CopySlices"
    assert v.grad_fn.name() == "AsStridedBackward0"
    v.sum().backward()
    assert x.grad.tolist() == [[2.0] * 3, [0.0] * 3]


def test_view_of_a_leaf_cannot_be_modified_in_place():
    x = leaf(3)
    with pytest.raises(RuntimeError, match="view of a leaf Variable"):
        x[:2].mul_(2)
    with pytest.raises(RuntimeError, match="view of a leaf Variable"):
        x.view(3, 1)[0] = 1.0


def test_views_of_views_rebase_the_root():
    x = leaf(4, 4)
    b = x * 1.0
    inner = b.t()[1:3][:, ::2]
    inner.mul_(0.0)
    b.sum().backward()
    expected = F.ones(4, 4, dtype=F.float64)
    expected.t()[1:3][:, ::2] = 0.0
    assert x.grad.tolist() == expected.tolist()
