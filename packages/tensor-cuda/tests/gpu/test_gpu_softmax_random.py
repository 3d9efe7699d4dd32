"""softmax/log_softmax along every dim, and their backward, on CUDA against flambeau's
CPU: rows along the last dim short and long (one thread or one block per row), other
dims (one thread per column), masked (-inf) and large inputs. And the random samplers:
seeded uniform_/normal_/random_/bernoulli_ draw the CPU's numbers from the same Philox
counters, continuing the stream across calls."""

from __future__ import annotations

import pytest
from samples import DEVICE, FLOATS, INTS, assert_close, sample

import flambeau
import flambeau.nn.functional as F


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(5, 7), (6, 1000), (4, 50, 3), (2, 3, 300)])
def test_softmax_every_dim(shape, dtype, log):
    fn = F.log_softmax if log else F.softmax
    x = sample(dtype, shape, scale=3.0)
    for dim in range(-1, -len(shape) - 1, -1):
        for view in (x, x.transpose(0, -1)):
            assert_close(fn(view.to(DEVICE), dim=dim), fn(view, dim=dim))


@pytest.mark.parametrize("log", [False, True])
def test_softmax_masked_and_large_inputs(log):
    fn = F.log_softmax if log else F.softmax
    x = sample(flambeau.float32, (4, 64)) * 300  # exp overflows without the max shift
    x[:, ::3] = float("-inf")
    x[1] = float("-inf")  # a fully masked row: NaN on both devices
    assert_close(fn(x.to(DEVICE), dim=1), fn(x, dim=1))


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(5, 7), (6, 1000), (4, 50, 3)])
def test_softmax_backward_every_dim(shape, dtype, log):
    forward = F.log_softmax if log else F.softmax
    backward = flambeau._log_softmax_backward_data if log else flambeau._softmax_backward_data
    x = sample(dtype, shape, scale=2.0)
    grad = sample(dtype, shape, seed=9)
    for dim in range(len(shape)):
        y = forward(x, dim=dim)
        got = backward(grad.to(DEVICE), y.to(DEVICE), dim, dtype)
        assert_close(got, backward(grad, y, dim, dtype))


def test_softmax_with_dtype_argument():
    x = sample(flambeau.float16, (3, 40))
    assert_close(
        F.softmax(x.to(DEVICE), dim=1, dtype=flambeau.float32),
        F.softmax(x, dim=1, dtype=flambeau.float32),
    )


SEED = 2024


def _both(draw, shape, dtype):
    """draw(tensor) on the device and on the CPU after the same seed."""
    flambeau.manual_seed(SEED)
    got = draw(flambeau.empty(shape, dtype=dtype, device=DEVICE))
    flambeau.manual_seed(SEED)
    want = draw(flambeau.empty(shape, dtype=dtype))
    return got, want


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(37,), (64, 33)])
def test_uniform_draws_the_cpus_numbers(dtype, shape):
    got, want = _both(lambda t: t.uniform_(-1.5, 4.0), shape, dtype)
    assert_close(got, want, 0, 0)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(37,), (64, 33)])
def test_normal_draws_the_cpus_numbers(dtype, shape):
    got, want = _both(lambda t: t.normal_(0.5, 2.0), shape, dtype)
    # Box-Muller's log/sin/cos in double: CUDA's and glibc's differ by an ulp at most.
    assert_close(got, want, 1e-14 if dtype == flambeau.float64 else 0, 1e-14)


@pytest.mark.parametrize("dtype", INTS + [flambeau.float32, flambeau.bool])
def test_random_integers(dtype):
    high = 2 if dtype == flambeau.bool else 100
    got, want = _both(lambda t: t.random_(0, high), (50, 7), dtype)
    assert_close(got, want, 0, 0)
    if dtype == flambeau.int64:  # a range over 2**32 reads two lanes per element
        got, want = _both(lambda t: t.random_(-(2**40), 2**41), (33,), dtype)
        assert_close(got, want)


@pytest.mark.parametrize("dtype", [flambeau.float32, flambeau.bool, flambeau.int64])
def test_bernoulli_scalar_and_tensor_probabilities(dtype):
    got, want = _both(lambda t: t.bernoulli_(0.3), (41, 5), dtype)
    assert_close(got, want)
    p = flambeau.rand((41, 5), generator=flambeau.Generator().manual_seed(3))
    got, want = _both(lambda t: t.bernoulli_(p.to(t.device)), (41, 5), dtype)
    assert_close(got, want)
    flambeau.manual_seed(SEED)
    on_device = flambeau.bernoulli(p.to(DEVICE))
    flambeau.manual_seed(SEED)
    assert_close(on_device, flambeau.bernoulli(p))


def test_creation_functions_and_consecutive_draws():
    flambeau.manual_seed(SEED)
    device = [flambeau.rand(10, device=DEVICE), flambeau.randn(10, device=DEVICE)]
    device.append(flambeau.rand(3, 5, device=DEVICE))
    flambeau.manual_seed(SEED)
    cpu = [flambeau.rand(10), flambeau.randn(10), flambeau.rand(3, 5)]
    for got, want in zip(device, cpu):
        assert_close(got, want, 0, 1e-7)


def test_non_contiguous_targets():
    flambeau.manual_seed(SEED)
    t = flambeau.zeros((8, 6), device=DEVICE).t()
    t.uniform_()
    flambeau.manual_seed(SEED)
    want = flambeau.zeros((8, 6)).t()
    want.uniform_()
    assert_close(t, want, 0, 0)


def test_each_device_draws_from_its_own_generator():
    # As in PyTorch: CPU draws do not move the device's stream, and cuda.manual_seed
    # seeds the device alone.
    flambeau.manual_seed(SEED)
    first = flambeau.rand(100, device=DEVICE)
    flambeau.manual_seed(SEED)
    flambeau.rand(1000)  # the CPU's stream only
    assert_close(flambeau.rand(100, device=DEVICE), first, 0, 0)
    flambeau.cuda.manual_seed(7)
    a = flambeau.rand(100, device=DEVICE)
    flambeau.cuda.manual_seed(7)
    assert_close(flambeau.rand(100, device=DEVICE), a, 0, 0)
    assert flambeau.cuda.initial_seed() == 7
    state = flambeau.cuda.get_rng_state()
    b = flambeau.rand(100, device=DEVICE)
    flambeau.cuda.set_rng_state(state)
    assert_close(flambeau.rand(100, device=DEVICE), b, 0, 0)
