"""In-place metadata changes: set_, resize_, the in-place views and the `.data` setter.

Geometry is checked against NumPy views of the same memory and hand-derived strides;
sharing by writing through one tensor and reading through the other; lifetime by
dropping every other holder of a storage (and of memory handed to NumPy or DLPack).
"""

from __future__ import annotations

import gc

import numpy as np
import pytest

import flambeau as F


def allocated() -> int:
    gc.collect()
    return F._C._allocator_stats()["allocated_bytes"]


def storage_elements(t) -> int:
    return t._storage_nbytes() // t.element_size()


# ---- in-place views ----------------------------------------------------------------------


IN_PLACE_VIEWS = [
    ("t_", (), lambda a: a.T),
    ("transpose_", (0, 2), lambda a: np.swapaxes(a, 0, 2)),
    ("swapaxes_", (-1, 1), lambda a: np.swapaxes(a, -1, 1)),
    ("swapdims_", (1, 0), lambda a: np.swapaxes(a, 1, 0)),
    ("squeeze_", (), np.squeeze),
    ("squeeze_", (1,), lambda a: np.squeeze(a, 1)),
    ("squeeze_", ((1, 3),), lambda a: np.squeeze(a, (1, 3))),
    ("unsqueeze_", (-1,), lambda a: a[..., None]),
    ("as_strided_", ((2, 2), (3, 1), 1), None),
]


@pytest.mark.parametrize(
    "name,args,ref", IN_PLACE_VIEWS, ids=lambda v: None if callable(v) else str(v)
)
def test_in_place_view_reshapes_self_like_numpy(name, args, ref):
    shape = (2, 3) if name == "t_" else (2, 1, 3, 1)
    if name == "as_strided_":
        shape = (12,)
    a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    t = F.tensor(a)
    storage = t._storage_ptr()
    before = t._version
    out = getattr(t, name)(*args)
    assert out is t
    want = ref(a) if ref is not None else np.lib.stride_tricks.as_strided(a[1:], (2, 2), (12, 4))
    np.testing.assert_array_equal(t.numpy(), want)
    # The same memory: strides agree wherever a dim has more than one element.
    for n, st, np_st in zip(want.shape, t.stride(), want.strides):
        assert n <= 1 or st * 4 == np_st
    assert t._storage_ptr() == storage  # no data moved
    assert t._version == before + 1  # counts as an in-place op, as in PyTorch


def test_in_place_views_write_through_to_the_storage():
    base = F.zeros(2, 3)
    t = base[:]
    t.t_()
    t[2, 0] = 5.0  # element (0, 2) of base
    assert base[0, 2].item() == 5.0
    t.unsqueeze_(0).squeeze_(0).transpose_(0, 1)
    assert t.shape == (2, 3) and t.is_set_to(base)


def test_in_place_views_refuse_bad_dims():
    with pytest.raises(RuntimeError, match="<= 2 dimensions"):
        F.zeros(2, 3, 4).t_()
    with pytest.raises(IndexError, match="out of range"):
        F.zeros(2, 3).transpose_(0, 2)
    with pytest.raises(IndexError, match="out of range"):
        F.zeros(2).unsqueeze_(3)
    with pytest.raises(RuntimeError, match="out of bounds"):
        F.zeros(4).as_strided_((3,), (2,))
    t = F.zeros(2, 3)
    with pytest.raises(RuntimeError):
        t.as_strided_((2,), (-1,))
    assert t.shape == (2, 3) and t.stride() == (3, 1)  # a refused call changes nothing


# ---- set_ ----------------------------------------------------------------------------------


def test_set_source_shares_storage_and_geometry():
    src = F.arange(12.0).view(3, 4)[1:, ::2]  # offset 4, strides (4, 2)
    t = F.zeros(5)
    assert t.set_(src) is t
    assert t.is_set_to(src) and src.is_set_to(t)
    assert (t.shape, t.stride(), t.storage_offset()) == ((2, 2), (4, 2), 4)
    t[0, 1] = -1.0
    assert src[0, 1].item() == -1.0
    src[1, 0] = -2.0
    assert t[1, 0].item() == -2.0


def test_set_storage_offset_views_the_source_storage():
    src = F.arange(12.0)
    t = F.zeros(1)
    t.set_(src, 2, (2, 3), (4, 1))
    want = np.lib.stride_tricks.as_strided(np.arange(12.0, dtype=np.float32)[2:], (2, 3), (16, 4))
    np.testing.assert_array_equal(t.numpy(), want)
    t.set_(src, 3, (2, 2))  # no stride: contiguous
    assert t.stride() == (2, 1) and t.storage_offset() == 3
    t.set_(src, 0, (), ())
    assert t.shape == () and t.item() == 0.0


