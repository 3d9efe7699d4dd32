"""Views share storage with their base; shape and join operators raise PyTorch's errors."""

import numpy as np
import pytest

import flambeau as torch


def base(*shape):
    return torch.arange(int(np.prod(shape)), dtype=torch.float32).reshape(shape)


# Each case: (name, function producing a view of a (3, 4, 5) float tensor).
VIEWS = [
    ("view", lambda a: a.view(12, 5)),
    ("view_as", lambda a: a.view_as(torch.zeros(60))),
    ("reshape", lambda a: a.reshape(-1)),
    ("reshape_as", lambda a: a.reshape_as(torch.zeros(6, 10))),
    ("flatten", lambda a: a.flatten(1)),
    ("unflatten", lambda a: a.unflatten(2, (5, 1))),
    ("ravel", lambda a: a.ravel()),
    ("squeeze", lambda a: a.unsqueeze(0).squeeze()),
    ("squeeze_dims", lambda a: a.unsqueeze(0).squeeze((0, 1))),
    ("unsqueeze", lambda a: a.unsqueeze(1)),
    ("transpose", lambda a: a.transpose(0, 2)),
    ("swapaxes", lambda a: a.swapaxes(0, 1)),
    ("swapdims", lambda a: torch.swapdims(a, 1, 2)),
    ("t", lambda a: a[0].t()),
    ("T", lambda a: a.T),
    ("mT", lambda a: a.mT),
    ("permute", lambda a: a.permute(2, 0, 1)),
    ("movedim", lambda a: a.movedim(0, -1)),
    ("moveaxis", lambda a: torch.moveaxis(a, (0, 1), (1, 0))),
    ("expand", lambda a: a[:, :1].expand(3, 4, 5)),
    ("expand_as", lambda a: a[:1].expand_as(a)),
    ("narrow", lambda a: a.narrow(1, 1, 2)),
    ("select", lambda a: a.select(2, -1)),
    ("unbind", lambda a: a.unbind(1)[2]),
    ("split", lambda a: a.split(2, 1)[1]),
    ("split_sizes", lambda a: a.split([1, 3], 1)[1]),
    ("chunk", lambda a: a.chunk(2, 2)[1]),
    ("tensor_split", lambda a: a.tensor_split([1, 3], 2)[1]),
    ("diagonal", lambda a: a.diagonal(1, 1, 2)),
    ("unfold", lambda a: a.unfold(2, 2, 1)),
    ("as_strided", lambda a: a.as_strided((2, 2), (1, 5), 3)),
    ("contiguous", lambda a: a.contiguous()),
    ("meshgrid", lambda a: torch.meshgrid(a[0, 0], a[1, 1])[1]),
    ("getitem", lambda a: a[1:, None, ..., ::2]),
    ("to_same", lambda a: a.to(torch.float32)),
    ("float_same", lambda a: a.float()),
    ("cpu", lambda a: a.cpu()),
]


@pytest.mark.parametrize("name,fn", VIEWS, ids=[v[0] for v in VIEWS])
def test_view_shares_storage(name, fn):
    a = base(3, 4, 5)
    v = fn(a)
    assert v._is_view_of(a)
    assert v.numel() > 0
    # Writing through the view changes the base exactly where the view points.
    expected = a.numpy().copy()
    v_np = np.lib.stride_tricks.as_strided(
        expected.reshape(-1)[v.storage_offset() :],
        v.shape,
        [s * 4 for s in v.stride()],
        writeable=True,
    )
    if name not in ("expand", "expand_as"):  # broadcast views have repeated elements
        v.fill_(-1)
        v_np[...] = -1
        np.testing.assert_array_equal(a.numpy(), expected)


# Cases that return their input itself: no new tensor, so no view (PyTorch's answers).
SELF_RETURNING = {"contiguous", "to_same", "float_same", "cpu"}


