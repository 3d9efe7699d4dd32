"""Sorting, searching and counting: ties and stability, NaN placement, out=, the
unique wrappers' return shapes, and errors (flambeau_testing/optable/sorting.py has the rows)."""

import math

import numpy as np
import pytest

import flambeau as F

nan = math.nan


def t(values, dtype=None):
    return F.tensor(values, dtype=dtype)


def test_sort_is_stable_both_directions():
    x = t([2, 1, 2, 1, 0, 2])
    v, i = F.sort(x)
    assert v.tolist() == [0, 1, 1, 2, 2, 2]
    assert i.tolist() == [4, 1, 3, 0, 2, 5]
    v, i = F.sort(x, descending=True, stable=True)
    assert v.tolist() == [2, 2, 2, 1, 1, 0]
    assert i.tolist() == [0, 2, 5, 1, 3, 4]
    assert F.argsort(x, descending=True).tolist() == [0, 2, 5, 1, 3, 4]


def test_sort_places_nan_as_largest():
    x = t([1.0, nan, 3.0, nan, -1.0])
    v, i = x.sort()
    assert i.tolist() == [4, 0, 2, 1, 3]
    assert np.isnan(v.numpy()[3:]).all()
    v, i = x.sort(descending=True)
    assert i.tolist() == [1, 3, 2, 0, 4]
    assert F.topk(x, 2).indices.tolist() == [1, 3]
    assert F.topk(x, 2, largest=False).indices.tolist() == [4, 0]


def test_sort_returns_named_tuple_and_accepts_tuple_out():
    x = t([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])
    r = F.sort(x, dim=1)
    assert r.values.tolist() == [[1.0, 2.0, 3.0], [0.0, 4.0, 5.0]]
    assert r.indices.dtype == F.int64
    vals, idx = F.empty(0), F.empty(0, dtype=F.int64)
    r2 = F.sort(x, 0, out=(vals, idx))
    assert r2.values is vals and r2.indices is idx
    assert vals.tolist() == [[0.0, 1.0, 2.0], [3.0, 5.0, 4.0]]
    assert idx.tolist() == [[1, 0, 0], [0, 1, 1]]
    with pytest.raises(RuntimeError, match="dtype"):
        F.sort(x, out=(F.empty(0), F.empty(0)))
    with pytest.raises(TypeError):
        F.sort(x, out=(vals,))


def test_long_rows_sort_in_parallel_chunks():
    rng = np.random.default_rng(1)
    a = rng.integers(0, 1000, 300_000)
    v, i = F.sort(F.from_numpy(a))
    np.testing.assert_array_equal(i.numpy(), np.argsort(a, kind="stable"))
    v, i = F.sort(F.from_numpy(a), descending=True)
    np.testing.assert_array_equal(v.numpy(), np.sort(a)[::-1])


def test_topk_kthvalue_median_mode_values():
    x = t([[5.0, 1.0, 4.0, 2.0], [0.0, 0.0, 7.0, 7.0]])
    assert F.topk(x, 2).values.tolist() == [[5.0, 4.0], [7.0, 7.0]]
    assert F.topk(x, 2).indices.tolist() == [[0, 2], [2, 3]]
    k = F.kthvalue(x, 2, dim=1, keepdim=True)
    assert k.values.tolist() == [[2.0], [0.0]] and k.indices.tolist() == [[3], [1]]
    assert F.median(t([1, 2, 3, 4])).item() == 2  # the lower median
    m = F.median(x, 1)
    assert m.values.tolist() == [2.0, 0.0] and m.indices.tolist() == [3, 1]
    mode = F.mode(t([1, 2, 2, 3, 3, 1, 5]))
    assert (mode.values.item(), mode.indices.item()) == (1, 5)


def test_median_propagates_nan_nanmedian_skips_it():
    x = t([3.0, nan, 1.0, nan, 2.0])
    assert math.isnan(F.median(x).item())
    assert F.median(x, 0).indices.item() == 1
    assert F.nanmedian(x).item() == 2.0
    assert F.nanmedian(x, 0).indices.item() == 4
    assert math.isnan(F.nanmedian(t([nan, nan])).item())
    assert math.isnan(F.median(F.empty(0)).item())


def test_cummax_cummin_ties_and_nan():
    r = F.cummax(t([1, 1, 0, 1]), 0)
    assert r.values.tolist() == [1, 1, 1, 1] and r.indices.tolist() == [0, 1, 1, 3]
    r = F.cummax(t([1.0, nan, 3.0, nan, 2.0]), 0)
    assert r.indices.tolist() == [0, 1, 1, 3, 3]
    r = F.cummin(t([[2, 3], [2, 1]]), 0)
    assert r.indices.tolist() == [[0, 0], [1, 1]]