def test_set_past_the_end_grows_the_source_storage_for_both():
    src = F.arange(10.0)
    t = F.zeros(1)
    t.set_(src, 2, (5,), (2,))  # needs 11 elements
    assert storage_elements(src) == 11 and src._is_view_of(t)
    np.testing.assert_array_equal(t.numpy(), [2.0, 4.0, 6.0, 8.0, t[4].item()])
    np.testing.assert_array_equal(src.numpy(), np.arange(10.0))  # old bytes kept
    t[4] = 7.0
    assert F.tensor([0.0]).set_(src, 10, ()).item() == 7.0


def test_set_empty_gives_self_a_fresh_empty_storage():
    src = F.ones(4)
    t = src[:]
    t.set_()
    assert (t.shape, t.stride(), t.storage_offset()) == ((0,), (1,), 0)
    assert not t._is_view_of(src) and t.dtype == F.float32
    np.testing.assert_array_equal(src.numpy(), np.ones(4))


def test_set_to_itself_bumps_the_version_only():
    t = F.arange(6.0)
    before = t._version
    t.set_(t)
    assert t._version == before + 1
    np.testing.assert_array_equal(t.numpy(), np.arange(6.0))


@pytest.mark.parametrize(
    "call,exc,match",
    [
        (lambda t, s: t.set_(s.double()), RuntimeError, "could not set tensor of type float64"),
        (lambda t, s: t.set_(s, -1, (2,), (1,)), RuntimeError, "invalid storage offset -1"),
        (lambda t, s: t.set_(s, 0, (-3,), (1,)), RuntimeError, "negative dimension"),
        (lambda t, s: t.set_(s, 0, (3,), (-2,)), RuntimeError, "negative strides"),
        (lambda t, s: t.set_(s, 0, (2, 3), (1,)), RuntimeError, "unequal size length"),
        (lambda t, s: t.set_(s, 0, (2**62, 2**62), (1, 1)), RuntimeError, "too large"),
        (lambda t, s: t.set_(s, 0, (2**62, 3), (2, 1)), RuntimeError, "overflow"),
        (lambda t, s: t.set_(s, 2**62, (2,), (1,)), RuntimeError, "overflow|too large"),
        (lambda t, s: t.set_(s, 0, (2**40,), (1,)), RuntimeError, "out of memory|too large"),
        (lambda t, s: t.set_(None), TypeError, "set_"),
        (lambda t, s: t.set_(3), TypeError, "must be Tensor"),
        (lambda t, s: t.set_(s, 1), TypeError, "set_"),
    ],
)
def test_set_refuses_bad_arguments_and_changes_nothing(call, exc, match):
    src = F.arange(10.0)
    t = F.zeros(3)
    with pytest.raises(exc, match=match):
        call(t, src)
    assert t.shape == (3,) and not t._is_view_of(src) and storage_elements(src) == 10


def test_set_past_borrowed_memory_raises():
    arr = np.arange(4.0)
    src = F.from_numpy(arr)
    t = F.zeros(1, dtype=F.float64)
    with pytest.raises(RuntimeError, match="Trying to resize storage that is not resizable"):
        t.set_(src, 0, (5,), (1,))
    t.set_(src, 1, (3,), (1,))  # within the array: fine, and shared
    t[0] = 9.0
    assert arr[1] == 9.0


@pytest.mark.parametrize(
    "call", [lambda t: t.is_set_to(1.0), lambda t: t.resize_as_(2), lambda t: t.set_(True)]
)
def test_numbers_are_not_tensors_here(call):
    with pytest.raises(TypeError, match="must be Tensor"):
        call(F.zeros(3))


def test_is_set_to_compares_storage_offset_sizes_and_strides():
    a = F.zeros(2, 3)
    assert a.is_set_to(a) and a.is_set_to(a[:]) and a.is_set_to(a.view(2, 3))
    assert not a.is_set_to(a.view(3, 2)) and not a.is_set_to(a.t())
    assert not a.is_set_to(a[1:]) and not a.is_set_to(F.zeros(2, 3))
    assert not F.empty(0).is_set_to(F.empty(0))  # two storages
    e = F.empty(0)
    assert e.is_set_to(e[:0])


# ---- resize_ -------------------------------------------------------------------------------