@pytest.mark.parametrize("name,fn", VIEWS, ids=[v[0] for v in VIEWS])
def test_views_know_their_base(name, fn):
    root = torch.zeros(60)
    a = root.view(3, 4, 5)
    assert a._is_view() and a._base is root
    v = fn(a)
    if name in SELF_RETURNING:
        assert v is a
        return
    # A view of a view has the first one's base: chains end in one hop, as in PyTorch.
    assert v._is_view() and v._base is root
    assert not root._is_view() and root._base is None


def test_tensors_that_are_not_views_have_no_base():
    a = torch.arange(6.0)
    for t in (a, a.clone(), a.detach(), a[[0, 1]], a[a > 2], a.view(torch.int32), a + 1):
        assert not t._is_view() and t._base is None
    assert a.t()._is_view() and a.t().reshape(6)._base is a  # views of views, as PyTorch
    nc = a.view(2, 3).t()
    assert not nc.reshape(6)._is_view()  # reshape had to copy
    with torch.inference_mode():
        assert not a[1:]._is_view()  # inference mode tracks no views, as in PyTorch
    p = torch.nn.Parameter(torch.ones(2, 2)) if hasattr(torch, "nn") else None
    if p is not None:
        assert p[0]._base is p


def test_view_write_through_data():
    a = base(3, 4)
    a.t()[1, 2] = 100.0
    assert a[2, 1].item() == 100.0
    a.diagonal().fill_(7)
    assert [a[i, i].item() for i in range(3)] == [7, 7, 7]
    a.unfold(1, 2, 2)[0, 1, 0] = -5.0
    assert a[0, 2].item() == -5.0


def test_copies_do_not_share_storage():
    a = base(3, 4)
    for c in (
        a.clone(),
        a.flip(0),
        a.roll(1),
        a.repeat(2, 1),
        torch.tril(a),
        a.t().contiguous(),
        torch.cat([a, a]),
        torch.stack([a]),
        torch.diag(a),
        a.to(torch.float64),
        a.to(torch.float32, copy=True),
        a.t().reshape(-1),
    ):
        assert not c._is_view_of(a)


def test_reshape_of_noncontiguous_copies_when_needed():
    a = base(3, 4).t()
    assert not a.reshape(12)._is_view_of(a)
    assert a.reshape(4, 3)._is_view_of(a)
    with pytest.raises(RuntimeError, match="view size"):
        a.view(12)


