"""bincount, histc, value_selecting_reduction_backward and the window functions on
CUDA against flambeau's CPU kernels: counts exactly, weighted sums within rounding
(the atomics' order), histc with a given range and the data's (NaN and values
outside ignored, the top edge in the last bin), the backward of max/min/kthvalue/
median along each dim with repeated indices (and a bad index raising, out left
unwritten), and every window, symmetric and periodic, in every floating dtype."""

from __future__ import annotations

import pytest
from samples import DEVICE, FLOATS, assert_close, sample

import flambeau


def _exact(got, want):
    assert_close(got, want, 0.0, 0.0)


# Up to 4096 bins each block counts in shared memory first; more go straight to out.
@pytest.mark.parametrize("top", [97, 10_000])
@pytest.mark.parametrize("minlength", [0, 3, 200])
@pytest.mark.parametrize("n", [0, 1, 1000, 100_000])
def test_bincount_counts(n, minlength, top):
    g = flambeau.Generator().manual_seed(n + minlength)
    x = flambeau.randint(0, top, (n,), generator=g)
    _exact(
        flambeau.bincount(x.to(DEVICE), minlength=minlength),
        flambeau.bincount(x, minlength=minlength),
    )


@pytest.mark.parametrize(
    "wdtype", [flambeau.float32, flambeau.float64, flambeau.float16, flambeau.int32]
)
def test_bincount_weights(wdtype):
    g = flambeau.Generator().manual_seed(3)
    x = flambeau.randint(0, 50, (5000,), generator=g).to(flambeau.int32)
    w = sample(flambeau.float64, (5000,), seed=4).to(wdtype)
    got = flambeau.bincount(x.to(DEVICE), weights=w.to(DEVICE))
    want = flambeau.bincount(x, weights=w)
    assert got.dtype == want.dtype
    rtol = 1e-4 if want.dtype == flambeau.float32 else 1e-10
    assert_close(got, want, rtol, rtol)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("bins", [1, 7, 100, 5000])
def test_histc_with_a_range(dtype, bins):
    x = sample(dtype, (400, 50), nan=True)
    x.reshape(-1)[7] = 3.0  # the top edge: counted in the last bin
    _exact(flambeau.histc(x.to(DEVICE), bins, -3.0, 3.0), flambeau.histc(x, bins, -3.0, 3.0))


@pytest.mark.parametrize("dtype", FLOATS)
def test_histc_over_the_datas_range(dtype):
    x = sample(dtype, (1000,), seed=5)
    _exact(flambeau.histc(x.to(DEVICE), 33), flambeau.histc(x, 33))
    one = flambeau.full((5,), 2.5, dtype=dtype)  # min == max: [1.5, 3.5]
    _exact(flambeau.histc(one.to(DEVICE), 4), flambeau.histc(one, 4))


def _backward(grad, dim, indices, sizes, keepdim):
    return flambeau.value_selecting_reduction_backward(grad, dim, indices, sizes, keepdim)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_value_selecting_reduction_backward(dtype, dim, keepdim):
    x = sample(dtype, (6, 9, 4))
    for reduce in (
        lambda t: t.max(dim, keepdim=keepdim),
        lambda t: t.min(dim, keepdim=keepdim),
        lambda t: t.median(dim, keepdim=keepdim),
        lambda t: t.kthvalue(2, dim, keepdim=keepdim),
    ):
        _, idx = reduce(x)
        grad = sample(dtype, tuple(idx.shape), seed=8)
        got = _backward(grad.to(DEVICE), dim, idx.to(DEVICE), list(x.shape), keepdim)
        _exact(got, _backward(grad, dim, idx, list(x.shape), keepdim))


@pytest.mark.parametrize("dtype", FLOATS)
def test_value_selecting_reduction_backward_adds_repeated_indices(dtype):
    grad = sample(dtype, (5, 6), seed=2)
    idx = flambeau.tensor([[0, 2, 2, 5, 2, 0]] * 5)
    sizes = [5, 7]
    got = _backward(grad.to(DEVICE), 1, idx.to(DEVICE), sizes, True)
    _exact(got, _backward(grad, 1, idx, sizes, True))


def test_value_selecting_reduction_backward_bad_index_raises():
    grad = flambeau.ones(3, 1, device=DEVICE)
    idx = flambeau.tensor([[0], [7], [1]], device=DEVICE)
    # RuntimeError on CUDA (the backend ABI has no status for IndexError), IndexError on the CPU.
    with pytest.raises((RuntimeError, IndexError), match="index 7 is out of bounds"):
        _backward(grad, 1, idx, [3, 4], True)


WINDOWS = [
    ("bartlett_window", {}),
    ("blackman_window", {}),
    ("hann_window", {}),
    ("hamming_window", {}),
    ("hamming_window", {"alpha": 0.6, "beta": 0.4}),
    ("kaiser_window", {}),
    ("kaiser_window", {"beta": 45.0}),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("periodic", [False, True])
@pytest.mark.parametrize("n", [0, 1, 2, 51, 4096])
@pytest.mark.parametrize("name, kwargs", WINDOWS)
def test_windows(name, kwargs, n, periodic, dtype):
    fn = getattr(flambeau, name)
    got = fn(n, periodic=periodic, dtype=dtype, device=DEVICE, **kwargs)
    assert got.device.type == DEVICE
    # Each point in double, rounded once: the CPU's value up to cos/exp's last bit.
    rtol = 1e-13 if dtype == flambeau.float64 else None
    assert_close(got, fn(n, periodic=periodic, dtype=dtype, **kwargs), rtol, rtol)