def test_resize_grow_keeps_elements_in_order_and_shares_with_views():
    a = F.arange(6.0).view(2, 3)
    b = a[0]  # a view of the old storage
    assert a.resize_(3, 4) is a
    assert a.stride() == (4, 1)
    np.testing.assert_array_equal(a.reshape(-1)[:6].numpy(), np.arange(6.0))
    # As in PyTorch, the storage itself grew: b reads the same (moved) memory.
    assert b._is_view_of(a) and storage_elements(b) == 12
    a[0, 1] = 100.0
    assert b[1].item() == 100.0


def test_resize_keeps_offset_and_reads_storage_order():
    base = F.arange(10.0)
    t = base[4:]
    t.resize_(8)
    assert t.storage_offset() == 4 and storage_elements(base) == 12
    np.testing.assert_array_equal(t[:6].numpy(), np.arange(4.0, 10.0))
    # A transposed tensor of new sizes reads its storage row-major, as PyTorch does.
    tt = F.arange(6.0).view(2, 3).t()
    tt.resize_(2, 3)
    np.testing.assert_array_equal(tt.numpy(), np.arange(6.0).reshape(2, 3))


def test_resize_shrink_keeps_storage_and_same_size_keeps_strides():
    t = F.arange(12.0)
    t.resize_(2, 2)
    assert storage_elements(t) == 12 and t.stride() == (2, 1)
    tt = F.zeros(3, 4).t()
    tt.resize_(4, 3)
    assert tt.stride() == (1, 4)  # same sizes: nothing changes
    e = F.zeros(3).expand(2, 3)
    e.resize_(2, 3)
    assert e.stride() == (0, 1)


@pytest.mark.parametrize(
    "size",
    [(5, 2), ((5, 2),), ([5, 2],), (F.Size([5, 2]),)],
    ids=["varargs", "tuple", "list", "Size"],
)
def test_resize_size_forms(size):
    assert F.zeros(3).resize_(*size).shape == (5, 2)


def test_resize_memory_formats():
    t = F.zeros(3)
    assert t.resize_(2, 3, 4, 5, memory_format=F.channels_last).stride() == (60, 1, 15, 3)
    assert t.resize_(2, 3, 4, 5).stride() == (60, 1, 15, 3)  # same sizes: kept, as in PyTorch
    assert t.resize_(2, 3, 4, 6).stride() == (72, 24, 6, 1)
    t.resize_(1, 2, 2, 2, 2, memory_format=F.channels_last_3d)
    assert t.stride() == (16, 1, 8, 4, 2)
    with pytest.raises(RuntimeError, match="rank 4"):
        t.resize_(2, 3, memory_format=F.channels_last)
    u = F.zeros(3)
    assert u.resize_as_(F.zeros(2, 3, 4, 5), memory_format=F.channels_last).stride() == (
        60,
        1,
        15,
        3,
    )


def test_resize_as_takes_the_template_size_not_its_dtype_or_strides():
    t = F.zeros(3)
    t.resize_as_(F.zeros(4, 2, dtype=F.int64).t())
    assert (t.shape, t.stride(), t.dtype) == ((2, 4), (4, 1), F.float32)
    t.resize_as_(t)
    assert t.shape == (2, 4)


@pytest.mark.parametrize(
    "size,match",
    [
        ((-1,), "negative dimension"),
        ((0, -1), "negative dimension"),
        ((2**40, 2**40), "overflow"),
        ((2**62,), "too large"),
    ],
)
def test_resize_refuses_bad_sizes(size, match):
    t = F.zeros(3)
    with pytest.raises(RuntimeError, match=match):
        t.resize_(size)
    assert t.shape == (3,)


def test_resize_refuses_a_tensor_that_requires_grad_even_without_grad_mode():
    w = F.zeros(3, requires_grad=True)
    with F.no_grad(), pytest.raises(RuntimeError, match="cannot resize variables that require"):
        w.resize_(5)


@pytest.mark.parametrize("wrap", ["numpy", "dlpack"])
def test_resize_of_borrowed_memory_raises_when_growing(wrap):
    arr = np.arange(6.0)
    t = F.from_numpy(arr) if wrap == "numpy" else F.from_dlpack(arr)
    with pytest.raises(RuntimeError, match="Trying to resize storage that is not resizable"):
        t.resize_(7)
    t.resize_(2, 3)  # fits: fine
    t[1, 2] = -1.0
    assert arr[5] == -1.0