@pytest.mark.parametrize(
    "call",
    [
        lambda a: a.transpose(0, 3),
        lambda a: a.unsqueeze(4),
        lambda a: a.select(-4, 0),
        lambda a: a.narrow(5, 0, 1),
        lambda a: a.squeeze(3),
        lambda a: a.permute(0, 1, 5),
        lambda a: a.movedim(0, 3),
        lambda a: a.flatten(0, 3),
        lambda a: a.diagonal(0, 0, 4),
        lambda a: a.unbind(3),
        lambda a: a.split(1, 3),
        lambda a: a.flip(3),
        lambda a: a.roll(1, 3),
        lambda a: torch.cat([a, a], 3),
        lambda a: torch.stack([a], 4),
        lambda a: a.unfold(3, 1, 1),
        lambda a: a.chunk(2, -4),
        lambda a: a.tensor_split(2, 3),
    ],
)
def test_bad_dims_raise_index_error(call):
    with pytest.raises(IndexError, match="out of range"):
        call(base(2, 3, 4))


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda a: a.view(5, 5), "invalid for input of size 24"),
        (lambda a: a.reshape(-1, -1), "only one dimension can be inferred"),
        (lambda a: a.expand(3, 3, 4), "must match the existing size"),
        (lambda a: a.expand(4), "must be greater or equal to the number of dimensions"),
        (lambda a: a.expand(-1, 2, 3, 4), "leading, non-existing dimension"),
        (lambda a: a.permute(0, 1), "does not match the length"),
        (lambda a: a.permute(0, 0, 1), "appears multiple times"),
        (lambda a: a.flip(0, 0), "appears multiple times"),
        (lambda a: a.movedim((0, 1), 2), "same number of dims"),
        (lambda a: a.narrow(1, 2, 2), "exceeds dimension size"),
        (lambda a: a.unflatten(1, (2, 2)), "don't multiply up to the size of dim 1"),
        (lambda a: a.flatten(2, 1), "start_dim cannot come after end_dim"),
        (lambda a: a.t(), "expects a tensor with <= 2 dimensions"),
        (lambda a: a.diagonal(0, 1, 1), "diagonal dimensions cannot be identical"),
        (lambda a: a.unfold(2, 5, 1), "maximum size for tensor at dimension 2 is 4"),
        (lambda a: a.unfold(2, 2, 0), "step is 0"),
        (lambda a: a.split(0), "split_size can only be 0"),
        (lambda a: a.split([1, 2], 2), "sum exactly to 4"),
        (lambda a: a.chunk(0), "greater than 0"),
        (lambda a: a.tensor_split(0), "larger than 0"),
        (lambda a: a.repeat(2, 2), "can not be smaller"),
        (lambda a: a.roll((1, 2), 0), "shifts and dimensions must align"),
        (
            lambda a: torch.cat([a, a[:, :2, :3]], 1),
            "Sizes of tensors must match except in dimension 1",
        ),
        (lambda a: torch.cat([a, a[0]]), "same number of dimensions"),
        (lambda a: torch.cat([]), "non-empty list"),
        (lambda a: torch.cat([a, a[0, 0, 0]]), "zero-dimensional tensor"),
        (lambda a: torch.stack([a, a[0]]), "stack expects each tensor to be equal size"),
        (lambda a: torch.stack([]), "non-empty"),
        (lambda a: torch.diag(a), "Supports 1D or 2D"),
        (lambda a: torch.tril(a[0, 0]), "at least 2 dimensions"),
        (lambda a: torch.fliplr(a[0, 0]), ">= 2-d"),
        (lambda a: a.view(-1).as_strided((5, 5), (5, 1)), "out of bounds for a storage of 24"),
        (lambda a: a.as_strided((2,), (1,), 23), "out of bounds"),
        (lambda a: a.as_strided((2,), (-1,), 5), "Negative strides"),
        (lambda a: a.as_strided((2,), (1,), -1), "storage offset must be non-negative"),
        (lambda a: a.as_strided((2, 3), (1,)), "same length"),
    ],
)
def test_bad_shapes_raise_runtime_error(call, match):
    with pytest.raises(RuntimeError, match=match):
        call(base(2, 3, 4))


def test_as_strided_on_a_view_is_bounded_by_the_storage_not_the_view():
    a = base(4, 4)
    v = a[1:3]
    w = v.as_strided((4, 4), (4, 1), 0)  # the whole storage: allowed, as in PyTorch
    assert w._is_view_of(a)
    np.testing.assert_array_equal(w.numpy(), a.numpy())
    with pytest.raises(RuntimeError):
        v.as_strided((4, 5), (4, 1), 0)


def test_select_and_narrow_index_errors():
    a = base(3)
    with pytest.raises(IndexError, match="index 3 out of range"):
        a.select(0, 3)
    with pytest.raises(IndexError, match="start out of range"):
        a.narrow(0, -5, 1)
    with pytest.raises(IndexError, match="0-dim"):
        a[0].select(0, 0)
    with pytest.raises(IndexError, match="no dimensions"):
        a[0].unbind()


def test_squeeze_keeps_non_unit_dims_and_scalars():
    a = base(1, 3, 1)
    assert a.squeeze(1).shape == (1, 3, 1)
    assert a.squeeze(-1).shape == (1, 3)
    assert torch.zeros(()).squeeze().shape == ()
    assert torch.zeros(()).squeeze(0).shape == ()
    assert torch.zeros(()).unsqueeze(-1).shape == (1,)


