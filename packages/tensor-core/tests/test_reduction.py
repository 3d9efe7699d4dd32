"""Focused tests of reductions: errors, out=, overloads, NaN, 16-bit inputs, threads."""

import numpy as np
import pytest

import flambeau


def t(a):
    return flambeau.from_numpy(np.ascontiguousarray(a))


def to16(x, dtype):
    """x in a 16-bit float type (prod over a size-1 dim with dtype= casts)."""
    if hasattr(x, "to"):
        return x.to(dtype)
    return flambeau.prod(x.reshape(list(x.shape) + [1]), -1, dtype=dtype)


def test_mean_of_integers_errors_like_pytorch():
    with pytest.raises(
        RuntimeError,
        match="Input dtype must be either a floating point or complex dtype. Got: Long",
    ):
        flambeau.mean(flambeau.ones(3, dtype=flambeau.int64))
    assert flambeau.mean(flambeau.ones(3, dtype=flambeau.int64), dtype=flambeau.float64).item() == 1


def test_empty_reductions():
    e = flambeau.ones(0, 4)
    assert flambeau.sum(e).item() == 0
    assert flambeau.prod(e).item() == 1
    assert np.isnan(flambeau.mean(e).item())
    assert flambeau.sum(e, 0).shape == (4,)
    with pytest.raises(RuntimeError, match="Expected reduction dim to be specified"):
        flambeau.max(e)
    with pytest.raises(IndexError, match="Expected reduction dim 0 to have non-zero size"):
        flambeau.max(e, 0)
    with pytest.raises(IndexError):
        flambeau.amax(e, 0)
    with pytest.raises(IndexError):
        flambeau.argmax(e)
    assert flambeau.amax(e, 1).shape == (0,)


def test_dim_errors():
    x = flambeau.ones(2, 3)
    with pytest.raises(IndexError, match="out of range"):
        flambeau.sum(x, 2)
    with pytest.raises(RuntimeError, match="multiple times"):
        flambeau.sum(x, (0, 0))
    with pytest.raises(IndexError):
        flambeau.cumsum(x, 3)


def test_integer_sum_and_prod_are_int64():
    x = flambeau.ones(3, dtype=flambeau.int8)
    assert flambeau.sum(x).dtype == flambeau.int64
    assert flambeau.prod(x).dtype == flambeau.int64
    assert flambeau.cumsum(x, 0).dtype == flambeau.int64
    assert flambeau.sum(flambeau.ones(3, dtype=flambeau.bool)).item() == 3


def test_out_arguments():
    x = t(np.arange(6, dtype=np.float32).reshape(2, 3))
    out = flambeau.empty(0)
    r = flambeau.sum(x, 1, out=out)
    assert r is out and out.shape == (2,) and out.numpy().tolist() == [3, 12]
    out = flambeau.empty(0, dtype=flambeau.int64)
    flambeau.argmax(x, 1, out=out)
    assert out.numpy().tolist() == [2, 2]
    out = flambeau.empty(2, 3)
    flambeau.max(x, flambeau.zeros(3) + 2, out=out)
    assert out.numpy().tolist() == [[2, 2, 2], [3, 4, 5]]


def test_max_overloads_and_named_tuple():
    a = np.array([[1, 5, 5], [7, 0, 7]], dtype=np.float32)
    r = flambeau.max(t(a), 1)
    assert r.values.numpy().tolist() == [5, 7] and r.indices.numpy().tolist() == [1, 0]
    r = flambeau.min(t(a), dim=0, keepdim=True)
    assert r.values.shape == (1, 3)
    assert flambeau.max(t(a)).item() == 7
    assert flambeau.max(t(a), t(a[::-1].copy())).numpy().tolist() == [
        [7, 5, 7],
        [7, 5, 7],
    ]


def test_nan_propagates_and_wins_index():
    a = np.array([1.0, np.nan, 3.0, np.nan], dtype=np.float32)
    assert np.isnan(flambeau.max(t(a)).item())
    assert np.isnan(flambeau.amin(t(a)).item())
    assert flambeau.argmax(t(a)).item() == 1
    assert flambeau.argmin(t(a)).item() == 1
    assert np.isnan(flambeau.max(t(a), t(np.zeros(4, np.float32))).numpy()[1])
    assert np.isnan(flambeau.logsumexp(t(a), 0).item())


def test_var_spellings():
    a = np.random.default_rng(0).standard_normal((4, 5))
    x = t(a)
    np.testing.assert_allclose(flambeau.var(x).item(), a.var(ddof=1))
    np.testing.assert_allclose(flambeau.var(x, False).item(), a.var())
    np.testing.assert_allclose(flambeau.std(x, 1, False, True).numpy(), a.std(1, keepdims=True))
    np.testing.assert_allclose(flambeau.var(x, 0, correction=0).numpy(), a.var(0))
    np.testing.assert_allclose(x.var(1, unbiased=True).numpy(), a.var(1, ddof=1))
    _, m = flambeau.var_mean(x, 1)
    np.testing.assert_allclose(m.numpy(), a.mean(1))
    # one element with correction 1: 0/0
    assert np.isnan(flambeau.var(flambeau.ones(1)).item())


def test_var_is_stable_with_a_large_offset():
    a = (np.random.default_rng(1).standard_normal(10000) + 1e8).astype(np.float64)
    np.testing.assert_allclose(flambeau.var(t(a)).item(), a.var(ddof=1), rtol=1e-6)


def test_float32_sum_is_accurate():
    a = np.full(1 << 22, 0.1, dtype=np.float32)
    exact = np.sum(a.astype(np.float64))
    assert abs(flambeau.sum(t(a)).item() - exact) / exact < 1e-6


