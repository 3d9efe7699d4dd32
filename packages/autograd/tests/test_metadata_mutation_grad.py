"""Autograd and the core's in-place metadata ops (set_, resize_, t_, squeeze_, ...) and the
`.data` setter, following PyTorch's rules: refused on leaves, recorded on other tensors with
the out-of-place view op's formula, never silently wrong."""

from __future__ import annotations

import pytest

import flambeau as F
from flambeau import _C
from flambeau.autograd import gradcheck, gradgradcheck


@pytest.fixture(params=[True, False], ids=["record_in_cpp", "record_in_python"])
def recording(request):
    was = _C._autograd_fast_set_enabled(request.param)
    yield
    _C._autograd_fast_set_enabled(was)


def leaf(*shape):
    g = F.Generator()
    g.manual_seed(0)
    return F.randn(*shape, generator=g, dtype=F.float64).requires_grad_()


VIEW_OPS = [
    ("t_", lambda x: x.t_()),
    ("transpose_", lambda x: x.transpose_(0, 1)),
    ("swapaxes_", lambda x: x.swapaxes_(1, 0)),
    ("swapdims_", lambda x: x.swapdims_(0, -1)),
    ("squeeze_", lambda x: x.squeeze_()),
    ("unsqueeze_", lambda x: x.unsqueeze_(1)),
    ("as_strided_", lambda x: x.as_strided_((2, 2), (1, 3), 1)),
]
METADATA_OPS = VIEW_OPS + [
    ("set_", lambda x: x.set_(F.zeros(3, dtype=F.float64))),
    ("set_", lambda x: x.set_()),
]


@pytest.mark.parametrize("name,op", METADATA_OPS, ids=lambda v: v if isinstance(v, str) else "")
def test_leaves_and_their_views_are_refused(name, op):
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used"):
        op(leaf(2, 3))
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        op(leaf(2, 3)[:])


@pytest.mark.parametrize("name,op", METADATA_OPS, ids=lambda v: v if isinstance(v, str) else "")
def test_without_grad_mode_leaves_may_change(name, op):
    w = leaf(2, 3)
    with F.no_grad():
        op(w)
    assert w.requires_grad and w.is_leaf


@pytest.mark.parametrize("name,op", VIEW_OPS, ids=lambda v: v if isinstance(v, str) else "")
def test_in_place_views_record_the_view_formula(name, op, recording):
    def fn(w):
        x = w * 1.0
        assert op(x) is x
        return x * x

    w = leaf(2, 3)
    x = w * 1.0
    op(x)
    assert x.grad_fn.next_functions[0][0].name() == "MulBackward0"
    assert gradcheck(fn, (w,))
    assert gradgradcheck(fn, (w,))


def test_in_place_views_on_views_do_not_rebase_the_root(recording):
    w = leaf(2, 3)
    x = w * 2.0
    v = x[:]
    v.t_()
    assert v.grad_fn.name() == "TBackward0" and x.grad_fn.name() == "MulBackward0"
    v.sum().backward()
    assert w.grad.tolist() == [[2.0] * 3] * 2


def test_view_op_on_a_view_then_an_in_place_write(recording):
    # PyTorch: [[6, 6, 6], [2, 2, 2]]: the write goes where the reshaped view sits now.
    w = leaf(2, 3)
    x = w * 2.0
    v = x[0]
    v.unsqueeze_(0)
    v.mul_(3.0)
    x.sum().backward()
    assert w.grad.tolist() == [[6.0] * 3, [2.0] * 3]


def test_in_place_view_on_the_root_then_a_view_reads_it(recording):
    w = leaf(2, 3)
    x = w * 2.0
    y = x[0]  # taken before x is transposed in place
    x.t_()
    y.sum().backward()
    assert w.grad.tolist() == [[2.0] * 3, [0.0] * 3]


@pytest.mark.parametrize("order", ["t_ then write", "write then t_"])
def test_root_transposed_and_view_written(order, recording):
    w = leaf(2, 3)
    x = w * 2.0
    v = x[0]
    if order == "t_ then write":
        x.t_()
        v.mul_(3.0)
    else:
        v.mul_(3.0)
        x.t_()
    x.sum().backward()
    assert w.grad.tolist() == [[6.0] * 3, [2.0] * 3]


def test_view_transposed_without_grad_mode_then_written():
    w = leaf(2, 2)
    x = w * 1.0
    v = x[:]
    with F.no_grad():
        v.t_()
    v.mul_(F.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=F.float64))  # v[i, j] is x[j, i]
    x.sum().backward()
    assert w.grad.tolist() == [[1.0, 3.0], [2.0, 4.0]]


def test_as_strided_in_place_gradient():
    w = leaf(2, 3)
    x = w * 1.0
    x.as_strided_((2, 2), (1, 2), 1)  # storage elements 1, 3 / 2, 4
    x.sum().backward()
    assert w.grad.tolist() == [[0.0, 1.0, 1.0], [1.0, 1.0, 0.0]]


