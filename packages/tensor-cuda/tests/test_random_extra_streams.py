"""The CUDA samplers beyond uniform/normal/random/bernoulli (exponential_, geometric_,
cauchy_, poisson, multinomial, randperm) read the core's Philox stream as the CPU
kernels do: their per-element arithmetic (tests/host_kernels/print_random_extra.cpp,
compiled with g++ from csrc/backend/kernels/random_extra_sampling.h) reproduces
flambeau's CPU samples for a seeded generator. randperm's check runs the kernel's
rounds of reservations, so it also shows that the parallel shuffle gives the
sequential Fisher-Yates permutation."""

from __future__ import annotations

import math
import subprocess

import numpy as np
import pytest
from host_build import compile_host_program

flambeau = pytest.importorskip("flambeau")

SEED = 4321
N = 37  # not a multiple of 4: the last Philox block is partly used


@pytest.fixture(scope="module")
def sampler(tmp_path_factory):
    return compile_host_program("print_random_extra.cpp", tmp_path_factory.mktemp("rng_extra"))


def run(exe, kind, unit, n, a=0.0, b=0.0, base=0):
    result = subprocess.run(
        [str(exe), kind, unit, str(SEED), str(base), str(n), repr(a), repr(b)],
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout, result.stderr


def floats(text):
    return np.array([float(v) for v in text.split()])


def as_dtype(values, dtype):
    """The host's doubles (already through float32 for the narrower units) as `dtype`."""
    return flambeau.tensor(values, dtype=flambeau.float64).to(dtype)


FLOATS = {"float64": flambeau.float64, "float32": flambeau.float32, "float16": flambeau.float16}


@pytest.mark.parametrize("unit", sorted(FLOATS))
@pytest.mark.parametrize(
    "kind, method, a, b",
    [
        ("exponential", "exponential_", 1.5, 0.0),
        ("geometric", "geometric_", 0.3, 0.0),
        ("cauchy", "cauchy_", -1.0, 2.5),
    ],
)
def test_distributions_match_the_cpu(sampler, unit, kind, method, a, b):
    dtype = FLOATS[unit]
    flambeau.manual_seed(SEED)
    t = flambeau.empty(N, dtype=dtype)
    want = getattr(t, method)(*([a] if kind != "cauchy" else [a, b]))
    got = as_dtype(floats(run(sampler, kind, unit, N, a, b)[0]), dtype)
    assert flambeau.equal(got, want)


def test_geometric_saturates_integers_as_the_cpu(sampler):
    flambeau.manual_seed(SEED)
    want = flambeau.empty(N, dtype=flambeau.uint8).geometric_(0.01)
    got = np.minimum(floats(run(sampler, "geometric", "float32", N, 0.01)[0]), 255)
    assert np.array_equal(got.astype(np.uint8), want.numpy())


def test_poisson_matches_the_cpu(sampler):
    rates = 1.7 * np.arange(N, dtype=np.float64)  # 0, the product branch and rejection
    flambeau.manual_seed(SEED)
    want = flambeau.poisson(flambeau.tensor(rates))
    got = floats(run(sampler, "poisson", "float64", N, 0.0, 1.7)[0])
    assert np.array_equal(got, want.numpy())


@pytest.mark.parametrize("replacement", [True, False])
def test_multinomial_matches_the_cpu(sampler, replacement):
    rows, cats, n = 3, 9, 5
    weights = np.array([[(3 * r + 2 * c) % 5 for c in range(cats)] for r in range(rows)], float)
    flambeau.manual_seed(SEED)
    want = flambeau.multinomial(flambeau.tensor(weights), n, replacement=replacement)
    kind = "multinomial_with" if replacement else "multinomial_without"
    text = run(sampler, kind, "float64", n, float(cats), float(rows))[0]
    got = np.array([[int(v) for v in line.split()] for line in text.splitlines()])
    assert np.array_equal(got, want.numpy())


@pytest.mark.parametrize("n", [1, 2, 5, 37, 1000, 100_000])
def test_randperm_rounds_give_the_cpu_permutation(sampler, n):
    flambeau.manual_seed(SEED)
    want = flambeau.randperm(n)
    out, err = run(sampler, "randperm", "float64", n)
    got = np.array([int(v) for v in out.split()])
    assert np.array_equal(got, want.numpy())
    # The rounds grow like log n (each one costs the kernel a stream synchronization).
    rounds = int(err.split()[1])
    assert rounds <= 8 * math.log2(n + 1) + 2


def test_consecutive_calls_continue_the_stream(sampler):
    """A second call starts at the counter after the first call's blocks."""
    flambeau.manual_seed(SEED)
    flambeau.empty(N, dtype=flambeau.float32).exponential_()
    want = flambeau.empty(N, dtype=flambeau.float32).exponential_()
    blocks = (N + 3) // 4
    got = as_dtype(
        floats(run(sampler, "exponential", "float32", N, 1.0, base=blocks)[0]), flambeau.float32
    )
    assert flambeau.equal(got, want)
