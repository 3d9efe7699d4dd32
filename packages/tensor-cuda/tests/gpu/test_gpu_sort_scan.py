"""Sorting and scan kernels on CUDA against flambeau's CPU kernels: sort (argsort, msort)
and topk with NaN, ties and -0.0 (the same values and, the sorts being stable, the same
indices), short rows (segmented sort) and a long one (device-wide sort); cumsum and
cumprod along every dim of strided inputs, short lines (one thread each) and long ones
(one block each), integers and bool accumulating in int64; logcumsumexp; cummax and
cummin with NaN and ties (the CPU's indices); the same bits on every run."""

from __future__ import annotations

import pytest
from samples import DEVICE, FLOATS, INTS, REALS, assert_close, sample

import flambeau

SORTABLE = REALS + [flambeau.bool]


def _exact(got, want):
    assert_close(got, want, 0.0, 0.0)


def _with_specials(x):
    """x with ties, NaN, -0.0 and infinities mixed in (floating dtypes)."""
    if not x.dtype.is_floating_point:
        return x
    flat = x.reshape(-1).clone()
    specials = [float("nan"), -0.0, 0.0, float("inf"), float("-inf"), float("nan")]
    for k, v in enumerate(specials):
        flat[(7 * k) % flat.numel()] = v
    flat[1::5] = flat[0]  # ties
    return flat.reshape(x.shape)


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dim", [0, -1])
@pytest.mark.parametrize("dtype", SORTABLE)
def test_sort_matches_the_cpu_with_indices(dtype, dim, descending):
    x = _with_specials(sample(dtype, (9, 37)))
    for view in (x, x.t()):
        got_v, got_i = flambeau.sort(view.to(DEVICE), dim=dim, descending=descending)
        want_v, want_i = flambeau.sort(view, dim=dim, descending=descending)
        _exact(got_v, want_v)
        _exact(got_i, want_i)
    _exact(flambeau.argsort(x.to(DEVICE), dim=dim), flambeau.argsort(x, dim=dim))
    _exact(flambeau.msort(x.to(DEVICE)), flambeau.msort(x))


@pytest.mark.parametrize("dtype", [flambeau.float32, flambeau.int64, flambeau.float16])
def test_sort_of_a_long_row(dtype):
    x = _with_specials(sample(dtype, (70_000,), scale=50.0))
    for descending in (False, True):
        got = flambeau.sort(x.to(DEVICE), descending=descending)
        want = flambeau.sort(x, descending=descending)
        _exact(got[0], want[0])
        _exact(got[1], want[1])


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("k", [1, 5, 37])
@pytest.mark.parametrize("dtype", REALS)
def test_topk(dtype, k, largest):
    x = _with_specials(sample(dtype, (6, 37)))
    got_v, got_i = flambeau.topk(x.to(DEVICE), k, dim=1, largest=largest)
    want_v, want_i = flambeau.topk(x, k, dim=1, largest=largest)
    _exact(got_v, want_v)
    _exact(got_i, want_i)
    got_v, got_i = flambeau.topk(x.t().to(DEVICE), min(k, 6), dim=0, largest=largest)
    want_v, want_i = flambeau.topk(x.t(), min(k, 6), dim=0, largest=largest)
    _exact(got_v, want_v)
    _exact(got_i, want_i)


# (shape, dim): short lines (one thread each) and long ones (one block each, tiles).
SCAN_CASES = [((4, 5, 6), 0), ((4, 5, 6), 1), ((4, 5, 6), -1), ((3, 3000), 1), ((1000, 2), 0)]


def _scan_tolerance(dtype, n):
    """Sums of n terms in another order (the block scan's tree)."""
    if dtype == flambeau.float32:
        return 1e-5 * max(n, 1) ** 0.5, 1e-4
    return None, None


@pytest.mark.parametrize("shape, dim", SCAN_CASES)
@pytest.mark.parametrize("dtype", SORTABLE)
def test_cumsum(dtype, shape, dim):
    x = sample(dtype, shape)
    for view in (x, x.transpose(0, -1)):
        rtol, atol = _scan_tolerance(dtype, view.shape[dim])
        assert_close(flambeau.cumsum(view.to(DEVICE), dim), flambeau.cumsum(view, dim), rtol, atol)


@pytest.mark.parametrize("shape, dim", SCAN_CASES)
@pytest.mark.parametrize("dtype", SORTABLE)
def test_cumprod(dtype, shape, dim):
    # Factors near 1 (floats) or in {-1, 0, 1, 2} wrapping (integers), so nothing overflows
    # to inf while the products still change along the line.
    if dtype.is_floating_point:
        x = (1 + sample(flambeau.float64, shape, scale=0.01)).to(dtype)
    else:
        x = sample(dtype, shape, scale=0.7)
    rtol, atol = _scan_tolerance(dtype, shape[dim])
    assert_close(flambeau.cumprod(x.to(DEVICE), dim), flambeau.cumprod(x, dim), rtol, atol)


def test_cumsum_dtype_argument_and_in_place():
    x = sample(flambeau.int8, (5, 300), scale=40.0)
    assert_close(flambeau.cumsum(x.to(DEVICE), 1), flambeau.cumsum(x, 1))  # int64, no wrap
    assert_close(
        flambeau.cumsum(x.to(DEVICE), 1, dtype=flambeau.float64),
        flambeau.cumsum(x, 1, dtype=flambeau.float64),
    )
    want = x.clone().cumsum_(1)  # stays int8, wrapping
    y = x.clone().to(DEVICE)
    y.cumsum_(1)
    assert_close(y, want)


@pytest.mark.parametrize("shape, dim", SCAN_CASES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_logcumsumexp(dtype, shape, dim):
    x = _with_specials(sample(dtype, shape))
    assert_close(flambeau.logcumsumexp(x.to(DEVICE), dim), flambeau.logcumsumexp(x, dim))


@pytest.mark.parametrize("op", ["cummax", "cummin"])
@pytest.mark.parametrize("shape, dim", SCAN_CASES)
@pytest.mark.parametrize("dtype", SORTABLE)
def test_cummax_cummin(dtype, shape, dim, op):
    x = sample(dtype, shape, scale=1.0)  # few distinct values: ties
    x = _with_specials(x) if shape[dim] > 20 else x
    got_v, got_i = getattr(flambeau, op)(x.to(DEVICE), dim)
    want_v, want_i = getattr(flambeau, op)(x, dim)
    _exact(got_v, want_v)
    _exact(got_i, want_i)


@pytest.mark.parametrize("dtype", [flambeau.float32] + INTS[-1:])
def test_scans_and_sorts_repeat_bit_for_bit(dtype):
    x = sample(dtype, (7, 5000)).to(DEVICE)
    first = [flambeau.cumsum(x, 1).cpu(), flambeau.sort(x, 1)[1].cpu()]
    for _ in range(3):
        assert flambeau.equal(flambeau.cumsum(x, 1).cpu(), first[0])
        assert flambeau.equal(flambeau.sort(x, 1)[1].cpu(), first[1])