def test_unique_wrappers_return_what_was_asked():
    x = t([3, 1, 3, 2])
    assert F.unique(x).tolist() == [1, 2, 3]
    out, inv = F.unique(x, return_inverse=True)
    assert inv.tolist() == [2, 0, 2, 1]
    out, counts = x.unique(return_counts=True)
    assert counts.tolist() == [1, 1, 2]
    rows = t([[1, 2], [1, 2], [0, 5]])
    out, inv = F.unique(rows, dim=0, return_inverse=True)
    assert out.tolist() == [[0, 5], [1, 2]] and inv.tolist() == [1, 1, 0]
    assert F.unique_consecutive(t([3, 3, 1, 3])).tolist() == [3, 1, 3]
    out, inv, counts = t([3, 3, 1]).unique_consecutive(return_inverse=True, return_counts=True)
    assert inv.tolist() == [0, 0, 1] and counts.tolist() == [2, 1]
    nans = F.unique(t([nan, 1.0, nan]))
    assert nans.shape == (3,)  # NaNs are never equal to each other


@pytest.mark.parametrize(
    "dtype", [np.int64, np.int32, np.int8, np.uint8, np.float32, np.float64, np.float16, bool]
)
def test_unique_of_many_elements_matches_numpy(dtype):
    # Large enough for the radix sort to run in pieces over threads.
    rng = np.random.default_rng(1)
    x = rng.integers(-100, 100, 300_001)
    if dtype is bool:
        x = x > 0
    a = x.astype(dtype)
    out, inv, counts = F.unique(F.from_numpy(a), return_inverse=True, return_counts=True)
    ref, ref_inv, ref_counts = np.unique(a, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(out.numpy(), ref)
    np.testing.assert_array_equal(inv.numpy(), ref_inv)
    np.testing.assert_array_equal(counts.numpy(), ref_counts)
    np.testing.assert_array_equal(F.unique(F.from_numpy(a)).numpy(), ref)


def test_unique_floats_extremes_zeros_and_nans():
    big = np.iinfo(np.int64)
    ints = t([big.max, big.min, 0, -1, big.max, big.min])
    assert F.unique(ints).tolist() == [big.min, -1, 0, big.max]
    x = t([0.0, -0.0, math.inf, nan, -math.inf, 1e-45, -1e-45, nan, -0.0], F.float64)
    out, inv, counts = F.unique(x, return_inverse=True, return_counts=True)
    vals = out.tolist()
    assert vals[:5] == [-math.inf, -1e-45, 0.0, 1e-45, math.inf]
    assert math.copysign(1, vals[2]) == 1  # the first zero in the input leads its group
    assert all(math.isnan(v) for v in vals[5:]) and len(vals) == 7
    assert counts.tolist() == [1, 1, 3, 1, 1, 1, 1]
    assert inv.tolist() == [2, 2, 4, 5, 0, 3, 1, 6, 2]


def test_searchsorted_and_bucketize_options():
    seq = t([1.0, 2.0, 2.0, 3.0])
    v = t([2.0, 0.0, 4.0])
    assert F.searchsorted(seq, v).tolist() == [1, 0, 4]
    assert F.searchsorted(seq, v, right=True).tolist() == [3, 0, 4]
    assert F.searchsorted(seq, v, side="right", out_int32=True).dtype == F.int32
    s = F.searchsorted(seq, 2)
    assert s.shape == () and s.item() == 1
    assert F.bucketize(v, seq).tolist() == [1, 0, 4]
    assert F.bucketize(2.0, seq, right=True).item() == 3
    out = F.empty(0, dtype=F.int64)
    assert F.searchsorted(seq, v, out=out) is out and out.tolist() == [1, 0, 4]
    with pytest.raises(RuntimeError, match="opposites"):
        F.searchsorted(seq, v, right=True, side="left")
    with pytest.raises(RuntimeError, match="side"):
        F.searchsorted(seq, v, side="middle")
    with pytest.raises(RuntimeError, match="1 dimension"):
        F.bucketize(v, seq.reshape(2, 2))
    with pytest.raises(RuntimeError, match="boundaries"):
        F.searchsorted(seq.reshape(2, 2), t([[1.0], [2.0], [3.0]]))
    with pytest.raises(RuntimeError, match="sorter"):
        F.searchsorted(seq, v, sorter=t([0, 1, 2, 9]))


def test_bincount_histc_errors_and_types():
    assert F.bincount(t([1, 2, 2])).tolist() == [0, 1, 2]
    assert F.bincount(t([1, 2, 2]), t([1.0, 2.0, 3.0])).dtype == F.float32
    assert F.bincount(t([1, 2, 2]), t([1, 2, 3])).dtype == F.float64
    with pytest.raises(RuntimeError, match="non-negative"):
        F.bincount(t([1, -1]))
    with pytest.raises(RuntimeError, match="1-d"):
        F.bincount(t([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="minlength"):
        F.bincount(t([1]), minlength=-1)
    assert F.histc(t([1.0, 2.0, 1.0]), bins=4, min=0, max=3).tolist() == [0.0, 2.0, 1.0, 0.0]
    assert F.histc(t([1.0, 2.0, 1.0]), bins=4).tolist() == [2.0, 0.0, 0.0, 1.0]
    with pytest.raises(RuntimeError, match="floating"):
        F.histc(t([1, 2]))
    with pytest.raises(RuntimeError, match="bins"):
        F.histc(t([1.0]), bins=0)
    with pytest.raises(RuntimeError, match="larger"):
        F.histc(t([1.0]), min=3, max=1)


@pytest.mark.parametrize(
    "call",
    [
        lambda x: F.topk(x, 4),
        lambda x: F.topk(x, -1),
        lambda x: F.kthvalue(x, 0),
        lambda x: F.kthvalue(x, 4),
    ],
)
def test_k_out_of_range(call):
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        call(t([1.0, 2.0, 3.0]))


@pytest.mark.parametrize(
    "call",
    [
        lambda x: F.sort(x, 2),
        lambda x: F.argsort(x, -3),
        lambda x: F.topk(x, 1, dim=2),
        lambda x: F.kthvalue(x, 1, 5),
        lambda x: F.median(x, 2),
        lambda x: F.mode(x, 2),
        lambda x: F.cummax(x, 2),
        lambda x: F.logcumsumexp(x, 2),
        lambda x: F.diff(x, dim=2),
        lambda x: F.unique(x, dim=2),
    ],
)
def test_dim_out_of_range_is_index_error(call):
    with pytest.raises(IndexError, match="out of range"):
        call(t([[1.0, 2.0], [3.0, 4.0]]))


def test_dtype_and_shape_errors():
    with pytest.raises(RuntimeError, match="complex"):
        F.sort(F.zeros(3, dtype=F.complex64))
    with pytest.raises(RuntimeError, match="bool"):
        F.topk(t([True, False]), 1)
    with pytest.raises(RuntimeError, match="bool"):
        F.median(t([True, False]))
    with pytest.raises(RuntimeError, match="floating"):
        F.logcumsumexp(t([1, 2]), 0)
    with pytest.raises(IndexError, match="non-zero size"):
        F.median(F.zeros(0, 2), 0)
    with pytest.raises(IndexError, match="non-zero size"):
        F.mode(F.zeros(0, 2), 0)
    with pytest.raises(RuntimeError, match="one-dimensional"):
        F.diff(t(1.0))
    with pytest.raises(RuntimeError, match="non-negative"):
        F.diff(t([1.0, 2.0]), n=-1)
    with pytest.raises(IndexError, match="out of bounds"):
        F.value_selecting_reduction_backward(t([1.0]), 0, t([3]), [2], True)


def test_dtypes_keep_16_bit_floats_and_ints():
    for dt in (F.float16, F.bfloat16, F.int8, F.uint8, F.int16):
        x = t([3, 1, 2]).to(dt)
        assert F.sort(x).values.dtype == dt
        assert F.sort(x).values.tolist() == [1, 2, 3]
        assert F.topk(x, 1).values.tolist() == [3]
        assert F.median(x).item() == 2


def test_diff_prepend_append_and_bool():
    x = t([1, 4, 9])
    assert F.diff(x, prepend=t([0]), append=t([16])).tolist() == [1, 3, 5, 7]
    assert F.diff(x, n=2).tolist() == [2]
    assert F.diff(t([True, False, False])).tolist() == [True, False]
    assert F.diff(x, n=4).shape == (0,)


def test_sort_with_autograd_loaded_and_gradients():
    F.zeros(1, requires_grad=True)  # loads autograd: calls now pass through its slot
    assert F.sort(t([3.0, 1.0])).indices.tolist() == [1, 0]
    y = t([3.0, 1.0, 2.0]).requires_grad_()
    v, _ = F.sort(y)
    (v * t([1.0, 2.0, 3.0])).sum().backward()
    assert y.grad.tolist() == [3.0, 1.0, 2.0]
    z = t([[1.0, 5.0], [4.0, 2.0]]).requires_grad_()
    F.cummax(z, 1).values.sum().backward()
    assert z.grad.tolist() == [[1.0, 1.0], [2.0, 0.0]]


@pytest.mark.parametrize("nan_at", [None, 7])
@pytest.mark.parametrize("largest", [True, False])
def test_topk_long_rows_with_ties_and_nan(nan_at, largest):
    a = np.random.default_rng(2).integers(-5, 5, (3, 600)).astype(np.float32)
    if nan_at is not None:
        a[1, nan_at] = np.nan
    r = F.topk(F.from_numpy(a), 20, largest=largest)
    for row, vals, idx in zip(a, r.values.numpy(), r.indices.numpy()):
        rev = np.argsort(row[::-1], kind="stable")[::-1]
        order = (len(row) - 1 - rev) if largest else np.argsort(row, kind="stable")
        np.testing.assert_array_equal(idx, order[:20])
        np.testing.assert_array_equal(vals, row[order[:20]])
