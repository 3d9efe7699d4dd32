"""The samplers beyond uniform/normal/random/bernoulli on CUDA: exponential_,
geometric_, cauchy_, log_normal_, poisson, multinomial and randperm. Statistical
checks on large samples (moments, Kolmogorov-Smirnov distances against the
distribution's CDF, frequencies, permutation validity; fixed seeds, so no test is
flaky), and the stream layout they share with the CPU: seeded, they draw the CPU's
numbers (up to the last bit of the device's log/tan/exp for the continuous ones),
randperm and multinomial exactly."""

from __future__ import annotations

import math

import numpy as np
import pytest
from samples import DEVICE, FLOATS, assert_close

import flambeau

SEED = 77
N = 200_000


def _draw(method, dtype, *args, n=N):
    flambeau.manual_seed(SEED)
    t = getattr(flambeau.empty(n, dtype=dtype, device=DEVICE), method)(*args)
    assert t.device.type == DEVICE and t.dtype == dtype
    return t.cpu().double().numpy()


def _ks(samples, cdf):
    """The Kolmogorov-Smirnov distance between the samples and a continuous CDF."""
    x = np.sort(samples)
    f = cdf(x)
    n = len(x)
    return max(np.max(np.arange(1, n + 1) / n - f), np.max(f - np.arange(n) / n))


# 1.95 / sqrt(n) is the 0.1% critical value; the 16-bit floats' rounding adds a little.
def _ks_bound(dtype, n=N):
    return 1.95 / math.sqrt(n) + (0.004 if dtype in (flambeau.float16, flambeau.bfloat16) else 0)


@pytest.mark.parametrize("dtype", FLOATS)
def test_exponential(dtype):
    lam = 2.0
    x = _draw("exponential_", dtype, lam)
    assert (x >= 0).all()
    assert abs(x.mean() - 1 / lam) < 0.01 and abs(x.var() - 1 / lam**2) < 0.01
    assert _ks(x, lambda v: 1 - np.exp(-lam * v)) < _ks_bound(dtype)


@pytest.mark.parametrize("dtype", FLOATS + [flambeau.int32, flambeau.int64, flambeau.uint8])
def test_geometric(dtype):
    p = 0.3
    x = _draw("geometric_", dtype, p)
    assert (x >= 1).all() and (x == np.round(x)).all()
    assert abs(x.mean() - 1 / p) < 0.03 and abs(x.var() - (1 - p) / p**2) < 0.2
    for k in (1, 2, 5):  # P(X = k) = (1 - p)^(k - 1) p
        assert abs((x == k).mean() - (1 - p) ** (k - 1) * p) < 0.005


def test_geometric_saturates_small_integers():
    x = _draw("geometric_", flambeau.uint8, 0.001)
    assert x.max() == 255 and (x >= 1).all()