def test_a_saved_input_changed_by_an_in_place_view_raises(recording):
    w = leaf(2, 3)
    x = w * 2.0
    y = x * x  # saves x
    x.t_()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_an_input_whose_shape_changed_raises_rather_than_misreading_it(recording):
    # PyTorch keeps the shape of every input; flambeau's formulas read the inputs they
    # keep at backward, so a changed geometry is refused (an error, never a wrong gradient).
    w = leaf(2, 3)
    x = w * 2.0
    # cat's backward splits by x's shape (and keeps x: it declares no reads=)
    y = F.cat([x, F.ones(2, 3, dtype=F.float64)])
    x.unsqueeze_(0)
    with pytest.raises(RuntimeError, match="had its shape, strides or dtype changed"):
        y.sum().backward()


def test_an_input_kept_as_metadata_keeps_its_recorded_shape():
    # add reads no input value: the call keeps x's shape, not x, so x's later change of
    # geometry does not matter (as in PyTorch). (The Python recorder; the C++ one too
    # once the core takes keep_for.)
    was = _C._autograd_fast_set_enabled(False)
    try:
        w = leaf(2, 3)
        x = w * 2.0
        y = x + F.ones(3, dtype=F.float64)
        x.unsqueeze_(0)
        y.sum().backward()
    finally:
        _C._autograd_fast_set_enabled(was)
    assert F.allclose(w.grad, F.full((2, 3), 2.0, dtype=F.float64))


def test_an_output_changed_by_an_in_place_view_keeps_its_recorded_geometry(recording):
    # exp reads its result; the recorded call kept the result as it was.
    w = leaf(2, 3)
    y = w.exp()
    y.unsqueeze_(0)
    y.sum().backward()
    assert F.allclose(w.grad, w.detach().exp())


def test_set_on_a_non_leaf_has_no_derivative():
    w = leaf(3)
    x = w * 1.0
    x.set_(F.zeros(4, dtype=F.float64))
    assert x.requires_grad and x.grad_fn.name() == "NotImplemented"
    with pytest.raises(RuntimeError, match="derivative for set_ is not implemented"):
        x.sum().backward()


def test_set_carries_the_source_history_only_for_set_source():
    w = leaf(3)
    x = F.zeros(3, dtype=F.float64)
    x.set_(w)
    assert x.requires_grad and x.grad_fn.name() == "NotImplemented"
    y = F.zeros(3, dtype=F.float64)
    y.set_(w, 0, (2,), (1,))
    assert not y.requires_grad


@pytest.mark.parametrize("grad_mode", [True, False])
def test_resize_refuses_tensors_that_require_grad(grad_mode):
    x = leaf(3) * 1.0
    with F.set_grad_enabled(grad_mode), pytest.raises(RuntimeError, match="cannot resize"):
        x.resize_(5)
    with pytest.raises(RuntimeError, match="cannot resize"):
        x.resize_as_(F.zeros(2))
    t = F.zeros(3, dtype=F.float64)
    t.resize_as_(x)  # the template may require grad
    assert not t.requires_grad


def test_data_setter_bypasses_autograd_as_in_pytorch():
    w = leaf(3)
    y = (w * w).sum()  # saves w
    w.data = F.ones(3, dtype=F.float64)  # same shape: no error, new values read
    y.backward()
    assert w.grad.tolist() == [2.0, 2.0, 2.0]
    assert w.is_leaf and w.requires_grad


def test_data_setter_with_a_new_shape_under_a_recorded_call_raises():
    w = leaf(3)
    y = (w * w).sum()
    w.data = F.ones(2, 2, dtype=F.float64)
    with pytest.raises(RuntimeError, match="had its shape, strides or dtype changed"):
        y.backward()


def test_data_setter_on_a_view_forgets_the_view():
    w = leaf(2, 3)
    x = w * 1.0
    v = x[0]
    v.data = F.zeros(3, dtype=F.float64)
    assert v._view is None
    v.mul_(2.0)  # no longer writes into x: x's history is untouched
    assert x.grad_fn.name() == "MulBackward0"


def test_a_reshape_that_copies_is_not_a_view(recording):
    w = F.arange(6.0, dtype=F.float64).requires_grad_()
    x = (w * 1.0).view(2, 3)
    y = x.t().reshape(-1)  # a copy: x.t() cannot be flattened in place
    y.mul_(2.0)
    (y * F.arange(6.0, dtype=F.float64)).sum().backward()
    # y[k] = 2 * x.t().flatten()[k]: y = 2 * (x00, x10, x01, x11, x02, x12)
    assert w.grad.tolist() == [0.0, 4.0, 8.0, 2.0, 6.0, 10.0]