def test_deprecated_out_of_place_resize_keeps_numel():
    t = F.arange(6.0).view(2, 3).t()
    with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
        r = t.resize(2, 3)
    np.testing.assert_array_equal(r.numpy(), np.arange(6.0).reshape(2, 3).T.reshape(2, 3))
    with pytest.warns(UserWarning, match="resize_as is deprecated"):
        assert t.resize_as(F.zeros(6)).shape == (6,)
    with pytest.warns(UserWarning), pytest.raises(RuntimeError, match="preserving the number"):
        t.resize(4, 2)


# ---- the .data setter ----------------------------------------------------------------------


def test_data_setter_repoints_the_same_object():
    t = F.zeros(5)
    t.grad = F.ones(5)
    src = F.arange(6, dtype=F.int64).view(2, 3)
    ident, grad = id(t), t.grad
    t.data = src
    assert id(t) == ident and t.grad is grad
    assert (t.shape, t.dtype) == ((2, 3), F.int64) and t.is_set_to(src)
    t[0, 0] = 42
    assert src[0, 0].item() == 42


def test_data_setter_keeps_requires_grad_and_version():
    w = F.zeros(3, requires_grad=True)
    before = w._version
    w.data = F.ones(2, 2, dtype=F.float64)
    assert w.requires_grad and w.is_leaf and w.dtype == F.float64
    assert w._version == before  # outside autograd: not an in-place op
    with pytest.raises(RuntimeError, match="floating point or complex"):
        w.data = F.ones(2, dtype=F.int64)
    assert w.dtype == F.float64


@pytest.mark.parametrize("value", [None, [1.0], 3.0, np.ones(2)])
def test_data_setter_needs_a_tensor(value):
    t = F.zeros(2)
    with pytest.raises(TypeError, match="Variable data has to be a tensor"):
        t.data = value


def test_data_setter_with_a_view_of_itself():
    t = F.arange(6.0).view(2, 3)
    t.data = t.data.t()
    np.testing.assert_array_equal(t.numpy(), np.arange(6.0).reshape(2, 3).T)


def test_data_getter_is_a_detached_alias():
    w = F.zeros(3, requires_grad=True)
    d = w.data
    assert d is not w and not d.requires_grad and d.is_set_to(w)
    assert type(d) is F.Tensor


# ---- lifetime ------------------------------------------------------------------------------

N = 1 << 16  # 256 KiB of float32: a block large enough to see in the statistics


@pytest.mark.parametrize(
    "repoint",
    [
        lambda t, s: t.set_(s),
        lambda t, s: t.set_(s, 0, (N,)),
        lambda t, s: setattr(t, "data", s),
    ],
    ids=["set_", "set_offset", "data"],
)
def test_repointed_tensor_keeps_source_alive_then_releases_it(repoint):
    before = allocated()
    t = F.zeros(1)
    src = F.full((N,), 3.0)
    repoint(t, src)
    del src
    gc.collect()
    assert t.sum().item() == 3.0 * N  # the source storage is held by t
    t.set_(F.zeros(2))
    assert allocated() - before < N  # and freed when t lets go of it


def test_views_of_the_old_storage_stay_valid_after_repointing():
    t = F.arange(float(N))
    v = t[10:20]
    t.set_(F.zeros(3))
    t.data = F.ones(2)
    gc.collect()
    np.testing.assert_array_equal(v.numpy(), np.arange(10.0, 20.0))


def test_resize_releases_the_old_block_unless_exported():
    t = F.ones(N)  # 4N bytes
    before = allocated()
    t.resize_(2 * N)  # an 8N-byte block replaces it
    assert allocated() - before == 4 * N
    arr = t[:N].numpy()  # exported: the next move keeps this block until the storage dies
    t.resize_(4 * N)
    assert allocated() - before == 4 * N + 16 * N
    np.testing.assert_array_equal(arr, np.ones(N))
    del arr, t
    assert allocated() == before - 4 * N


def test_numpy_array_outlives_repointing_and_resize_of_its_tensor():
    t = F.full((N,), 2.0)
    arr = t.numpy()
    t.resize_(4 * N)  # the storage moves; the array keeps the old block
    t.fill_(5.0)
    t.set_(F.zeros(1))
    gc.collect()
    np.testing.assert_array_equal(arr, np.full(N, 2.0, dtype=np.float32))
    del arr
    assert t.item() == 0.0


def test_dlpack_capsule_outlives_repointing_and_resize_of_its_tensor():
    t = F.full((N,), 2.0)
    arr = np.from_dlpack(t)
    t.resize_(4 * N)
    t.data = F.zeros(1)
    gc.collect()
    np.testing.assert_array_equal(arr, np.full(N, 2.0, dtype=np.float32))