def test_cat_promotes_and_skips_empty_1d():
    a = torch.ones(2, 3, dtype=torch.int32)
    b = torch.full((1, 3), 0.5, dtype=torch.float64)
    c = torch.cat([a, torch.zeros(0), b])
    assert c.dtype == torch.float64 and c.shape == (3, 3)
    np.testing.assert_array_equal(
        c.numpy(), np.concatenate([np.ones((2, 3)), np.full((1, 3), 0.5)])
    )
    assert torch.cat([torch.zeros(0), torch.zeros(0)]).shape == (0,)
    b16 = torch.cat([torch.ones(2, dtype=torch.bool), torch.ones(1, dtype=torch.uint8)])
    assert b16.dtype == torch.uint8


def test_cat_and_stack_out():
    a = base(2, 3)
    out = torch.empty(0)
    r = torch.cat([a, a], dim=1, out=out)
    assert r is out and out.shape == (2, 6)
    np.testing.assert_array_equal(out.numpy(), np.concatenate([a.numpy()] * 2, 1))
    out = torch.empty(2, 2, 3)
    torch.stack([a, a], out=out)
    np.testing.assert_array_equal(out.numpy(), np.stack([a.numpy()] * 2))
    with pytest.raises(RuntimeError, match="can't be cast"):
        torch.cat([a], out=torch.empty(2, 3, dtype=torch.int64))


def test_tril_triu_inplace_and_out():
    a = base(3, 4)
    ref = np.triu(a.numpy(), 1)
    assert a.triu_(1) is a
    np.testing.assert_array_equal(a.numpy(), ref)
    b = base(2, 3, 3).transpose(1, 2)
    ref = np.tril(b.numpy(), -1)
    b.tril_(-1)
    np.testing.assert_array_equal(b.numpy(), ref)
    out = torch.empty(0)
    torch.tril(base(3, 3), out=out)
    np.testing.assert_array_equal(out.numpy(), np.tril(base(3, 3).numpy()))
    big = torch.ones(300, 300, dtype=torch.float64)
    np.testing.assert_array_equal(torch.triu(big, 3).numpy(), np.triu(np.ones((300, 300)), 3))


def test_diag_out():
    out = torch.empty(1)
    torch.diag(torch.ones(3), 1, out=out)
    np.testing.assert_array_equal(out.numpy(), np.diag(np.ones(3), 1))


def test_flip_roll_large_and_strided():
    a = base(64, 130)[:, ::3]
    np.testing.assert_array_equal(a.flip(0, 1).numpy(), np.flip(a.numpy()))
    np.testing.assert_array_equal(
        torch.roll(a, (5, -7), (0, 1)).numpy(), np.roll(a.numpy(), (5, -7), (0, 1))
    )
    np.testing.assert_array_equal(a.flip(-1).numpy(), a.numpy()[:, ::-1])


def test_T_and_mT():
    a = base(2, 3, 4)
    assert a.T.shape == (4, 3, 2)
    assert a.mT.shape == (2, 4, 3)
    with pytest.raises(RuntimeError, match="matrices"):
        _ = base(3).mT


def test_split_varargs_spellings():
    a = base(6, 2)
    assert [t.shape[0] for t in a.split(4)] == [4, 2]
    assert [t.shape[0] for t in torch.split(a, [1, 5])] == [1, 5]
    assert [t.shape[0] for t in torch.split(a, split_size_or_sections=3, dim=0)] == [3, 3]
    assert isinstance(a.unbind(), tuple)
    assert [t.shape[0] for t in a.tensor_split(indices_or_sections=[2])] == [2, 4]


def test_as_strided_rejects_overflowing_geometry():
    a = base(4)
    with pytest.raises(RuntimeError, match="out of bounds"):
        a.as_strided((2**62, 3), (2**62, 1))
    with pytest.raises(RuntimeError, match="out of bounds"):
        a.as_strided((3,), (2**62,), 2**62)


def test_out_aliasing_an_input_is_refused():
    a = base(2, 3)
    with pytest.raises(RuntimeError, match="single memory location"):
        torch.cat([a, a], out=a)
    with pytest.raises(RuntimeError, match="share memory"):
        torch.tril(a, out=a.t())
    with pytest.raises(RuntimeError, match="share memory"):
        torch.diag(a, out=a)
    torch.tril(a, out=a)  # the input itself is fine
