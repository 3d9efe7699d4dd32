"""The CUDA random kernels read the core's Philox stream as the CPU samplers do: their
per-element arithmetic (tests/host_kernels/print_random_samples.cpp, compiled with g++
from csrc/backend/kernels/random_sampling.h) reproduces flambeau's CPU samples for a
seeded generator, so a seeded program draws the same numbers on both devices."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest
from host_build import compile_host_program

flambeau = pytest.importorskip("flambeau")

SEED = 1234
N = 37  # not a multiple of 4: the last Philox block is partly used


@pytest.fixture(scope="module")
def sampler(tmp_path_factory):
    return compile_host_program("print_random_samples.cpp", tmp_path_factory.mktemp("rng"))


def host_samples(exe, kind, unit, a, b, n=N, base=0):
    out = subprocess.run(
        [str(exe), kind, unit, str(SEED), str(base), str(n), repr(a), repr(b)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return np.array([float(v) for v in out.split()])


def as_dtype(values, dtype):
    """The host's doubles rounded to `dtype` as the kernels do (through float32)."""
    t = flambeau.tensor(values, dtype=flambeau.float64)
    if dtype != flambeau.float64:
        t = t.to(flambeau.float32)
    return t.to(dtype)


FLOATS = {
    "float64": flambeau.float64,
    "float32": flambeau.float32,
    "float16": flambeau.float16,
    "bfloat16": flambeau.bfloat16,
}


@pytest.mark.parametrize("unit", sorted(FLOATS))
def test_uniform_matches_the_cpu(sampler, unit):
    dtype = FLOATS[unit]
    flambeau.manual_seed(SEED)
    want = flambeau.empty(N, dtype=dtype).uniform_(-2.0, 3.0)
    got = as_dtype(host_samples(sampler, "uniform", unit, -2.0, 3.0), dtype)
    assert flambeau.equal(got, want)


@pytest.mark.parametrize("unit", sorted(FLOATS))
def test_normal_matches_the_cpu(sampler, unit):
    dtype = FLOATS[unit]
    flambeau.manual_seed(SEED)
    want = flambeau.empty(N, dtype=dtype).normal_(0.5, 2.0)
    got = as_dtype(host_samples(sampler, "normal", unit, 0.5, 2.0), dtype)
    assert flambeau.equal(got, want)


@pytest.mark.parametrize("low, high", [(-5, 17), (0, 2**40)])
def test_random_matches_the_cpu(sampler, low, high):
    flambeau.manual_seed(SEED)
    want = flambeau.empty(N, dtype=flambeau.int64).random_(low, high)
    got = host_samples(sampler, "random", "float32", float(low), float(high - low))
    assert np.array_equal(got.astype(np.int64), want.numpy())


def test_bernoulli_matches_the_cpu(sampler):
    flambeau.manual_seed(SEED)
    want = flambeau.empty(N, dtype=flambeau.float32).bernoulli_(0.3)
    got = host_samples(sampler, "bernoulli", "float32", 0.3, 0.0)
    assert np.array_equal(got, want.numpy().astype(np.float64))


def test_consecutive_calls_continue_the_stream(sampler):
    """A second draw starts at the counter after the first call's blocks."""
    flambeau.manual_seed(SEED)
    flambeau.empty(N, dtype=flambeau.float32).uniform_()
    want = flambeau.empty(N, dtype=flambeau.float32).uniform_()
    blocks = (N + 3) // 4
    got = as_dtype(
        host_samples(sampler, "uniform", "float32", 0.0, 1.0, base=blocks), flambeau.float32
    )
    assert flambeau.equal(got, want)