def test_logsumexp_is_stable():
    a = np.array([[1000.0, 1000.0], [-1000.0, -np.inf]])
    r = flambeau.logsumexp(t(a), 1).numpy()
    np.testing.assert_allclose(r, [1000 + np.log(2), -1000])
    assert flambeau.logsumexp(t(np.full(3, -np.inf)), 0).item() == -np.inf


def test_norm_options():
    a = np.array([[3.0, -4.0], [0.0, 1.0]])
    x = t(a)
    assert flambeau.norm(x).item() == pytest.approx(np.sqrt(26))
    assert flambeau.norm(x, "fro").item() == pytest.approx(np.sqrt(26))
    assert flambeau.norm(x, float("inf")).item() == 4
    assert flambeau.norm(x, float("-inf")).item() == 0
    assert flambeau.norm(x, 0).item() == 3
    assert flambeau.norm(x, 1, 1).numpy().tolist() == [7, 1]
    with pytest.raises(RuntimeError, match="floating point or complex"):
        flambeau.norm(flambeau.ones(2, dtype=flambeau.int64))
    with pytest.raises(RuntimeError, match="nuc"):
        flambeau.norm(x, "nuc")


def test_all_any_types():
    assert flambeau.all(flambeau.ones(3, dtype=flambeau.uint8)).dtype == flambeau.uint8
    assert flambeau.any(flambeau.zeros(3)).dtype == flambeau.bool
    assert flambeau.any(flambeau.zeros(2, 3), 1).numpy().tolist() == [False, False]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_16bit_inputs(dtype):
    rng = np.random.default_rng(0)
    a = np.round(rng.uniform(-3, 3, (70, 600)) * 4) / 4  # exact in both 16-bit types
    x = to16(t(a.astype(np.float32)), getattr(flambeau, dtype))

    def f32(r):
        return np.asarray(to16(r, flambeau.float32).numpy(), np.float64)

    np.testing.assert_allclose(f32(flambeau.sum(x, 1)), a.sum(1), rtol=1e-2)
    np.testing.assert_allclose(f32(flambeau.mean(x, 0)), a.mean(0), rtol=1e-2, atol=1e-2)
    np.testing.assert_array_equal(f32(flambeau.amax(x, 1)), a.max(1))
    np.testing.assert_array_equal(flambeau.argmin(x, 0).numpy(), a.argmin(0))
    np.testing.assert_allclose(f32(flambeau.std(x, 1)), a.std(1, ddof=1), rtol=1e-2)
    np.testing.assert_allclose(f32(flambeau.cumsum(x, 1)), a.cumsum(1), rtol=2e-2, atol=2.0)
    assert flambeau.sum(x).dtype == getattr(flambeau, dtype)


@pytest.mark.parametrize("threads", [1, 2])
def test_threaded_paths_match(threads):
    old = flambeau.get_num_threads()
    flambeau.set_num_threads(threads)
    try:
        a = np.random.default_rng(2).standard_normal((300, 500))
        for dim in (None, 0, 1):
            np.testing.assert_allclose(flambeau.sum(t(a), dim).numpy(), a.sum(axis=dim))
            np.testing.assert_array_equal(flambeau.amax(t(a), dim).numpy(), a.max(axis=dim))
        np.testing.assert_array_equal(flambeau.argmax(t(a)).item(), a.argmax())
    finally:
        flambeau.set_num_threads(old)


@pytest.mark.parametrize(
    "rows, cols, ld",
    [(4096, 1000, 1000), (3, 70, 70), (1037, 3, 3), (100000, 5, 5), (517, 129, 160), (9, 33, 48)],
)
@pytest.mark.parametrize("threads", [1, 2])
def test_float32_column_sums_match_float64(rows, cols, ld, threads):
    # sum(dim=0) of float32 rows (contiguous, or rows of a wider matrix): threads share
    # columns, or rows where there are fewer column groups than threads; eight rows are
    # added in float before the double total, the rest one by one.
    rng = np.random.default_rng(rows + cols)
    a = rng.standard_normal((rows, ld)).astype(np.float32) + 3.0
    x = t(a)[:, :cols]
    before = flambeau.get_num_threads()
    flambeau.set_num_threads(threads)
    try:
        got = flambeau.sum(x, 0).numpy()
        kept = flambeau.sum(x, 0, keepdim=True).numpy()
    finally:
        flambeau.set_num_threads(before)
    exact = a[:, :cols].astype(np.float64).sum(0)
    np.testing.assert_allclose(got, exact, rtol=2e-6 * max(1.0, np.log2(rows)))
    np.testing.assert_array_equal(kept[0], got)
    assert got.dtype == np.float32


@pytest.mark.parametrize("n", [1, 15, 16, 17, 63, 64, 100, 777, 2047, 2048, 2049, 9000, 40000])
def test_float32_row_and_whole_sums_of_every_length_match_float64(n):
    # Runs shorter than a block, and the ends of longer ones, are folded in vector lanes
    # (of four registers, then of one) before the last few elements one by one.
    rng = np.random.default_rng(n)
    a = rng.standard_normal((5, n)).astype(np.float32) + 1.0
    exact = a.astype(np.float64).sum(1)
    scale = np.abs(a).astype(np.float64).sum(1)
    assert np.all(np.abs(flambeau.sum(t(a), 1).numpy() - exact) <= 1e-6 * scale)
    for r in range(5):
        assert abs(flambeau.sum(t(a[r])).item() - exact[r]) <= 1e-6 * scale[r]
