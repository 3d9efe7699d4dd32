"""Random samplers: reproducibility, thread independence, the documented
Philox stream, statistics, and argument checks."""

import numpy as np
import pytest

import flambeau

F = flambeau
N = 200_000  # large enough to be split across threads


def philox4x32(key: int, counter: int) -> list:
    """Reference Philox-4x32-10 (Salmon et al. 2011), as in core/generator.h."""
    m = 0xFFFFFFFF
    k0, k1 = key & m, (key >> 32) & m
    c = [counter & m, (counter >> 32) & m, 0, 0]
    for _ in range(10):
        p0 = 0xD2511F53 * c[0]
        p1 = 0xCD9E8D57 * c[2]
        c = [((p1 >> 32) ^ c[1] ^ k0) & m, p1 & m, ((p0 >> 32) ^ c[3] ^ k1) & m, p0 & m]
        k0 = (k0 + 0x9E3779B9) & m
        k1 = (k1 + 0xBB67AE85) & m
    return c


def lane(seed: int, offset: int, j: int) -> int:
    return philox4x32(seed, offset + j // 4)[j % 4]


@pytest.fixture(autouse=True)
def restore_threads():
    n = F.get_num_threads()
    yield
    F.set_num_threads(n)


def test_rand_follows_the_documented_stream():
    g = F.Generator().manual_seed(1234)
    t = F.rand(10, generator=g).tolist()
    expected = [(lane(1234, 0, i) >> 8) * 2.0**-24 for i in range(10)]
    assert t == pytest.approx(expected, abs=0)
    # The next call starts at the next unused counter: 10 lanes used 3 counters.
    nxt = F.rand(1, generator=g).tolist()
    assert nxt == [(lane(1234, 3, 0) >> 8) * 2.0**-24]


def test_float64_rand_uses_two_lanes():
    g = F.Generator().manual_seed(7)
    t = F.rand(3, generator=g, dtype=F.float64).tolist()
    expected = []
    for i in range(3):
        bits = (lane(7, 0, 2 * i) << 32) | lane(7, 0, 2 * i + 1)
        expected.append((bits >> 11) * 2.0**-53)
    assert t == expected


def test_randn_is_box_muller_on_lane_pairs():
    g = F.Generator().manual_seed(99)
    t = F.randn(4, generator=g, dtype=F.float64).tolist()
    expected = []
    for m in range(2):
        u = [
            (((lane(99, 0, 4 * m + 2 * h) << 32) | lane(99, 0, 4 * m + 2 * h + 1)) >> 11) * 2.0**-53
            for h in range(2)
        ]
        r = np.sqrt(-2.0 * np.log(1.0 - u[0]))
        expected += [r * np.cos(2 * np.pi * u[1]), r * np.sin(2 * np.pi * u[1])]
    np.testing.assert_allclose(t, expected, rtol=1e-12)


@pytest.mark.parametrize(
    "sample",
    [
        lambda: F.rand(N),
        lambda: F.randn(N),
        lambda: F.rand(N, dtype=F.float64),
        lambda: F.randn(N, dtype=F.float16),
        lambda: F.randint(0, 1000, (N,)),
        lambda: F.randperm(N),
        lambda: F.empty(N).uniform_(-2, 3),
        lambda: F.empty(N).normal_(1, 2),
        lambda: F.empty(N, dtype=F.int32).random_(),
        lambda: F.empty(N).bernoulli_(0.3),
        lambda: F.empty(N).exponential_(),
        lambda: F.empty(N, dtype=F.float64).geometric_(0.2),
        lambda: F.empty(N).cauchy_(),
        lambda: F.empty(N).log_normal_(),
        lambda: F.poisson(F.rand(N) * 30),
        lambda: F.multinomial(F.rand(N // 100, 100), 10),
        lambda: F.multinomial(F.rand(N // 100, 100), 10, replacement=True),
    ],
)
def test_same_seed_same_numbers_for_any_thread_count(sample):
    F.set_num_threads(1)
    F.manual_seed(42)
    one = np.asarray(sample()).copy()
    F.set_num_threads(2)
    F.manual_seed(42)
    two = np.asarray(sample()).copy()
    np.testing.assert_array_equal(one, two)
    F.manual_seed(43)
    other = np.asarray(sample())
    assert not np.array_equal(one, other)


def test_consecutive_calls_differ():
    F.manual_seed(0)
    a, b = F.rand(100).numpy().copy(), F.rand(100).numpy()
    assert not np.array_equal(a, b)


def test_uniform_statistics():
    F.manual_seed(1)
    x = F.rand(N).numpy().astype(np.float64)
    assert x.min() >= 0.0 and x.max() < 1.0
    assert abs(x.mean() - 0.5) < 0.005
    assert abs(x.var() - 1 / 12) < 0.002
    y = F.empty(N, dtype=F.float64).uniform_(-2.0, 6.0).numpy()
    assert y.min() >= -2.0 and y.max() < 6.0
    assert abs(y.mean() - 2.0) < 0.05


@pytest.mark.parametrize("dtype", [F.float16, F.bfloat16])
def test_16bit_rand_stays_below_one(dtype):
    F.manual_seed(3)
    t = F.rand(50_000, dtype=dtype)
    values = np.asarray(t.tolist())
    assert values.min() >= 0.0 and values.max() < 1.0
    assert abs(values.mean() - 0.5) < 0.02


def test_normal_statistics():
    F.manual_seed(2)
    for dtype in (F.float32, F.float64):
        z = np.asarray(F.randn(N, dtype=dtype).tolist())
        assert abs(z.mean()) < 0.01 and abs(z.std() - 1.0) < 0.01
        # Elements 2m and 2m+1 come from one Box-Muller pair; they stay uncorrelated.
        assert abs(np.corrcoef(z[0::2], z[1::2])[0, 1]) < 0.01
    w = F.normal(3.0, 0.5, (N,)).numpy()
    assert abs(w.mean() - 3.0) < 0.01 and abs(w.std() - 0.5) < 0.01
    v = F.empty(N).normal_(-1.0, 2.0).numpy()
    assert abs(v.mean() + 1.0) < 0.03 and abs(v.std() - 2.0) < 0.03


def test_complex_samplers():
    F.manual_seed(5)
    z = np.asarray(F.randn(N, dtype=F.complex64).tolist())
    assert abs(np.var(z.real) - 0.5) < 0.01 and abs(np.var(z.imag) - 0.5) < 0.01
    u = np.asarray(F.rand(1000, dtype=F.complex128).tolist())
    assert 0 <= u.real.min() and u.real.max() < 1 and 0 <= u.imag.min() and u.imag.max() < 1


def test_randint():
    F.manual_seed(4)
    t = F.randint(10, (3, 4))
    assert t.dtype is F.int64 and tuple(t.shape) == (3, 4)
    x = F.randint(-5, 5, (N,)).numpy()
    assert x.min() == -5 and x.max() == 4
    counts = np.bincount(x + 5)
    assert counts.min() > N / 10 * 0.95
    y = F.randint(3, 7, (100,), dtype=F.float32)
    assert y.dtype is F.float32 and set(y.tolist()) <= {3.0, 4.0, 5.0, 6.0}
    big = F.randint(-(2**62), 2**62, (1000,)).numpy()
    assert big.min() < -(2**60) and big.max() > 2**60
    with pytest.raises(RuntimeError, match="from=5 >= to=3"):
        F.randint(5, 3, (2,))
    with pytest.raises(RuntimeError, match="not representable"):
        F.randint(0, 300, (2,), dtype=F.uint8)


def test_randperm():
    F.manual_seed(6)
    p = F.randperm(1000).numpy()
    assert sorted(p.tolist()) == list(range(1000))
    assert not np.array_equal(p, np.arange(1000))
    assert F.randperm(0).numel() == 0
    assert F.randperm(1).tolist() == [0]
    assert F.randperm(5, dtype=F.int32).dtype is F.int32
    assert sorted(F.randperm(20, dtype=F.float32).tolist()) == [float(i) for i in range(20)]
    with pytest.raises(RuntimeError, match="non-negative"):
        F.randperm(-1)
    with pytest.raises(RuntimeError, match="too large"):
        F.randperm(300, dtype=F.uint8)


def test_normal_with_tensor_mean_and_std():
    mean = F.tensor([[0.0], [10.0], [100.0]])
    std = F.tensor([0.0, 1.0])
    out = F.normal(mean, std)
    assert tuple(out.shape) == (3, 2)
    rows = out.tolist()
    assert rows[0][0] == 0.0 and rows[1][0] == 10.0 and rows[2][0] == 100.0
    assert F.normal(mean).shape == mean.shape
    assert F.normal(2.0, F.zeros(4)).tolist() == [2.0] * 4
    with pytest.raises(RuntimeError, match="std >= 0"):
        F.normal(mean, F.tensor([-1.0]))
    with pytest.raises(RuntimeError, match="std >= 0"):
        F.normal(0.0, -1.0, (2,))


def test_like_samplers():
    src = F.zeros(2, 3, dtype=F.float64)
    for fn in (F.rand_like, F.randn_like):
        t = fn(src)
        assert tuple(t.shape) == (2, 3) and t.dtype is F.float64
    assert F.rand_like(src, dtype=F.float32).dtype is F.float32
    r = F.randint_like(src, 5)
    assert r.dtype is F.float64 and set(r.numpy().ravel()) <= {0.0, 1.0, 2.0, 3.0, 4.0}
    r2 = F.randint_like(F.zeros(100, dtype=F.int32), 10, 12)
    assert r2.dtype is F.int32 and set(r2.numpy()) <= {10, 11}


def test_inplace_samplers_on_strided_views():
    base = np.zeros((4, 6), dtype=np.float32)
    view = F.from_numpy(base[:, ::2])
    assert view.uniform_(1.0, 2.0) is view
    assert (base[:, ::2] >= 1.0).all() and (base[:, 1::2] == 0.0).all()
    view.normal_(5.0, 0.0)
    assert (base[:, ::2] == 5.0).all() and (base[:, 1::2] == 0.0).all()


def test_random_():
    F.manual_seed(8)
    t = F.empty(N, dtype=F.int16).random_(-3, 3).numpy()
    assert t.min() == -3 and t.max() == 2
    assert set(F.empty(100).random_(4).tolist()) <= {0.0, 1.0, 2.0, 3.0}
    u = F.empty(N, dtype=F.uint8).random_().numpy()
    assert u.min() == 0 and u.max() == 255
    b = F.empty(1000, dtype=F.bool).random_()
    assert set(b.tolist()) == {False, True}
    f = F.empty(1000, dtype=F.float32).random_().numpy()
    assert f.min() >= 0 and f.max() <= 2**24 and (f == np.round(f)).all()
    with pytest.raises(RuntimeError, match="less than 'to'"):
        F.empty(2).random_(3, 3)


def test_bernoulli():
    F.manual_seed(9)
    x = F.empty(N).bernoulli_(0.25).numpy()
    assert set(np.unique(x)) <= {0.0, 1.0} and abs(x.mean() - 0.25) < 0.01
    assert F.empty(10).bernoulli_(0.0).tolist() == [0.0] * 10
    assert F.empty(10, dtype=F.int64).bernoulli_(1.0).tolist() == [1] * 10
    p = F.tensor([0.0, 1.0, 0.0, 1.0])
    assert F.bernoulli(p).tolist() == [0.0, 1.0, 0.0, 1.0]
    assert p.bernoulli().dtype is F.float32
    with pytest.raises(RuntimeError, match=r"\[0, 1\]"):
        F.empty(2).bernoulli_(1.5)
    with pytest.raises(RuntimeError, match=r"\[0, 1\]"):
        F.bernoulli(F.tensor([2.0]))


def test_generator_keyword_is_independent_of_the_default():
    g1 = F.Generator().manual_seed(11)
    g2 = F.Generator().manual_seed(11)
    F.manual_seed(0)
    a = F.rand(5, generator=g1).tolist()
    F.rand(5)  # advances only the default generator
    b = F.rand(5, generator=g2).tolist()
    assert a == b
    for fn in (
        lambda g: F.randn(3, generator=g),
        lambda g: F.randint(0, 9, (3,), generator=g),
        lambda g: F.randperm(5, generator=g),
        lambda g: F.normal(0.0, 1.0, (3,), generator=g),
        lambda g: F.empty(3).uniform_(generator=g),
        lambda g: F.empty(3).normal_(generator=g),
        lambda g: F.empty(3).random_(0, 5, generator=g),
        lambda g: F.empty(3).bernoulli_(0.5, generator=g),
    ):
        assert (
            fn(F.Generator().manual_seed(1)).tolist() == fn(F.Generator().manual_seed(1)).tolist()
        )


def test_rng_state_round_trip():
    F.manual_seed(123)
    F.rand(7)
    state = F.get_rng_state()
    assert state.dtype is F.uint8 and tuple(state.shape) == (16,)
    a = F.rand(10).tolist()
    F.set_rng_state(state)
    assert F.rand(10).tolist() == a
    g = F.Generator()
    g.set_state(state)
    assert g.initial_seed() == 123
    with pytest.raises(TypeError):
        F.set_rng_state(F.zeros(3))


def test_offset_advances_by_counters_used():
    g = F.Generator().manual_seed(0)
    F.rand(10, generator=g)
    assert g._offset == 3
    F.rand(3, generator=g, dtype=F.float64)  # 6 lanes
    assert g._offset == 5
    F.randn(3, generator=g)  # 2 pairs, 4 lanes
    assert g._offset == 6


def test_seed_functions():
    g = F.manual_seed(5)
    assert g is F.default_generator
    assert F.initial_seed() == 5
    F.manual_seed(-1)
    assert F.initial_seed() == 2**64 - 1
    F.manual_seed(2**64 - 1)
    assert F.initial_seed() == 2**64 - 1
    with pytest.raises(ValueError):
        F.manual_seed(2**64)
    s = F.seed()
    assert isinstance(s, int) and F.initial_seed() == s
    assert F.random.manual_seed is F.manual_seed


def test_requires_grad_and_dtype_errors():
    assert F.rand(2, requires_grad=True).requires_grad
    with pytest.raises(RuntimeError, match="int64"):
        F.rand(2, dtype=F.int64)
    with pytest.raises(RuntimeError):
        F.empty(2, dtype=F.int32).uniform_()
    with pytest.raises(RuntimeError, match="from=2"):
        F.empty(2).uniform_(2.0, 1.0)


def test_zero_size_and_zero_dim():
    assert F.rand(0).numel() == 0
    assert F.randn(2, 0).shape == (2, 0)
    s = F.rand(())
    assert s.dim() == 0 and 0 <= s.item() < 1


@pytest.mark.parametrize(
    "fill, dist",
    [
        (lambda t: t.exponential_(2.5), ("expon", (0, 1 / 2.5))),
        (lambda t: t.cauchy_(1.0, 0.5), ("cauchy", (1.0, 0.5))),
        (lambda t: t.log_normal_(0.2, 0.7), ("lognorm", (0.7, 0, np.exp(0.2)))),
    ],
)
@pytest.mark.parametrize("dtype", [F.float32, F.float64])
def test_distribution_fits(fill, dist, dtype):
    stats = pytest.importorskip("scipy.stats")
    F.manual_seed(7)
    x = fill(F.empty(50_000, dtype=dtype)).numpy().astype(np.float64)
    assert np.isfinite(x).all()
    assert stats.kstest(x, dist[0], args=dist[1]).pvalue > 1e-3


def test_geometric():
    F.manual_seed(3)
    p = 0.3
    for dtype in (F.float32, F.int64, F.uint8):
        x = F.empty(100_000, dtype=dtype).geometric_(p).numpy().astype(np.float64)
        assert x.min() == 1
        counts = np.bincount(x.astype(np.int64))[1:8] / x.size
        np.testing.assert_allclose(counts, p * (1 - p) ** np.arange(7), atol=4e-3)


@pytest.mark.parametrize("rate", [0.5, 4.0, 9.99, 10.0, 37.0, 1e4])
def test_poisson_mean_and_variance(rate):
    F.manual_seed(11)
    x = F.poisson(F.full((100_000,), rate, dtype=F.float64)).numpy()
    assert (x == np.round(x)).all() and x.min() >= 0
    se = np.sqrt(rate / x.size)
    assert abs(x.mean() - rate) < 5 * se
    assert abs(x.var() / rate - 1) < 0.05


def test_poisson_pmf():
    stats = pytest.importorskip("scipy.stats")
    F.manual_seed(5)
    for rate in (3.0, 25.0):
        x = F.poisson(F.full((200_000,), rate)).numpy().astype(np.int64)
        ks = np.arange(int(rate - 2 * np.sqrt(rate)), int(rate + 2 * np.sqrt(rate)))
        freq = np.array([(x == k).mean() for k in ks])
        np.testing.assert_allclose(freq, stats.poisson.pmf(ks, rate), atol=3e-3)


def test_poisson_keeps_shape_dtype_and_zero_rates():
    r = F.tensor([[0.0, 2.0], [0.0, 0.0]], dtype=F.float64)
    x = F.poisson(r)
    assert x.dtype == F.float64 and x.shape == (2, 2) and x[0, 0].item() == 0.0
    with pytest.raises(RuntimeError, match="non-negative"):
        F.poisson(F.tensor([-1.0]))
    with pytest.raises(RuntimeError, match="non-negative"):
        F.poisson(F.tensor([float("nan")]))


def test_multinomial_with_replacement_frequencies():
    F.manual_seed(2)
    w = F.tensor([[1.0, 0.0, 3.0, 6.0], [5.0, 5.0, 0.0, 0.0]])
    s = F.multinomial(w, 100_000, replacement=True)
    assert s.dtype == F.int64 and s.shape == (2, 100_000)
    for row, weights in zip(s.numpy(), w.numpy()):
        freq = np.bincount(row, minlength=4) / row.size
        np.testing.assert_allclose(freq, weights / weights.sum(), atol=6e-3)


def test_multinomial_without_replacement():
    F.manual_seed(4)
    w = F.tensor([1.0, 2.0, 0.0, 4.0, 8.0])
    rows = F.multinomial(w.expand(20_000, 5).contiguous(), 4).numpy()
    assert all(len(set(r)) == 4 and 2 not in r for r in rows)
    first = np.bincount(rows[:, 0], minlength=5) / len(rows)
    np.testing.assert_allclose(first, w.numpy() / w.sum().item(), atol=1e-2)
    # the second draw follows the weights that remain after the first
    p = w.numpy() / w.sum().item()
    second = sum(p[i] * np.where(np.arange(5) == i, 0, p) / (1 - p[i]) for i in range(5))
    np.testing.assert_allclose(np.bincount(rows[:, 1], minlength=5) / len(rows), second, atol=1e-2)


def test_multinomial_errors_and_out():
    with pytest.raises(RuntimeError, match="without replacement"):
        F.multinomial(F.ones(3), 4)
    with pytest.raises(RuntimeError, match="not enough non-negative category"):
        F.multinomial(F.tensor([1.0, 0.0, 0.0]), 2)
    with pytest.raises(RuntimeError, match="sum of probabilities <= 0"):
        F.multinomial(F.zeros(3), 1, True)
    with pytest.raises(RuntimeError, match="inf"):
        F.multinomial(F.tensor([1.0, -1.0]), 1)
    with pytest.raises(RuntimeError, match="1 or 2 dim"):
        F.multinomial(F.ones(2, 2, 2), 1)
    with pytest.raises(RuntimeError, match="n_sample <= 0"):
        F.multinomial(F.ones(2), 0)
    with pytest.raises(RuntimeError, match="floating"):
        F.multinomial(F.ones(2, dtype=F.int64), 1)
    out = F.empty(0, dtype=F.int64)
    F.multinomial(F.tensor([0.0, 1.0]), 3, True, out=out)
    assert out.tolist() == [1, 1, 1]


def test_sampler_argument_checks():
    with pytest.raises(RuntimeError, match="lambda > 0"):
        F.empty(2).exponential_(0.0)
    with pytest.raises(RuntimeError, match=r"p to be in \(0, 1\)"):
        F.empty(2).geometric_(1.0)
    with pytest.raises(RuntimeError, match="sigma > 0"):
        F.empty(2).cauchy_(0.0, -1.0)
    with pytest.raises(RuntimeError, match="std > 0"):
        F.empty(2).log_normal_(0.0, 0.0)
    with pytest.raises(RuntimeError, match="floating point"):
        F.empty(2, dtype=F.int64).exponential_()
    with pytest.raises(RuntimeError, match="all probabilities in"):
        F.empty(2).bernoulli_(F.tensor([0.5, 1.5]))
    with pytest.raises(RuntimeError):
        F.empty(2, 3).bernoulli_(F.rand(4))


def test_samplers_fill_strided_views():
    F.manual_seed(9)
    base = F.zeros(6, 4)
    base[:, ::2].exponential_()
    assert (base[:, ::2] > 0).all().item() and (base[:, 1::2] == 0).all().item()


def test_each_device_has_its_own_default_generator_seeded_by_manual_seed():
    # As PyTorch keeps one default generator per CUDA device: a plugin device's random
    # kernels draw from it when no generator is given; flambeau.manual_seed seeds them all.
    cuda1 = flambeau.device("cuda", 1)
    g = flambeau.Generator._default_for(cuda1)
    assert g.device == cuda1 and flambeau.default_generator.device == flambeau.device("cpu")
    flambeau.manual_seed(123)
    assert g.initial_seed() == 123
    later = flambeau.Generator._default_for(flambeau.device("cuda", 2))  # made after the seed
    assert later.initial_seed() == 123
    g.manual_seed(5)  # one device's seed leaves the others alone
    assert flambeau.Generator._default_for(cuda1).initial_seed() == 5
    assert later.initial_seed() == 123 and flambeau.default_generator.initial_seed() == 123
    assert flambeau.Generator._default_for(flambeau.device("cpu")).initial_seed() == 123


@pytest.mark.parametrize(
    "sample",
    [
        lambda t: t.uniform_(),
        lambda t: t.normal_(),
        lambda t: t.bernoulli_(0.5),
        lambda t: t.random_(0, 5),
        lambda t: t.exponential_(),
        lambda t: t.geometric_(0.5),
        lambda t: t.cauchy_(),
        lambda t: t.log_normal_(),
    ],
)
def test_in_place_samplers_refuse_overlapping_elements(sample):
    # An expanded view's elements share memory: PyTorch refuses to sample into it.
    t = F.zeros(1).expand(3)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        sample(t)
    assert t.tolist() == [0.0, 0.0, 0.0]
    # Non-overlapping strided views still sample in place.
    base = F.zeros(4, 3)
    sample(base[:, :2])
    assert base[:, 2].tolist() == [0.0] * 4


def test_randint_with_one_possible_value_fills_and_advances_the_generator_alike():
    # A range of one draws nothing but reserves the same counters, so the values after
    # it are the ones any other range of the same size would leave.
    one, other = flambeau.Generator().manual_seed(3), flambeau.Generator().manual_seed(3)
    assert flambeau.randint(5, 6, (1000,), generator=one).unique().tolist() == [5]
    flambeau.randint(0, 7, (1000,), generator=other)
    assert flambeau.equal(one.get_state(), other.get_state())
    big = flambeau.randint_like(flambeau.zeros(1, dtype=flambeau.int8).expand(2**24), -1, high=0)
    assert big.unique().tolist() == [-1]