@pytest.mark.parametrize("dtype", FLOATS)
def test_cauchy(dtype):
    median, sigma = 1.0, 2.0
    x = _draw("cauchy_", dtype, median, sigma)
    assert abs(np.median(x) - median) < 0.03
    q1, q3 = np.quantile(x, [0.25, 0.75])
    assert abs(q1 - (median - sigma)) < 0.06 and abs(q3 - (median + sigma)) < 0.06
    finite = x[np.isfinite(x)]  # float16 rounds the far tails to inf
    assert len(finite) > 0.999 * N
    assert _ks(x, lambda v: 0.5 + np.arctan((v - median) / sigma) / np.pi) < _ks_bound(dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_log_normal(dtype):
    mean, std = 0.5, 0.4
    x = _draw("log_normal_", dtype, mean, std)
    assert (x > 0).all()
    y = np.log(x)
    assert abs(y.mean() - mean) < 0.01 and abs(y.std() - std) < 0.01
    erf = np.vectorize(math.erf)
    assert _ks(y[:20_000], lambda v: 0.5 * (1 + erf((v - mean) / (std * math.sqrt(2))))) < (
        _ks_bound(dtype, 20_000) + 0.01 * (dtype != flambeau.float64 and dtype != flambeau.float32)
    )


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(
    "method, args",
    [
        ("exponential_", (1.5,)),
        ("geometric_", (0.2,)),
        ("cauchy_", (-1.0, 0.5)),
        ("log_normal_", (0.0, 1.0)),
    ],
)
def test_seeded_draws_follow_the_cpus_stream(method, args, dtype):
    flambeau.manual_seed(SEED)
    got = getattr(flambeau.empty(1001, dtype=dtype, device=DEVICE), method)(*args)
    flambeau.manual_seed(SEED)
    want = getattr(flambeau.empty(1001, dtype=dtype), method)(*args)
    rtol = 1e-12 if dtype == flambeau.float64 else None
    assert_close(got, want, rtol, 0.0)


@pytest.mark.parametrize("dtype", [flambeau.float32, flambeau.float64, flambeau.float16])
def test_poisson(dtype):
    rates = [0.0, 0.5, 4.0, 9.9, 10.0, 30.0, 500.0]
    per = 20_000
    r = flambeau.tensor(np.repeat(rates, per), dtype=dtype, device=DEVICE)
    flambeau.manual_seed(SEED)
    x = flambeau.poisson(r)
    assert x.device.type == DEVICE and x.dtype == dtype
    x = x.cpu().double().numpy().reshape(len(rates), per)
    assert (x == np.round(x)).all() and (x >= 0).all()
    for rate, row in zip(rates, x):
        if rate == 0:
            assert (row == 0).all()
            continue
        sd = math.sqrt(rate / per)
        assert abs(row.mean() - rate) < 5 * sd
        assert abs(row.var() / rate - 1) < 0.06
    # The same per-element counters as the CPU: nearly every element equal (the
    # rejection sampler's comparisons may go the other way at the last bit).
    flambeau.manual_seed(SEED)
    want = flambeau.poisson(r.cpu()).double().numpy().reshape(len(rates), per)
    assert (want == x).mean() > 0.999


@pytest.mark.parametrize("replacement", [True, False])
def test_multinomial_draws_the_cpus_samples(replacement):
    g = flambeau.Generator().manual_seed(5)
    w = flambeau.rand(6, 40, generator=g)
    w[:, ::7] = 0
    flambeau.manual_seed(SEED)
    got = flambeau.multinomial(w.to(DEVICE), 12, replacement=replacement)
    flambeau.manual_seed(SEED)
    want = flambeau.multinomial(w, 12, replacement=replacement)
    assert got.device.type == DEVICE
    assert_close(got, want)
    one = flambeau.multinomial(w[0].to(DEVICE), 5, replacement=replacement)  # 1-D weights
    assert tuple(one.shape) == (5,)


def test_multinomial_with_replacement_frequencies():
    p = np.array([0.1, 0.0, 0.25, 0.05, 0.6])
    flambeau.manual_seed(SEED)
    x = flambeau.multinomial(flambeau.tensor(p * 3.0, device=DEVICE), N, replacement=True)
    freq = np.bincount(x.cpu().numpy(), minlength=len(p)) / N
    assert freq[1] == 0
    assert np.abs(freq - p).max() < 0.005


def test_multinomial_without_replacement():
    p = np.array([0.1, 0.0, 0.25, 0.05, 0.6, 0.0])
    rows = 20_000
    w = flambeau.tensor(np.tile(p, (rows, 1)), device=DEVICE)
    flambeau.manual_seed(SEED)
    x = flambeau.multinomial(w, 4, replacement=False).cpu().numpy()
    assert all(len(set(row)) == 4 for row in x)  # distinct
    assert not np.isin(x, [1, 5]).any()  # never a zero weight
    first = np.bincount(x[:, 0], minlength=len(p)) / rows  # the first draw follows p
    assert np.abs(first - p).max() < 0.015
    # With every positive weight drawn, each row is a permutation of the support.
    assert (np.sort(x, axis=1) == [0, 2, 3, 4]).all()


@pytest.mark.parametrize("n", [0, 1, 2, 3, 1000, 300_000])
def test_randperm_is_the_cpus_permutation(n):
    flambeau.manual_seed(SEED)
    got = flambeau.randperm(n, device=DEVICE)
    flambeau.manual_seed(SEED)
    want = flambeau.randperm(n)
    assert got.device.type == DEVICE
    assert_close(got, want)
    assert (np.sort(got.cpu().numpy()) == np.arange(n)).all()


@pytest.mark.parametrize("dtype", [flambeau.int32, flambeau.float32])
def test_randperm_dtypes(dtype):
    x = flambeau.randperm(500, dtype=dtype, device=DEVICE)
    assert x.dtype == dtype
    assert (np.sort(x.cpu().double().numpy()) == np.arange(500)).all()


def test_randperm_positions_are_uniform():
    n, calls = 4, 4800
    flambeau.manual_seed(SEED)
    counts = np.zeros((n, n))
    for _ in range(calls):
        p = flambeau.randperm(n, device=DEVICE).cpu().numpy()
        counts[np.arange(n), p] += 1
    assert np.abs(counts / calls - 1 / n).max() < 0.03
    # Consecutive calls continue the stream: not all the same permutation.
    assert counts.min() > 0
